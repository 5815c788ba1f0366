"""Reduction ops: reduce_sum/mean/max/min/prod/any/all, argmax/argmin, logsumexp, count_nonzero.

Sits in `ops/` on top of `math_ops` (re-exported from there); kernels in `kernels/math_kernels.py`
(Sum in `kernels/core_kernels.py`). Axis arguments are static attrs: None (all axes), an int or a
tuple, negative allowed; TF1's `reduction_indices`/`keep_dims` aliases are accepted.
"""
from __future__ import annotations

__all__ = ["reduce_sum", "reduce_mean", "reduce_max", "reduce_min", "reduce_prod", "reduce_any", "reduce_all",
           "reduce_logsumexp", "count_nonzero", "argmax", "argmin"]

from .. import dtypes as _dtypes
from ..default_graph import name_scope
from .common import (NotDifferentiable, convert_to_tensor, make_tensor, reduced_shape, register_gradient,
                     register_op)
from .shape_util import axis_arg
from . import arithmetic_ops as _m
from .comparison_ops import equal
from .array_ops import stop_gradient
from .comparison_ops import is_finite, where
from .comparison_ops import not_equal


def _reduce_shape(kind):
    def shape_fn(op):
        x = op.inputs[0]
        if kind == "bool" and not x.dtype.is_bool:
            raise TypeError(f"Value passed to parameter 'input' has DataType {x.dtype.name} not in list of "
                            f"allowed values: bool ({op.type})")
        if kind == "numeric" and x.dtype.is_bool:
            raise TypeError(f"{op.type} does not support dtype bool")
        return [(x.dtype, reduced_shape(x.shape, op.get_attr("axis"), op.get_attr("keepdims")))]
    return shape_fn


def _reduction(op_type, py_name, kind="numeric"):
    register_op(op_type, _reduce_shape(kind))

    def fn(input_tensor, axis=None, keepdims=None, name=None, reduction_indices=None, keep_dims=None):
        if axis is not None and reduction_indices is not None:
            raise ValueError("Cannot specify both 'axis' and 'reduction_indices'")
        if keepdims is not None and keep_dims is not None:
            raise ValueError("Cannot specify both 'keepdims' and 'keep_dims'")
        x = convert_to_tensor(input_tensor)
        axis = axis_arg(axis if axis is not None else reduction_indices)
        keep = bool(keepdims if keepdims is not None else keep_dims)
        return make_tensor(op_type, [x], {"axis": axis, "keepdims": keep}, name=name, default_name=op_type)

    fn.__name__ = py_name
    fn.__doc__ = (f"`tf.{py_name}(input_tensor, axis=None, keepdims=None, name=None, reduction_indices=None, "
                  f"keep_dims=None)`: op {op_type}.")
    return fn


reduce_sum = _reduction("Sum", "reduce_sum")
reduce_mean = _reduction("Mean", "reduce_mean")
reduce_max = _reduction("Max", "reduce_max")
reduce_min = _reduction("Min", "reduce_min")
reduce_prod = _reduction("Prod", "reduce_prod")
reduce_any = _reduction("Any", "reduce_any", kind="bool")
reduce_all = _reduction("All", "reduce_all", kind="bool")
NotDifferentiable("Any")
NotDifferentiable("All")


def _attrs(op):
    return op.get_attr("axis"), op.get_attr("keepdims")


@register_gradient("Sum")
def _sum_grad(op, grad):
    return [_m.reduction_grad(grad, op.inputs[0], *_attrs(op))]


# MeanGrad(grad, like): reduction_grad(grad) / (number of reduced elements), counted at run time.
register_op("MeanGrad", lambda op: [(op.inputs[0].dtype, op.inputs[1].shape)])


@register_gradient("Mean")
def _mean_grad(op, grad):
    axis, keepdims = _attrs(op)
    return [make_tensor("MeanGrad", [grad, op.inputs[0]], {"axis": axis, "keepdims": keepdims}, name="MeanGrad")]


@register_gradient("MeanGrad")
def _mean_grad_grad(op, grad):
    return [make_tensor("Mean", [grad], dict(op.attrs), name="Mean"), None]


