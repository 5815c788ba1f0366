"""Index-based array ops: `tf.gather_nd` (GatherNd, gradient GatherNdGrad), its inverse `tf.scatter_nd` (ScatterNd,
gradient a gather_nd) with the composites `tf.tensor_scatter_nd_add/sub/update`, `tf.invert_permutation`
(InvertPermutation) and `tf.sequence_mask` (SequenceMask).

Sits in `ops/` beside slicing_ops; kernels in kernels/index_kernels.py. Out-of-range indices raise
InvalidArgumentError at run time, with TF's message.
"""
from __future__ import annotations

__all__ = ["gather_nd", "scatter_nd", "tensor_scatter_nd_add", "tensor_scatter_nd_sub", "tensor_scatter_nd_update",
           "tensor_scatter_add", "tensor_scatter_sub", "tensor_scatter_update", "invert_permutation", "sequence_mask"]

from .. import dtypes as _dtypes
from ..default_graph import name_scope
from . import array_ops as _a
from . import math_ops as _m
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


# -- ScatterNd, tensor_scatter_nd_* -------------------------------------------
def _scatter_nd_shape(op):
    v = constant_value(op.inputs[2])
    return [(op.inputs[1].dtype, TensorShape([int(d) for d in v]) if v is not None else unknown_shape())]


register_op("ScatterNd", _scatter_nd_shape)


@register_gradient("ScatterNd")
def _scatter_nd_grad(op, grad):
    return [None, gather_nd(grad, op.inputs[0]), None]


def scatter_nd(indices, updates, shape, name=None):
    """`tf.scatter_nd`: zeros of `shape` with `updates` added at `indices` (duplicates sum)."""
    updates = convert_to_tensor(updates)
    idx = convert_to_tensor(indices)
    return make_tensor("ScatterNd", [idx, updates, convert_to_tensor(shape, dtype=idx.dtype)], name=name,
                       default_name="ScatterNd")


def tensor_scatter_nd_add(tensor, indices, updates, name=None):
    """`tf.tensor_scatter_nd_add`: a copy of `tensor` with updates added at indices."""
    with name_scope(name, "TensorScatterAdd", [tensor, indices, updates]):
        t = convert_to_tensor(tensor)
        return _m.add(t, scatter_nd(indices, convert_to_tensor(updates, dtype=t.dtype), _a.shape(t)))


def tensor_scatter_nd_sub(tensor, indices, updates, name=None):
    with name_scope(name, "TensorScatterSub", [tensor, indices, updates]):
        t = convert_to_tensor(tensor)
        return _m.subtract(t, scatter_nd(indices, convert_to_tensor(updates, dtype=t.dtype), _a.shape(t)))


def tensor_scatter_nd_update(tensor, indices, updates, name=None):
    """`tf.tensor_scatter_nd_update`: a copy of `tensor` with the slices at indices replaced (unique indices)."""
    with name_scope(name, "TensorScatterUpdate", [tensor, indices, updates]):
        t = convert_to_tensor(tensor)
        u = convert_to_tensor(updates, dtype=t.dtype)
        hit = scatter_nd(indices, _a.ones_like(u), _a.shape(t))
        return _m.add(_m.multiply(t, _m.subtract(_a.ones_like(t), hit)), scatter_nd(indices, u, _a.shape(t)))


tensor_scatter_add, tensor_scatter_sub, tensor_scatter_update = (tensor_scatter_nd_add, tensor_scatter_nd_sub,
                                                                 tensor_scatter_nd_update)


# -- InvertPermutation --------------------------------------------------------
register_op("InvertPermutation", lambda op: [(op.inputs[0].dtype, op.inputs[0].shape)])
NotDifferentiable("InvertPermutation")


def invert_permutation(x, name=None):
    return make_tensor("InvertPermutation", [convert_to_tensor(x)], name=name, default_name="InvertPermutation")


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
