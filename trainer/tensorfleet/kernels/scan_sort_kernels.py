"""Kernels for ops/scan_sort_ops.py: Cumsum, Cumprod, TopKV2 and the last-axis take/put pair of its gradient."""
from __future__ import annotations

import numpy as np

from .. import errors
from .registry import register_kernel


def _scan(ctx, x, fn, identity):
    xp = ctx.xp
    axis, exclusive, reverse = ctx.attrs["axis"], ctx.attrs["exclusive"], ctx.attrs["reverse"]
    if not -x.ndim <= axis < x.ndim:
        raise errors.InvalidArgumentError(None, ctx.op, f"ScanOp: Expected scan axis in the range [{-x.ndim}, "
                                                        f"{x.ndim}), but got {axis}")
    if reverse:
        x = xp.flip(x, axis)
    out = fn(x, axis=axis, dtype=x.dtype)
    if exclusive:
        pad = xp.full_like(xp.take(out, [0], axis=axis), identity)
        out = xp.concatenate([pad, xp.take(out, xp.arange(out.shape[axis] - 1), axis=axis)], axis=axis)
    if reverse:
        out = xp.flip(out, axis)
    return out


@register_kernel("Cumsum")
def cumsum(ctx, x):
    return _scan(ctx, x, ctx.xp.cumsum, 0)


@register_kernel("Cumprod")
def cumprod(ctx, x):
    return _scan(ctx, x, ctx.xp.cumprod, 1)


@register_kernel("TopKV2")
def top_k(ctx, x):
    xp = ctx.xp
    k = ctx.attrs["k"]
    if x.ndim < 1:
        raise errors.InvalidArgumentError(None, ctx.op, "input must be >= 1-D, got shape []")
    if x.shape[-1] < k:
        raise errors.InvalidArgumentError(None, ctx.op, f"input must have at least k columns. Had "
                                                        f"{x.shape[-1]}, needed {k}")
    key = x.astype(np.int64) if x.dtype.kind == "u" else x
    # descending, ties broken by the lower index first (a stable sort of -x)
    idx = xp.argsort(-key, axis=-1, kind="stable")[..., :k]
    return xp.take_along_axis(x, idx, axis=-1), idx.astype(np.int32)


@register_kernel("TakeAlongLastAxis")
def take_along_last_axis(ctx, x, indices):
    return ctx.xp.take_along_axis(x, indices.astype(np.int64), axis=-1)


@register_kernel("PutAlongLastAxis")
def put_along_last_axis(ctx, values, indices, like):
    """Zeros shaped like `like` with `values` added at `indices` along the last axis (repeats accumulate)."""
    xp = ctx.xp
    n = like.shape[-1]
    out = xp.zeros((int(np.prod(like.shape[:-1], dtype=np.int64)), n), dtype=values.dtype)
    idx = indices.reshape(out.shape[0], -1).astype(np.int64)
    rows = xp.arange(out.shape[0])[:, None]
    xp.add.at(out, (rows, idx), values.reshape(idx.shape))
    return out.reshape(like.shape)
