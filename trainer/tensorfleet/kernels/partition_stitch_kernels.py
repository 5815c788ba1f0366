"""CPU kernels of DynamicPartition, DynamicStitch and ParallelDynamicStitch (ops: `ops/partition_stitch_ops.py`).

Host numpy, like the other index-shuffling kernels (index_kernels.py's ScatterNd, set_kernels.py). Bad input raises
InvalidArgumentError with TF's wording, naming the node.
"""
from __future__ import annotations

import numpy as np

from .. import errors
from .backend import to_host
from .registry import register_kernel

_CPU = ("CPU",)


def _bad(ctx, msg):
    return errors.InvalidArgumentError(None, ctx.op, f"{ctx.op.type}: {msg}\n\t [[node {ctx.op.name}]]")


def _index_text(shape, flat: int) -> str:
    if not shape:
        return ""
    return "[" + ",".join(str(int(i)) for i in np.unravel_index(flat, shape)) + "]"


@register_kernel("DynamicPartition", devices=_CPU)
def dynamic_partition(ctx, data, partitions):
    data, parts = np.asarray(to_host(data)), np.asarray(to_host(partitions))
    n = ctx.op.attrs["num_partitions"]
    if data.shape[:parts.ndim] != parts.shape:
        raise _bad(ctx, f"data.shape must start with partitions.shape, got data.shape = {list(data.shape)}, "
                        f"partitions.shape = {list(parts.shape)}")
    flat_p = parts.reshape(-1)
    bad = np.flatnonzero((flat_p < 0) | (flat_p >= n))
    if bad.size:
        i = int(bad[0])
        raise _bad(ctx, f"partitions{_index_text(parts.shape, i)} = {int(flat_p[i])} is not in [0, {n})")
    flat_d = data.reshape((flat_p.size,) + data.shape[parts.ndim:])
    return tuple(flat_d[flat_p == i] for i in range(n))


def _stitch(ctx, inputs):
    n = ctx.op.attrs["N"]
    indices = [np.asarray(to_host(t)) for t in inputs[:n]]
    data = [np.asarray(to_host(t)) for t in inputs[n:]]
    k0 = indices[0].ndim
    extra = data[0].shape[k0:]
    for m, (idx, d) in enumerate(zip(indices, data)):
        if d.shape[:idx.ndim] != idx.shape:
            raise _bad(ctx, f"data[{m}].shape = {list(d.shape)} does not start with indices[{m}].shape = "
                            f"{list(idx.shape)}")
        if d.shape[idx.ndim:] != extra:
            raise _bad(ctx, f"Need data[0].shape[{k0}:] = data[{m}].shape[{idx.ndim}:], got data[0].shape = "
                            f"{list(data[0].shape)}, data[{m}].shape = {list(d.shape)}, indices[0].shape = "
                            f"{list(indices[0].shape)}, indices[{m}].shape = {list(idx.shape)}")
    flat_idx = np.concatenate([i.reshape(-1) for i in indices]).astype(np.int64)
    for m, idx in enumerate(indices):
        neg = np.flatnonzero(idx.reshape(-1) < 0)
        if neg.size:
            j = int(neg[0])
            raise _bad(ctx, f"indices[{m}]{_index_text(idx.shape, j)} = {int(idx.reshape(-1)[j])} is out of range")
    first = int(flat_idx.max()) + 1 if flat_idx.size else 0
    dtype = data[0].dtype
    flat_data = np.concatenate([d.reshape((-1,) + extra) for d in data]) if flat_idx.size else \
        np.zeros((0,) + extra, dtype)
    merged = np.zeros((first,) + extra, dtype=dtype)
    # the LAST write of each index wins: unique over the reversed order keeps each index's last position
    rev = flat_idx[::-1]
    uniq, first_in_rev = np.unique(rev, return_index=True)
    merged[uniq] = flat_data[::-1][first_in_rev]
    return merged


@register_kernel("DynamicStitch", devices=_CPU)
def dynamic_stitch(ctx, *inputs):
    return _stitch(ctx, inputs)


@register_kernel("ParallelDynamicStitch", devices=_CPU)
def parallel_dynamic_stitch(ctx, *inputs):
    return _stitch(ctx, inputs)
