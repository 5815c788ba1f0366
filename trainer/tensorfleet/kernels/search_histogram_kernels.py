"""Kernels of ops/search_histogram_ops.py (CPU, host numpy): LowerBound, UpperBound, UnravelIndex,
HistogramFixedWidth, Bincount. Checks and messages are TF 1.15's, each naming the node."""
from __future__ import annotations

import numpy as np

from .. import errors
from .backend import to_host
from .registry import host_inputs, register_kernel

_CPU = ("CPU",)


def _bad(ctx, msg):
    return errors.InvalidArgumentError(None, ctx.op, f"{msg}\n\t [[node {ctx.op.name}]]")


def _bound(ctx, sorted_inputs, values, side):
    seq, vals = np.asarray(to_host(sorted_inputs)), np.asarray(to_host(values))
    if seq.shape[0] != vals.shape[0]:
        raise _bad(ctx, "Leading dim_size of both tensors must match.")
    out_type = ctx.op.attrs["out_type"].np_dtype
    if out_type == np.int32 and seq.shape[1] >= np.iinfo(np.int32).max:
        raise _bad(ctx, f"trailing dim_size must less than INT_MAX for int32 output type, was {seq.shape[1]}")
    out = np.empty(vals.shape, dtype=out_type)
    for b in range(seq.shape[0]):
        out[b] = np.searchsorted(seq[b], vals[b], side=side)
    return out


@register_kernel("LowerBound", devices=_CPU)
def lower_bound(ctx, sorted_inputs, values):
    return _bound(ctx, sorted_inputs, values, "left")


@register_kernel("UpperBound", devices=_CPU)
def upper_bound(ctx, sorted_inputs, values):
    return _bound(ctx, sorted_inputs, values, "right")


@register_kernel("UnravelIndex", devices=_CPU)
def unravel_index(ctx, indices, dims):
    idx, dims = np.asarray(to_host(indices)), np.asarray(to_host(dims))
    if dims.ndim != 1:
        raise _bad(ctx, f"The indices can only be 1-D, got \"{list(dims.shape)}\"")
    if idx.ndim > 1:
        raise _bad(ctx, f"The indices can only be scalar or vector, got \"{list(idx.shape)}\"")
    total = int(np.prod(dims.astype(np.int64)))
    if idx.size and ((idx < 0) | (idx >= total)).any() or (dims < 0).any():
        raise _bad(ctx, "index is out of bound as with dims")
    coords = np.unravel_index(idx.astype(np.int64), tuple(int(d) for d in dims)) if dims.size else ()
    return np.stack([np.asarray(c) for c in coords]).astype(idx.dtype) if dims.size else \
        np.zeros((0,) + idx.shape, idx.dtype)


@host_inputs(1, 2)
@register_kernel("HistogramFixedWidth", devices=_CPU)
def histogram_fixed_width(ctx, values, value_range, nbins):
    vals, rng, n = np.asarray(to_host(values)), np.asarray(to_host(value_range)), np.asarray(to_host(nbins))
    if rng.ndim != 1:
        raise _bad(ctx, "value_range should be a vector.")
    if rng.size != 2:
        raise _bad(ctx, "value_range should be a vector of 2 elements.")
    if n.ndim != 0:
        raise _bad(ctx, "nbins should be a scalar.")
    lo, hi, n = rng[0], rng[1], int(n)
    if not lo < hi:
        raise _bad(ctx, f"value_range should satisfy value_range[0] < value_range[1], but got '[{lo}, {hi}]'")
    if n <= 0:
        raise _bad(ctx, f"nbins should be a positive number, but got '{n}'")
    # TF's functor: step = (hi - lo) / nbins in double; bin = int(min((max(x, lo) - lo) / step, nbins - 1))
    step = float(hi - lo) / float(n)
    shifted = (np.maximum(vals.reshape(-1), lo) - lo).astype(np.float64)
    bins = np.minimum(shifted / step, float(n - 1)).astype(np.int64)
    return np.bincount(bins, minlength=n)[:n].astype(ctx.op.attrs["dtype"].np_dtype)


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
