"""`tf.keras.regularizers` (TF 1.15): weight penalties a layer adds to its `losses`.

`L1L2(l1, l2)(x)` is `l1 * sum(|x|) + l2 * sum(x^2)` (a constant 0 when both are 0); `l1(0.01)`, `l2(0.01)`,
`l1_l2(0.01, 0.01)` build one. `get('l2')` is `l2()` (Keras 1.15 special-cases these three names).
"""
from __future__ import annotations

from ..ops import math_ops as _math_ops
from .backend.tensors import constant as _constant
from .utils.generic_utils import deserialize_keras_object, serialize_keras_object

__all__ = ["Regularizer", "L1L2", "l1", "l2", "l1_l2", "serialize", "deserialize", "get"]


class Regularizer:
    """Base class: `__call__(x)` returns a scalar penalty."""

    def __call__(self, x):
        return 0.0

    @classmethod
    def from_config(cls, config):
        return cls(**config)


class L1L2(Regularizer):
    def __init__(self, l1=0.0, l2=0.0):
        self.l1 = float(l1)
        self.l2 = float(l2)

    def __call__(self, x):
        if not self.l1 and not self.l2:
            return _constant(0.0)
        regularization = 0.0
        if self.l1:
            regularization += self.l1 * _math_ops.reduce_sum(_math_ops.abs(x))
        if self.l2:
            regularization += self.l2 * _math_ops.reduce_sum(_math_ops.square(x))
        return regularization

    def get_config(self):
        return {"l1": self.l1, "l2": self.l2}


def l1(l=0.01):  # noqa: E741  (Keras's argument name)
    return L1L2(l1=l)


def l2(l=0.01):  # noqa: E741
    return L1L2(l2=l)


def l1_l2(l1=0.01, l2=0.01):  # noqa: F811
    return L1L2(l1=l1, l2=l2)


_TABLE = {"Regularizer": Regularizer, "L1L2": L1L2, "l1": l1, "l2": l2, "l1_l2": l1_l2}


def serialize(regularizer):
    return serialize_keras_object(regularizer)


def deserialize(config, custom_objects=None):
    return deserialize_keras_object(config, module_objects=_TABLE, custom_objects=custom_objects,
                                    printable_module_name="regularizer")


def get(identifier):
    if identifier is None:
        return None
    if isinstance(identifier, dict):
        return deserialize(identifier)
    if isinstance(identifier, str):
        if identifier in ("l1", "l2", "l1_l2"):
            return deserialize({"class_name": identifier, "config": {}})
        return deserialize(str(identifier))
    if callable(identifier):
        return identifier
    raise ValueError(f"Could not interpret regularizer identifier: {identifier}")
