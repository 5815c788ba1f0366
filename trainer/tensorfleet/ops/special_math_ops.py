"""TF 1.15's special functions with the gradients TF registers: tf.erf, erfc, lgamma, digamma, polygamma, igamma,
igammac, betainc, zeta, lbeta and tf.math.bessel_i0/i0e/i1/i1e, cumulative_logsumexp, nextafter, polyval.

Sits in `ops/` beside elementwise_math_ops (wrappers, shape functions, gradients); kernels in
`kernels/special_kernels.py` (scipy.special, cupyx.scipy.special on a GPU). Gradients follow TF 1.15's
math_grad.py: Polygamma and Zeta only w.r.t. their second input (x, resp. q), Betainc only w.r.t. x, Igamma /
Igammac w.r.t. both (IgammaGradA for `a`). Binary ops broadcast; their gradients are summed back to each input's
shape. bessel_i0/i1, lbeta and polyval are composites, differentiated through the ops they are made of.
"""
from __future__ import annotations

__all__ = ["erf", "erfc", "lgamma", "digamma", "polygamma", "igamma", "igammac", "betainc", "lbeta", "zeta"]

import math

import numpy as np

from ..default_graph import control_dependencies, name_scope
from . import array_ops as _a
from . import comparison_ops as _c
from . import math_ops as _m
from .common import (NotDifferentiable, TensorShape, binary_inputs, broadcast_binary, convert_to_tensor,
                     is_tensor_like, make_tensor, register_gradient, register_op, unchanged_shape)
from .shape_util import axis_arg, normalize_axis

_FLOATS = "float16, float32, float64"


def _check_float(t, op_type, arg="x"):
    if not t.dtype.is_floating:
        raise TypeError(f"Value passed to parameter '{arg}' has DataType {t.dtype.name} not in list of allowed "
                        f"values: {_FLOATS} ({op_type})")
    return t


def _float_unary(op_type, py_name, doc):
    register_op(op_type, lambda op: [(_check_float(op.inputs[0], op_type).dtype, op.inputs[0].shape)])

    def fn(x, name=None):
        t = _check_float(convert_to_tensor(x), op_type)
        return make_tensor(op_type, [t], name=name, default_name=op_type)

    fn.__name__ = py_name
    fn.__doc__ = f"`tf.math.{py_name}(x)`: {doc} (op {op_type})."
    return fn


erf = _float_unary("Erf", "erf", "the error function 2/sqrt(pi) * integral_0^x exp(-t^2) dt")
erfc = _float_unary("Erfc", "erfc", "the complementary error function 1 - erf(x)")
lgamma = _float_unary("Lgamma", "lgamma", "log|Gamma(x)|; +inf at 0 and the negative integers")
digamma = _float_unary("Digamma", "digamma", "psi(x) = d/dx lgamma(x)")
bessel_i0e = _float_unary("BesselI0e", "bessel_i0e", "the exponentially scaled Bessel function exp(-|x|) I0(x)")
bessel_i1e = _float_unary("BesselI1e", "bessel_i1e", "the exponentially scaled Bessel function exp(-|x|) I1(x)")


def _register_float_binary(op_type, first_arg):
    def shape_fn(op):
        _check_float(op.inputs[0], op_type, first_arg)
        return broadcast_binary(op)

    register_op(op_type, shape_fn)


for _op_type, _first in (("Polygamma", "a"), ("Igamma", "a"), ("Igammac", "a"), ("Zeta", "x"),
                         ("NextAfter", "x1"), ("IgammaGradA", "a")):
    _register_float_binary(_op_type, _first)


def _binary(op_type, u, v, args, name):
    u, v = binary_inputs(u, v, op_type, args)
    _check_float(u, op_type, args[0])
    return make_tensor(op_type, [u, v], name=name, default_name=op_type)


def polygamma(a, x, name=None):
    """`tf.math.polygamma(a, x)`: the a-th derivative of digamma at x; NaN where a is negative or not an integer
    (op Polygamma, broadcasting)."""
    return _binary("Polygamma", a, x, ("a", "x"), name)


