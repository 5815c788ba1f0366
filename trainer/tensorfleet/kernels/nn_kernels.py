"""Kernels for `ops/nn_ops.py` and `ops/nn_impl.py`: activations, softmax, losses, bias_add, dropout & co.

Written once against `ctx.xp` (numpy / cupy). Results keep the op's dtype (float32
stays float32: Python float constants only, never float64 numpy scalars). Softmax and
the cross entropies use log-sum-exp with the max subtracted, so large logits never overflow.
"""
from __future__ import annotations

import numpy as np

from .. import errors
from .array_kernels import take_unchecked
from .ownership import owns
from .resources import rng_for
from .registry import register_kernel


def _cast(x, like):
    return x.astype(like.dtype, copy=False)


# -- activations --------------------------------------------------------------
@register_kernel("Relu")
def relu(ctx, x):
    if owns(x):  # a dead temporary (the pre-activation): rectify it in place
        return ctx.xp.maximum(x, 0, out=x)
    return ctx.xp.maximum(x, 0).astype(x.dtype, copy=False)


@register_kernel("ReluGrad")
def relu_grad(ctx, grad, y):
    if owns(grad) and grad.shape == y.shape:
        return ctx.xp.multiply(grad, y > 0, out=grad)
    return grad * (y > 0)


@register_kernel("Relu6")
def relu6(ctx, x):
    return ctx.xp.clip(x, 0, 6).astype(x.dtype, copy=False)


@register_kernel("Relu6Grad")
def relu6_grad(ctx, grad, x):
    return ctx.xp.where((x > 0) & (x < 6), grad, 0).astype(grad.dtype, copy=False)


@register_kernel("Elu")
def elu(ctx, x):
    xp = ctx.xp
    return xp.where(x > 0, x, xp.expm1(xp.minimum(x, 0))).astype(x.dtype, copy=False)


@register_kernel("EluGrad")
def elu_grad(ctx, grad, y):
    return ctx.xp.where(y > 0, grad, grad * (y + 1)).astype(grad.dtype, copy=False)


@register_kernel("LeakyRelu")
def leaky_relu(ctx, x):
    return ctx.xp.where(x > 0, x, x * ctx.attrs["alpha"]).astype(x.dtype, copy=False)


@register_kernel("LeakyReluGrad")
def leaky_relu_grad(ctx, grad, x):
    return ctx.xp.where(x > 0, grad, grad * ctx.attrs["alpha"]).astype(grad.dtype, copy=False)


def _sigmoid(xp, x):
    # exp of a non-positive number only: no overflow for large |x|
    e = xp.exp(-xp.abs(x))
    return xp.where(x >= 0, 1 / (1 + e), e / (1 + e)).astype(x.dtype, copy=False)


@register_kernel("Sigmoid")
def sigmoid(ctx, x):
    return _sigmoid(ctx.xp, x)


@register_kernel("SigmoidGrad")
def sigmoid_grad(ctx, y, dy):
    return (dy * y * (1 - y)).astype(y.dtype, copy=False)


@register_kernel("Tanh")
def tanh(ctx, x):
    return ctx.xp.tanh(x)


@register_kernel("TanhGrad")
def tanh_grad(ctx, y, dy):
    return (dy * (1 - y * y)).astype(y.dtype, copy=False)


@register_kernel("Softplus")
def softplus(ctx, x):
    xp = ctx.xp
    return (xp.maximum(x, 0) + xp.log1p(xp.exp(-xp.abs(x)))).astype(x.dtype, copy=False)


@register_kernel("SoftplusGrad")
def softplus_grad(ctx, grad, x):
    return (grad * _sigmoid(ctx.xp, x)).astype(grad.dtype, copy=False)


# -- softmax ------------------------------------------------------------------
def _log_softmax(xp, x, axis):
    shifted = x - x.max(axis=axis, keepdims=True)
    return shifted - xp.log(xp.exp(shifted).sum(axis=axis, keepdims=True))


@register_kernel("Softmax")
def softmax(ctx, x):
    xp, axis = ctx.xp, ctx.attrs["axis"]
    e = xp.exp(x - x.max(axis=axis, keepdims=True))
    return _cast(e / e.sum(axis=axis, keepdims=True), x)


@register_kernel("LogSoftmax")
def log_softmax(ctx, x):
    return _cast(_log_softmax(ctx.xp, x, ctx.attrs["axis"]), x)


@register_kernel("SoftmaxGrad")
def softmax_grad(ctx, grad, y):
    axis = ctx.attrs["axis"]
    return _cast((grad - (grad * y).sum(axis=axis, keepdims=True)) * y, y)


@register_kernel("LogSoftmaxGrad")
def log_softmax_grad(ctx, grad, y):
    axis = ctx.attrs["axis"]
    return _cast(grad - ctx.xp.exp(y) * grad.sum(axis=axis, keepdims=True), y)


