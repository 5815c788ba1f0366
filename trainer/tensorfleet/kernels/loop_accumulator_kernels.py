"""Kernels of `LoopAccumulatorWrite` and its gradient: the row-per-iteration accumulator of map_fn and scan.

Kernels layer (ops in `ops/functional_map_ops.py`). An accumulator is empty
(`[0]`) until its first write allocates `[n] + row shape`; a write stores one
row, in place when the kernel owns the buffer (`ownership.owns`), else into a copy.
"""
from __future__ import annotations

from .. import errors
from .ownership import owns
from .registry import register_kernel


@register_kernel("LoopAccumulatorWrite")
def accumulator_write(ctx, acc, index, value, n):
    xp, i, n = ctx.xp, int(index), int(n)
    value = xp.asarray(value)
    if acc.shape[0] == 0:
        acc = xp.zeros((n,) + value.shape, dtype=ctx.op.outputs[0].dtype.np_dtype)
    elif acc.shape[1:] != value.shape:
        raise errors.InvalidArgumentError(
            None, ctx.op, f"{ctx.op.name}: an iteration's result has shape {list(value.shape)} but earlier ones had "
                          f"{list(acc.shape[1:])}; map_fn/scan results must have the same shape in every iteration")
    elif not owns(acc):
        acc = acc.copy()
    if not 0 <= i < acc.shape[0]:
        raise errors.InvalidArgumentError(None, ctx.op, f"{ctx.op.name}: index {i} out of range [0, {acc.shape[0]})")
    acc[i] = value
    return acc


@register_kernel("LoopAccumulatorWriteGrad")
def accumulator_write_grad(ctx, grad, index, acc):
    xp = ctx.xp
    if acc.shape[0] == 0:
        return xp.zeros(acc.shape, dtype=acc.dtype)
    out = xp.array(grad, copy=True)
    out[int(index)] = 0
    return out
