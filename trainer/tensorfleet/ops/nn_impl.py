"""`tf.nn` building blocks: bias_add, xw_plus_b, l2_loss, dropout, moments, embedding_lookup, in_top_k.

Sits in `ops/` beside `nn_ops.py` (activations, softmax, losses) and `conv_ops.py`;
kernels in `kernels/nn_kernels.py`. Ops are fused with their own gradient ops so
`tf.nn` does not depend on which general math/array ops exist.
"""
from __future__ import annotations

__all__ = ["bias_add", "xw_plus_b", "l2_loss", "dropout", "moments", "embedding_lookup", "in_top_k"]

import numbers

import numpy as np

from .. import dtypes as _dtypes
from ..graph import Tensor
from ..default_graph import name_scope
from . import random_seed
from .common import (NotDifferentiable, TensorShape, as_shape, convert_to_tensor, make_op, make_tensor,
                     reduced_shape, register_gradient, register_op)
from .nn_ops import float_input
from .math_ops import matmul
from .math_ops import multiply
from .math_ops import subtract
from . import math_ops as m
from .array_ops import size
from .partition_stitch_ops import sharded_embedding_lookup
from .indexed_slices_ops import gather_gradient


def _rank_error(expected: str, rank: int) -> ValueError:
    return ValueError(f"Shape must be {expected} but is rank {rank}")


# -- BiasAdd ------------------------------------------------------------------
def _channel_axis(data_format: str, ndims) -> int:
    return 1 if data_format.startswith("NC") else -1


def _bias_add_shape(op):
    value, bias = op.inputs
    vs, bs = value.shape, bias.shape
    if bs.ndims is not None and bs.ndims != 1:
        raise _rank_error("rank 1", bs.ndims)
    if vs.ndims is not None and vs.ndims < 2:
        raise _rank_error("at least rank 2", vs.ndims)
    if vs.ndims is not None and bs.ndims is not None:
        c = vs[_channel_axis(op.get_attr("data_format"), vs.ndims)]
        if c is not None and bs[0] is not None and c != bs[0]:
            raise ValueError(f"Dimensions must be equal, but are {c} and {bs[0]}")
    return [(value.dtype, vs)]


register_op("BiasAdd", _bias_add_shape)
register_op("BiasAddGrad", lambda op: [(op.inputs[0].dtype, TensorShape(
    [None if op.inputs[0].shape.ndims is None else op.inputs[0].shape[
        _channel_axis(op.get_attr("data_format"), op.inputs[0].shape.ndims)]]))])


def bias_add(value, bias, data_format=None, name=None):
    """`tf.nn.bias_add`: adds a 1-D `bias` along the channel dim (last for NHWC, dim 1 for NC*)."""
    data_format = data_format or "NHWC"
    if data_format not in ("NHWC", "NCHW", "NC", "NWC", "NCW", "NDHWC", "NCDHW"):
        raise ValueError(f"Unknown data_format: {data_format}")
    with name_scope(name, "BiasAdd", [value, bias]) as scope:
        value = convert_to_tensor(value, name="input")
        bias = convert_to_tensor(bias, dtype=value.dtype, name="bias")
        return make_tensor("BiasAdd", [value, bias], {"data_format": data_format}, name=scope)


@register_gradient("BiasAdd")
def _bias_add_grad(op, grad):
    return [grad, make_tensor("BiasAddGrad", [grad], {"data_format": op.get_attr("data_format")},
                              name="BiasAddGrad")]


@register_gradient("BiasAddGrad")
def _bias_add_grad_grad(op, grad):
    like = op.inputs[0]
    return [make_tensor("NnBroadcastChannel", [grad, like], {"data_format": op.get_attr("data_format")},
                        name="BiasAddGradGrad")]


# broadcasts a 1-D channel vector to `like`'s shape (adjoint of BiasAddGrad)
register_op("NnBroadcastChannel", lambda op: [(op.inputs[0].dtype, op.inputs[1].shape)])


@register_gradient("NnBroadcastChannel")
def _broadcast_channel_grad(op, grad):
    return [make_tensor("BiasAddGrad", [grad], {"data_format": op.get_attr("data_format")}, name="BiasAddGrad"),
            None]


