"""Kernels for random ops (ops/random_ops, init_ops' RandomOrthogonal), drawing from `resources.rng_for(ctx)`.

Values are drawn with numpy's PCG64 stream on the host (the same sequence on every device type) and
moved to the device with `ctx.xp.asarray`; a fixed (graph seed, op seed) pair reproduces exactly.
"""
from __future__ import annotations

import numpy as np

from .array_kernels import _dims
from .registry import host_inputs, register_kernel
from .resources import rng_for


def _shape(ctx, dyn):
    static = ctx.attrs["shape"]
    return static if static is not None else _dims(dyn[0])


def _float_draw(gen, fn, shape, npd):
    if npd in (np.float32, np.float64):
        return getattr(gen, fn)(shape, dtype=npd)
    return getattr(gen, fn)(shape).astype(npd)


@register_kernel("RandomStandardNormal")
@host_inputs(0)
def random_standard_normal(ctx, *dyn):
    gen = rng_for(ctx)
    return ctx.xp.asarray(_float_draw(gen, "standard_normal", _shape(ctx, dyn), ctx.attrs["dtype"].np_dtype))


@register_kernel("TruncatedNormal")
@host_inputs(0)
def truncated_normal(ctx, *dyn):
    """Standard normal values, each redrawn until it lies within 2 standard deviations (as TF)."""
    gen = rng_for(ctx)
    npd = ctx.attrs["dtype"].np_dtype
    out = _float_draw(gen, "standard_normal", _shape(ctx, dyn), npd)
    bad = np.abs(out) > 2
    while bad.any():
        out[bad] = _float_draw(gen, "standard_normal", (int(bad.sum()),), npd)
        bad = np.abs(out) > 2
    return ctx.xp.asarray(out)


@register_kernel("RandomUniform")
@host_inputs(0)
def random_uniform(ctx, *dyn):
    gen = rng_for(ctx)
    return ctx.xp.asarray(_float_draw(gen, "random", _shape(ctx, dyn), ctx.attrs["dtype"].np_dtype))


@register_kernel("RandomUniformInt")
@host_inputs(0)
def random_uniform_int(ctx, *dyn):
    a = ctx.attrs
    out = rng_for(ctx).integers(a["minval"], a["maxval"], size=_shape(ctx, dyn), dtype=a["dtype"].np_dtype)
    return ctx.xp.asarray(out)


@register_kernel("RandomShuffle")
def random_shuffle(ctx, x):
    if x.ndim == 0:
        return x
    perm = rng_for(ctx).permutation(x.shape[0])
    return x[ctx.xp.asarray(perm)]


@register_kernel("Multinomial")
def multinomial(ctx, logits):
    """Inverse-CDF sampling from softmax(logits) per row."""
    gen = rng_for(ctx)
    lg = np.asarray(logits if isinstance(logits, np.ndarray) else logits.get(), dtype=np.float64)
    p = np.exp(lg - lg.max(axis=1, keepdims=True))
    cdf = np.cumsum(p, axis=1)
    cdf /= cdf[:, -1:]
    u = gen.random((lg.shape[0], ctx.attrs["num_samples"]))
    out = np.minimum((u[:, :, None] >= cdf[:, None, :]).sum(-1), lg.shape[1] - 1)
    return ctx.xp.asarray(out.astype(ctx.attrs["output_dtype"].np_dtype))


@register_kernel("DynamicSlice")
def dynamic_slice(ctx, x, *offsets):
    key = tuple(slice(int(o), int(o) + s) for o, s in zip(offsets, ctx.attrs["size"]))
    return x[key]


@register_kernel("DynamicSliceGrad")
def dynamic_slice_grad(ctx, grad, like, *offsets):
    out = ctx.xp.zeros(like.shape, dtype=grad.dtype)
    out[tuple(slice(int(o), int(o) + s) for o, s in zip(offsets, ctx.attrs["size"]))] = grad
    return out


@register_kernel("RandomOrthogonal")
def random_orthogonal(ctx):
    """TF's orthogonal_initializer: QR of a normal matrix, signs fixed by diag(R), scaled by gain."""
    a = ctx.attrs
    shape = a["shape"]
    rows, cols = int(np.prod(shape[:-1])), shape[-1]
    flat = (max(rows, cols), min(rows, cols))
    m = rng_for(ctx).standard_normal(flat)
    q, r = np.linalg.qr(m)
    q *= np.sign(np.diag(r))
    if rows < cols:
        q = q.T
    return ctx.xp.asarray((a["gain"] * q.reshape(shape)).astype(a["dtype"].np_dtype))
