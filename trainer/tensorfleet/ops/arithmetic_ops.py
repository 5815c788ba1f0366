"""Arithmetic ops: elementwise arithmetic with broadcasting, unary math, add_n, matmul, cast.

Sits in `ops/` (wrappers + shape functions + gradients), below the reductions, comparisons
and clipping built on it; kernels in `kernels/math_kernels.py` and `kernels/core_kernels.py`.
Each op: wrapper with TF's signature and default name, shape function, gradient. Broadcasting
gradients are reduced back to the input's shape with `sum_to_shape_of`; reductions re-expand
with `reduction_grad` (both in broadcast_grad_ops.py, re-exported here). `math_ops` re-exports
this module with the others (as TF's math_ops).
"""

from __future__ import annotations

__all__ = ["add", "subtract", "multiply", "sub", "mul", "divide", "truediv", "div", "floordiv", "realdiv", "mod",
           "floormod", "div_no_nan", "pow", "maximum", "minimum", "squared_difference", "negative", "neg", "abs",
           "sign", "exp", "log", "log1p", "sqrt", "rsqrt", "square", "reciprocal", "floor", "ceil", "round", "sin",
           "cos", "add_n", "accumulate_n", "matmul", "cast", "to_float", "to_double", "to_int32", "to_int64",
           "saturate_cast"]

import builtins as _builtins

import numpy as np

from .. import dtypes as _dtypes
from ..graph import Tensor
from ..default_graph import name_scope
from .common import (NotDifferentiable, TensorShape, binary_inputs, broadcast_binary, convert_to_tensor,
                     is_tensor_like, make_tensor, register_gradient, register_op)
from .broadcast_grad_ops import (_pair_sums, broadcast_like, reduction_grad,  # noqa: F401  (re-exports)
                                 sum_to_shape_of)
from .linalg_ops import batch_matmul


# -- elementwise binary -------------------------------------------------------
def binary_op(op_type: str, x, y, name=None, default_name=None) -> Tensor:
    """Creates a broadcasting binary op after TF's operand conversion rules."""
    x, y = binary_inputs(x, y, op_type)
    return make_tensor(op_type, [x, y], name=name, default_name=default_name or op_type)


def _numeric_binary_shape(op):
    x, y = op.inputs
    if x.dtype.is_bool:
        raise TypeError(f"{op.type} does not support dtype bool")
    return broadcast_binary(op)


def _binary(op_type: str, py_name: str, default_name=None):
    register_op(op_type, _numeric_binary_shape)

    def fn(x, y, name=None):
        return binary_op(op_type, x, y, name, default_name)

    fn.__name__ = py_name
    fn.__doc__ = f"`tf.{py_name}(x, y)`: elementwise {op_type} with numpy broadcasting."
    return fn


add = _binary("Add", "add")
register_op("AddV2", _numeric_binary_shape)  # what TF 1.15's `x + y` writes: graphs frozen by TF import
subtract = _binary("Sub", "subtract")
multiply = _binary("Mul", "multiply")
sub, mul = subtract, multiply
floordiv = _binary("FloorDiv", "floordiv", "floordiv")
mod = _binary("FloorMod", "mod")
floormod = mod
pow = _binary("Pow", "pow")  # noqa: A001
maximum = _binary("Maximum", "maximum")
minimum = _binary("Minimum", "minimum")
squared_difference = _binary("SquaredDifference", "squared_difference")
_realdiv = _binary("RealDiv", "realdiv")
_div_no_nan = _binary("DivNoNan", "div_no_nan")


def realdiv(x, y, name=None):
    """`tf.realdiv(x, y)`: float division (op RealDiv); integer inputs are a TypeError (use truediv)."""
    x, y = binary_inputs(x, y, "RealDiv")
    if not x.dtype.is_floating:
        raise TypeError(f"Value passed to parameter 'x' has DataType {x.dtype.name} not in list of allowed "
                        f"values: float16, float32, float64 (RealDiv)")
    return make_tensor("RealDiv", [x, y], name=name, default_name="RealDiv")


def div_no_nan(x, y, name=None):
    """`tf.div_no_nan(x, y)`: x / y, and 0 wherever y == 0."""
    x, y = binary_inputs(x, y, "DivNoNan")
    return make_tensor("DivNoNan", [x, y], name=name, default_name="div_no_nan")


_TRUEDIV_CAST = {_dtypes.int8: _dtypes.float32, _dtypes.uint8: _dtypes.float32, _dtypes.int16: _dtypes.float32,
                 _dtypes.int32: _dtypes.float64, _dtypes.int64: _dtypes.float64}