def _minmax_reduction_grad(op, grad):
    """TF's rule: the gradient is split equally between all elements equal to the extremum (ties)."""
    x, y = op.inputs[0], op.outputs[0]
    axis, keepdims = _attrs(op)
    indicators = _m.cast(equal(x, _m.reduction_grad(y, x, axis, keepdims)), grad.dtype)
    num_selected = make_tensor("Sum", [indicators], {"axis": axis, "keepdims": keepdims}, name="Sum")
    return [_m.multiply(_m._realdiv(indicators, _m.reduction_grad(num_selected, x, axis, keepdims)),
                        _m.reduction_grad(grad, x, axis, keepdims))]


register_gradient("Max")(_minmax_reduction_grad)
register_gradient("Min")(_minmax_reduction_grad)

# ProdGrad(grad, x): grad * (product of the other reduced elements), exact with zeros (no division).
register_op("ProdGrad", lambda op: [(op.inputs[0].dtype, op.inputs[1].shape)])
NotDifferentiable("ProdGrad")  # second derivatives of reduce_prod are not supported


@register_gradient("Prod")
def _prod_grad(op, grad):
    axis, keepdims = _attrs(op)
    return [make_tensor("ProdGrad", [grad, op.inputs[0]], {"axis": axis, "keepdims": keepdims}, name="ProdGrad")]


def reduce_logsumexp(input_tensor, axis=None, keepdims=None, name=None, reduction_indices=None, keep_dims=None):
    """`tf.reduce_logsumexp`: log(sum(exp(x))) computed stably (max subtracted, gradient through softmax)."""
    x = convert_to_tensor(input_tensor)
    axis = axis_arg(axis if axis is not None else reduction_indices)
    keep = bool(keepdims if keepdims is not None else keep_dims)
    with name_scope(name, "ReduceLogSumExp", [x]) as scope:
        raw_max = reduce_max(x, axis, keepdims=True)
        zeros = _m.broadcast_like(convert_to_tensor(0, dtype=x.dtype), raw_max)
        my_max = stop_gradient(where(is_finite(raw_max), raw_max, zeros))
        result = _m.log(reduce_sum(_m.exp(_m.subtract(x, my_max)), axis, keepdims=keep))
        if not keep:
            my_max = make_tensor("Sum", [my_max], {"axis": axis, "keepdims": False}, name="Sum")
        return _m.add(result, my_max, name=scope)


def count_nonzero(input_tensor, axis=None, keepdims=None, dtype=_dtypes.int64, name=None, reduction_indices=None,
                  keep_dims=None):
    """`tf.count_nonzero`: number of non-zero elements along `axis` (dtype int64 by default)."""
    x = convert_to_tensor(input_tensor)
    with name_scope(name, "count_nonzero", [x]):
        zero = convert_to_tensor(False if x.dtype.is_bool else 0, dtype=x.dtype)
        nz = _m.cast(not_equal(x, zero), _dtypes.int64)
        return _m.cast(reduce_sum(nz, axis, keepdims, reduction_indices=reduction_indices, keep_dims=keep_dims),
                       dtype)


# -- ArgMax / ArgMin ----------------------------------------------------------
def _arg_shape(op):
    x = op.inputs[0]
    if x.dtype.is_bool:
        raise TypeError(f"{op.type} does not support dtype bool")
    if x.shape.ndims == 0:
        raise ValueError("Expected input to have rank >= 1, but got a scalar")
    return [(op.get_attr("output_type"), reduced_shape(x.shape, op.get_attr("axis"), False))]


def _arg_reduction(op_type, py_name):
    register_op(op_type, _arg_shape)
    NotDifferentiable(op_type)

    def fn(input, axis=None, name=None, dimension=None, output_type=_dtypes.int64):
        if axis is not None and dimension is not None:
            raise ValueError("Cannot specify both 'axis' and 'dimension'")
        axis = axis if axis is not None else dimension
        axis = 0 if axis is None else axis_arg(axis)
        if not isinstance(axis, int):
            raise TypeError(f"{py_name}: axis must be a scalar, got {axis!r}")
        output_type = _dtypes.as_dtype(output_type)
        if output_type not in (_dtypes.int32, _dtypes.int64):
            raise TypeError(f"output_type must be int32 or int64, got {output_type.name}")
        return make_tensor(op_type, [convert_to_tensor(input)], {"axis": axis, "output_type": output_type},
                           name=name, default_name=op_type)

    fn.__name__ = py_name
    fn.__doc__ = f"`tf.{py_name}(input, axis=None, name=None, dimension=None, output_type=tf.int64)`"
    return fn


argmax = _arg_reduction("ArgMax", "argmax")
argmin = _arg_reduction("ArgMin", "argmin")
