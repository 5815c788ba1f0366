"""Kernels of `LoopAccumulatorWrite` and its gradient: the row-per-iteration store of TensorArray, map_fn and scan.

Kernels layer (ops in `ops/tensor_array_ops.py`). An accumulator is empty
(`[0]`) until its first write allocates `[n] + row shape` (n < 0: just enough
rows, grown by later writes: a TensorArray with dynamic_size); a write stores
one row, in place when the kernel owns the buffer (`ownership.owns`), else
into a copy.
"""
from __future__ import annotations

from .. import errors
from .ownership import owns
from .registry import register_kernel


@register_kernel("LoopAccumulatorWrite")
def accumulator_write(ctx, acc, index, value, n):
    xp, i, n = ctx.xp, int(index), int(n)
    value = xp.asarray(value)
    if i < 0 or (n >= 0 and i >= max(n, acc.shape[0])):
        raise errors.InvalidArgumentError(
            None, ctx.op, f"{ctx.op.name}: tried to write to index {i} but the array size is {max(n, acc.shape[0])}")
    if acc.shape[0] == 0:
        rows = n if n >= 0 else i + 1
        acc = xp.zeros((rows,) + value.shape, dtype=ctx.op.outputs[0].dtype.np_dtype)
    elif acc.shape[1:] != value.shape:
        raise errors.InvalidArgumentError(
            None, ctx.op, f"{ctx.op.name}: an element has shape {list(value.shape)} but earlier ones had "
                          f"{list(acc.shape[1:])}; TensorArray/map_fn/scan elements must all have one shape")
    elif i >= acc.shape[0]:  # dynamic size: grow to fit
        grown = xp.zeros((i + 1,) + value.shape, dtype=acc.dtype)
        grown[:acc.shape[0]] = acc
        acc = grown
    elif not owns(acc):
        acc = acc.copy()
    acc[i] = value
    return acc


@register_kernel("LoopAccumulatorWriteGrad")
def accumulator_write_grad(ctx, grad, index, acc):
    """The gradient for the accumulator input: `grad` cut or zero-padded to acc's rows, row `index` zeroed."""
    out = ctx.xp.zeros(acc.shape, dtype=grad.dtype)
    if acc.shape[0] == 0:  # the empty accumulator before the first write (any rank)
        return out
    m = min(grad.shape[0], acc.shape[0])
    out[:m] = grad[:m]
    if int(index) < acc.shape[0]:
        out[int(index)] = 0
    return out
