"""Python operators on Tensor (and so on Variable): `+ - * / // % ** @`, unary `-`, `abs()`,
`< <= > >=`, `& | ^ ~` (logical, bool), and `[]` slicing (StridedSlice).

Sits in `ops/` on top of math/comparison/slicing ops; imported by `math_ops` for its side effect.
Names follow TF: `a + b` is op "add", `a / b` "truediv", `a < b` "Less", `a[1:]` "strided_slice".
`==`/`!=` are not overloaded: Tensors compare and hash by identity, as in TF1.
"""
from __future__ import annotations

from ..graph import Tensor
from ..default_graph import name_scope
from . import comparison_ops as _c
from . import arithmetic_ops as _m
from .slicing_ops import getitem


def _named(fn, default_name, reverse=False):
    """A binary operator: fn(x, y, name) created inside a name scope `default_name` (TF's helper)."""
    def forward(self, other):
        with name_scope(None, default_name, [self, other]) as scope:
            return fn(self, other, name=scope)

    def backward(self, other):
        with name_scope(None, default_name, [self, other]) as scope:
            return fn(other, self, name=scope)

    return backward if reverse else forward


def _truediv(x, y, name):
    return _m.truediv(x, y, name=name)


_BINARY = {
    "add": (_m.add, "add"), "sub": (_m.subtract, "sub"), "mul": (_m.multiply, "mul"),
    "truediv": (_truediv, "truediv"), "floordiv": (_m.floordiv, "floordiv"), "mod": (_m.mod, "mod"),
    "pow": (_m.pow, "pow"), "and": (_c.logical_and, "and"), "or": (_c.logical_or, "or"),
    "xor": (_c.logical_xor, "xor"),
}

for _op, (_fn, _name) in _BINARY.items():
    Tensor._override_operator(f"__{_op}__", _named(_fn, _name))
    Tensor._override_operator(f"__r{_op}__", _named(_fn, _name, reverse=True))

Tensor._override_operator("__matmul__", lambda self, other: _m.matmul(self, other, name="matmul"))
Tensor._override_operator("__rmatmul__", lambda self, other: _m.matmul(other, self, name="matmul"))
Tensor._override_operator("__neg__", lambda self: _m.negative(self, name="Neg"))
Tensor._override_operator("__abs__", lambda self: _m.abs(self, name="Abs"))
Tensor._override_operator("__invert__", lambda self: _c.logical_not(self, name="LogicalNot"))
Tensor._override_operator("__lt__", lambda self, other: _c.less(self, other))
Tensor._override_operator("__le__", lambda self, other: _c.less_equal(self, other))
Tensor._override_operator("__gt__", lambda self, other: _c.greater(self, other))
Tensor._override_operator("__ge__", lambda self, other: _c.greater_equal(self, other))
Tensor._override_operator("__getitem__", lambda self, key: getitem(self, key))
