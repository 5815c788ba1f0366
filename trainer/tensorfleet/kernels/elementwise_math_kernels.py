"""Kernels of ops/elementwise_math_ops.py: the trigonometric / hyperbolic unary ops, Expm1, Rint and Atan2,
written against `ctx.xp` (numpy on CPU, cupy on GPU).
"""
from __future__ import annotations

from .math_kernels import register_xp_unary
from .registry import register_kernel

UNARY = (("Tan", "tan"), ("Asin", "arcsin"), ("Acos", "arccos"), ("Atan", "arctan"), ("Sinh", "sinh"),
         ("Cosh", "cosh"), ("Asinh", "arcsinh"), ("Acosh", "arccosh"), ("Atanh", "arctanh"), ("Expm1", "expm1"),
         ("Rint", "rint"))


for _op, _fn in UNARY:
    register_xp_unary(_op, _fn)


@register_kernel("Atan2")
def atan2(ctx, y, x):
    return ctx.xp.arctan2(y, x)


