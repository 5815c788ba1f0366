"""Suite-wide fixtures: a fresh default graph per test; GPU tests skip without a GPU."""
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