def xw_plus_b(x, weights, biases, name=None):
    """`tf.nn.xw_plus_b`: matmul(x, weights) + biases."""
    with name_scope(name, "xw_plus_b", [x, weights, biases]) as scope:
        x = convert_to_tensor(x, name="x")
        weights = convert_to_tensor(weights, name="weights")
        biases = convert_to_tensor(biases, name="biases")
        mm = matmul(x, weights)
        return bias_add(mm, biases, name=scope)


# -- L2Loss -------------------------------------------------------------------
register_op("L2Loss", lambda op: [(op.inputs[0].dtype, TensorShape([]))])


def l2_loss(t, name=None):
    """`tf.nn.l2_loss`: sum(t ** 2) / 2 (a scalar of t's dtype)."""
    t = float_input(t, "L2Loss", "t")
    return make_tensor("L2Loss", [t], name=name, default_name="L2Loss")


@register_gradient("L2Loss")
def _l2_loss_grad(op, grad):
    return [multiply(op.inputs[0], grad)]


# -- Dropout ------------------------------------------------------------------
def _dropout_shape(op):
    x = op.inputs[0]
    noise = op.get_attr("noise_shape")
    mask = x.shape if noise is None else TensorShape(noise)
    return [(x.dtype, x.shape), (x.dtype, mask)]


# (x, rate) -> (x * mask, mask); mask = (uniform >= rate) / (1 - rate), drawn once per run and
# reused by the gradient, so forward and backward see the same dropped units.
register_op("Dropout", _dropout_shape, stateful=True)


def dropout(x, keep_prob=None, noise_shape=None, seed=None, name=None, rate=None):
    """`tf.nn.dropout` (TF1 signature): keeps each element with probability keep_prob (= 1 - rate),
    scaled by 1/keep_prob.

    `keep_prob`/`rate` may be a float or a scalar Tensor (e.g. a placeholder); `noise_shape`
    must be static (None entries take x's runtime dim); seeding follows TF1's seed rule.
    """
    if keep_prob is not None and rate is not None:
        raise ValueError("Cannot specify both 'rate' and 'keep_prob'.")
    if keep_prob is not None:
        if isinstance(keep_prob, Tensor) or hasattr(keep_prob, "_as_graph_element"):
            rate = subtract(1.0, convert_to_tensor(keep_prob))
        else:
            try:
                rate = 1.0 - keep_prob
            except TypeError:
                raise ValueError(f"keep_prob must be a floating point number or Tensor (got {keep_prob!r})") from None
    if rate is None:
        raise ValueError("You must provide a rate to dropout.")
    with name_scope(name, "dropout", [x]) as scope:
        x = convert_to_tensor(x, name="x")
        if not x.dtype.is_floating:
            raise ValueError(f"x has to be a floating point tensor since it's going to be scaled. Got a "
                             f"{x.dtype.name} tensor instead.")
        if isinstance(rate, numbers.Real) and not isinstance(rate, bool):
            if not 0 <= rate < 1:
                raise ValueError(f"rate must be a scalar tensor or a float in the range [0, 1), got {rate:g}")
        rate = convert_to_tensor(rate, dtype=x.dtype, name="rate")
        if rate.shape.ndims not in (None, 0):
            raise ValueError(f"Shape must be rank 0 but is rank {rate.shape.ndims} for 'rate' of 'dropout'")
        noise = _noise_shape_attr(x, noise_shape)
        attrs = {"noise_shape": noise, **random_seed.seed_attrs(seed)}
        return make_op("Dropout", [x, rate], attrs, name=scope).outputs[0]


