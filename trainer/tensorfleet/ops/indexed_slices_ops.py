"""IndexedSlices in the graph: the dense conversion, sums of several, and duplicate-index merging.

Sits in `ops/` over `indexed_slices.IndexedSlices`: registers the conversion to a dense Tensor (an
IndexedSlicesToDense op: zeros of `dense_shape` with each row added at its index; kernel in
kernels/indexed_slices_kernels.py, CPU and GPU); `add_indexed_slices` is what autodiff uses to sum several
gradients of one tensor (concatenated, as TF); `deduplicate` sums the rows of repeated indices (what the
optimizers' sparse updates need, TF's `_deduplicate_indexed_slices`).
"""
from __future__ import annotations

from .. import dtypes as _dtypes
from ..default_graph import register_tensor_conversion_function
from ..indexed_slices import IndexedSlices
from ..tensor_shape import TensorShape, unknown_shape
from . import array_ops, join_ops, math_ops, segment_ops, set_ops
from .common import convert_to_tensor, make_tensor, register_gradient, register_op
from .shape_util import constant_value
from .slicing_ops import gather

__all__ = ["IndexedSlices", "convert_to_tensor_or_indexed_slices"]


def _to_dense_shape(op):
    values, _, dense_shape = op.inputs
    known = constant_value(dense_shape)
    if known is not None:
        return [(values.dtype, TensorShape([int(d) for d in known]))]
    static = op.get_attr("static_shape")
    return [(values.dtype, static if static is not None else unknown_shape())]


register_op("IndexedSlicesToDense", _to_dense_shape)


@register_gradient("IndexedSlicesToDense")
def _to_dense_grad(op, grad):
    return [gather(grad, op.inputs[1]), None, None]


def to_dense(slices: IndexedSlices, dtype=None, name=None):
    if slices.dense_shape is None:
        raise ValueError(f"Tensor conversion requested for IndexedSlices without dense_shape: {slices!r}")
    if dtype is not None and _dtypes.as_dtype(dtype) is not slices.dtype:
        raise ValueError(f"Tensor conversion requested dtype {_dtypes.as_dtype(dtype).name} for IndexedSlices "
                         f"with dtype {slices.dtype.name}")
    static = slices._static_dense_shape if slices._static_dense_shape.ndims is not None else None
    return make_tensor("IndexedSlicesToDense",
                       [slices.values, slices.indices, convert_to_tensor(slices.dense_shape, dtype=_dtypes.int64)],
                       {"static_shape": static}, name=name, default_name="IndexedSlicesToDense")


register_tensor_conversion_function(IndexedSlices, to_dense)


def convert_to_tensor_or_indexed_slices(value, dtype=None, name=None):
    """`tf.convert_to_tensor_or_indexed_slices`: an IndexedSlices as is, anything else a Tensor."""
    if isinstance(value, IndexedSlices):
        if dtype is not None and _dtypes.as_dtype(dtype) is not value.dtype:
            raise ValueError(f"Tensor conversion requested dtype {_dtypes.as_dtype(dtype).name} for IndexedSlices "
                             f"with dtype {value.dtype.name}")
        return value
    return convert_to_tensor(value, dtype=dtype, name=name)


def add_indexed_slices(slices: list) -> IndexedSlices:
    """The sum of several IndexedSlices of one tensor: their rows concatenated (duplicates add up)."""
    values = join_ops.concat([s.values for s in slices], 0)
    indices = join_ops.concat([math_ops.cast(s.indices, _dtypes.int64) if s.indices.dtype is not _dtypes.int64
                               else s.indices for s in slices], 0)
    return slices[0].with_values(values, indices)


def deduplicate(slices: IndexedSlices) -> IndexedSlices:
    """Each index once, its rows summed (TF's `_deduplicate_indexed_slices`)."""
    unique_indices, positions = set_ops.unique(slices.indices)
    summed = segment_ops.unsorted_segment_sum(slices.values, positions, array_ops.shape(unique_indices)[0])
    return slices.with_values(summed, unique_indices)


def gather_gradient(grad, indices, params) -> IndexedSlices:
    """The gradient of `gather(params, indices)` (axis 0) as TF gives it: the incoming rows at `indices`, with
    `params`' shape read where `params` lives (a constant when known: no read of a ps variable's value)."""
    g = params.graph
    if params.shape.is_fully_defined():
        dense_shape = array_ops.constant(params.shape.as_list(), dtype=_dtypes.int64)
    else:
        with g.colocate_with(params.op):
            dense_shape = array_ops.shape(params, out_type=_dtypes.int64)
    inner = params.shape[1:] if params.shape.ndims is not None else None
    if inner is not None and inner.is_fully_defined():
        values = array_ops.reshape(grad, [-1] + inner.as_list())
    else:
        values = array_ops.reshape(grad, join_ops.concat([array_ops.constant([-1], dtype=_dtypes.int64),
                                                          dense_shape[1:]], 0))
    return IndexedSlices(values, array_ops.reshape(indices, [-1]), dense_shape, params.shape)
