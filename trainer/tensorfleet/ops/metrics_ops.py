"""`tf.metrics` (TF 1.15's streaming metrics): each returns `(value, update_op)`.

Sits in `ops/` above `variable_scope` and the math ops. A metric keeps its running state in
local, non-trainable variables (collections `LOCAL_VARIABLES` and `metric_variables`, names
`<metric>/total`, `<metric>/count`, ... as TF names them) that `tf.local_variables_initializer()`
resets; `update_op` folds one batch in and returns the updated value, `value` reads it. The
estimator's `evaluate` runs the update ops over the eval input and reads the values once.
"""
from __future__ import annotations

import numpy as np

from .. import dtypes as _dtypes
from ..graph import GraphKeys
from ..default_graph import add_to_collections
from . import array_ops, init_ops, math_ops, state_ops
from .variable_scope import get_variable, variable_scope

__all__ = ["accuracy", "mean", "mean_squared_error", "mean_absolute_error", "root_mean_squared_error",
           "true_positives", "false_positives", "false_negatives", "true_negatives", "precision", "recall", "auc"]

METRIC_VARIABLES = "metric_variables"


def _metric_variable(shape, dtype, name):
    return get_variable(name, shape=shape, dtype=dtype, initializer=init_ops.zeros_initializer(), trainable=False,
                        collections=[GraphKeys.LOCAL_VARIABLES, METRIC_VARIABLES])


def _collect(value, update_op, metrics_collections, updates_collections):
    if metrics_collections:
        add_to_collections(metrics_collections, value)
    if updates_collections:
        add_to_collections(updates_collections, update_op)
    return value, update_op


def _as_float(x):
    x = array_ops.convert_to_tensor(x) if not hasattr(x, "op") else x
    return x if x.dtype == _dtypes.float32 else math_ops.cast(x, _dtypes.float32)


def _squeeze_last(x, other):
    """TF's `_remove_squeezable_dimensions`: drop a trailing size-1 axis that the other side lacks."""
    xs, os_ = x.shape, other.shape
    if xs.ndims is not None and os_.ndims is not None and xs.ndims == os_.ndims + 1 and xs.dims[-1].value == 1:
        return array_ops.squeeze(x, [-1])
    return x


def _weights_like(weights, values):
    if weights is None:
        return None
    weights = _as_float(weights)
    weights = _squeeze_last(weights, values)
    return math_ops.multiply(weights, array_ops.ones_like(values))


def mean(values, weights=None, metrics_collections=None, updates_collections=None, name=None):
    """`tf.metrics.mean`: the (weighted) mean of every value seen; 0 before any."""
    with variable_scope(name, "mean", (values, weights)):
        values = _as_float(values)
        total = _metric_variable([], _dtypes.float32, "total")
        count = _metric_variable([], _dtypes.float32, "count")
        w = _weights_like(weights, values)
        if w is None:
            num_values = math_ops.cast(array_ops.size(values), _dtypes.float32)
        else:
            values = math_ops.multiply(values, w)
            num_values = math_ops.reduce_sum(w)
        update_total = state_ops.assign_add(total, math_ops.reduce_sum(values))
        update_count = state_ops.assign_add(count, num_values)
        value = math_ops.div_no_nan(total, count, name="value")
        update_op = math_ops.div_no_nan(update_total, update_count, name="update_op")
        return _collect(value, update_op, metrics_collections, updates_collections)


def accuracy(labels, predictions, weights=None, metrics_collections=None, updates_collections=None, name=None):
    """`tf.metrics.accuracy`: how often `predictions` equals `labels` (both cast to the labels' dtype)."""
    labels = array_ops.convert_to_tensor(labels)
    predictions = array_ops.convert_to_tensor(predictions)
    predictions = _squeeze_last(predictions, labels)
    labels = _squeeze_last(labels, predictions)
    if predictions.dtype != labels.dtype:
        predictions = math_ops.cast(predictions, labels.dtype)
    is_correct = math_ops.cast(math_ops.equal(predictions, labels), _dtypes.float32)
    return mean(is_correct, weights, metrics_collections, updates_collections, name or "accuracy")


def mean_squared_error(labels, predictions, weights=None, metrics_collections=None, updates_collections=None,
                       name=None):
    labels, predictions = _as_float(labels), _as_float(predictions)
    predictions = _squeeze_last(predictions, labels)
    squared = math_ops.square(math_ops.subtract(labels, predictions))
    return mean(squared, weights, metrics_collections, updates_collections, name or "mean_squared_error")


def mean_absolute_error(labels, predictions, weights=None, metrics_collections=None, updates_collections=None,
                        name=None):
    labels, predictions = _as_float(labels), _as_float(predictions)
    predictions = _squeeze_last(predictions, labels)
    absolute = math_ops.abs(math_ops.subtract(labels, predictions))
    return mean(absolute, weights, metrics_collections, updates_collections, name or "mean_absolute_error")


def root_mean_squared_error(labels, predictions, weights=None, metrics_collections=None, updates_collections=None,
                            name=None):
    value, update = mean_squared_error(labels, predictions, weights, None, None,
                                       name or "root_mean_squared_error")
    value, update = math_ops.sqrt(value), math_ops.sqrt(update)
    return _collect(value, update, metrics_collections, updates_collections)


