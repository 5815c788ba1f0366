"""Comparison, logical and selection ops: equal/less/..., logical_and/or/not/xor, where, is_nan/inf/finite.

Sits in `ops/` on top of `math_ops` (re-exported from there); kernels in `kernels/math_kernels.py`.
Comparisons broadcast like numpy and yield bool; logical ops need bool inputs.
"""
from __future__ import annotations

__all__ = ["equal", "not_equal", "less", "less_equal", "greater", "greater_equal", "logical_and", "logical_or",
           "logical_not", "logical_xor", "where", "where_v2", "is_nan", "is_inf", "is_finite"]

from .. import dtypes as _dtypes
from ..default_graph import name_scope
from .common import (NotDifferentiable, TensorShape, binary_inputs, broadcast_shape, convert_to_tensor,
                     make_tensor, register_gradient, register_op, unknown_shape)
from . import arithmetic_ops as _m
from .common import is_tensor_like


def _compare_shape(op):
    x, y = op.inputs
    if x.dtype.is_bool and op.type not in ("Equal", "NotEqual"):
        raise TypeError(f"{op.type} does not support dtype bool")
    return [(_dtypes.bool_, broadcast_shape(x.shape, y.shape))]


def _logical_shape(op):
    for t in op.inputs:
        if not t.dtype.is_bool:
            raise TypeError(f"Value passed to parameter 'x' has DataType {t.dtype.name} not in list of allowed "
                            f"values: bool ({op.type})")
    shape = op.inputs[0].shape
    for t in op.inputs[1:]:
        shape = broadcast_shape(shape, t.shape)
    return [(_dtypes.bool_, shape)]


def _binary(op_type, py_name, shape_fn):
    register_op(op_type, shape_fn)
    NotDifferentiable(op_type)

    def fn(x, y, name=None):
        x, y = binary_inputs(x, y, op_type)
        return make_tensor(op_type, [x, y], name=name, default_name=op_type)

    fn.__name__ = py_name
    fn.__doc__ = f"`tf.{py_name}(x, y)`: elementwise {op_type} with broadcasting; bool result."
    return fn


equal = _binary("Equal", "equal", _compare_shape)
not_equal = _binary("NotEqual", "not_equal", _compare_shape)
less = _binary("Less", "less", _compare_shape)
less_equal = _binary("LessEqual", "less_equal", _compare_shape)
greater = _binary("Greater", "greater", _compare_shape)
greater_equal = _binary("GreaterEqual", "greater_equal", _compare_shape)
logical_and = _binary("LogicalAnd", "logical_and", _logical_shape)
logical_or = _binary("LogicalOr", "logical_or", _logical_shape)

register_op("LogicalNot", _logical_shape)
NotDifferentiable("LogicalNot")


def logical_not(x, name=None):
    return make_tensor("LogicalNot", [convert_to_tensor(x, dtype=_dtypes.bool_)], name=name,
                       default_name="LogicalNot")


def logical_xor(x, y, name="LogicalXor"):
    """`tf.logical_xor`: (x | y) & ~(x & y), built from the other logical ops as in TF."""
    with name_scope(name, "LogicalXor", [x, y]) as scope:
        return logical_and(logical_or(x, y), logical_not(logical_and(x, y)), name=scope)


def _float_predicate(op_type, py_name):
    def shape_fn(op):
        x = op.inputs[0]
        if not x.dtype.is_floating:
            raise TypeError(f"Value passed to parameter 'x' has DataType {x.dtype.name} not in list of allowed "
                            f"values: float16, float32, float64 ({op_type})")
        return [(_dtypes.bool_, x.shape)]

    register_op(op_type, shape_fn)
    NotDifferentiable(op_type)

    def fn(x, name=None):
        return make_tensor(op_type, [convert_to_tensor(x)], name=name, default_name=op_type)

    fn.__name__ = py_name
    return fn


is_nan = _float_predicate("IsNan", "is_nan")
is_inf = _float_predicate("IsInf", "is_inf")
is_finite = _float_predicate("IsFinite", "is_finite")


