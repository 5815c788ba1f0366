"""`tf.keras.losses` (TF 1.15): per-sample loss functions and the `Loss` classes that reduce them.

Functions return one value per sample (the mean over the last axis, as Keras), e.g. `mean_squared_error`
(`mse`), `categorical_crossentropy` (with `label_smoothing`), `sparse_categorical_crossentropy`,
`binary_crossentropy`. Classes (`MeanSquaredError()`, `CategoricalCrossentropy(from_logits=True)`, ...) are
callables `(y_true, y_pred, sample_weight=None)` returning the weighted loss reduced by `reduction` (AUTO means
SUM_OVER_BATCH_SIZE). `get('mse')` resolves names as Keras does.
"""
from __future__ import annotations

import numpy as np

from ..default_graph import convert_to_tensor
from ..ops import math_ops, nn_composite, nn_ops
from ..ops.array_ops import shape as _shape
from . import backend as K
from .utils.generic_utils import deserialize_keras_object, serialize_keras_object
from .utils.losses_utils import ReductionV2, compute_weighted_loss

Reduction = ReductionV2


def _pair(y_true, y_pred):
    y_pred = convert_to_tensor(y_pred)
    return math_ops.cast(convert_to_tensor(y_true), y_pred.dtype), y_pred


def mean_squared_error(y_true, y_pred):
    y_true, y_pred = _pair(y_true, y_pred)
    return K.mean(math_ops.squared_difference(y_pred, y_true), axis=-1)


def mean_absolute_error(y_true, y_pred):
    y_true, y_pred = _pair(y_true, y_pred)
    return K.mean(math_ops.abs(y_pred - y_true), axis=-1)


def mean_absolute_percentage_error(y_true, y_pred):
    y_true, y_pred = _pair(y_true, y_pred)
    diff = math_ops.abs((y_true - y_pred) / K.maximum(math_ops.abs(y_true), K.epsilon()))
    return 100.0 * K.mean(diff, axis=-1)


def mean_squared_logarithmic_error(y_true, y_pred):
    y_true, y_pred = _pair(y_true, y_pred)
    first_log = math_ops.log(K.maximum(y_pred, K.epsilon()) + 1.0)
    second_log = math_ops.log(K.maximum(y_true, K.epsilon()) + 1.0)
    return K.mean(math_ops.squared_difference(first_log, second_log), axis=-1)


def _maybe_convert_labels(y_true):
    """0/1 labels -> -1/1 (hinge losses); labels already in {-1, 1} are kept (decided per batch)."""
    are_zeros = math_ops.equal(y_true, 0)
    are_ones = math_ops.equal(y_true, 1)
    is_binary = math_ops.reduce_all(math_ops.logical_or(are_zeros, are_ones))
    return K.switch(is_binary, lambda: 2.0 * y_true - 1.0, lambda: y_true)


def squared_hinge(y_true, y_pred):
    y_true, y_pred = _pair(y_true, y_pred)
    y_true = _maybe_convert_labels(y_true)
    return K.mean(math_ops.square(math_ops.maximum(1.0 - y_true * y_pred, 0.0)), axis=-1)


def hinge(y_true, y_pred):
    y_true, y_pred = _pair(y_true, y_pred)
    y_true = _maybe_convert_labels(y_true)
    return K.mean(math_ops.maximum(1.0 - y_true * y_pred, 0.0), axis=-1)


def categorical_hinge(y_true, y_pred):
    y_true, y_pred = _pair(y_true, y_pred)
    pos = math_ops.reduce_sum(y_true * y_pred, axis=-1)
    neg = math_ops.reduce_max((1.0 - y_true) * y_pred, axis=-1)
    return math_ops.maximum(0.0, neg - pos + 1.0)


def logcosh(y_true, y_pred):
    y_true, y_pred = _pair(y_true, y_pred)
    x = y_pred - y_true
    return K.mean(x + nn_ops.softplus(-2.0 * x) - float(np.log(2.0)), axis=-1)  # log 2 in x's dtype


def huber_loss(y_true, y_pred, delta=1.0):
    y_true, y_pred = _pair(y_true, y_pred)
    abs_error = math_ops.abs(y_pred - y_true)
    quadratic = math_ops.minimum(abs_error, delta)
    linear = abs_error - quadratic
    return K.mean(0.5 * math_ops.square(quadratic) + delta * linear, axis=-1)


def categorical_crossentropy(y_true, y_pred, from_logits=False, label_smoothing=0):
    y_true, y_pred = _pair(y_true, y_pred)
    if label_smoothing:
        num_classes = math_ops.cast(_shape(y_true)[1], y_pred.dtype)
        y_true = y_true * (1.0 - label_smoothing) + (label_smoothing / num_classes)
    return K.categorical_crossentropy(y_true, y_pred, from_logits=from_logits)


def sparse_categorical_crossentropy(y_true, y_pred, from_logits=False, axis=-1):
    return K.sparse_categorical_crossentropy(y_true, y_pred, from_logits=from_logits, axis=axis)


def binary_crossentropy(y_true, y_pred, from_logits=False, label_smoothing=0):
    y_true, y_pred = _pair(y_true, y_pred)
    if label_smoothing:
        y_true = y_true * (1.0 - label_smoothing) + 0.5 * label_smoothing
    return K.mean(K.binary_crossentropy(y_true, y_pred, from_logits=from_logits), axis=-1)


def kullback_leibler_divergence(y_true, y_pred):
    y_true, y_pred = _pair(y_true, y_pred)
    y_true = K.clip(y_true, K.epsilon(), 1)
    y_pred = K.clip(y_pred, K.epsilon(), 1)
    return math_ops.reduce_sum(y_true * math_ops.log(y_true / y_pred), axis=-1)