def truediv(x, y, name=None):
    """`tf.truediv`: Python 3 division; int8/16 and uint8 become float32, int32/int64 become float64."""
    with name_scope(name, "truediv", [x, y]) as scope:
        x, y = binary_inputs(x, y, "truediv")
        target = _TRUEDIV_CAST.get(x.dtype)
        if target is not None:
            x, y = cast(x, target), cast(y, target)
        elif not x.dtype.is_floating:
            raise TypeError(f"Invalid dtype {x.dtype.name} in __truediv__")
        return make_tensor("RealDiv", [x, y], name=scope)


def divide(x, y, name=None):
    """`tf.divide(x, y)`: same as `x / y` (truediv)."""
    return truediv(x, y, name=name)


def div(x, y, name=None):
    """`tf.div` (TF1): Python-2 division: floor division for integers, real division for floats."""
    with name_scope(name, "div", [x, y]) as scope:
        x, y = binary_inputs(x, y, "div")
        op_type = "RealDiv" if x.dtype.is_floating else "FloorDiv"
        return make_tensor(op_type, [x, y], name=scope)


@register_gradient("Add")
@register_gradient("AddV2")
def _add_grad(op, grad):
    x, y = op.inputs
    return _pair_sums(grad, grad, x, y)


@register_gradient("Sub")
def _sub_grad(op, grad):
    x, y = op.inputs
    return _pair_sums(grad, negative(grad), x, y)


@register_gradient("Mul")
def _mul_grad(op, grad):
    x, y = op.inputs
    return _pair_sums(multiply(grad, y), multiply(grad, x), x, y)


@register_gradient("RealDiv")
def _realdiv_grad(op, grad):
    x, y = op.inputs
    gx = _realdiv(grad, y)
    gy = multiply(grad, _realdiv(negative(op.outputs[0]), y))
    return _pair_sums(gx, gy, x, y)


@register_gradient("DivNoNan")
def _div_no_nan_grad(op, grad):
    x, y = op.inputs
    gx = _div_no_nan(grad, y)
    gy = multiply(grad, _div_no_nan(negative(op.outputs[0]), y))
    return _pair_sums(gx, gy, x, y)


NotDifferentiable("FloorDiv")


@register_gradient("FloorMod")
def _floormod_grad(op, grad):
    x, y = op.inputs  # d/dy (x - floor(x/y) * y) = -floor(x/y)
    return _pair_sums(grad, multiply(grad, negative(floor(_realdiv(x, y)))), x, y)


@register_gradient("Pow")
def _pow_grad(op, grad):
    from .comparison_ops import greater, where  # late: comparison_ops imports this module at load
    x, y = op.inputs
    z = op.outputs[0]
    one = convert_to_tensor(1, dtype=y.dtype)
    gx = multiply(grad, multiply(y, pow(x, subtract(y, one))))
    zeros = broadcast_like(convert_to_tensor(0, dtype=x.dtype), x)
    positive = greater(x, zeros)
    log_x = where(positive, log(where(positive, x, broadcast_like(one, x))), zeros)
    gy = multiply(grad, multiply(z, log_x))
    return _pair_sums(gx, gy, x, y)


def _minmax_grad(op, grad, select_x):
    from .comparison_ops import where  # late: comparison_ops imports this module at load
    x, y = op.inputs
    xmask = select_x(x, y)
    zeros = broadcast_like(convert_to_tensor(0, dtype=grad.dtype), grad)
    return _pair_sums(where(xmask, grad, zeros), where(xmask, zeros, grad), x, y)


@register_gradient("Maximum")
def _maximum_grad(op, grad):
    """Ties (x == y) send the whole gradient to x, as in TF."""
    from .comparison_ops import greater_equal  # late: comparison_ops imports this module at load
    return _minmax_grad(op, grad, greater_equal)


@register_gradient("Minimum")
def _minimum_grad(op, grad):
    """Ties (x == y) send the whole gradient to x, as in TF."""
    from .comparison_ops import less_equal  # late: comparison_ops imports this module at load
    return _minmax_grad(op, grad, less_equal)


@register_gradient("SquaredDifference")
def _squared_difference_grad(op, grad):
    x, y = op.inputs
    two = convert_to_tensor(2, dtype=grad.dtype)
    gx = multiply(multiply(grad, two), subtract(x, y))
    return _pair_sums(gx, negative(gx), x, y)