# -- cross entropies ----------------------------------------------------------
@register_kernel("SoftmaxCrossEntropyWithLogits")
def softmax_xent(ctx, logits, labels):
    xp, axis = ctx.xp, ctx.attrs["axis"]
    if logits.shape != labels.shape:
        raise errors.InvalidArgumentError(
            None, ctx.op, f"logits and labels must be broadcastable: logits_size={list(logits.shape)} "
                          f"labels_size={list(labels.shape)}\n\t [[node {ctx.op.name}]]")
    # One exp: z = logits - max, e = exp(z), s = sum(e); loss = sum(labels * (log s - z)), backprop = e/s - labels.
    # numpy: the ufuncs' own reduce methods (x.max()/x.sum() add a Python-level wrapper per call);
    # cupy has no maximum.reduce (its ufunc.reduce covers add and multiply only).
    amax, total = (np.maximum.reduce, np.add.reduce) if xp is np else (xp.max, xp.sum)
    z = logits - amax(logits, axis=axis, keepdims=True)
    e = xp.exp(z)
    s = total(e, axis=axis, keepdims=True)
    z -= xp.log(s)  # z is now log_softmax (z is ours: computed above)
    z *= labels
    loss = total(z, axis=axis)
    xp.negative(loss, out=loss)
    e /= s
    e -= labels
    return _cast(xp.asarray(loss), logits), _cast(e, logits)


@register_kernel("XentScaleAlongAxis")
def xent_scale_along_axis(ctx, grad_loss, like):
    xp, axis = ctx.xp, ctx.attrs["axis"]
    g = grad_loss[..., None] if axis == -1 or axis == grad_loss.ndim else xp.expand_dims(grad_loss, axis)
    if owns(like) and g.dtype == like.dtype:  # the backprop output is dead after this: scale it in place
        return xp.multiply(like, g, out=like)
    return _cast(g * like, like)


@register_kernel("XentLabelsGrad")
def xent_labels_grad(ctx, grad_loss, logits):
    xp, axis = ctx.xp, ctx.attrs["axis"]
    return _cast(-xp.expand_dims(grad_loss, axis) * _log_softmax(xp, logits, axis), logits)


@register_kernel("SparseSoftmaxCrossEntropyWithLogits")
def sparse_softmax_xent(ctx, logits, labels):
    xp = ctx.xp
    num_classes = logits.shape[-1]
    if labels.shape != logits.shape[:-1]:
        raise errors.InvalidArgumentError(
            None, ctx.op, f"labels should have the same shape as logits except for the last dimension: logits "
                          f"shape {list(logits.shape)}, labels shape {list(labels.shape)}\n\t [[node {ctx.op.name}]]")
    if xp is np:  # TF's CPU kernel rejects out-of-range labels
        bad = (labels < 0) | (labels >= num_classes)
        if bool(bad.any()):
            first = int(labels[bad].ravel()[0])
            shown = " ".join(str(int(v)) for v in labels.ravel()[:100].tolist())
            raise errors.InvalidArgumentError(
                None, ctx.op, f"Received a label value of {first} which is outside the valid range of "
                              f"[0, {num_classes}).  Label values: {shown}\n\t [[node {ctx.op.name} "
                              f"(op: {ctx.op.type})]]")
    logp = _log_softmax(xp, logits, -1)
    idx = xp.expand_dims(labels.astype(np.int64, copy=False), -1)
    if xp is not np:  # TF's GPU kernel: no check (a device->host sync per step), NaN rows for bad labels
        valid = (idx >= 0) & (idx < num_classes)
        idx = xp.where(valid, idx, 0)
    loss = -xp.take_along_axis(logp, idx, axis=-1)[..., 0]
    onehot = xp.arange(num_classes) == idx  # (no put_along_axis on older cupy)
    grad = xp.exp(logp) - onehot
    if xp is not np:
        loss, grad = xp.where(valid[..., 0], loss, np.nan), xp.where(valid, grad, np.nan)
    return _cast(xp.asarray(loss), logits), _cast(grad, logits)


@register_kernel("SigmoidCrossEntropyWithLogits")
def sigmoid_xent(ctx, x, z):
    xp = ctx.xp
    return _cast(xp.maximum(x, 0) - x * z + xp.log1p(xp.exp(-xp.abs(x))), x)


@register_kernel("SigmoidCrossEntropyWithLogitsGrad")
def sigmoid_xent_grad(ctx, grad, x, z):
    return _cast(grad * (_sigmoid(ctx.xp, x) - z), x), _cast(-grad * x, x)


# -- bias_add / l2_loss -------------------------------------------------------
def _channel_axis(ctx, ndim):
    return 1 if ctx.attrs["data_format"].startswith("NC") else ndim - 1


