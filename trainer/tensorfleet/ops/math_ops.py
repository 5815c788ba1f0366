"""Math ops (core subset): elementwise arithmetic with broadcasting, matmul, sums.

Each op: wrapper with TF's signature and default name, shape function, gradient.
Broadcasting gradients are reduced back to the input's shape with `sum_to_shape_of`.
"""

from __future__ import annotations

__all__ = ["add", "subtract", "multiply", "sub", "mul", "negative", "neg", "add_n", "matmul", "reduce_sum", "cast"]

from .. import dtypes as _dtypes
from ..graph import Tensor
from .common import (TensorShape, binary_inputs, broadcast_binary, convert_to_tensor, make_tensor,
                     reduced_shape, register_gradient, register_op, unchanged_shape)


# -- broadcasting helpers -----------------------------------------------------
def _sum_to_shape_of_shape(op):
    grad, like = op.inputs
    return [(grad.dtype, like.shape)]


register_op("SumToShapeOf", _sum_to_shape_of_shape)


def sum_to_shape_of(grad: Tensor, like: Tensor) -> Tensor:
    """Sums `grad` over broadcast axes so it takes `like`'s (runtime) shape.

    Skipped when both static shapes are fully defined and equal.
    """
    if grad.shape.is_fully_defined() and like.shape.is_fully_defined() and grad.shape == like.shape:
        return grad
    return make_tensor("SumToShapeOf", [grad, like], name="SumToShapeOf")


@register_gradient("SumToShapeOf")
def _sum_to_shape_of_grad(op, grad):
    return [broadcast_like(grad, op.inputs[0]), None]


register_op("BroadcastLike", lambda op: [(op.inputs[0].dtype, op.inputs[1].shape)])


def broadcast_like(x: Tensor, like: Tensor) -> Tensor:
    """Broadcasts `x` to `like`'s runtime shape (the adjoint of sum_to_shape_of)."""
    return make_tensor("BroadcastLike", [x, like], name="BroadcastLike")


@register_gradient("BroadcastLike")
def _broadcast_like_grad(op, grad):
    return [sum_to_shape_of(grad, op.inputs[0]), None]


# -- elementwise binary -------------------------------------------------------
def binary_op(op_type: str, x, y, name=None, default_name=None) -> Tensor:
    """Creates a broadcasting binary op after TF's operand conversion rules."""
    x, y = binary_inputs(x, y, op_type)
    return make_tensor(op_type, [x, y], name=name, default_name=default_name or op_type)


def _binary(op_type: str, py_name: str):
    register_op(op_type, broadcast_binary)

    def fn(x, y, name=None):
        return binary_op(op_type, x, y, name)

    fn.__name__ = py_name
    fn.__doc__ = f"`tf.{py_name}(x, y)`: elementwise {op_type} with numpy broadcasting."
    return fn


add = _binary("Add", "add")
subtract = _binary("Sub", "subtract")
multiply = _binary("Mul", "multiply")
sub, mul = subtract, multiply


@register_gradient("Add")
def _add_grad(op, grad):
    x, y = op.inputs
    return [sum_to_shape_of(grad, x), sum_to_shape_of(grad, y)]


@register_gradient("Sub")
def _sub_grad(op, grad):
    x, y = op.inputs
    return [sum_to_shape_of(grad, x), sum_to_shape_of(negative(grad), y)]


@register_gradient("Mul")
def _mul_grad(op, grad):
    x, y = op.inputs
    return [sum_to_shape_of(multiply(grad, y), x), sum_to_shape_of(multiply(grad, x), y)]


# -- unary --------------------------------------------------------------------
register_op("Neg", unchanged_shape)


def negative(x, name=None):
    return make_tensor("Neg", [convert_to_tensor(x)], name=name, default_name="Neg")


neg = negative


@register_gradient("Neg")
def _neg_grad(op, grad):
    return [negative(grad)]


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
    """`tf.matmul` for rank-2 tensors (adjoint = transpose for real dtypes)."""
    a, b = binary_inputs(a, b, "MatMul")
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


# -- Sum ----------------------------------------------------------------------
def _sum_shape(op):
    x = op.inputs[0]
    return [(x.dtype, reduced_shape(x.shape, op.get_attr("axis"), op.get_attr("keepdims")))]


register_op("Sum", _sum_shape)


def _axis_attr(axis):
    if axis is None:
        return None
    if isinstance(axis, Tensor):
        raise TypeError("axis must be a Python int or list of ints (a static value), not a Tensor")
    if isinstance(axis, (list, tuple)):
        return tuple(int(a) for a in axis)
    return int(axis)


def reduce_sum(input_tensor, axis=None, keepdims=None, name=None, reduction_indices=None, keep_dims=None):
    x = convert_to_tensor(input_tensor)
    axis = axis if axis is not None else reduction_indices
    keep = bool(keepdims if keepdims is not None else keep_dims)
    return make_tensor("Sum", [x], {"axis": _axis_attr(axis), "keepdims": keep}, name=name, default_name="Sum")


@register_gradient("Sum")
def _sum_grad(op, grad):
    return [reduction_grad(grad, op.inputs[0], op.get_attr("axis"), op.get_attr("keepdims"))]


register_op("ReductionGrad", lambda op: [(op.inputs[0].dtype, op.inputs[1].shape)])


def reduction_grad(grad: Tensor, like: Tensor, axis, keepdims: bool) -> Tensor:
    """Re-inserts the reduced `axis` of `grad` (unless keepdims) and broadcasts it to `like`'s shape."""
    return make_tensor("ReductionGrad", [grad, like], {"axis": axis, "keepdims": keepdims}, name="ReductionGrad")


@register_gradient("ReductionGrad")
def _reduction_grad_grad(op, grad):
    return [make_tensor("Sum", [grad], {"axis": op.get_attr("axis"), "keepdims": op.get_attr("keepdims")},
                        name="Sum"), None]


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


# -- operator overloads (TF's lowercase default names: `a + b` is named "add") --
def _overload(op_type: str, default_name: str, reverse: bool = False):
    if reverse:
        return lambda self, other: binary_op(op_type, other, self, default_name=default_name)
    return lambda self, other: binary_op(op_type, self, other, default_name=default_name)


for _op_type, _name in (("Add", "add"), ("Sub", "sub"), ("Mul", "mul")):
    Tensor._override_operator(f"__{_name}__", _overload(_op_type, _name))
    Tensor._override_operator(f"__r{_name}__", _overload(_op_type, _name, reverse=True))
Tensor._override_operator("__matmul__", lambda self, other: matmul(self, other, name="matmul"))
Tensor._override_operator("__rmatmul__", lambda self, other: matmul(other, self, name="matmul"))
Tensor._override_operator("__neg__", lambda self: negative(self, name="Neg"))