# -- unary --------------------------------------------------------------------
def _unary(op_type: str, py_name: str, float_only=False):
    def shape_fn(op):
        t = op.inputs[0]
        if float_only and not t.dtype.is_floating:
            raise TypeError(f"Value passed to parameter 'x' has DataType {t.dtype.name} not in list of allowed "
                            f"values: float16, float32, float64 ({op_type})")
        if t.dtype.is_bool:
            raise TypeError(f"{op_type} does not support dtype bool")
        return [(t.dtype, t.shape)]

    register_op(op_type, shape_fn)

    def fn(x, name=None):
        return make_tensor(op_type, [convert_to_tensor(x)], name=name, default_name=op_type)

    fn.__name__ = py_name
    fn.__doc__ = f"`tf.{py_name}(x)`: elementwise {op_type}."
    return fn


negative = _unary("Neg", "negative")
neg = negative
abs = _unary("Abs", "abs")  # noqa: A001
sign = _unary("Sign", "sign")
exp = _unary("Exp", "exp", float_only=True)
log = _unary("Log", "log", float_only=True)
log1p = _unary("Log1p", "log1p", float_only=True)
sqrt = _unary("Sqrt", "sqrt", float_only=True)
rsqrt = _unary("Rsqrt", "rsqrt", float_only=True)
square = _unary("Square", "square")
reciprocal = _unary("Reciprocal", "reciprocal")
floor = _unary("Floor", "floor", float_only=True)
ceil = _unary("Ceil", "ceil", float_only=True)
round = _unary("Round", "round")  # noqa: A001  (banker's rounding, as TF)
sin = _unary("Sin", "sin", float_only=True)
cos = _unary("Cos", "cos", float_only=True)
for _t in ("Sign", "Floor", "Ceil", "Round"):
    NotDifferentiable(_t)  # zero almost everywhere: no gradient flows (TF returns zeros or None)


@register_gradient("Neg")
def _neg_grad(op, grad):
    return [negative(grad)]


@register_gradient("Abs")
def _abs_grad(op, grad):
    return [multiply(grad, sign(op.inputs[0]))]


@register_gradient("Exp")
def _exp_grad(op, grad):
    return [multiply(grad, op.outputs[0])]


@register_gradient("Log")
def _log_grad(op, grad):
    return [multiply(grad, reciprocal(op.inputs[0]))]


@register_gradient("Log1p")
def _log1p_grad(op, grad):
    x = op.inputs[0]
    return [multiply(grad, reciprocal(add(x, convert_to_tensor(1, dtype=x.dtype))))]


@register_gradient("Sqrt")
def _sqrt_grad(op, grad):
    y = op.outputs[0]
    return [_realdiv(multiply(grad, convert_to_tensor(0.5, dtype=y.dtype)), y)]


@register_gradient("Rsqrt")
def _rsqrt_grad(op, grad):
    y = op.outputs[0]
    return [multiply(grad, multiply(convert_to_tensor(-0.5, dtype=y.dtype), multiply(square(y), y)))]


@register_gradient("Square")
def _square_grad(op, grad):
    x = op.inputs[0]
    return [multiply(grad, multiply(convert_to_tensor(2, dtype=x.dtype), x))]


@register_gradient("Reciprocal")
def _reciprocal_grad(op, grad):
    return [negative(multiply(grad, square(op.outputs[0])))]


@register_gradient("Sin")
def _sin_grad(op, grad):
    return [multiply(grad, cos(op.inputs[0]))]


@register_gradient("Cos")
def _cos_grad(op, grad):
    return [negative(multiply(grad, sin(op.inputs[0])))]


# -- AddN (gradient aggregation) ----------------------------------------------
def _add_n_shape(op):
    shape = op.inputs[0].shape
    for t in op.inputs[1:]:
        shape = shape.merge_with(t.shape)
    return [(op.inputs[0].dtype, shape)]


register_op("AddN", _add_n_shape)


def add_n(inputs, name=None):
    inputs = [convert_to_tensor(t) for t in inputs]
    if not inputs:
        raise ValueError("inputs must be a non-empty list of Tensors")
    if len(inputs) == 1:
        return inputs[0] if name is None else make_tensor("Identity", inputs, name=name)
    for t in inputs[1:]:
        if t.dtype is not inputs[0].dtype:
            raise TypeError(f"AddN: all inputs must have dtype {inputs[0].dtype.name}, got {t.dtype.name}")
    return make_tensor("AddN", inputs, name=name, default_name="AddN")


@register_gradient("AddN")
def _add_n_grad(op, grad):
    return [grad] * len(op.inputs)


