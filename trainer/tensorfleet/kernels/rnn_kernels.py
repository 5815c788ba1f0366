"""Kernels for the RNN helpers' ops: ReverseSequence (ops/reverse_sequence_op.py), written against `ctx.xp`."""
from __future__ import annotations

import numpy as np

from .. import errors
from .backend import to_host
from .registry import host_inputs, register_kernel


@register_kernel("ReverseSequence")
@host_inputs(1)
def reverse_sequence(ctx, x, seq_lengths):
    seq_axis, batch_axis = ctx.attrs["seq_axis"], ctx.attrs["batch_axis"]
    lengths = np.asarray(to_host(seq_lengths)).reshape(-1)
    if lengths.shape[0] != x.shape[batch_axis]:
        raise errors.InvalidArgumentError(None, ctx.op, f"len(seq_lens) != input.dims({batch_axis}), "
                                          f"({lengths.shape[0]} vs. {x.shape[batch_axis]})")
    out = x.copy()
    for b, n in enumerate(lengths.tolist()):
        if n < 0 or n > x.shape[seq_axis]:
            raise errors.InvalidArgumentError(None, ctx.op, f"seq_lens({b}) > input.dims({seq_axis}) or negative: "
                                              f"{n} (input.dims({seq_axis}) = {x.shape[seq_axis]})")
        if n <= 1:
            continue
        src = [slice(None)] * x.ndim
        src[batch_axis] = b
        src[seq_axis] = slice(n - 1, None, -1)
        dst = [slice(None)] * x.ndim
        dst[batch_axis] = b
        dst[seq_axis] = slice(0, n)
        out[tuple(dst)] = x[tuple(src)]
    return out
