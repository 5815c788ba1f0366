"""Kernels of ops/elementwise_math_ops.py: the trigonometric / hyperbolic unary ops, Expm1, Rint and Atan2,
written against `ctx.xp` (numpy on CPU, cupy on GPU).
"""
from __future__ import annotations

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


