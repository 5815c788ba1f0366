"""`tf.contrib.layers` weight initializers: `xavier_initializer(_conv2d)` and contrib's own
`variance_scaling_initializer` (TF 1.15's contrib/layers/python/layers/initializers.py, not `tf.
variance_scaling_initializer`: its arguments are factor/mode in upper case/uniform, and its fans and
truncated-normal correction differ).

For a shape [..., fan_in_dim, fan_out_dim]: fan_in = shape[-2] (shape[-1] for 1-D), fan_out = shape[-1],
both times the product of the leading dims; n = fan_in, fan_out or their mean (mode FAN_IN, FAN_OUT,
FAN_AVG); uniform draws from [-sqrt(3 factor / n), +...], otherwise a truncated normal with stddev
sqrt(1.3 factor / n). xavier_initializer is factor=1, FAN_AVG (uniform by default).
"""
from __future__ import annotations

import math

from ... import dtypes as _dtypes
from ...ops import random_ops

__all__ = ["xavier_initializer", "xavier_initializer_conv2d", "variance_scaling_initializer"]


def xavier_initializer(uniform=True, seed=None, dtype=_dtypes.float32):
    """Glorot and Bengio's initialization: variance_scaling_initializer(1.0, 'FAN_AVG', uniform)."""
    return variance_scaling_initializer(factor=1.0, mode="FAN_AVG", uniform=uniform, seed=seed, dtype=dtype)


xavier_initializer_conv2d = xavier_initializer


def variance_scaling_initializer(factor=2.0, mode="FAN_IN", uniform=False, seed=None, dtype=_dtypes.float32):
    """An initializer `fn(shape, dtype=dtype, partition_info=None)` keeping the variance at factor / n."""
    if not _dtypes.as_dtype(dtype).is_floating:
        raise TypeError("Cannot create initializer for non-floating point type.")
    if mode not in ("FAN_IN", "FAN_OUT", "FAN_AVG"):
        raise TypeError(f"Unknown mode {mode} [FAN_IN, FAN_OUT, FAN_AVG]")

    def _initializer(shape, dtype=dtype, partition_info=None):
        dtype = _dtypes.as_dtype(dtype)
        if not dtype.is_floating:
            raise TypeError("Cannot create initializer for non-floating point type.")
        shape = [int(d) for d in shape]
        fan_in = float(shape[-2]) if len(shape) > 1 else float(shape[-1])
        fan_out = float(shape[-1])
        for dim in shape[:-2]:
            fan_in *= dim
            fan_out *= dim
        n = {"FAN_IN": fan_in, "FAN_OUT": fan_out, "FAN_AVG": (fan_in + fan_out) / 2.0}[mode]
        if uniform:
            limit = math.sqrt(3.0 * factor / n)
            return random_ops.random_uniform(shape, -limit, limit, dtype, seed=seed)
        return random_ops.truncated_normal(shape, 0.0, math.sqrt(1.3 * factor / n), dtype, seed=seed)

    return _initializer
