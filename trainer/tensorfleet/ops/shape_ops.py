"""Shapes and broadcasting: `tf.broadcast_to`.

Sits in `ops/` above array_ops and math_ops: composites of their ops (no ops or kernels of its own), so their
gradients are those ops' gradients.
"""
from __future__ import annotations

__all__ = ["broadcast_to"]

from ..default_graph import name_scope
from . import array_ops as _a
from . import math_ops as _m
from .common import convert_to_tensor


def broadcast_to(input, shape, name=None):
    """`tf.broadcast_to(input, shape)`: numpy broadcasting to `shape` (the gradient sums back)."""
    with name_scope(name, "BroadcastTo", [input]):
        x = convert_to_tensor(input)
        return _m.add(x, _a.zeros(shape, dtype=x.dtype))
