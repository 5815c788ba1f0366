"""Kernels of ops/math_extra_ops.py: the trigonometric / hyperbolic unary ops, Expm1, Atan2, Rint and PyFunc.

The unary ones are written against `ctx.xp` (numpy on CPU, cupy on GPU); PyFunc calls Python on the host.
"""
from __future__ import annotations

import numpy as np

from .. import dtypes as _dtypes
from .. import errors
from .backend import to_host
from .registry import register_kernel

UNARY = (("Tan", "tan"), ("Asin", "arcsin"), ("Acos", "arccos"), ("Atan", "arctan"), ("Sinh", "sinh"),
         ("Cosh", "cosh"), ("Asinh", "arcsinh"), ("Acosh", "arccosh"), ("Atanh", "arctanh"), ("Expm1", "expm1"),
         ("Rint", "rint"))


def _unary(op_type, fn_name):
    @register_kernel(op_type)
    def kernel(ctx, x):
        return getattr(ctx.xp, fn_name)(x)
    kernel.__name__ = fn_name
    return kernel


for _op, _fn in UNARY:
    _unary(_op, _fn)


@register_kernel("Atan2")
def atan2(ctx, y, x):
    return ctx.xp.arctan2(y, x)


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