@register_kernel("BiasAdd")
def bias_add(ctx, value, bias):
    axis = _channel_axis(ctx, value.ndim)
    if value.shape[axis] != bias.shape[0]:
        raise errors.InvalidArgumentError(
            None, ctx.op, f"Must provide as many biases as the last dimension of the input tensor: "
                          f"{list(bias.shape)} vs. {list(value.shape)}\n\t [[node {ctx.op.name}]]")
    shape = [1] * value.ndim
    shape[axis] = bias.shape[0]
    return value + bias.reshape(shape)


@register_kernel("BiasAddGrad")
def bias_add_grad(ctx, grad):
    axis = _channel_axis(ctx, grad.ndim)
    axes = tuple(i for i in range(grad.ndim) if i != axis)
    return _cast(grad.sum(axis=axes), grad)


@register_kernel("NnBroadcastChannel")
def broadcast_channel(ctx, vec, like):
    axis = _channel_axis(ctx, like.ndim)
    shape = [1] * like.ndim
    shape[axis] = vec.shape[0]
    return ctx.xp.broadcast_to(vec.reshape(shape), like.shape)


@register_kernel("L2Loss")
def l2_loss(ctx, x):
    return _cast(ctx.xp.asarray((x * x).sum() / 2), x)


# -- dropout ------------------------------------------------------------------
@register_kernel("Dropout")
def dropout(ctx, x, rate):
    xp = ctx.xp
    noise = ctx.attrs["noise_shape"]
    shape = x.shape if noise is None else tuple(x.shape[i] if d is None else d for i, d in enumerate(noise))
    u = rng_for(ctx).random(shape, dtype=np.float64 if x.dtype == np.float64 else np.float32)
    u = xp.asarray(u).astype(x.dtype, copy=False)
    rate = xp.asarray(rate).astype(x.dtype)
    scale = 1 / (1 - rate)
    mask = ((u >= rate) * scale).astype(x.dtype, copy=False)
    return (x * mask).astype(x.dtype, copy=False), mask


# -- moments ------------------------------------------------------------------
def _acc(x):
    return x.astype("float32") if x.dtype == np.float16 else x


@register_kernel("NnMoments")
def moments(ctx, x):
    axes, keep = ctx.attrs["axes"], ctx.attrs["keepdims"]
    xa = _acc(x)
    mean = xa.mean(axis=axes, keepdims=True)
    var = ((xa - mean) ** 2).mean(axis=axes, keepdims=True)
    if not keep:
        mean, var = mean.squeeze(axis=axes), var.squeeze(axis=axes)
    return _cast(mean, x), _cast(var, x)


@register_kernel("NnMomentsGrad")
def moments_grad(ctx, x, g_mean, g_var):
    axes, keep = ctx.attrs["axes"], ctx.attrs["keepdims"]
    xa = _acc(x)
    n = 1
    for a in axes:
        n *= x.shape[a]
    if not keep:
        g_mean = ctx.xp.expand_dims(g_mean, tuple(a % x.ndim for a in axes))
        g_var = ctx.xp.expand_dims(g_var, tuple(a % x.ndim for a in axes))
    mean = xa.mean(axis=axes, keepdims=True)
    return _cast(g_mean / n + g_var * (2.0 / n) * (xa - mean), x)


# -- gather (embedding_lookup) ------------------------------------------------
def _check_ids(ctx, ids, limit):
    bad = (ids < 0) | (ids >= limit)
    if bool(bad.any()):
        pos = np.argwhere(np.asarray(bad.get() if hasattr(bad, "get") else bad))[0]
        where = ",".join(str(int(p)) for p in pos)
        value = int(ids[tuple(int(p) for p in pos)])
        raise errors.InvalidArgumentError(
            None, ctx.op, f"indices[{where}] = {value} is not in [0, {limit})\n\t [[node {ctx.op.name}]]")


@register_kernel("NnGather")
def gather(ctx, params, ids):
    if ctx.xp is not np:  # TF's GPU rule: zeros for bad ids, no per-step device->host check
        return take_unchecked(ctx.xp, params, ids, 0)
    _check_ids(ctx, ids, params.shape[0])
    return np.take(params, ids, axis=0)


# -- in_top_k -----------------------------------------------------------------
@register_kernel("InTopK")
def in_top_k(ctx, predictions, targets):
    xp, k = ctx.xp, ctx.attrs["k"]
    b, c = predictions.shape
    valid = (targets >= 0) & (targets < c)
    safe = xp.where(valid, targets, 0).astype(np.int64)
    target_pred = xp.take_along_axis(predictions, safe[:, None], axis=1)
    finite = xp.isfinite(predictions).all(axis=1)
    greater = (predictions > target_pred).sum(axis=1)
    return valid & finite & (greater < k)


# -- nn-private flatten -------------------------------------------------------
@register_kernel("NnFlatten")
def flatten(ctx, x):
    return x.reshape(x.shape[0], -1) if x.ndim else x.reshape(1, 1)


@register_kernel("NnReshapeLike")
def reshape_like(ctx, x, like):
    return x.reshape(like.shape)