def igamma(a, x, name=None):
    """`tf.math.igamma(a, x)`: the regularized lower incomplete gamma function P(a, x); NaN for a <= 0 or x < 0
    (op Igamma, broadcasting)."""
    return _binary("Igamma", a, x, ("a", "x"), name)


def igammac(a, x, name=None):
    """`tf.math.igammac(a, x)`: the regularized upper incomplete gamma function Q(a, x) = 1 - P(a, x) (op Igammac,
    broadcasting)."""
    return _binary("Igammac", a, x, ("a", "x"), name)


def zeta(x, q, name=None):
    """`tf.math.zeta(x, q)`: the Hurwitz zeta function sum_n (n + q)^-x; NaN for x < 1 (op Zeta, broadcasting)."""
    return _binary("Zeta", x, q, ("x", "q"), name)


def nextafter(x1, x2, name=None):
    """`tf.math.nextafter(x1, x2)`: the next representable value after x1 towards x2 (op NextAfter, broadcasting)."""
    return _binary("NextAfter", x1, x2, ("x1", "x2"), name)


def _igamma_grad_a(a, x):
    """d/da igamma(a, x) (op IgammaGradA, internal to Igamma's gradient)."""
    return _binary("IgammaGradA", a, x, ("a", "x"), None)


NotDifferentiable("IgammaGradA")


# -- Betainc: a, b, x of one shape, or scalars ----------------------------------
def _betainc_shape(op):
    shape = TensorShape([])
    for t, arg in zip(op.inputs, ("a", "b", "x")):
        _check_float(t, "Betainc", arg)
        if t.dtype is not op.inputs[0].dtype:
            raise TypeError(f"Betainc: '{arg}' has dtype {t.dtype.name}, 'a' has {op.inputs[0].dtype.name}")
        if t.shape.ndims == 0:
            continue
        if shape.ndims == 0:
            shape = t.shape
            continue
        try:
            shape = shape.merge_with(t.shape)
        except ValueError:
            raise ValueError(f"Betainc: shapes of a, b and x must be equal or scalars, got "
                             f"{[str(i.shape) for i in op.inputs]}") from None
    return [(op.inputs[0].dtype, shape)]


register_op("Betainc", _betainc_shape)


def betainc(a, b, x, name=None):
    """`tf.math.betainc(a, b, x)`: the regularized incomplete beta function I_x(a, b); a, b, x have one shape,
    or some are scalars (op Betainc)."""
    a, x = binary_inputs(a, x, "Betainc", ("a", "x"))
    b = convert_to_tensor(b, dtype=a.dtype)
    return make_tensor("Betainc", [a, b, x], name=name, default_name="Betainc")


# -- composites --------------------------------------------------------------------
def bessel_i0(x, name=None):
    """`tf.math.bessel_i0(x)` = exp(|x|) * bessel_i0e(x) (as TF 1.15)."""
    with name_scope(name, "bessel_i0", [x]):
        x = convert_to_tensor(x)
        return _m.multiply(_m.exp(_m.abs(x)), bessel_i0e(x))


def bessel_i1(x, name=None):
    """`tf.math.bessel_i1(x)` = exp(|x|) * bessel_i1e(x) (as TF 1.15)."""
    with name_scope(name, "bessel_i1", [x]):
        x = convert_to_tensor(x)
        return _m.multiply(_m.exp(_m.abs(x)), bessel_i1e(x))


def lbeta(x, name=None):
    """`tf.lbeta(x)`: log|Beta(x)| over the last dimension, sum(lgamma(x), -1) - lgamma(sum(x, -1)); an empty last
    dimension gives -inf (TF's convention: lgamma(0) = inf)."""
    with name_scope(name, "lbeta", [x]):
        x = convert_to_tensor(x)
        log_prod_gamma_x = _m.reduce_sum(lgamma(x), axis=[-1])
        return _m.subtract(log_prod_gamma_x, lgamma(_m.reduce_sum(x, axis=[-1])))


