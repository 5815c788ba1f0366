"""TF's platform helpers, for TF1 scripts: `tf.app`, `tf.flags`, `tf.gfile`, `tf.logging`.

Beside the runtime, not part of it: nothing in the graph, ops, kernels or
executor imports these (the trainer's own modules log through `tf_logging`).
`tensorfleet/__init__.py` binds each under its TF name (`tf.logging` is
`tf_logging`), as TensorFlow's `tensorflow/python/platform/` does.
"""
from . import app, flags, gfile, tf_logging  # noqa: F401

__all__ = ["app", "flags", "gfile", "tf_logging"]
