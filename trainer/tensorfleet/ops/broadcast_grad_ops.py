"""Broadcasting gradient helpers: SumToShapeOf, BroadcastLike and ReductionGrad (ops + their gradients).

Sits in `ops/` under arithmetic_ops (which re-exports these, as does math_ops): a broadcasting
binary op's gradient is summed back to each input's shape with `sum_to_shape_of`; a reduction's
gradient is re-expanded with `reduction_grad`; `broadcast_like` is the adjoint of the former.
Kernels in `kernels/core_kernels.py`.
"""

from __future__ import annotations

from typing import Optional

from ..graph import Tensor
from .array_ops import shape as _shape
from .common import make_tensor, register_gradient, register_op


register_op("SumToShapeOf", lambda op: [(op.inputs[0].dtype, op.get_attr("like_shape"))])


def sum_to_shape_of(grad: Tensor, like: Tensor, other: Optional[Tensor] = None) -> Tensor:
    """Sums `grad` over broadcast axes so it takes `like`'s (runtime) shape.

    `grad` has the shape of a binary op's result, broadcast(like, other); pass
    `other` (the op's other operand) to let static shapes prove there is nothing
    to sum (Grappler's job in TF). Also skipped when both static shapes are fully
    defined and equal. The op reads only `tf.shape(like)` (a constant when known
    statically), as TF's BroadcastGradientArgs does, so `like`'s buffer is not
    kept alive for it.
    """
    if grad.shape.is_fully_defined() and like.shape.is_fully_defined() and grad.shape == like.shape:
        return grad
    if other is not None and _broadcast_keeps_shape(like.shape, other.shape):
        return grad

    return make_tensor("SumToShapeOf", [grad, _shape(like)], {"like_shape": like.shape}, name="SumToShapeOf")


def _broadcast_keeps_shape(x, y) -> bool:
    """True when broadcast(x, y) has x's shape for every runtime shape these static shapes admit.

    Holds when y's rank is at most x's and each of y's dims is statically 1 or
    lines up with a known dim of x other than 1 (a valid broadcast then keeps
    x's dim; e.g. [None, 256] + [256], a dense layer's bias add).
    """
    if x.ndims is None or y.ndims is None or y.ndims > x.ndims:
        return False
    xs, ys = x.as_tuple(), y.as_tuple()
    for xd, yd in zip(xs[len(xs) - len(ys):], ys):
        if yd == 1 or (xd is not None and xd != 1):
            continue
        return False
    return True


def _pair_sums(gx: Tensor, gy: Tensor, x: Tensor, y: Tensor) -> list:
    """[gx summed to x's shape, gy summed to y's shape] for a broadcasting binary op x (op) y."""
    return [sum_to_shape_of(gx, x, y), sum_to_shape_of(gy, y, x)]


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


register_op("ReductionGrad", lambda op: [(op.inputs[0].dtype, op.inputs[1].shape)])


def reduction_grad(grad: Tensor, like: Tensor, axis, keepdims: bool) -> Tensor:
    """Re-inserts the reduced `axis` of `grad` (unless keepdims) and broadcasts it to `like`'s shape."""
    return make_tensor("ReductionGrad", [grad, like], {"axis": axis, "keepdims": keepdims}, name="ReductionGrad")


@register_gradient("ReductionGrad")
def _reduction_grad_grad(op, grad):
    return [make_tensor("Sum", [grad], {"axis": op.get_attr("axis"), "keepdims": op.get_attr("keepdims")},
                        name="Sum"), None]
