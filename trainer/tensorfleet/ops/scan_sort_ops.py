"""Scans and sorting: `tf.cumsum`, `tf.cumprod` (Cumsum, Cumprod), `tf.nn.top_k` / `tf.math.top_k` (TopKV2) and the
composites `tf.sort` / `tf.argsort` (along the last axis, through top_k, so with top_k's gradient).

Sits in `ops/` beside math_ops; kernels in kernels/scan_sort_kernels.py. The internal pair
TakeAlongLastAxis / PutAlongLastAxis (numpy's take/put_along_axis on the last axis; each is the
other's gradient) carries top_k's gradient to the values' positions.
"""
from __future__ import annotations

__all__ = ["cumsum", "cumprod", "sort", "argsort"]  # top_k is tf.nn.top_k / tf.math.top_k (nn.py, namespaces.py)

from .. import dtypes as _dtypes
from ..default_graph import name_scope
from . import array_ops as _a
from . import math_ops as _m
from .common import (TensorShape, convert_to_tensor, make_op, make_tensor, register_gradient, register_op,
                     unchanged_shape, unknown_shape)
from .shape_util import axis_arg, normalize_axis


# -- Cumsum / Cumprod ---------------------------------------------------------
register_op("Cumsum", unchanged_shape)
register_op("Cumprod", unchanged_shape)


def _scan(op_type, x, axis, exclusive, reverse, name):
    x = convert_to_tensor(x)
    axis = axis_arg(axis)
    if not isinstance(axis, int):
        raise TypeError(f"{op_type}: axis must be a scalar int, got {axis!r}")
    if x.shape.ndims is not None:
        if x.shape.ndims == 0:
            raise ValueError(f"{op_type}: input must have rank >= 1")
        axis = normalize_axis(axis, x.shape.ndims)
    return make_tensor(op_type, [x], {"axis": axis, "exclusive": bool(exclusive), "reverse": bool(reverse)},
                       name=name, default_name=op_type)


def cumsum(x, axis=0, exclusive=False, reverse=False, name=None):
    """`tf.cumsum`: running sums along `axis`; `exclusive` leaves out the element itself, `reverse` runs backwards.

    tf.cumsum([a, b, c], exclusive=True, reverse=True) == [b + c, c, 0].
    """
    return _scan("Cumsum", x, axis, exclusive, reverse, name)


def cumprod(x, axis=0, exclusive=False, reverse=False, name=None):
    """`tf.cumprod`: running products along `axis` (exclusive starts at 1)."""
    return _scan("Cumprod", x, axis, exclusive, reverse, name)


@register_gradient("Cumsum")
def _cumsum_grad(op, grad):
    return [cumsum(grad, op.get_attr("axis"), op.get_attr("exclusive"), not op.get_attr("reverse"))]


@register_gradient("Cumprod")
def _cumprod_grad(op, grad):
    """TF's: cumsum(prod * grad, reversed) / x -- like TF, undefined where x == 0."""
    x = op.inputs[0]
    axis, exclusive, reverse = op.get_attr("axis"), op.get_attr("exclusive"), op.get_attr("reverse")
    prod = cumprod(x, axis, exclusive, reverse)
    return [cumsum(prod * grad, axis, exclusive, not reverse) / x]


# -- TopKV2 -------------------------------------------------------------------
def _top_k_shape(op):
    x = op.inputs[0]
    k = op.get_attr("k")
    if x.shape.ndims is None:
        return [(x.dtype, unknown_shape()), (_dtypes.int32, unknown_shape())]
    if x.shape.ndims < 1:
        raise ValueError("Shape must be at least rank 1 but is rank 0")
    last = x.shape[-1]
    if last is not None and last < k:
        raise ValueError(f"input must have at least k columns. Had {last}, needed {k}")
    shape = TensorShape(list(x.shape.as_tuple()[:-1]) + [k])
    return [(x.dtype, shape), (_dtypes.int32, shape)]


register_op("TopKV2", _top_k_shape)


def top_k(input, k=1, sorted=True, name=None):  # noqa: A002  (TF's argument names)
    """`tf.nn.top_k`: (values, indices) of the k largest entries of the last axis, largest first.

    Equal values: the lower index comes first (TF's order). `k` must be static. `sorted=False` returns them
    sorted anyway (TF leaves the order unspecified).
    """
    x = convert_to_tensor(input)
    k_v = axis_arg(k, "k")
    if not isinstance(k_v, int) or k_v < 0:
        raise ValueError(f"top_k: k must be a non-negative scalar int, got {k!r}")
    op = make_op("TopKV2", [x], {"k": k_v, "sorted": bool(sorted)}, name=name, default_name="TopKV2")
    return op.outputs[0], op.outputs[1]


register_op("TakeAlongLastAxis", lambda op: [(op.inputs[0].dtype, op.inputs[1].shape)])
register_op("PutAlongLastAxis", lambda op: [(op.inputs[0].dtype, op.inputs[2].shape)])


def _take_along_last_axis(x, indices, name="TakeAlongLastAxis"):
    return make_tensor("TakeAlongLastAxis", [x, indices], {}, name=name)


def _put_along_last_axis(values, indices, like, name="PutAlongLastAxis"):
    """zeros shaped like `like`, with `values` added at `indices` along the last axis."""
    return make_tensor("PutAlongLastAxis", [values, indices, like], {}, name=name)


@register_gradient("TopKV2")
def _top_k_grad(op, grad_values, grad_indices=None):
    if grad_values is None:
        return [None]
    return [_put_along_last_axis(grad_values, op.outputs[1], op.inputs[0])]


@register_gradient("TakeAlongLastAxis")
def _take_along_grad(op, grad):
    return [_put_along_last_axis(grad, op.inputs[1], op.inputs[0]), None]


@register_gradient("PutAlongLastAxis")
def _put_along_grad(op, grad):
    return [_take_along_last_axis(grad, op.inputs[1]), None, None]


# -- sort / argsort (composites of TopKV2) --------------------------------------
def _last_axis(x, axis):
    n = x.shape.ndims
    if n is None or axis not in (-1, n - 1):
        raise ValueError(f"sort/argsort: only the last axis is supported (got axis={axis}, rank {n})")


def sort(values, axis=-1, direction="ASCENDING", name=None):
    """`tf.sort` along the last axis (through top_k, so it has top_k's gradient)."""
    with name_scope(name, "sort", [values]):
        x = convert_to_tensor(values)
        _last_axis(x, axis)
        k = _a.shape(x)[-1]
        if direction == "DESCENDING":
            return top_k(x, k)[0]
        if direction != "ASCENDING":
            raise ValueError(f"direction must be 'ASCENDING' or 'DESCENDING', got {direction!r}")
        return _m.negative(top_k(_m.negative(x), k)[0])


def argsort(values, axis=-1, direction="ASCENDING", stable=False, name=None):
    """`tf.argsort` along the last axis (ties keep their order)."""
    with name_scope(name, "argsort", [values]):
        x = convert_to_tensor(values)
        _last_axis(x, axis)
        k = _a.shape(x)[-1]
        return top_k(x if direction == "DESCENDING" else _m.negative(x), k)[1]