def _noise_shape_attr(x, noise_shape):
    if noise_shape is None:
        return None
    if isinstance(noise_shape, Tensor):
        raise TypeError("noise_shape must be a static list of ints (None entries take x's dims), not a Tensor")
    dims = list(as_shape(noise_shape).as_tuple())
    xs = x.shape
    if xs.ndims is not None:
        if len(dims) != xs.ndims:
            raise ValueError(f"noise_shape {dims} must have the rank of x ({xs.ndims})")
        for i, (n, d) in enumerate(zip(dims, xs.as_tuple())):
            if n is None:
                dims[i] = d
            elif n not in (1, d) and d is not None:
                raise ValueError(f"Dimensions must be equal, but are {d} and {n}: noise_shape {list(noise_shape)} "
                                 f"does not broadcast to x's shape {xs}")
    return tuple(dims)


@register_gradient("Dropout")
def _dropout_grad(op, grad, grad_mask):
    return [multiply(grad, op.outputs[1]), None]


# -- moments ------------------------------------------------------------------
def _moments_shape(op):
    x = op.inputs[0]
    s = reduced_shape(x.shape, op.get_attr("axes"), op.get_attr("keepdims"))
    return [(x.dtype, s), (x.dtype, s)]


register_op("NnMoments", _moments_shape)
register_op("NnMomentsGrad", lambda op: [(op.inputs[0].dtype, op.inputs[0].shape)])


def moments(x, axes, shift=None, name=None, keep_dims=None, keepdims=None):
    """`tf.nn.moments`: (mean, variance) over `axes` (static ints); float16 is accumulated in float32."""
    keep = bool(keepdims if keepdims is not None else keep_dims)
    if isinstance(axes, Tensor):
        raise TypeError("axes must be a static list of ints, not a Tensor")
    axes = tuple(int(a) for a in (axes if isinstance(axes, (list, tuple)) else [axes]))
    with name_scope(name, "moments", [x, axes]):
        x = float_input(x, "moments", "x")
        op = make_op("NnMoments", [x], {"axes": axes, "keepdims": keep}, default_name="moments")
    return op.outputs[0], op.outputs[1]


@register_gradient("NnMoments")
def _moments_grad(op, g_mean, g_var):
    return [make_tensor("NnMomentsGrad", [op.inputs[0], g_mean, g_var],
                        {"axes": op.get_attr("axes"), "keepdims": op.get_attr("keepdims")}, name="MomentsGrad")]


@register_gradient("NnMomentsGrad")
def _moments_grad_grad(op, grad):
    # NnMomentsGrad(x, gm, gv) = gm / n + gv * (2 / n) * (x - mean(x)), gm and gv broadcast over `axes`
    x, g_mean, g_var = op.inputs
    axes, keep = tuple(op.get_attr("axes")), op.get_attr("keepdims")
    centered = m.subtract(x, m.reduce_mean(x, axis=axes, keepdims=True))
    d_mean = m.reduce_mean(grad, axis=axes, keepdims=keep)
    d_var = m.multiply(2.0, m.reduce_mean(m.multiply(grad, centered), axis=axes, keepdims=keep))
    gv_grad = m.multiply(m.reduction_grad(g_var, x, axes, keep), grad)
    dims = [x.shape[a] if x.shape.ndims is not None else None for a in axes]
    if all(d is not None for d in dims):
        two_over_n = 2.0 / max(1, int(np.prod(dims)))
    else:
        mean = m.reduce_mean(x, axis=axes, keepdims=True)
        two_over_n = m.realdiv(m.multiply(2.0, m.cast(size(mean), x.dtype)), m.cast(size(x), x.dtype))
    d_x = m.multiply(two_over_n, m.subtract(gv_grad, m.reduce_mean(gv_grad, axis=axes, keepdims=True)))
    return [d_x, d_mean, d_var]


# -- embedding_lookup ---------------------------------------------------------
def _gather_shape(op):
    params, ids = op.inputs
    if params.shape.ndims == 0:
        raise ValueError("Shape must be at least rank 1 but is rank 0")
    if params.shape.ndims is None or ids.shape.ndims is None:
        return [(params.dtype, TensorShape(None))]
    return [(params.dtype, ids.shape.concatenate(params.shape[1:]))]


register_op("NnGather", _gather_shape)


