"""Clipping ops: clip_by_value, clip_by_norm, global_norm, clip_by_global_norm.

Sits in `ops/` on top of `math_ops`/`reduction_ops`/`comparison_ops` (re-exported from math_ops).
Built from other ops exactly as TF 1.15 builds them, so gradients come from those ops.
"""
from __future__ import annotations

__all__ = ["clip_by_value", "clip_by_norm", "global_norm", "clip_by_global_norm", "clip_by_average_norm"]

import numpy as np

from ..graph import Tensor
from ..indexed_slices import IndexedSlices
from ..default_graph import name_scope
from .common import convert_to_tensor, is_tensor_like
from . import arithmetic_ops as _m
from . import comparison_ops as _c
from . import reduction_ops as _r
from .array_ops import identity, size
from .array_ops import stack


def _like(value, t: Tensor):
    return convert_to_tensor(value) if is_tensor_like(value) else convert_to_tensor(value, dtype=t.dtype)


def clip_by_value(t, clip_value_min, clip_value_max, name=None):
    """`tf.clip_by_value`: minimum(t, max) then maximum(., min); the result must keep t's shape."""
    t = convert_to_tensor(t)
    with name_scope(name, "clip_by_value", [t, clip_value_min, clip_value_max]) as scope:
        t_min = _m.minimum(t, _like(clip_value_max, t))
        if not t.shape.is_compatible_with(t_min.shape) or t_min.shape.ndims != t.shape.ndims:
            raise ValueError(f"Shapes {t.shape} and {t_min.shape} are incompatible (clip_by_value must not "
                             f"broadcast t)")
        t_max = _m.maximum(t_min, _like(clip_value_min, t), name=scope)
        if not t.shape.is_compatible_with(t_max.shape) or t_max.shape.ndims != t.shape.ndims:
            raise ValueError(f"Shapes {t.shape} and {t_max.shape} are incompatible (clip_by_value must not "
                             f"broadcast t)")
        return t_max


def clip_by_norm(t, clip_norm, axes=None, name=None):
    """`tf.clip_by_norm`: t * clip_norm / max(l2norm(t, axes), clip_norm); zero norms stay finite. An
    IndexedSlices is clipped by the norm of its values and stays one, as in TF."""
    if isinstance(t, IndexedSlices):
        return t.with_values(clip_by_norm(t.values, clip_norm, axes, name))
    t = convert_to_tensor(t)
    with name_scope(name, "clip_by_norm", [t, clip_norm]) as scope:
        l2sum = _r.reduce_sum(_m.multiply(t, t), axes, keepdims=True)
        zero = _m.broadcast_like(convert_to_tensor(0, dtype=t.dtype), l2sum)
        pred = _c.greater(l2sum, zero)
        l2sum_safe = _c.where(pred, l2sum, _m.broadcast_like(convert_to_tensor(1, dtype=t.dtype), l2sum))
        l2norm = _c.where(pred, _m.sqrt(l2sum_safe), l2sum)
        clip_norm = _like(clip_norm, t)
        intermediate = _m.multiply(t, clip_norm)
        values_clip = _m.truediv(intermediate, _m.maximum(l2norm, clip_norm))
        return identity(values_clip, name=scope)


def clip_by_average_norm(t, clip_norm, name=None):
    """`tf.clip_by_average_norm`: clips by the L2 norm divided by the number of elements."""
    t = convert_to_tensor(t)
    with name_scope(name, "clip_by_average_norm", [t, clip_norm]) as scope:
        n_element = _m.cast(size(t), t.dtype)
        l2norm_inv = _m.rsqrt(_r.reduce_sum(_m.multiply(t, t)))
        clip_norm = _like(clip_norm, t)
        tclip = _m.multiply(_m.multiply(t, clip_norm),
                            _m.minimum(_m.multiply(l2norm_inv, n_element), _m.reciprocal(clip_norm)))
        return identity(tclip, name=scope)


def global_norm(t_list, name=None):
    """`tf.global_norm`: sqrt(sum of squared L2 norms); None entries are ignored."""
    if isinstance(t_list, Tensor) or not isinstance(t_list, (list, tuple)):
        raise TypeError("t_list should be a sequence")
    tensors = [t.values if isinstance(t, IndexedSlices) else convert_to_tensor(t) for t in t_list if t is not None]
    if not tensors:
        raise ValueError("global_norm needs at least one non-None tensor")
    with name_scope(name, "global_norm", tensors):
        dtype = tensors[0].dtype
        half_sq = [_m.multiply(_r.reduce_sum(_m.square(v)), convert_to_tensor(0.5, dtype=v.dtype))
                   for v in tensors]
        half_sq = [h if h.dtype is dtype else _m.cast(h, dtype) for h in half_sq]
        half_squared_norm = _r.reduce_sum(stack(half_sq))
        return _m.sqrt(_m.multiply(half_squared_norm, convert_to_tensor(2, dtype=dtype)), name="global_norm")


def clip_by_global_norm(t_list, clip_norm, use_norm=None, name=None):
    """`tf.clip_by_global_norm`: returns (list_clipped, global_norm); each t * clip_norm / max(gn, clip_norm).

    None entries stay None; an infinite or NaN global norm makes every clipped value NaN (as in TF).
    """
    if isinstance(t_list, Tensor) or not isinstance(t_list, (list, tuple)):
        raise TypeError("t_list should be a sequence")
    t_list = list(t_list)
    if use_norm is None:
        use_norm = global_norm(t_list, name)
    use_norm = convert_to_tensor(use_norm)
    with name_scope(name, "clip_by_global_norm", [t for t in t_list if t is not None] + [use_norm]) as scope:
        dtype = use_norm.dtype
        clip_norm = _like(clip_norm, use_norm)
        one = convert_to_tensor(1.0, dtype=dtype)
        scale = _m.multiply(clip_norm, _m.minimum(_m.truediv(one, use_norm), _m.truediv(one, clip_norm)))
        nan = convert_to_tensor(np.nan, dtype=dtype)
        scale = _c.where(_c.is_finite(use_norm), scale, nan)
        out = []
        for i, t in enumerate(t_list):
            if t is None:
                out.append(None)
                continue
            sparse = t if isinstance(t, IndexedSlices) else None  # TF scales an IndexedSlices' values
            t = sparse.values if sparse is not None else convert_to_tensor(t)
            s = scale if t.dtype is dtype else _m.cast(scale, t.dtype)
            clipped = identity(_m.multiply(t, s), name=f"{scope}_{i}")
            out.append(clipped if sparse is None else sparse.with_values(clipped))
        return out, use_norm