def poisson(y_true, y_pred):
    y_true, y_pred = _pair(y_true, y_pred)
    return K.mean(y_pred - y_true * math_ops.log(y_pred + K.epsilon()), axis=-1)


def cosine_proximity(y_true, y_pred, axis=-1):
    y_true, y_pred = _pair(y_true, y_pred)
    y_true = nn_composite.l2_normalize(y_true, axis=axis)
    y_pred = nn_composite.l2_normalize(y_pred, axis=axis)
    return -math_ops.reduce_sum(y_true * y_pred, axis=axis)


mse = MSE = mean_squared_error
mae = MAE = mean_absolute_error
mape = MAPE = mean_absolute_percentage_error
msle = MSLE = mean_squared_logarithmic_error
kld = KLD = kullback_leibler_divergence
cosine = cosine_similarity = cosine_proximity


class Loss:
    """Base class: `call(y_true, y_pred)` gives per-sample losses; `__call__` weights and reduces them."""

    def __init__(self, reduction=ReductionV2.AUTO, name=None):
        ReductionV2.validate(reduction)
        self.reduction = reduction
        self.name = name

    def __call__(self, y_true, y_pred, sample_weight=None):
        scope = "lambda" if self.name == "<lambda>" else (self.name or self.__class__.__name__)
        with K.name_scope(scope):
            losses = self.call(y_true, y_pred)
            return compute_weighted_loss(losses, sample_weight, reduction=self._get_reduction())

    def _get_reduction(self):
        return ReductionV2.SUM_OVER_BATCH_SIZE if self.reduction == ReductionV2.AUTO else self.reduction

    def call(self, y_true, y_pred):
        raise NotImplementedError("Must be implemented in subclasses.")

    def get_config(self):
        return {"reduction": self.reduction, "name": self.name}

    @classmethod
    def from_config(cls, config):
        return cls(**config)


class LossFunctionWrapper(Loss):
    """A `Loss` around a per-sample function `fn(y_true, y_pred, **kwargs)`."""

    def __init__(self, fn, reduction=ReductionV2.AUTO, name=None, **kwargs):
        super().__init__(reduction=reduction, name=name)
        self.fn = fn
        self._fn_kwargs = kwargs

    def call(self, y_true, y_pred):
        return self.fn(y_true, y_pred, **self._fn_kwargs)

    def get_config(self):
        return {**super().get_config(), **self._fn_kwargs}


def _wrapper(class_name, fn, default_name, **defaults):
    def __init__(self, reduction=ReductionV2.AUTO, name=default_name, **kwargs):
        LossFunctionWrapper.__init__(self, fn, reduction=reduction, name=name, **{**defaults, **kwargs})

    def get_config(self):
        return Loss.get_config(self) | {k: self._fn_kwargs[k] for k in defaults}

    return type(class_name, (LossFunctionWrapper,), {"__init__": __init__, "get_config": get_config,
                                                     "__doc__": f"`tf.keras.losses.{class_name}`."})


MeanSquaredError = _wrapper("MeanSquaredError", mean_squared_error, "mean_squared_error")
MeanAbsoluteError = _wrapper("MeanAbsoluteError", mean_absolute_error, "mean_absolute_error")
MeanAbsolutePercentageError = _wrapper("MeanAbsolutePercentageError", mean_absolute_percentage_error,
                                       "mean_absolute_percentage_error")
MeanSquaredLogarithmicError = _wrapper("MeanSquaredLogarithmicError", mean_squared_logarithmic_error,
                                       "mean_squared_logarithmic_error")
BinaryCrossentropy = _wrapper("BinaryCrossentropy", binary_crossentropy, "binary_crossentropy", from_logits=False,
                              label_smoothing=0)
CategoricalCrossentropy = _wrapper("CategoricalCrossentropy", categorical_crossentropy, "categorical_crossentropy",
                                   from_logits=False, label_smoothing=0)
SparseCategoricalCrossentropy = _wrapper("SparseCategoricalCrossentropy", sparse_categorical_crossentropy,
                                         "sparse_categorical_crossentropy", from_logits=False)
Hinge = _wrapper("Hinge", hinge, "hinge")
SquaredHinge = _wrapper("SquaredHinge", squared_hinge, "squared_hinge")
CategoricalHinge = _wrapper("CategoricalHinge", categorical_hinge, "categorical_hinge")
Poisson = _wrapper("Poisson", poisson, "poisson")
LogCosh = _wrapper("LogCosh", logcosh, "logcosh")
KLDivergence = _wrapper("KLDivergence", kullback_leibler_divergence, "kullback_leibler_divergence")
Huber = _wrapper("Huber", huber_loss, "huber_loss", delta=1.0)
CosineSimilarity = _wrapper("CosineSimilarity", cosine_proximity, "cosine_similarity", axis=-1)

_TABLE = {name: obj for name, obj in dict(globals()).items()
          if not name.startswith("_") and (callable(obj) and getattr(obj, "__module__", None) == __name__)
          and name not in ("serialize", "deserialize", "get")}


def serialize(loss):
    return serialize_keras_object(loss)


def deserialize(name, custom_objects=None):
    return deserialize_keras_object(name, module_objects=_TABLE, custom_objects=custom_objects,
                                    printable_module_name="loss function")


def get(identifier):
    if identifier is None:
        return None
    if isinstance(identifier, str):
        return deserialize(str(identifier))
    if isinstance(identifier, dict):
        return deserialize(identifier)
    if callable(identifier):
        return identifier
    raise ValueError(f"Could not interpret loss function identifier: {identifier}")


__all__ = sorted(_TABLE) + ["Reduction", "serialize", "deserialize", "get"]