def embedding_lookup(params, ids, partition_strategy="mod", name=None, validate_indices=True, max_norm=None):
    """`tf.nn.embedding_lookup`: params[ids]; over a list of shards, ids are assigned to shards by
    `partition_strategy` ("mod" or "div", see partition_stitch_ops.sharded_embedding_lookup)."""
    if max_norm is not None:
        raise NotImplementedError("embedding_lookup(max_norm=...) is not supported")
    if hasattr(params, "_get_variable_list"):  # a PartitionedVariable: its parts are the shards, as in TF
        params = params._get_variable_list()
    if isinstance(params, (list, tuple)):
        if not params:
            raise ValueError("Need at least one param")
        if len(params) > 1:
            return sharded_embedding_lookup(list(params), ids, partition_strategy, name)
        params = params[0]
    with name_scope(name, "embedding_lookup", [params, ids]) as scope:
        params = convert_to_tensor(params, name="params")
        ids = convert_to_tensor(ids, name="ids")
        if ids.dtype not in (_dtypes.int32, _dtypes.int64):
            raise TypeError(f"Value passed to parameter 'indices' has DataType {ids.dtype.name} not in list of "
                            f"allowed values: int32, int64")
        with params.graph.colocate_with(params.op):  # TF: the lookup runs where the table lives (a ps)
            return make_tensor("NnGather", [params, ids], name=scope)


@register_gradient("NnGather")
def _gather_grad(op, grad):
    """An IndexedSlices, as TF's: only the looked-up rows (optimizers update just those)."""
    params, ids = op.inputs
    return [gather_gradient(grad, ids, params), None]


# -- in_top_k -----------------------------------------------------------------
def _in_top_k_shape(op):
    preds, targets = op.inputs
    ps = preds.shape
    if ps.ndims is not None and ps.ndims != 2:
        raise _rank_error("rank 2", ps.ndims)
    ts = targets.shape
    if ts.ndims is not None and ts.ndims != 1:
        raise _rank_error("rank 1", ts.ndims)
    b = ps[0] if ps.ndims else None
    if b is not None and ts.ndims and ts[0] is not None and ts[0] != b:
        raise ValueError(f"Dimensions must be equal, but are {b} and {ts[0]}")
    return [(_dtypes.bool_, TensorShape([b if b is not None else (ts[0] if ts.ndims else None)]))]


register_op("InTopK", _in_top_k_shape)
NotDifferentiable("InTopK")


def in_top_k(predictions, targets, k, name=None):
    """`tf.nn.in_top_k`: whether targets[i] is among the k largest predictions[i] (ties count as in)."""
    predictions = convert_to_tensor(predictions, dtype=_dtypes.float32)
    targets = convert_to_tensor(targets)
    if targets.dtype not in (_dtypes.int32, _dtypes.int64):
        raise TypeError(f"Value passed to parameter 'targets' has DataType {targets.dtype.name} not in list of "
                        f"allowed values: int32, int64")
    return make_tensor("InTopK", [predictions, targets], {"k": int(k)}, name=name, default_name="InTopK")


# -- nn-private flatten (tf.layers.flatten) -----------------------------------
def _flatten_shape(op):
    s = op.inputs[0].shape
    if s.ndims is None:
        return [(op.inputs[0].dtype, TensorShape([None, None]))]
    if s.ndims < 1:
        raise ValueError("Shape must be at least rank 1 but is rank 0")
    rest = s[1:].num_elements() if s.ndims > 1 else 1
    return [(op.inputs[0].dtype, TensorShape([s[0], rest]))]


register_op("NnFlatten", _flatten_shape)
register_op("NnReshapeLike", lambda op: [(op.inputs[0].dtype, op.inputs[1].shape)])


def nn_flatten(x, name=None):
    """[N, d1, ..., dk] -> [N, d1 * ... * dk] (the runtime batch size is kept)."""
    return make_tensor("NnFlatten", [convert_to_tensor(x)], name=name, default_name="Reshape")


@register_gradient("NnFlatten")
def _flatten_grad(op, grad):
    return [make_tensor("NnReshapeLike", [grad, op.inputs[0]], name="Reshape")]


@register_gradient("NnReshapeLike")
def _reshape_like_grad(op, grad):
    return [make_tensor("NnFlatten", [grad], name="Reshape"), None]
