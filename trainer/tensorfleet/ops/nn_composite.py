"""`tf.nn` functions that TF 1.15 itself composes from general math ops: batch_normalization, l2_normalize.

Sits in `ops/` above `math_ops` (no kernels or gradients of its own: the math ops'
gradients apply). Re-exported by `tensorfleet/nn.py`.
"""
from __future__ import annotations

__all__ = ["batch_normalization", "l2_normalize"]

from ..default_graph import name_scope
from . import math_ops as _m
from .common import convert_to_tensor


def batch_normalization(x, mean, variance, offset, scale, variance_epsilon, name=None):
    """`tf.nn.batch_normalization`: `(x - mean) * scale / sqrt(variance + eps) + offset` (TF's formula)."""
    with name_scope(name, "batchnorm", [x, mean, variance, scale, offset]):
        x = convert_to_tensor(x, name="x")
        inv = _m.rsqrt(variance + variance_epsilon)
        if scale is not None:
            inv = inv * scale
        shift = offset - mean * inv if offset is not None else -mean * inv
        return x * _m.cast(inv, x.dtype) + _m.cast(shift, x.dtype)


def l2_normalize(x, axis=None, epsilon=1e-12, name=None, dim=None):
    """`tf.nn.l2_normalize`: `x / sqrt(max(sum(x**2, axis), epsilon))`."""
    if axis is not None and dim is not None:
        raise ValueError("Cannot specify both 'axis' and 'dim'")
    axis = dim if axis is None else axis
    with name_scope(name, "l2_normalize", [x]):
        x = convert_to_tensor(x, name="x")
        square_sum = _m.reduce_sum(_m.square(x), axis, keepdims=True)
        x_inv_norm = _m.rsqrt(_m.maximum(square_sum, epsilon))
        return _m.multiply(x, x_inv_norm, name=name)