def _confusion_count(labels, predictions, weights, name, default, want_label, want_pred):
    with variable_scope(name, default, (predictions, labels, weights)):
        labels = math_ops.cast(array_ops.convert_to_tensor(labels), _dtypes.bool_)
        predictions = math_ops.cast(array_ops.convert_to_tensor(predictions), _dtypes.bool_)
        predictions = _squeeze_last(predictions, labels)
        labels = _squeeze_last(labels, predictions)
        lab = labels if want_label else math_ops.logical_not(labels)
        pred = predictions if want_pred else math_ops.logical_not(predictions)
        hit = math_ops.cast(math_ops.logical_and(lab, pred), _dtypes.float32)
        w = _weights_like(weights, hit)
        if w is not None:
            hit = math_ops.multiply(hit, w)
        count = _metric_variable([], _dtypes.float32, "count")
        update = state_ops.assign_add(count, math_ops.reduce_sum(hit))
        return array_ops.identity(count), update


def true_positives(labels, predictions, weights=None, metrics_collections=None, updates_collections=None, name=None):
    v, u = _confusion_count(labels, predictions, weights, name, "true_positives", True, True)
    return _collect(v, u, metrics_collections, updates_collections)


def false_positives(labels, predictions, weights=None, metrics_collections=None, updates_collections=None,
                    name=None):
    v, u = _confusion_count(labels, predictions, weights, name, "false_positives", False, True)
    return _collect(v, u, metrics_collections, updates_collections)


def false_negatives(labels, predictions, weights=None, metrics_collections=None, updates_collections=None,
                    name=None):
    v, u = _confusion_count(labels, predictions, weights, name, "false_negatives", True, False)
    return _collect(v, u, metrics_collections, updates_collections)


def true_negatives(labels, predictions, weights=None, metrics_collections=None, updates_collections=None,
                   name=None):
    v, u = _confusion_count(labels, predictions, weights, name, "true_negatives", False, False)
    return _collect(v, u, metrics_collections, updates_collections)


def _ratio(a, b, name):
    return math_ops.div_no_nan(a, math_ops.add(a, b), name=name)


def precision(labels, predictions, weights=None, metrics_collections=None, updates_collections=None, name=None):
    """`tf.metrics.precision`: tp / (tp + fp) over boolean-cast labels and predictions."""
    with variable_scope(name, "precision", (predictions, labels, weights)):
        tp, tp_up = true_positives(labels, predictions, weights)
        fp, fp_up = false_positives(labels, predictions, weights)
        return _collect(_ratio(tp, fp, "value"), _ratio(tp_up, fp_up, "update_op"), metrics_collections,
                        updates_collections)


def recall(labels, predictions, weights=None, metrics_collections=None, updates_collections=None, name=None):
    """`tf.metrics.recall`: tp / (tp + fn)."""
    with variable_scope(name, "recall", (predictions, labels, weights)):
        tp, tp_up = true_positives(labels, predictions, weights)
        fn, fn_up = false_negatives(labels, predictions, weights)
        return _collect(_ratio(tp, fn, "value"), _ratio(tp_up, fn_up, "update_op"), metrics_collections,
                        updates_collections)


def auc(labels, predictions, weights=None, num_thresholds=200, metrics_collections=None, updates_collections=None,
        curve="ROC", name=None, summation_method="trapezoidal", thresholds=None):
    """`tf.metrics.auc` (ROC or PR, trapezoidal rule) over `num_thresholds` thresholds in [0, 1], as TF
    places them (`(i) / (n - 1)` with the ends pushed just outside [0, 1])."""
    if curve not in ("ROC", "PR"):
        raise ValueError(f"curve must be either ROC or PR, {curve} unknown")
    if summation_method not in ("trapezoidal", "careful_interpolation"):
        raise ValueError(f"Invalid summation_method: {summation_method}")
    with variable_scope(name, "auc", (labels, predictions, weights)):
        if thresholds is None:
            kepsilon = 1e-7
            thresholds = [(i + 1) * 1.0 / (num_thresholds - 1) for i in range(num_thresholds - 2)]
            thresholds = [0.0 - kepsilon] + thresholds + [1.0 + kepsilon]
        n = len(thresholds)
        thr = array_ops.constant(np.asarray(thresholds, np.float32).reshape(n, 1))
        preds = array_ops.reshape(_as_float(predictions), [1, -1])
        labs = array_ops.reshape(math_ops.cast(array_ops.convert_to_tensor(labels), _dtypes.bool_), [1, -1])
        above = math_ops.greater(preds, thr)                      # [n, batch]
        pos = math_ops.cast(labs, _dtypes.float32)
        w = array_ops.reshape(_as_float(weights), [1, -1]) if weights is not None else None
        above_f = math_ops.cast(above, _dtypes.float32)
        counts = {}
        for key, sel in (("true_positives", above_f * pos), ("false_negatives", (1.0 - above_f) * pos),
                         ("true_negatives", (1.0 - above_f) * (1.0 - pos)),
                         ("false_positives", above_f * (1.0 - pos))):
            if w is not None:
                sel = sel * w
            var = _metric_variable([n], _dtypes.float32, key)
            counts[key] = (var, state_ops.assign_add(var, math_ops.reduce_sum(sel, 1)))

        def area(tp, fn, tn, fp, scope):
            eps = 1e-6
            rec = math_ops.div(tp + eps, tp + fn + eps)
            if curve == "ROC":
                x = math_ops.div(fp, fp + tn + eps)
                y = rec
            else:
                x = rec
                y = math_ops.div(tp + eps, tp + fp + eps)
            return math_ops.reduce_sum(math_ops.multiply(x[:n - 1] - x[1:], (y[:n - 1] + y[1:]) / 2.0), name=scope)

        names = ("true_positives", "false_negatives", "true_negatives", "false_positives")
        value = area(*[counts[k][0] for k in names], scope="value")
        update = area(*[counts[k][1] for k in names], scope="update_op")
        return _collect(value, update, metrics_collections, updates_collections)
