"""Summary ops: the graph ops behind `tf.summary.scalar/histogram/image/audio/merge` (TF 1.15's op types).

Sits in `ops/` (kernels in kernels/summary_kernels.py; the `tf.summary` functions that name, scope and collect
these ops are in the top-level `summary` package). Every op outputs one string scalar: a serialized
`Summary` protocol buffer (protos/summary.proto). The tag is an attr here (TF passes it as a string tensor
input); the tag rules (name scope, family, invalid characters) are applied by `tf.summary` before the op
is made. None of these ops has a gradient.
"""
from __future__ import annotations

from .. import dtypes as _dtypes
from ..tensor_shape import TensorShape
from .common import NotDifferentiable, convert_to_tensor, make_tensor, register_op

__all__: list = []

#: the dtype of a summary op's output (a scalar of bytes); tf.string once dtypes has it
STRING = getattr(_dtypes, "string", None) or _dtypes.DType("string", object)


def _string_scalar(op):
    return [(STRING, TensorShape([]))]


for _op_type in ("ScalarSummary", "HistogramSummary", "ImageSummary", "AudioSummaryV2", "TensorSummaryV2",
                 "MergeSummary"):
    register_op(_op_type, _string_scalar)
    NotDifferentiable(_op_type)

_REAL = {"float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8"}


def _real_input(values, what: str, op_type: str):
    t = convert_to_tensor(values)
    if t.dtype.name not in _REAL:
        raise TypeError(f"Value passed to parameter '{what}' of '{op_type}' Op has DataType {t.dtype.name} not in "
                        f"list of allowed values: {', '.join(sorted(_REAL))}")
    return t


def scalar_summary(tag: str, values, name=None):
    """A Summary with one `simple_value` for `tag` (the value must hold a single element)."""
    t = _real_input(values, "values", "ScalarSummary")
    if t.shape.ndims is not None and t.shape.num_elements() not in (None, 1):
        raise ValueError(f"tags and values not the same shape: [] != {t.shape} (tag '{tag}') for "
                         f"'ScalarSummary' Op")
    return make_tensor("ScalarSummary", [t], {"tag": tag, "T": t.dtype}, name=name, default_name="ScalarSummary")


def histogram_summary(tag: str, values, name=None):
    """A Summary with a `histo` of all values in `values` (TF's default exponential buckets)."""
    t = _real_input(values, "values", "HistogramSummary")
    return make_tensor("HistogramSummary", [t], {"tag": tag, "T": t.dtype}, name=name,
                       default_name="HistogramSummary")


def image_summary(tag: str, tensor, max_images: int = 3, bad_color=(255, 0, 0, 255), name=None):
    """A Summary with up to `max_images` PNG images from a [batch, height, width, 1|3|4] tensor."""
    t = convert_to_tensor(tensor)
    if t.dtype.name not in ("uint8", "float16", "float32", "float64"):
        raise TypeError(f"Value passed to parameter 'tensor' of 'ImageSummary' Op has DataType {t.dtype.name} "
                        f"not in list of allowed values: uint8, float32, float16, float64")
    dims = t.shape.as_list() if t.shape.ndims is not None else None
    if dims is not None and (len(dims) != 4 or dims[3] not in (None, 1, 3, 4)):
        raise ValueError(f"Tensor must be 4-D with last dim 1, 3, or 4, not {t.shape} (image summary '{tag}')")
    if int(max_images) < 1:
        raise ValueError(f"max_outputs must be >= 1, got {max_images} (image summary '{tag}')")
    return make_tensor("ImageSummary", [t], {"tag": tag, "max_images": int(max_images), "T": t.dtype,
                                             "bad_color": tuple(int(c) for c in bad_color)},
                       name=name, default_name="ImageSummary")


def audio_summary(tag: str, tensor, sample_rate, max_outputs: int = 3, name=None):
    """A Summary with up to `max_outputs` WAV clips from a [batch, frames] or [batch, frames, channels] float
    tensor with values in [-1, 1]."""
    t = convert_to_tensor(tensor, dtype=_dtypes.float32)
    dims = t.shape.as_list() if t.shape.ndims is not None else None
    if dims is not None and len(dims) not in (2, 3):
        raise ValueError(f"Tensor must be 3-D or 2-D, got: {t.shape} (audio summary '{tag}')")
    rate = convert_to_tensor(sample_rate, dtype=_dtypes.float32)
    if int(max_outputs) < 1:
        raise ValueError(f"max_outputs must be >= 1, got {max_outputs} (audio summary '{tag}')")
    return make_tensor("AudioSummaryV2", [t, rate], {"tag": tag, "max_outputs": int(max_outputs)},
                       name=name, default_name="AudioSummaryV2")


def tensor_summary(tag: str, tensor, serialized_summary_metadata: bytes = b"", name=None):
    """A Summary whose value is the whole tensor (a TensorProto: strings in string_val, numbers as raw bytes)
    with the given SummaryMetadata (e.g. plugin "text")."""
    t = convert_to_tensor(tensor)
    return make_tensor("TensorSummaryV2", [t], {"tag": tag, "T": t.dtype,
                                                "serialized_summary_metadata": bytes(serialized_summary_metadata)},
                       name=name, default_name="TensorSummaryV2")


def merge_summary(inputs, name=None):
    """One Summary holding the values of every input (each a serialized Summary); a tag seen twice is an
    InvalidArgumentError at run time."""
    tensors = [convert_to_tensor(x) for x in inputs]
    if not tensors:
        raise ValueError("merge_summary needs at least one input (got an empty list)")
    for x in tensors:
        if x.dtype is not STRING:
            raise TypeError(f"Input '{x.name}' of 'MergeSummary' Op has type {x.dtype.name}; expected a string "
                            f"tensor holding serialized Summary protos")
    return make_tensor("MergeSummary", tensors, {"N": len(tensors)}, name=name, default_name="MergeSummary")
