"""Kernels of ops/segment_ops.py (CPU, host numpy): UnsortedSegmentSum, SegmentMax/Min/Prod and
UnsortedSegmentMax/Min/Prod.

Checks and messages are TF 1.15's (segment_reduction_ops.cc), each naming the node:
sorted ids must be a vector as long as data's first dimension and increasing; unsorted ids must prefix
data's shape and lie below num_segments (negative ones are dropped).
"""
from __future__ import annotations

import numpy as np

from .. import errors
from .backend import to_host
from .registry import host_inputs, register_kernel

_CPU = ("CPU",)


def _bad(ctx, msg):
    return errors.InvalidArgumentError(None, ctx.op, f"{msg}\n\t [[node {ctx.op.name}]]")


def _shape_text(shape):
    return "[" + ",".join(str(d) for d in shape) + "]"


def lowest(dtype):
    """numeric_limits<T>::lowest(): the empty unsorted max."""
    return np.finfo(dtype).min if np.issubdtype(dtype, np.inexact) else np.iinfo(dtype).min


def highest(dtype):
    """numeric_limits<T>::max(): the empty unsorted min."""
    return np.finfo(dtype).max if np.issubdtype(dtype, np.inexact) else np.iinfo(dtype).max


@host_inputs(1, 2)
@register_kernel("UnsortedSegmentSum", devices=_CPU)
def unsorted_segment_sum(ctx, data, segment_ids, num_segments):
    data, ids = np.asarray(to_host(data)), np.asarray(to_host(segment_ids))
    n = int(np.asarray(to_host(num_segments)))
    if ids.shape != data.shape[:ids.ndim]:
        raise _bad(ctx, f"segment_ids.shape = {list(ids.shape)} does not prefix data.shape = {list(data.shape)}")
    if ids.size and (ids.max() >= n):
        raise _bad(ctx, f"segment_ids[{int(np.argmax(ids))}] = {int(ids.max())} is out of range [0, {n})")
    out = np.zeros((n,) + data.shape[ids.ndim:], dtype=data.dtype)
    flat_ids = ids.reshape(-1)
    flat = data.reshape((flat_ids.size,) + data.shape[ids.ndim:])
    keep = flat_ids >= 0  # TF drops negative ids
    np.add.at(out, flat_ids[keep], flat[keep])
    return out


def _check_sorted_ids(ctx, data, ids):
    """The number of output rows (ids[-1] + 1), after TF's checks in TF's order."""
    if ids.ndim != 1:
        raise _bad(ctx, "segment_ids should be a vector.")
    if data.ndim < 1 or ids.size != data.shape[0]:
        raise _bad(ctx, "segment_ids should be the same size as dimension 0 of input.")
    n = int(ids[-1]) + 1 if ids.size else 0
    if n < 0:
        raise _bad(ctx, "segment ids must be >= 0")
    # TF walks the segments in order: at each segment's end it checks that the next id is larger, then that
    # the segment's own id is in [0, n)
    ends = np.nonzero(ids[1:] != ids[:-1])[0]
    out_ids = np.append(ids[ends], ids[-1:]) if ids.size else ids
    next_ids = ids[ends + 1]
    decreasing = np.append(next_ids < ids[ends], False) if ids.size else np.zeros(0, bool)
    out_of_range = (out_ids < 0) | (out_ids >= n)
    bad = np.nonzero(decreasing | out_of_range)[0]
    if bad.size:
        k = int(bad[0])
        if decreasing[k]:
            raise _bad(ctx, "segment ids are not increasing")
        raise _bad(ctx, f"Segment id {int(out_ids[k])} out of range [0, {n}), possibly because 'segment_ids' "
                        f"input is not sorted.")
    return n, np.append(0, ends + 1).astype(np.int64) if ids.size else np.zeros(0, np.int64), out_ids


def _sorted(ctx, data, segment_ids, ufunc, empty):
    data, ids = np.asarray(to_host(data)), np.asarray(to_host(segment_ids))
    n, starts, out_ids = _check_sorted_ids(ctx, data, ids)
    out = np.full((n,) + data.shape[1:], empty, dtype=data.dtype)
    if starts.size:
        out[out_ids] = ufunc.reduceat(data, starts, axis=0)
    return out


@host_inputs(1)
@register_kernel("SegmentMax", devices=_CPU)
def segment_max(ctx, data, segment_ids):
    return _sorted(ctx, data, segment_ids, np.maximum, 0)


@host_inputs(1)
@register_kernel("SegmentMin", devices=_CPU)
def segment_min(ctx, data, segment_ids):
    return _sorted(ctx, data, segment_ids, np.minimum, 0)


@host_inputs(1)
@register_kernel("SegmentProd", devices=_CPU)
def segment_prod(ctx, data, segment_ids):
    return _sorted(ctx, data, segment_ids, np.multiply, 1)


def _unsorted(ctx, data, segment_ids, num_segments, ufunc, empty):
    data, ids = np.asarray(to_host(data)), np.asarray(to_host(segment_ids))
    num = np.asarray(to_host(num_segments))
    if data.shape[:ids.ndim] != ids.shape:
        raise _bad(ctx, f"data.shape = {_shape_text(data.shape)} does not start with segment_ids.shape = "
                        f"{_shape_text(ids.shape)}")
    if num.ndim != 0:
        raise _bad(ctx, f"num_segments should be a scalar, not shape {_shape_text(num.shape)}")
    n = int(num)
    if n < 0:
        raise _bad(ctx, f"Dimension {n} must be >= 0")
    flat_ids = ids.reshape(-1)
    bad = np.nonzero(flat_ids >= n)[0]  # negative ids are dropped, as in TF
    if bad.size:
        i = int(bad[0])
        pos = np.unravel_index(i, ids.shape) if ids.ndim else ()
        raise _bad(ctx, f"segment_ids{_shape_text(int(p) for p in pos)} = {int(flat_ids[i])} is out of range "
                        f"[0, {n})")
    inner = data.shape[ids.ndim:]
    out = np.full((n,) + inner, empty(data.dtype) if callable(empty) else empty, dtype=data.dtype)
    keep = flat_ids >= 0
    ufunc.at(out, flat_ids[keep], data.reshape((flat_ids.size,) + inner)[keep])
    return out


@host_inputs(1, 2)
@register_kernel("UnsortedSegmentMax", devices=_CPU)
def unsorted_segment_max(ctx, data, segment_ids, num_segments):
    return _unsorted(ctx, data, segment_ids, num_segments, np.maximum, lowest)


@host_inputs(1, 2)
@register_kernel("UnsortedSegmentMin", devices=_CPU)
def unsorted_segment_min(ctx, data, segment_ids, num_segments):
    return _unsorted(ctx, data, segment_ids, num_segments, np.minimum, highest)


@host_inputs(1, 2)
@register_kernel("UnsortedSegmentProd", devices=_CPU)
def unsorted_segment_prod(ctx, data, segment_ids, num_segments):
    return _unsorted(ctx, data, segment_ids, num_segments, np.multiply, 1)
