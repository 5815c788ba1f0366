"""Shapes and broadcasting beyond tf.shape / size / rank: `tf.shape_n`, `tf.broadcast_static_shape`,
`tf.broadcast_dynamic_shape`, `tf.broadcast_to`, `tf.ensure_shape` and `tf.get_static_value`.

Sits in `ops/` above array_ops and math_ops: composites of their ops (no ops or kernels of its own), so their
gradients are those ops' gradients. ensure_shape is checked when the graph is built only (TF also checks the
runtime shape).
"""
from __future__ import annotations

__all__ = ["shape_n", "broadcast_static_shape", "broadcast_dynamic_shape", "broadcast_to", "ensure_shape",
           "get_static_value"]

from .. import dtypes as _dtypes
from ..default_graph import name_scope
from ..tensor_shape import as_shape
from . import array_ops as _a
from . import math_ops as _m
from .common import broadcast_shape, convert_to_tensor
from .shape_util import constant_value


def broadcast_to(input, shape, name=None):
    """`tf.broadcast_to(input, shape)`: numpy broadcasting to `shape` (the gradient sums back)."""
    with name_scope(name, "BroadcastTo", [input]):
        x = convert_to_tensor(input)
        return _m.add(x, _a.zeros(shape, dtype=x.dtype))


def shape_n(input, out_type=_dtypes.int32, name=None):
    """`tf.shape_n`: [tf.shape(t) for t in input]."""
    with name_scope(name, "ShapeN", input):
        return [_a.shape(t, out_type=out_type) for t in input]


def broadcast_static_shape(shape_x, shape_y):
    """`tf.broadcast_static_shape`: the broadcast TensorShape (ValueError if incompatible)."""
    return broadcast_shape(as_shape(shape_x), as_shape(shape_y))


def broadcast_dynamic_shape(shape_x, shape_y):
    """`tf.broadcast_dynamic_shape`: the broadcast shape of two shape vectors, as a tensor."""
    x = _a.zeros(convert_to_tensor(shape_x, dtype=_dtypes.int32), dtype=_dtypes.int8)
    y = _a.zeros(convert_to_tensor(shape_y, dtype=_dtypes.int32), dtype=_dtypes.int8)
    return _a.shape(_m.add(x, y))


def get_static_value(tensor, partial=False):
    """`tf.get_static_value`: the tensor's value if it is known when the graph is built, else None."""
    return constant_value(convert_to_tensor(tensor))


def ensure_shape(x, shape, name=None):
    """`tf.ensure_shape`: x with its static shape refined to `shape`; ValueError if they cannot both hold.

    Checked when the graph is built only (TF also checks the runtime shape)."""
    x = convert_to_tensor(x)
    want = as_shape(shape)
    if not x.shape.is_compatible_with(want):
        raise ValueError(f"Shape {x.shape} is not compatible with expected shape {want}.")
    out = _a.identity(x, name=name or "EnsureShape")
    out.set_shape(x.shape.merge_with(want))
    return out
