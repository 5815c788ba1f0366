"""`tf.keras.metrics` (TF 1.15): stateful metrics and the accuracy functions.

A `Metric` is a layer whose non-trainable, collection-less weights (`total`, `count`, ...) accumulate over
batches: `update_state` returns the update op, `result()` the value, `m(y_true, y_pred)` is the result after
the update (graph mode: a tensor with a control dependency on the update), `reset_states()` zeroes the weights
(`fit` does it at each epoch). `MeanMetricWrapper(fn)` averages a per-sample function, weighted by
`sample_weight`. Functions: `binary_accuracy`, `categorical_accuracy`, `sparse_categorical_accuracy`,
`top_k_categorical_accuracy`, ... and the loss functions (`mse`, ...) under their names.
"""
from __future__ import annotations

from .. import dtypes as _dtypes
from ..default_graph import convert_to_tensor
from ..ops import array_ops, math_ops, nn_impl
from ..ops.init_ops import zeros_initializer
from . import backend as K
from .engine.base_layer import Layer
from .losses import (binary_crossentropy, categorical_crossentropy, categorical_hinge, cosine_proximity, hinge,
                     kullback_leibler_divergence, logcosh, mean_absolute_error, mean_absolute_percentage_error,
                     mean_squared_error, mean_squared_logarithmic_error, poisson, sparse_categorical_crossentropy,
                     squared_hinge)
from .utils.generic_utils import deserialize_keras_object, serialize_keras_object
from .utils.losses_utils import squeeze_or_expand_dimensions


# -- functions --------------------------------------------------------------------------------------------
def accuracy(y_true, y_pred):
    y_true, y_pred = convert_to_tensor(y_true), convert_to_tensor(y_pred)
    if y_true.dtype != y_pred.dtype:
        y_pred = math_ops.cast(y_pred, y_true.dtype)
    return math_ops.cast(math_ops.equal(y_true, y_pred), _dtypes.as_dtype(K.floatx()))


def binary_accuracy(y_true, y_pred, threshold=0.5):
    y_pred = convert_to_tensor(y_pred)
    threshold = math_ops.cast(threshold, y_pred.dtype)
    y_pred = math_ops.cast(y_pred > threshold, y_pred.dtype)
    return K.mean(math_ops.equal(math_ops.cast(y_true, y_pred.dtype), y_pred), axis=-1)


def categorical_accuracy(y_true, y_pred):
    return math_ops.cast(math_ops.equal(math_ops.argmax(y_true, axis=-1), math_ops.argmax(y_pred, axis=-1)),
                         _dtypes.as_dtype(K.floatx()))


def _squeeze_sparse_labels(y_true, y_pred):
    y_true, y_pred = convert_to_tensor(y_true), convert_to_tensor(y_pred)
    if (y_true.shape.ndims is not None and y_pred.shape.ndims is not None
            and y_true.shape.ndims == y_pred.shape.ndims):
        y_true = array_ops.squeeze(y_true, [-1])
    return y_true, y_pred


def sparse_categorical_accuracy(y_true, y_pred):
    y_true, y_pred = _squeeze_sparse_labels(y_true, y_pred)
    y_pred = math_ops.argmax(y_pred, axis=-1)
    if y_pred.dtype != y_true.dtype:
        y_pred = math_ops.cast(y_pred, y_true.dtype)
    return math_ops.cast(math_ops.equal(y_true, y_pred), _dtypes.as_dtype(K.floatx()))


def top_k_categorical_accuracy(y_true, y_pred, k=5):
    return K.mean(nn_impl.in_top_k(y_pred, math_ops.argmax(y_true, axis=-1), k), axis=-1)


def sparse_top_k_categorical_accuracy(y_true, y_pred, k=5):
    y_true, y_pred = _squeeze_sparse_labels(y_true, y_pred)
    return K.mean(nn_impl.in_top_k(y_pred, math_ops.cast(y_true, _dtypes.int32), k), axis=-1)


acc = ACC = accuracy
bce = BCE = binary_crossentropy
mse = MSE = mean_squared_error
mae = MAE = mean_absolute_error
mape = MAPE = mean_absolute_percentage_error
msle = MSLE = mean_squared_logarithmic_error
cosine = cosine_proximity
kld = KLD = kullback_leibler_divergence


