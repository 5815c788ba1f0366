"""Kernels of ops/set_ops.py (CPU, host numpy): Unique, SetDiff1d."""
from __future__ import annotations

import numpy as np

from .. import errors
from .backend import to_host
from .registry import register_kernel

_CPU = ("CPU",)


def _bad(ctx, msg):
    return errors.InvalidArgumentError(None, ctx.op, f"{msg}\n\t [[node {ctx.op.name}]]")


@register_kernel("Unique", devices=_CPU)
def unique(ctx, x):
    x = np.asarray(to_host(x))
    if x.ndim != 1:
        raise _bad(ctx, f"unique expects a 1D vector, got shape {list(x.shape)}")
    _, first, inverse = np.unique(x, return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")  # TF: values in order of first occurrence
    rank = np.empty_like(order)
    rank[order] = np.arange(order.size)
    idx_dtype = ctx.op.attrs["out_idx"].np_dtype
    counts = np.bincount(rank[inverse], minlength=order.size).astype(idx_dtype)
    return x[np.sort(first)], rank[inverse].astype(idx_dtype), counts


@register_kernel("SetDiff1d", devices=_CPU)
def setdiff1d(ctx, x, y):
    x, y = np.asarray(to_host(x)), np.asarray(to_host(y))
    keep = ~np.isin(x, y)
    return x[keep], np.nonzero(keep)[0].astype(ctx.op.attrs["index_dtype"].np_dtype)
