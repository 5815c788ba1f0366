"""`tf.keras.activations` (TF 1.15): the activation functions, looked up by name with `get`.

`get(None)` is `linear`; a string is resolved by `deserialize` against this module's functions;
`serialize(fn)` is its name. `softmax` on a rank-2 tensor is one Softmax op (so the cross-entropy losses see
it and use its logits); on higher ranks it is exp(x - max) / sum along `axis`; rank 1 is an error.
"""
from __future__ import annotations

from .backend import nn as _K
from .backend.tensors import ndim as _ndim
from .utils.generic_utils import deserialize_keras_object, serialize_keras_object
from ..ops import math_ops as _math_ops, nn_ops as _nn_ops

__all__ = ["elu", "exponential", "hard_sigmoid", "linear", "relu", "selu", "sigmoid", "softmax", "softplus",
           "softsign", "tanh", "deserialize", "get", "serialize"]


def softmax(x, axis=-1):
    nd = _ndim(x)
    if nd == 2:
        return _nn_ops.softmax(x)
    if nd is not None and nd > 2:
        e = _math_ops.exp(x - _math_ops.reduce_max(x, axis=axis, keepdims=True))
        return e / _math_ops.reduce_sum(e, axis=axis, keepdims=True)
    raise ValueError(f"Cannot apply softmax to a tensor that is 1D. Received input: {x}")


def elu(x, alpha=1.0):
    return _K.elu(x, alpha)


def selu(x):
    """scale * elu(x, alpha) with SELU's constants (1.67326324, 1.05070098)."""
    alpha, scale = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946
    return scale * _K.elu(x, alpha)


def softplus(x):
    return _nn_ops.softplus(x)


def softsign(x):
    return _K.softsign(x)


def relu(x, alpha=0.0, max_value=None, threshold=0):
    return _K.relu(x, alpha=alpha, max_value=max_value, threshold=threshold)


def tanh(x):
    return _nn_ops.tanh(x)


def sigmoid(x):
    return _nn_ops.sigmoid(x)


def exponential(x):
    return _math_ops.exp(x)


def hard_sigmoid(x):
    return _K.hard_sigmoid(x)


def linear(x):
    return x


def serialize(activation):
    return serialize_keras_object(activation)


def deserialize(name, custom_objects=None):
    return deserialize_keras_object(name, module_objects=_TABLE, custom_objects=custom_objects,
                                    printable_module_name="activation function")


def get(identifier):
    if identifier is None:
        return linear
    if isinstance(identifier, str):
        return deserialize(str(identifier))
    if callable(identifier):
        return identifier
    raise TypeError(f"Could not interpret activation function identifier: {identifier!r}")


_TABLE = {name: globals()[name] for name in __all__ if name not in ("deserialize", "get", "serialize")}
