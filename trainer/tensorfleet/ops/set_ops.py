"""A vector's values as a set: `tf.unique`, `tf.unique_with_counts` (op Unique) and `tf.setdiff1d` (op SetDiff1d).

Sits in `ops/`; kernels in kernels/set_kernels.py (CPU, host numpy). As TF 1.15, unique keeps the values in the
order of their first occurrence and setdiff1d keeps x's order; the outputs have no gradient.
"""
from __future__ import annotations

__all__ = ["unique", "unique_with_counts", "setdiff1d"]

from .. import dtypes as _dtypes
from ..tensor_shape import TensorShape
from .common import NotDifferentiable, convert_to_tensor, make_op, register_op

register_op("Unique", lambda op: [(op.inputs[0].dtype, TensorShape([None])),
                                  (op.get_attr("out_idx"), op.inputs[0].shape),
                                  (op.get_attr("out_idx"), TensorShape([None]))])
NotDifferentiable("Unique")


def unique_with_counts(x, out_idx=_dtypes.int32, name=None):
    """`tf.unique_with_counts`: (values in order of first occurrence, index of each x in values, counts)."""
    op = make_op("Unique", [convert_to_tensor(x)], {"out_idx": _dtypes.as_dtype(out_idx)}, name=name,
                 default_name="UniqueWithCounts")
    return tuple(op.outputs)


def unique(x, out_idx=_dtypes.int32, name=None):
    """`tf.unique`: (y, idx) with y the distinct values in order of first occurrence and x == y[idx]."""
    y, idx, _ = unique_with_counts(x, out_idx, name=name or "Unique")
    return y, idx


register_op("SetDiff1d", lambda op: [(op.inputs[0].dtype, TensorShape([None])),
                                     (op.get_attr("index_dtype"), TensorShape([None]))])
NotDifferentiable("SetDiff1d")


def setdiff1d(x, y, index_dtype=_dtypes.int32, name=None):
    """`tf.setdiff1d`: (the values of x not in y, in x's order; their positions in x)."""
    x = convert_to_tensor(x)
    op = make_op("SetDiff1d", [x, convert_to_tensor(y, dtype=x.dtype)], {"index_dtype": _dtypes.as_dtype(index_dtype)},
                 name=name, default_name="ListDiff")
    return tuple(op.outputs)
