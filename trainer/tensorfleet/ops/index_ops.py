"""Index-based array ops: `tf.gather_nd` (GatherNd, gradient GatherNdGrad) and `tf.sequence_mask` (SequenceMask).

Sits in `ops/` beside slicing_ops; kernels in kernels/index_kernels.py. Out-of-range indices raise
InvalidArgumentError at run time, with TF's message.
"""
from __future__ import annotations

__all__ = ["gather_nd", "sequence_mask"]

from .. import dtypes as _dtypes
from ..default_graph import name_scope
from .common import (NotDifferentiable, TensorShape, convert_to_tensor, make_tensor, register_gradient, register_op,
                     unknown_shape)
from .shape_util import constant_value
from .math_ops import cast


# -- GatherNd -----------------------------------------------------------------
def _gather_nd_shape(op):
    params, indices = op.inputs
    if indices.shape.ndims is None or params.shape.ndims is None:
        return [(params.dtype, unknown_shape())]
    if indices.shape.ndims < 1:
        raise ValueError("indices must be at least rank 1")
    m = indices.shape[-1]
    if m is None:
        return [(params.dtype, unknown_shape())]
    if m > params.shape.ndims:
        raise ValueError(f"indices.shape[-1] must be <= params.rank, but saw indices shape: {indices.shape} "
                         f"and params shape: {params.shape}")
    return [(params.dtype, TensorShape(indices.shape.as_tuple()[:-1] + params.shape.as_tuple()[m:]))]


register_op("GatherNd", _gather_nd_shape)
register_op("GatherNdGrad", lambda op: [(op.inputs[0].dtype, op.inputs[2].shape)])


def gather_nd(params, indices, name=None, batch_dims=0):
    """`tf.gather_nd`: out[i...] = params[indices[i..., 0], ..., indices[i..., m-1], ...]."""
    if batch_dims != 0:
        raise NotImplementedError("tf.gather_nd: batch_dims != 0 is not supported")
    params = convert_to_tensor(params)
    indices = convert_to_tensor(indices)
    if not indices.dtype.is_integer:
        raise TypeError(f"Value passed to parameter 'indices' has DataType {indices.dtype.name} not in list of "
                        f"allowed values: int32, int64")
    return make_tensor("GatherNd", [params, indices], {}, name=name, default_name="GatherNd")


@register_gradient("GatherNd")
def _gather_nd_grad(op, grad):
    """Dense scatter-add into zeros shaped like params (TF: scatter_nd); repeated indices accumulate."""
    params, indices = op.inputs
    return [make_tensor("GatherNdGrad", [grad, indices, params], {}, name="GatherNdGrad"), None]


@register_gradient("GatherNdGrad")
def _gather_nd_grad_grad(op, grad):
    return [gather_nd(grad, op.inputs[1]), None, None]


# -- SequenceMask -------------------------------------------------------------
def _sequence_mask_shape(op):
    lengths = op.inputs[0]
    maxlen = op.get_attr("maxlen")
    if lengths.shape.ndims is None:
        return [(_dtypes.bool_, unknown_shape())]
    return [(_dtypes.bool_, TensorShape(list(lengths.shape.as_tuple()) + [maxlen]))]


register_op("SequenceMask", _sequence_mask_shape)
NotDifferentiable("SequenceMask")


def sequence_mask(lengths, maxlen=None, dtype=_dtypes.bool_, name=None):
    """`tf.sequence_mask`: mask[i..., j] = j < lengths[i...]; maxlen defaults to max(lengths)."""
    with name_scope(name, "SequenceMask", [lengths, maxlen]):
        lengths = convert_to_tensor(lengths)
        if not lengths.dtype.is_integer:
            raise TypeError(f"sequence_mask: lengths must be integers, got {lengths.dtype.name}")
        inputs = [lengths]
        static_max = None
        if maxlen is not None:
            maxlen_t = convert_to_tensor(maxlen)
            if maxlen_t.shape.ndims not in (None, 0):
                raise ValueError("maxlen must be scalar for sequence_mask")
            v = constant_value(maxlen_t)
            static_max = None if v is None else int(v)
            inputs.append(maxlen_t)
        mask = make_tensor("SequenceMask", inputs, {"maxlen": static_max}, default_name="SequenceMask")
        dtype = _dtypes.as_dtype(dtype)
        if dtype is _dtypes.bool_:
            return mask
        return cast(mask, dtype)
