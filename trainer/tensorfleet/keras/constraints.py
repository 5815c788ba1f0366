"""`tf.keras.constraints` (TF 1.15): projections applied to a weight after each optimizer update.

`MaxNorm`, `NonNeg`, `UnitNorm`, `MinMaxNorm` with Keras's formulas (norms along `axis`, epsilon in the
denominator) and the lower-case aliases. The optimizer assigns `constraint(var)` after the update op.
"""
from __future__ import annotations

from .. import dtypes as _dtypes
from ..ops import math_ops as _math_ops
from .backend import config as _config
from .backend.math import clip as _clip
from .backend.math import sqrt as _sqrt
from .utils.generic_utils import deserialize_keras_object, get_from_identifier, serialize_keras_object

__all__ = ["Constraint", "MaxNorm", "NonNeg", "UnitNorm", "MinMaxNorm", "max_norm", "non_neg", "unit_norm",
           "min_max_norm", "maxnorm", "nonneg", "unitnorm", "serialize", "deserialize", "get"]


class Constraint:
    def __call__(self, w):
        return w

    def get_config(self):
        return {}

    @classmethod
    def from_config(cls, config):
        return cls(**config)


def _norms(w, axis):
    return _sqrt(_math_ops.reduce_sum(_math_ops.square(w), axis=axis, keepdims=True))


class MaxNorm(Constraint):
    """Rescales so that each norm along `axis` is at most `max_value`."""

    def __init__(self, max_value=2, axis=0):
        self.max_value = max_value
        self.axis = axis

    def __call__(self, w):
        norms = _norms(w, self.axis)
        desired = _clip(norms, 0, self.max_value)
        return w * (desired / (_config.epsilon() + norms))

    def get_config(self):
        return {"max_value": self.max_value, "axis": self.axis}


class NonNeg(Constraint):
    """Zeroes the negative entries."""

    def __call__(self, w):
        return w * _math_ops.cast(_math_ops.greater_equal(w, 0.0), _dtypes.as_dtype(_config.floatx()))


class UnitNorm(Constraint):
    """Rescales to norm 1 along `axis`."""

    def __init__(self, axis=0):
        self.axis = axis

    def __call__(self, w):
        return w / (_config.epsilon() + _norms(w, self.axis))

    def get_config(self):
        return {"axis": self.axis}


class MinMaxNorm(Constraint):
    """Moves each norm along `axis` into [min_value, max_value] by the fraction `rate`."""

    def __init__(self, min_value=0.0, max_value=1.0, rate=1.0, axis=0):
        self.min_value, self.max_value, self.rate, self.axis = min_value, max_value, rate, axis

    def __call__(self, w):
        norms = _norms(w, self.axis)
        desired = self.rate * _clip(norms, self.min_value, self.max_value) + (1 - self.rate) * norms
        return w * (desired / (_config.epsilon() + norms))

    def get_config(self):
        return {"min_value": self.min_value, "max_value": self.max_value, "rate": self.rate, "axis": self.axis}


max_norm = maxnorm = MaxNorm
non_neg = nonneg = NonNeg
unit_norm = unitnorm = UnitNorm
min_max_norm = MinMaxNorm

_TABLE = {name: globals()[name] for name in __all__ if name not in ("serialize", "deserialize", "get")}


def serialize(constraint):
    return serialize_keras_object(constraint)


def deserialize(config, custom_objects=None):
    return deserialize_keras_object(config, module_objects=_TABLE, custom_objects=custom_objects,
                                    printable_module_name="constraint")


def get(identifier):
    """None -> None; a config dict or a name -> a new constraint; a callable -> itself."""
    return get_from_identifier(identifier, deserialize, "constraint")