# -- MatMul -------------------------------------------------------------------
def _matmul_shape(op):
    a, b = op.inputs
    ta, tb = op.get_attr("transpose_a"), op.get_attr("transpose_b")
    sa, sb = a.shape.with_rank(2), b.shape.with_rank(2)
    m, ka = (sa[1], sa[0]) if ta else (sa[0], sa[1])
    kb, n = (sb[1], sb[0]) if tb else (sb[0], sb[1])
    if ka is not None and kb is not None and ka != kb:
        raise ValueError(f"Dimensions must be equal, but are {ka} and {kb}")
    return [(a.dtype, TensorShape([m, n]))]


register_op("MatMul", _matmul_shape, expensive=True)


def matmul(a, b, transpose_a=False, transpose_b=False, adjoint_a=False, adjoint_b=False, name=None):
    """`tf.matmul`: MatMul for rank-2 tensors, BatchMatMulV2 (broadcast batch axes) when either has rank > 2
    (adjoint = transpose for real dtypes)."""
    ranks = [convert_to_tensor(t).shape.ndims if is_tensor_like(t) else np.ndim(t) for t in (a, b)]
    batched = any(r is not None and r > 2 for r in ranks)
    # TF's argument names: MatMul(a, b), BatchMatMulV2(x, y)
    a, b = binary_inputs(a, b, "BatchMatMulV2") if batched else binary_inputs(a, b, "MatMul", ("a", "b"))
    if batched:
        return batch_matmul(a, b, adj_x=bool(transpose_a or adjoint_a), adj_y=bool(transpose_b or adjoint_b),
                            name=name)
    for t, arg in ((a, "a"), (b, "b")):
        if t.shape.ndims is not None and t.shape.ndims != 2:
            raise ValueError(f"Shape must be rank 2 but is rank {t.shape.ndims} for '{arg}' of 'MatMul'")
    attrs = {"transpose_a": bool(transpose_a or adjoint_a), "transpose_b": bool(transpose_b or adjoint_b)}
    return make_tensor("MatMul", [a, b], attrs, name=name, default_name="MatMul")


@register_gradient("MatMul")
def _matmul_grad(op, grad):
    a, b = op.inputs
    ta, tb = op.get_attr("transpose_a"), op.get_attr("transpose_b")
    if not ta and not tb:
        return [matmul(grad, b, transpose_b=True), matmul(a, grad, transpose_a=True)]
    if not ta and tb:
        return [matmul(grad, b), matmul(grad, a, transpose_a=True)]
    if ta and not tb:
        return [matmul(b, grad, transpose_b=True), matmul(a, grad)]
    return [matmul(b, grad, transpose_a=True, transpose_b=True), matmul(grad, a, transpose_a=True, transpose_b=True)]


# -- Cast ---------------------------------------------------------------------
register_op("Cast", lambda op: [(op.get_attr("DstT"), op.inputs[0].shape)])


def cast(x, dtype, name=None):
    x = convert_to_tensor(x)
    dtype = _dtypes.as_dtype(dtype)
    if x.dtype is dtype:
        return x
    return make_tensor("Cast", [x], {"DstT": dtype}, name=name, default_name="Cast")


@register_gradient("Cast")
def _cast_grad(op, grad):
    src = op.inputs[0].dtype
    if src.is_floating and op.get_attr("DstT").is_floating:
        return [cast(grad, src)]
    return [None]


def accumulate_n(inputs, shape=None, tensor_dtype=None, name=None):
    """`tf.accumulate_n`: the sum of `inputs` (same as add_n here)."""
    return add_n(inputs, name=name)


def to_float(x, name="ToFloat"):
    return cast(x, _dtypes.float32, name=name)


def to_double(x, name="ToDouble"):
    return cast(x, _dtypes.float64, name=name)


def to_int32(x, name="ToInt32"):
    return cast(x, _dtypes.int32, name=name)


def to_int64(x, name="ToInt64"):
    return cast(x, _dtypes.int64, name=name)


def saturate_cast(value, dtype, name=None):
    """`tf.saturate_cast`: clips to `dtype`'s range before casting."""
    value = convert_to_tensor(value)
    dtype = _dtypes.as_dtype(dtype)
    with name_scope(name, "saturate_cast", [value]) as scope:
        if value.dtype.is_numeric and dtype.is_numeric and not dtype.is_floating:
            lo = _builtins.max(float(value.dtype.min), float(dtype.min))
            hi = _builtins.min(float(value.dtype.max), float(dtype.max))
            value = minimum(maximum(value, lo), hi)
        return cast(value, dtype, name=scope)