def polyval(coeffs, x, name=None):
    """`tf.math.polyval(coeffs, x)`: coeffs[0] * x^(n-1) + ... + coeffs[n-1] by Horner's rule; zeros_like(x) for
    an empty list."""
    if not isinstance(coeffs, list):
        raise ValueError(f"Argument coeffs must be list type found {type(coeffs)}.")
    with name_scope(name, "polyval", [x]) as scope:
        x = convert_to_tensor(x)
        if not coeffs:
            return _a.zeros_like(x, name=scope)
        cs = [convert_to_tensor(c) if is_tensor_like(c) else convert_to_tensor(c, dtype=x.dtype) for c in coeffs]
        p = cs[0]
        for c in cs[1:]:
            p = _m.add(c, _m.multiply(p, x))
        return p


# -- CumulativeLogsumexp ----------------------------------------------------------
register_op("CumulativeLogsumexp", unchanged_shape)


def cumulative_logsumexp(x, axis=0, exclusive=False, reverse=False, name=None):
    """`tf.math.cumulative_logsumexp(x, axis)`: log(cumsum(exp(x))) along `axis` without overflow; `exclusive`
    leaves the element itself out (-inf first), `reverse` runs backwards (op CumulativeLogsumexp)."""
    x = _check_float(convert_to_tensor(x), "CumulativeLogsumexp")
    axis = axis_arg(axis)
    if not isinstance(axis, int):
        raise TypeError(f"CumulativeLogsumexp: axis must be a scalar int, got {axis!r}")
    if x.shape.ndims is not None:
        if x.shape.ndims == 0:
            raise ValueError("CumulativeLogsumexp: input must have rank >= 1")
        axis = normalize_axis(axis, x.shape.ndims)
    return make_tensor("CumulativeLogsumexp", [x], {"axis": axis, "exclusive": bool(exclusive),
                                                    "reverse": bool(reverse)},
                       name=name, default_name="CumulativeLogsumexp")


# -- gradients (TF 1.15's math_grad.py) ----------------------------------------------
def _const(v, like):
    return convert_to_tensor(v, dtype=like.dtype)


@register_gradient("Erf")
def _erf_grad(op, grad):
    x = op.inputs[0]
    with control_dependencies([grad]):
        return [_m.multiply(grad, _m.multiply(_const(2 / math.sqrt(math.pi), x), _m.exp(_m.negative(_m.square(x)))))]


@register_gradient("Erfc")
def _erfc_grad(op, grad):
    x = op.inputs[0]
    with control_dependencies([grad]):
        return [_m.multiply(grad, _m.multiply(_const(-2 / math.sqrt(math.pi), x), _m.exp(_m.negative(_m.square(x)))))]


@register_gradient("Lgamma")
def _lgamma_grad(op, grad):
    with control_dependencies([grad]):
        return [_m.multiply(grad, digamma(op.inputs[0]))]


@register_gradient("Digamma")
def _digamma_grad(op, grad):
    x = op.inputs[0]
    with control_dependencies([grad]):
        return [_m.multiply(grad, polygamma(_const(1, x), x))]


@register_gradient("Polygamma")
def _polygamma_grad(op, grad):
    """W.r.t. x only: polygamma(a + 1, x) (TF has no derivative in the order a)."""
    a, x = op.inputs
    with control_dependencies([grad]):
        partial_x = polygamma(_m.add(a, _const(1, a)), x)
        return [None, _m.sum_to_shape_of(_m.multiply(partial_x, grad), x, a)]


def _igamma_partials(op, grad):
    a, x = op.inputs
    with control_dependencies([grad]):
        partial_a = _igamma_grad_a(a, x)
        # in log space: Gamma(a) and x^(a-1) can overflow
        partial_x = _m.exp(_m.subtract(_m.add(_m.negative(x), _m.multiply(_m.subtract(a, _const(1, a)), _m.log(x))),
                                       lgamma(a)))
        return _m.multiply(partial_a, grad), _m.multiply(partial_x, grad)


@register_gradient("Igamma")
def _igamma_grad(op, grad):
    a, x = op.inputs
    ga, gx = _igamma_partials(op, grad)
    return [_m.sum_to_shape_of(ga, a, x), _m.sum_to_shape_of(gx, x, a)]


