"""Kernel of ops/indexed_slices_ops.py: IndexedSlicesToDense, zeros of `dense_shape` with each row of
`values` added at its index (duplicates add up). CPU and GPU; a bad index is an error on the CPU and, as the
forward gather on a GPU gave zeros for it (TF's GPU rule), adds nothing there."""
from __future__ import annotations

import numpy as np

from .. import errors
from .backend import to_host
from .registry import register_kernel


@register_kernel("IndexedSlicesToDense")
def indexed_slices_to_dense(ctx, values, indices, dense_shape):
    xp = ctx.xp
    static = ctx.attrs.get("static_shape")
    if static is not None and static.is_fully_defined():  # known when the graph was built: no device->host read
        shape = tuple(static.as_list())
    else:
        shape = tuple(int(d) for d in np.asarray(to_host(dense_shape)).reshape(-1))
    out = xp.zeros(shape, dtype=values.dtype)
    flat_ids = indices.reshape(-1)
    rows = values.reshape((flat_ids.shape[0],) + shape[1:])
    if xp is np:
        if flat_ids.size and (flat_ids.min() < 0 or flat_ids.max() >= shape[0]):
            bad = int(flat_ids[(flat_ids < 0) | (flat_ids >= shape[0])][0])
            raise errors.InvalidArgumentError(None, ctx.op, f"indices contains {bad}, not in [0, {shape[0]})")
        np.add.at(out, flat_ids, rows)
        return out
    valid = (flat_ids >= 0) & (flat_ids < shape[0])
    flat_ids = xp.where(valid, flat_ids, 0)
    rows = xp.where(valid.reshape((-1,) + (1,) * (len(shape) - 1)), rows, xp.zeros((), dtype=rows.dtype))
    if hasattr(xp.add, "at"):
        xp.add.at(out, flat_ids, rows)
    else:  # older cupy
        import cupyx
        cupyx.scatter_add(out, flat_ids, rows)
    return out
