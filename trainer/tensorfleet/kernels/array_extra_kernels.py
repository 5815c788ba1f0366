"""Kernels of ops/array_extra_ops.py (CPU, host numpy): Unique, InvertPermutation, Bincount, SetDiff1d,
Timestamp, ScatterNd."""
from __future__ import annotations

import time

import numpy as np

from .. import errors
from .backend import to_host
from .registry import host_inputs, register_kernel

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


@register_kernel("InvertPermutation", devices=_CPU)
def invert_permutation(ctx, x):
    x = np.asarray(to_host(x))
    if x.ndim != 1 or sorted(x.tolist()) != list(range(x.size)):
        raise _bad(ctx, f"invert_permutation: {x.tolist()[:10]} is not a permutation of 0..{x.size - 1}")
    out = np.empty_like(x)
    out[x] = np.arange(x.size, dtype=x.dtype)
    return out


@register_kernel("Bincount", devices=_CPU)
def bincount(ctx, arr, weights):
    arr = np.asarray(to_host(arr)).reshape(-1)
    if arr.size and arr.min() < 0:
        raise _bad(ctx, f"bincount: input contains a negative value ({int(arr.min())})")
    a = ctx.op.attrs
    n = int(arr.max()) + 1 if arr.size else 0
    n = max(n, a["minlength"] or 0)
    if a["maxlength"] is not None:
        n = min(n, a["maxlength"])
        keep = arr < n
        arr = arr[keep]
        weights = np.asarray(to_host(weights)).reshape(-1)[keep] if np.size(weights) > 1 else weights
    w = None if np.size(weights) <= 1 and a["unweighted"] else np.asarray(to_host(weights)).reshape(-1)
    return np.bincount(arr, weights=w, minlength=n)[:n].astype(a["dtype"].np_dtype)


@register_kernel("SetDiff1d", devices=_CPU)
def setdiff1d(ctx, x, y):
    x, y = np.asarray(to_host(x)), np.asarray(to_host(y))
    keep = ~np.isin(x, y)
    return x[keep], np.nonzero(keep)[0].astype(ctx.op.attrs["index_dtype"].np_dtype)


@register_kernel("Timestamp", devices=_CPU)
def timestamp(ctx):
    return np.float64(time.time())


@host_inputs(0, 2)
@register_kernel("ScatterNd", devices=_CPU)
def scatter_nd(ctx, indices, updates, shape):
    idx, upd = np.asarray(to_host(indices)), np.asarray(to_host(updates))
    shape = tuple(int(d) for d in np.asarray(to_host(shape)).reshape(-1))
    k = idx.shape[-1]
    out = np.zeros(shape, dtype=upd.dtype)
    flat_idx = idx.reshape(-1, k)
    for j, row in enumerate(flat_idx):
        if np.any(row < 0) or np.any(row >= np.array(shape[:k])):
            raise _bad(ctx, f"indices[{j}] = {row.tolist()} does not index into shape {list(shape)}")
    np.add.at(out, tuple(flat_idx.T), upd.reshape((flat_idx.shape[0],) + shape[k:]))
    return out