# -- stateful metrics ---------------------------------------------------------------------------------------
class Metric(Layer):
    """Base class of stateful metrics: implement `update_state(...)` (returning an op) and `result()`."""

    def __init__(self, name=None, dtype=None, **kwargs):
        super().__init__(name=name, dtype=dtype, **kwargs)
        self.stateful = True
        self.built = True
        self._dtype = K.floatx() if dtype is None else _dtypes.as_dtype(dtype).name

    def __call__(self, *args, **kwargs):
        """The result after updating with these values (in graph mode: a tensor that runs the update)."""
        with K.name_scope(self.name):
            update_op = self.update_state(*args, **kwargs)
            deps = [update_op] if update_op is not None else []
            with K.get_graph().control_dependencies(deps):
                result = array_ops.identity(self.result())
        self._call_result = result
        return result

    def update_state(self, *args, **kwargs):
        raise NotImplementedError("Must be implemented in subclasses.")

    def result(self):
        raise NotImplementedError("Must be implemented in subclasses.")

    def reset_states(self):
        """Sets every state variable to 0."""
        K.batch_set_value([(v, 0) for v in self.variables])

    def get_config(self):
        return {"name": self.name, "dtype": self.dtype}

    def add_weight(self, name, shape=(), aggregation=None, synchronization=None, initializer=None, dtype=None):
        """A non-trainable state variable in no collection (so `tf.train.Saver()` skips it, as in TF)."""
        with K.get_graph().as_default(), K.name_scope(self.name):
            return super().add_weight(name=name, shape=shape, dtype=self._dtype if dtype is None else dtype,
                                      trainable=False, initializer=initializer, collections=[])


class Reduce(Metric):
    """total (and count) of values: SUM, SUM_OVER_BATCH_SIZE or WEIGHTED_MEAN."""

    SUM, SUM_OVER_BATCH_SIZE, WEIGHTED_MEAN = "sum", "sum_over_batch_size", "weighted_mean"

    def __init__(self, reduction, name, dtype=None):
        super().__init__(name=name, dtype=dtype)
        self.reduction = reduction
        self.total = self.add_weight("total", initializer=zeros_initializer)
        if reduction in (Reduce.SUM_OVER_BATCH_SIZE, Reduce.WEIGHTED_MEAN):
            self.count = self.add_weight("count", initializer=zeros_initializer)

    def update_state(self, values, sample_weight=None):
        dt = _dtypes.as_dtype(self._dtype)
        values = math_ops.cast(values, dt)
        if sample_weight is not None:
            sample_weight = math_ops.cast(sample_weight, dt)
            values, _, sample_weight = squeeze_or_expand_dimensions(values, None, sample_weight)
            v_rank, w_rank = values.shape.ndims, sample_weight.shape.ndims
            if v_rank is not None and w_rank is not None and w_rank < v_rank and w_rank > 0:
                reduce = math_ops.reduce_sum if self.reduction == Reduce.SUM else math_ops.reduce_mean
                values = reduce(values, axis=list(range(w_rank, v_rank)))
            values = math_ops.multiply(values, sample_weight)
        value_sum = math_ops.reduce_sum(values)
        with K.get_graph().control_dependencies([value_sum]):
            update_total = self.total.assign_add(value_sum)
        if self.reduction == Reduce.SUM:
            return update_total
        if self.reduction == Reduce.WEIGHTED_MEAN and sample_weight is not None:
            num_values = math_ops.reduce_sum(sample_weight * array_ops.ones_like(values))
        else:
            num_values = math_ops.cast(array_ops.size(values), dt)
        with K.get_graph().control_dependencies([update_total]):
            return self.count.assign_add(num_values)

    def result(self):
        if self.reduction == Reduce.SUM:
            return array_ops.identity(self.total)
        return math_ops.div_no_nan(self.total, self.count)


class Sum(Reduce):
    def __init__(self, name="sum", dtype=None):
        super().__init__(Reduce.SUM, name=name, dtype=dtype)


class Mean(Reduce):
    """The weighted mean of the values seen."""

    def __init__(self, name="mean", dtype=None):
        super().__init__(Reduce.WEIGHTED_MEAN, name=name, dtype=dtype)


class MeanMetricWrapper(Mean):
    """The mean of `fn(y_true, y_pred, **kwargs)` over the samples seen."""

    def __init__(self, fn, name=None, dtype=None, **kwargs):
        super().__init__(name=name, dtype=dtype)
        self._fn = fn
        self._fn_kwargs = kwargs

    def update_state(self, y_true, y_pred, sample_weight=None):
        dt = _dtypes.as_dtype(self._dtype)
        y_true, y_pred = convert_to_tensor(y_true), convert_to_tensor(y_pred)
        if y_true.dtype.is_floating or y_true.dtype.is_integer:
            y_true = math_ops.cast(y_true, dt)
        y_pred = math_ops.cast(y_pred, dt)
        y_pred, y_true = squeeze_or_expand_dimensions(y_pred, y_true)
        matches = self._fn(y_true, y_pred, **self._fn_kwargs)
        return super().update_state(matches, sample_weight=sample_weight)

    def get_config(self):
        return {**super().get_config(), **self._fn_kwargs}


