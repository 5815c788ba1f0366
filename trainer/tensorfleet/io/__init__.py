"""`tf.io` (the TFRecord part) and `tf.python_io`: TFRecord files, shared by tf.data and TensorBoard event files.

Beside the runtime (uses only `errors`); `summary` writes event files through `tfrecord`. `tf.python_io` is a
module registered as `tensorfleet.python_io` holding TF 1.15's four names.
"""
import sys as _sys
import types as _types

from .tfrecord import TFRecordCompressionType, TFRecordOptions, TFRecordWriter, tf_record_iterator

__all__ = ["TFRecordCompressionType", "TFRecordOptions", "TFRecordWriter", "tf_record_iterator"]

python_io = _types.ModuleType("tensorfleet.python_io", "`tf.python_io`: TFRecord files (TF 1.15's names).")
for _name in __all__:
    setattr(python_io, _name, globals()[_name])
vars(python_io)["__all__"] = list(__all__)
_sys.modules[python_io.__name__] = python_io
