"""Kernels of ops/host_ops.py (CPU only): PyFunc calls the Python function on the host values of its inputs,
Timestamp reads the clock (time.time()).
"""
from __future__ import annotations

import time

import numpy as np

from .. import dtypes as _dtypes
from .. import errors
from .backend import to_host
from .registry import register_kernel


@register_kernel("PyFunc", devices=("CPU",))
def py_func(ctx, *inputs):
    a = ctx.op.attrs
    args = [to_host(v) for v in inputs]
    try:
        result = a["func"](*args)
    except errors.OpError:
        raise
    except Exception as e:  # noqa: BLE001 - the user's function failed: TF reports it as the op's error
        raise errors.InvalidArgumentError(None, ctx.op, f"{type(e).__name__}: {e}\n\t [[node {ctx.op.name}]]") \
            from e
    touts = a["Tout"]
    if not a["multiple"]:
        result = [result]
    elif not isinstance(result, (list, tuple)):
        result = [result]
    if len(result) != len(touts):
        raise errors.InvalidArgumentError(None, ctx.op, f"{ctx.op.name}: the function returned {len(result)} "
                                                        f"values, Tout lists {len(touts)}")
    out = [_output(ctx, i, v, dt) for i, (v, dt) in enumerate(zip(result, touts, strict=True))]
    if not out:
        return None
    return out[0] if len(out) == 1 else tuple(out)


def _output(ctx, i, v, dt):
    """One returned value as an array of its Tout dtype (same-kind casts only)."""
    try:
        arr = _dtypes.string_array(v) if dt is _dtypes.string else np.asarray(v)
    except TypeError as e:
        raise errors.InvalidArgumentError(None, ctx.op, f"{ctx.op.name}: output {i}: {e}") from None
    if dt is not _dtypes.string and arr.dtype != dt.np_dtype:
        if not np.can_cast(arr.dtype, dt.np_dtype, casting="same_kind"):
            raise errors.InvalidArgumentError(None, ctx.op, f"{ctx.op.name}: output {i} has dtype {arr.dtype}, "
                                                            f"Tout says {dt.name}")
        arr = arr.astype(dt.np_dtype)
    return arr


@register_kernel("Timestamp", devices=("CPU",))
def timestamp(ctx):
    return np.float64(time.time())
