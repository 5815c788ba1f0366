"""Suite-wide fixtures: a fresh default graph per test; the full MNIST set; GPU tests skip without a GPU."""
import os

import pytest


@pytest.fixture(autouse=True)
def _fresh_default_graph():
    try:
        import tensorfleet as tf
    except Exception:  # the operator tests do not need the trainer
        yield
        return
    tf.reset_default_graph()
    yield
    tf.reset_default_graph()


def pytest_collection_modifyitems(config, items):
    try:
        from tensorfleet.kernels.backend import cupy_module
        has_gpu = cupy_module() is not None
    except Exception:
        has_gpu = False
    if has_gpu:
        return
    skip = pytest.mark.skip(reason="needs a CUDA GPU with cupy")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def full_mnist_dir():
    """Directory of the fetched full MNIST set (`make test` fetches it). Without it the test fails,
    saying how to fetch it, or skips when TENSORFLEET_ALLOW_MISSING_DATA=1."""
    from tensorfleet.datasets import MissingDataError, find_mnist_dir

    try:
        return find_mnist_dir()
    except MissingDataError as e:
        msg = ("the full MNIST set is not fetched: run `make install` or "
               "`python -m tensorfleet.datasets fetch` (or set "
               "TENSORFLEET_ALLOW_MISSING_DATA=1 to skip these tests)\n%s" % e)
    if os.environ.get("TENSORFLEET_ALLOW_MISSING_DATA") == "1":
        pytest.skip(msg)
    pytest.fail(msg, pytrace=False)
