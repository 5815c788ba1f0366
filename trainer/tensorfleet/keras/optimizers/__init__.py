"""`tf.keras.optimizers` (TF 1.15): the OptimizerV2 classes, `get`/`serialize`/`deserialize`, and `TFOptimizer`,
the wrapper `compile` puts around a `tf.train` optimizer (it applies gradients with the global step, if any).

Names resolve case-insensitively ('adam', 'Adam', 'sgd', 'rmsprop', ...) to a new instance with defaults.
"""
from __future__ import annotations

from ...train import optimizer as _tf_optimizer
from ...train.training_util import get_global_step
from .. import backend
from ..utils.generic_utils import deserialize_keras_object, serialize_keras_object
from .adagrad import Adadelta, Adagrad
from .adam import Adam, Adamax, Nadam
from .gradient_descent import SGD
from .optimizer_v2 import OptimizerV2
from .rmsprop import RMSprop

Optimizer = OptimizerV2


class TFOptimizer:
    """A `tf.train.Optimizer` used by `Model.compile` (`minimize`-style updates with the global step)."""

    def __init__(self, optimizer, iterations=None):
        self.optimizer = optimizer
        if iterations is None:
            with backend.name_scope(self.__class__.__name__):
                iterations = backend.variable(0, dtype="int64", name="iterations")
        self.iterations = iterations

    def apply_gradients(self, grads):
        return self.optimizer.apply_gradients(grads, global_step=self.iterations)

    def get_grads(self, loss, params):
        return self.optimizer.compute_gradients(loss, params)

    def get_updates(self, loss, params):
        grads = self.optimizer.compute_gradients(loss, params) if params else self.optimizer.compute_gradients(loss)
        return [self.optimizer.apply_gradients(grads, get_global_step())]

    @property
    def weights(self):
        raise NotImplementedError

    def get_config(self):
        raise NotImplementedError


_ALL = {"adadelta": Adadelta, "adagrad": Adagrad, "adam": Adam, "adamax": Adamax, "nadam": Nadam,
        "rmsprop": RMSprop, "sgd": SGD}


def serialize(optimizer):
    return serialize_keras_object(optimizer)


def deserialize(config, custom_objects=None):
    config = dict(config)
    if config["class_name"].lower() in _ALL:
        config["class_name"] = config["class_name"].lower()
    return deserialize_keras_object(config, module_objects=_ALL, custom_objects=custom_objects,
                                    printable_module_name="optimizer")


def get(identifier):
    """An optimizer instance from an instance, a `tf.train` optimizer, a config dict or a name."""
    if isinstance(identifier, (OptimizerV2, TFOptimizer)):
        return identifier
    if isinstance(identifier, _tf_optimizer.Optimizer):
        return TFOptimizer(identifier)
    if isinstance(identifier, dict):
        return deserialize(identifier)
    if isinstance(identifier, str):
        return deserialize({"class_name": str(identifier), "config": {}})
    raise ValueError("Could not interpret optimizer identifier:", identifier)


__all__ = ["Adadelta", "Adagrad", "Adam", "Adamax", "Nadam", "Optimizer", "RMSprop", "SGD", "TFOptimizer",
           "deserialize", "get", "serialize"]