def _wrapped(class_name, fn, default_name, **defaults):
    def __init__(self, name=default_name, dtype=None, **kwargs):
        MeanMetricWrapper.__init__(self, fn, name=name, dtype=dtype, **{**defaults, **kwargs})

    def get_config(self):
        return {"name": self.name, "dtype": self.dtype, **{k: self._fn_kwargs[k] for k in defaults}}

    return type(class_name, (MeanMetricWrapper,), {"__init__": __init__, "get_config": get_config,
                                                   "__doc__": f"`tf.keras.metrics.{class_name}`."})


Accuracy = _wrapped("Accuracy", accuracy, "accuracy")
BinaryAccuracy = _wrapped("BinaryAccuracy", binary_accuracy, "binary_accuracy", threshold=0.5)
CategoricalAccuracy = _wrapped("CategoricalAccuracy", categorical_accuracy, "categorical_accuracy")
SparseCategoricalAccuracy = _wrapped("SparseCategoricalAccuracy", sparse_categorical_accuracy,
                                     "sparse_categorical_accuracy")
TopKCategoricalAccuracy = _wrapped("TopKCategoricalAccuracy", top_k_categorical_accuracy,
                                   "top_k_categorical_accuracy", k=5)
SparseTopKCategoricalAccuracy = _wrapped("SparseTopKCategoricalAccuracy", sparse_top_k_categorical_accuracy,
                                         "sparse_top_k_categorical_accuracy", k=5)
MeanSquaredError = _wrapped("MeanSquaredError", mean_squared_error, "mean_squared_error")
MeanAbsoluteError = _wrapped("MeanAbsoluteError", mean_absolute_error, "mean_absolute_error")
MeanAbsolutePercentageError = _wrapped("MeanAbsolutePercentageError", mean_absolute_percentage_error,
                                       "mean_absolute_percentage_error")
MeanSquaredLogarithmicError = _wrapped("MeanSquaredLogarithmicError", mean_squared_logarithmic_error,
                                       "mean_squared_logarithmic_error")
BinaryCrossentropy = _wrapped("BinaryCrossentropy", binary_crossentropy, "binary_crossentropy", from_logits=False,
                              label_smoothing=0)
CategoricalCrossentropy = _wrapped("CategoricalCrossentropy", categorical_crossentropy, "categorical_crossentropy",
                                   from_logits=False, label_smoothing=0)
SparseCategoricalCrossentropy = _wrapped("SparseCategoricalCrossentropy", sparse_categorical_crossentropy,
                                         "sparse_categorical_crossentropy", from_logits=False, axis=-1)
Hinge = _wrapped("Hinge", hinge, "hinge")
SquaredHinge = _wrapped("SquaredHinge", squared_hinge, "squared_hinge")
CategoricalHinge = _wrapped("CategoricalHinge", categorical_hinge, "categorical_hinge")
KLDivergence = _wrapped("KLDivergence", kullback_leibler_divergence, "kullback_leibler_divergence")
Poisson = _wrapped("Poisson", poisson, "poisson")
LogCoshError = _wrapped("LogCoshError", logcosh, "logcosh")
CosineSimilarity = _wrapped("CosineSimilarity", lambda y_true, y_pred, axis=-1: -cosine_proximity(
    y_true, y_pred, axis=axis), "cosine_similarity", axis=-1)

_NOT_METRICS = {"serialize", "deserialize", "get", "Layer", "squeeze_or_expand_dimensions", "deserialize_keras_object",
                "serialize_keras_object"}
_TABLE = {name: obj for name, obj in dict(globals()).items()
          if not name.startswith("_") and callable(obj) and name not in _NOT_METRICS
          and getattr(obj, "__module__", "").startswith("tensorfleet.keras")}


def serialize(metric):
    return serialize_keras_object(metric)


def deserialize(config, custom_objects=None):
    return deserialize_keras_object(config, module_objects=_TABLE, custom_objects=custom_objects,
                                    printable_module_name="metric function")


def get(identifier):
    if isinstance(identifier, dict):
        return deserialize(identifier)
    if isinstance(identifier, str):
        return deserialize(str(identifier))
    if callable(identifier):
        return identifier
    raise ValueError(f"Could not interpret metric function identifier: {identifier}")


__all__ = sorted(_TABLE) + ["serialize", "deserialize", "get"]