@register_gradient("Igammac")
def _igammac_grad(op, grad):
    a, x = op.inputs
    ga, gx = _igamma_partials(op, grad)
    return [_m.sum_to_shape_of(_m.negative(ga), a, x), _m.sum_to_shape_of(_m.negative(gx), x, a)]


@register_gradient("Zeta")
def _zeta_grad(op, grad):
    """W.r.t. q only: -x * zeta(x + 1, q) (TF has no derivative in x)."""
    x, q = op.inputs
    with control_dependencies([grad]):
        partial_q = _m.multiply(_m.negative(x), zeta(_m.add(x, _const(1, x)), q))
        return [None, _m.sum_to_shape_of(_m.multiply(partial_q, grad), q, x)]


@register_gradient("Betainc")
def _betainc_grad(op, grad):
    """W.r.t. x only: x^(a-1) (1-x)^(b-1) / Beta(a, b), in log space (TF has no derivative in a, b)."""
    a, b, x = op.inputs
    one = _const(1, x)
    log_beta = _m.subtract(_m.add(lgamma(a), lgamma(b)), lgamma(_m.add(a, b)))
    partial_x = _m.exp(_m.subtract(_m.add(_m.multiply(_m.subtract(b, one), _m.log(_m.subtract(one, x))),
                                          _m.multiply(_m.subtract(a, one), _m.log(x))), log_beta))
    return [None, None, _m.sum_to_shape_of(_m.multiply(partial_x, grad), x)]


@register_gradient("NextAfter")
def _nextafter_grad(op, grad):
    """1 w.r.t. x1, 0 w.r.t. x2 (TF's)."""
    x1, x2 = op.inputs
    return [_m.sum_to_shape_of(grad, x1, x2), _a.zeros_like(x2)]


@register_gradient("BesselI0e")
def _bessel_i0e_grad(op, grad):
    x, y = op.inputs[0], op.outputs[0]
    with control_dependencies([grad]):
        return [_m.multiply(grad, _m.subtract(bessel_i1e(x), _m.multiply(_m.sign(x), y)))]


@register_gradient("BesselI1e")
def _bessel_i1e_grad(op, grad):
    """i0e(x) - y (sign(x) + 1/x); 0.5 at |x| <= eps, where the formula divides by zero (TF's)."""
    x, y = op.inputs[0], op.outputs[0]
    with control_dependencies([grad]):
        eps = np.finfo(x.dtype.np_dtype).eps
        zeros = _a.zeros_like(x)
        not_tiny = _c.greater(_m.abs(x), _const(eps, x))
        safe_x = _c.where(not_tiny, x, _m.add(zeros, _const(eps, x)))
        dy_dx = _m.subtract(bessel_i0e(safe_x), _m.multiply(y, _m.add(_m.sign(safe_x), _m.reciprocal(safe_x))))
        return [_m.multiply(grad, _c.where(not_tiny, dy_dx, _m.add(zeros, _const(0.5, x))))]


@register_gradient("CumulativeLogsumexp")
def _cumulative_logsumexp_grad(op, grad):
    """TF's: the incoming gradient split into its positive and negative parts, each carried in log space by a
    reversed cumulative_logsumexp."""
    x, out = op.inputs[0], op.outputs[0]
    axis, exclusive, reverse = op.get_attr("axis"), op.get_attr("exclusive"), op.get_attr("reverse")
    lowest = _const(float(np.finfo(grad.dtype.np_dtype).min), grad)
    zero = _const(0, grad)
    log_pos = _c.where_v2(_c.greater(grad, zero), _m.log(grad), lowest)
    log_neg = _c.where_v2(_c.less(grad, zero), _m.log(_m.negative(grad)), lowest)

    def carried(log_part):
        return _m.exp(_m.add(cumulative_logsumexp(_m.subtract(log_part, out), axis=axis, reverse=not reverse,
                                                  exclusive=exclusive), x))

    return [_m.subtract(carried(log_pos), carried(log_neg))]