# -- Select (TF1 where with x, y) ---------------------------------------------
def _select_shape(op):
    cond, x, y = op.inputs
    if not cond.dtype.is_bool:
        raise TypeError(f"Value passed to parameter 'condition' has DataType {cond.dtype.name} not in list of "
                        f"allowed values: bool")
    if x.dtype is not y.dtype:
        raise TypeError(f"Input 'e' of 'Select' Op has type {y.dtype.name} that does not match type "
                        f"{x.dtype.name} of argument 't'.")
    if not x.shape.is_compatible_with(y.shape):
        raise ValueError(f"Shapes must be equal rank, but are {x.shape.ndims} and {y.shape.ndims}"
                         if x.shape.ndims != y.shape.ndims else
                         f"Dimensions must be equal, but are {x.shape} and {y.shape}")
    shape = x.shape.merge_with(y.shape)
    c, n = cond.shape, shape.ndims
    if c.ndims is not None and n is not None and c.ndims != 0:
        if c.ndims == 1 and n > 1:
            if c[0] is not None and shape[0] is not None and c[0] != shape[0]:
                raise ValueError(f"Dimensions must be equal, but are {c[0]} and {shape[0]}")
        elif not c.is_compatible_with(shape):
            raise ValueError(f"Shapes must be equal rank, but are {c.ndims} and {n}" if c.ndims != n else
                             f"Dimensions must be equal: condition {c} vs. {shape}")
        else:
            shape = shape.merge_with(c)
    return [(x.dtype, shape)]


register_op("Select", _select_shape)


@register_gradient("Select")
def _select_grad(op, grad):
    cond = op.inputs[0]
    zeros = _m.broadcast_like(convert_to_tensor(0, dtype=grad.dtype), grad)
    return [None, make_tensor("Select", [cond, grad, zeros], name="Select"),
            make_tensor("Select", [cond, zeros, grad], name="Select")]


def _select_v2_shape(op):
    cond, x, y = op.inputs
    if not cond.dtype.is_bool:
        raise TypeError(f"condition must be bool, got {cond.dtype.name}")
    if x.dtype is not y.dtype:
        raise TypeError(f"Input 'e' of 'SelectV2' Op has type {y.dtype.name} that does not match type "
                        f"{x.dtype.name} of argument 't'.")
    return [(x.dtype, broadcast_shape(broadcast_shape(cond.shape, x.shape), y.shape))]


register_op("SelectV2", _select_v2_shape)


@register_gradient("SelectV2")
def _select_v2_grad(op, grad):
    cond, x, y = op.inputs
    zeros = _m.broadcast_like(convert_to_tensor(0, dtype=grad.dtype), grad)
    gx = make_tensor("SelectV2", [cond, grad, zeros], name="SelectV2")
    gy = make_tensor("SelectV2", [cond, zeros, grad], name="SelectV2")
    return [None, _m.sum_to_shape_of(gx, x), _m.sum_to_shape_of(gy, y)]


# -- Where (coordinates of true elements) -------------------------------------
def _where_shape(op):
    c = op.inputs[0].shape
    return [(_dtypes.int64, TensorShape([None, c.ndims]) if c.ndims is not None else unknown_shape(2))]


register_op("Where", _where_shape)
NotDifferentiable("Where")


def _branch_inputs(x, y):
    if not is_tensor_like(x) and not is_tensor_like(y):
        x = convert_to_tensor(x)
    return binary_inputs(x, y, "Select")


def where(condition, x=None, y=None, name=None):
    """TF1 `tf.where`: with x and y, picks x where `condition` else y (op Select; condition has x's
    shape, or is rank 1 matching x's first dimension, or is a scalar). Without x and y, returns the
    int64 coordinates of the true elements, shape [num_true, rank] (op Where)."""
    condition = convert_to_tensor(condition)
    if x is None and y is None:
        return make_tensor("Where", [condition], name=name, default_name="Where")
    if x is None or y is None:
        raise ValueError("x and y must both be non-None or both be None.")
    x, y = _branch_inputs(x, y)
    return make_tensor("Select", [condition, x, y], name=name, default_name="Select")


def where_v2(condition, x=None, y=None, name=None):
    """`tf.where_v2`: like `where`, but condition, x and y broadcast against each other (op SelectV2)."""
    condition = convert_to_tensor(condition)
    if x is None and y is None:
        return make_tensor("Where", [condition], name=name, default_name="Where")
    x, y = _branch_inputs(x, y)
    return make_tensor("SelectV2", [condition, x, y], name=name, default_name="SelectV2")
