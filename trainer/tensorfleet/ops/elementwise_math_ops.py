"""Elementwise math functions of tf.math / tf.*: the trigonometric and hyperbolic functions (tan, asin, acos, atan,
atan2, sinh, cosh, asinh, acosh, atanh), expm1 and rint, each an op of its own with TF's gradient (rint has
none), and the composites log_sigmoid, scalar_mul, truncatediv and truncatemod (C's integer division and
remainder, toward zero).

Sits in `ops/` above arithmetic_ops (add, exp, log, sin, cos & co) and nn_ops (log_sigmoid is -softplus(-x));
kernels in `kernels/elementwise_math_kernels.py`. The composites get their gradients from the ops they are made
of.
"""
from __future__ import annotations

__all__ = ["tan", "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh", "expm1", "atan2", "rint",
           "log_sigmoid", "scalar_mul", "truncatediv", "truncatemod"]

from ..default_graph import name_scope
from . import arithmetic_ops as _arith, math_ops as _m
from . import nn_ops as _n
from .common import (NotDifferentiable, binary_inputs, broadcast_binary, convert_to_tensor, make_tensor,
                     register_gradient, register_op)


def _float_unary(op_type, py_name):
    register_op(op_type, lambda op: [(op.inputs[0].dtype, op.inputs[0].shape)])

    def fn(x, name=None):
        t = convert_to_tensor(x)
        if not (t.dtype.is_floating or t.dtype.is_complex):
            raise TypeError(f"Value passed to parameter 'x' has DataType {t.dtype.name} not in list of allowed "
                            f"values: bfloat16, float16, float32, float64, complex64, complex128 ({op_type})")
        return make_tensor(op_type, [t], name=name, default_name=op_type)

    fn.__name__ = py_name
    fn.__doc__ = f"`tf.math.{py_name}(x)`: elementwise {op_type}."
    return fn


tan = _float_unary("Tan", "tan")
asin = _float_unary("Asin", "asin")
acos = _float_unary("Acos", "acos")
atan = _float_unary("Atan", "atan")
sinh = _float_unary("Sinh", "sinh")
cosh = _float_unary("Cosh", "cosh")
asinh = _float_unary("Asinh", "asinh")
acosh = _float_unary("Acosh", "acosh")
atanh = _float_unary("Atanh", "atanh")
expm1 = _float_unary("Expm1", "expm1")
rint = _float_unary("Rint", "rint")
NotDifferentiable("Rint")


def _g(fn):
    """A gradient d/dx given as a function of (x, y): grad * fn(x, y)."""
    return lambda op, grad: [_m.multiply(grad, fn(op.inputs[0], op.outputs[0]))]


_one = 1.0
register_gradient("Tan")(_g(lambda x, y: _m.add(_m.square(y), _one)))
register_gradient("Asin")(_g(lambda x, y: _m.rsqrt(_m.subtract(_one, _m.square(x)))))
register_gradient("Acos")(_g(lambda x, y: _m.negative(_m.rsqrt(_m.subtract(_one, _m.square(x))))))
register_gradient("Atan")(_g(lambda x, y: _m.reciprocal(_m.add(_m.square(x), _one))))
register_gradient("Sinh")(_g(lambda x, y: cosh(x)))
register_gradient("Cosh")(_g(lambda x, y: sinh(x)))
register_gradient("Asinh")(_g(lambda x, y: _m.reciprocal(cosh(y))))
register_gradient("Acosh")(_g(lambda x, y: _m.reciprocal(sinh(y))))
register_gradient("Atanh")(_g(lambda x, y: _m.reciprocal(_m.subtract(_one, _m.square(x)))))
register_gradient("Expm1")(_g(lambda x, y: _m.exp(x)))

register_op("Atan2", broadcast_binary)


def atan2(y, x, name=None):
    """`tf.math.atan2(y, x)`: the angle of (x, y), elementwise with broadcasting."""
    y, x = binary_inputs(y, x, "Atan2")
    if not y.dtype.is_floating:
        raise TypeError(f"Atan2 needs floating point inputs, got {y.dtype.name}")
    return make_tensor("Atan2", [y, x], name=name, default_name="Atan2")


@register_gradient("Atan2")
def _atan2_grad(op, grad):
    y, x = op.inputs
    inv = _m.reciprocal(_m.add(_m.square(x), _m.square(y)))
    gy, gx = _m.multiply(grad, _m.multiply(x, inv)), _m.negative(_m.multiply(grad, _m.multiply(y, inv)))
    return _arith._pair_sums(gy, gx, y, x)


# -- composites -------------------------------------------------------------------
def log_sigmoid(x, name=None):
    """`tf.math.log_sigmoid(x)` = -softplus(-x) (stable for large |x|)."""
    with name_scope(name, "LogSigmoid", [x]):
        return _m.negative(_n.softplus(_m.negative(convert_to_tensor(x))))


def scalar_mul(scalar, x, name=None):
    """`tf.scalar_mul(scalar, x)`."""
    with name_scope(name, "scalar_mul", [x]):
        x = convert_to_tensor(x)
        return _m.multiply(convert_to_tensor(scalar, dtype=x.dtype), x)


def truncatediv(x, y, name=None):
    """`tf.truncatediv`: x / y rounded toward zero (C semantics)."""
    with name_scope(name, "truncatediv", [x, y]):
        x, y = binary_inputs(x, y, "TruncateDiv")
        q = _m.floordiv(_m.abs(x), _m.abs(y))
        return _m.multiply(_m.multiply(_m.sign(x), _m.sign(y)), q)


def truncatemod(x, y, name=None):
    """`tf.truncatemod`: the remainder with the sign of x (C's fmod)."""
    with name_scope(name, "truncatemod", [x, y]):
        x, y = binary_inputs(x, y, "TruncateMod")
        return _m.subtract(x, _m.multiply(truncatediv(x, y), y))
