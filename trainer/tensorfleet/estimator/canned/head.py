"""The canned estimators' heads: logits -> predictions, loss, eval metrics and train op (TF 1.15 v1 heads).

Used by `linear.py`, `dnn.py`, `dnn_linear_combined.py`. Three heads, as TF picks them:
- multi-class (n_classes > 2): softmax cross-entropy; predictions `logits`, `probabilities`,
  `class_ids`, `classes`, `all_class_ids`, `all_classes`; metrics `accuracy`, `average_loss`;
- binary (n_classes == 2): sigmoid cross-entropy on one logit; adds `logistic` and the metrics
  `precision`, `recall`, `auc`, `auc_precision_recall`, `prediction/mean`, `label/mean`, `accuracy_baseline`;
- regression: squared error; `predictions`; metrics `average_loss`, `prediction/mean`, `label/mean`.
The training loss is the per-example losses' weighted SUM over the batch (v1's `loss_reduction`
default); summaries `loss` and `average_loss`. String labels need `label_vocabulary` (their class ids are
their positions in it, and `classes` are its strings). In PREDICT mode the heads' `export_outputs` are TF's:
`serving_default` = `classification` (scores = probabilities, classes = every class name) or `regression`,
the binary head's `regression` (the logistic), and `predict` (every prediction).
"""
from __future__ import annotations

import numpy as np

from ... import dtypes as _dtypes
from ...ops import array_ops, check_ops, math_ops, metrics_ops, nn_ops, string_ops
from ...default_graph import control_dependencies
from ...saved_model.signature_constants import DEFAULT_SERVING_SIGNATURE_DEF_KEY as DEFAULT_SERVING_KEY
from ..export.export_output import ClassificationOutput, PredictOutput, RegressionOutput
from ..model_fn import EstimatorSpec, ModeKeys

__all__: list = []


def _weights(features, weight_column, like):
    if weight_column is None:
        return None
    key = weight_column if isinstance(weight_column, str) else weight_column.key
    if key not in features:
        raise ValueError(f"weight_column {key!r} is not in the features dict")
    w = math_ops.cast(features[key], _dtypes.float32)
    return array_ops.reshape(w, [-1, 1]) * array_ops.ones_like(like)


def _reduce(unreduced, weights, reduction):
    weighted = unreduced if weights is None else math_ops.multiply(unreduced, weights)
    total = math_ops.reduce_sum(weighted)
    if reduction == "weighted_sum":
        return total
    if weights is None:
        count = math_ops.reduce_sum(array_ops.ones_like(unreduced))
    else:
        count = math_ops.reduce_sum(weights)
    return math_ops.div_no_nan(total, count)


def _summaries(training_loss, unreduced, weights):
    from ...summary import summary_api
    summary_api.scalar("loss", training_loss)
    summary_api.scalar("average_loss", _reduce(unreduced, weights, "mean"))


class _Head:
    label_vocabulary = None

    def _classes(self, ids):
        """Class ids -> their names: the label vocabulary's strings, else the ids as strings (TF's `classes`)."""
        if self.label_vocabulary is None:
            return string_ops.as_string(ids, name="str_classes")
        vocab = array_ops.constant(np.asarray([v.encode() for v in self.label_vocabulary], dtype=object))
        return array_ops.gather(vocab, ids)

    def _label_ids(self, labels):
        """String labels -> their index in the label vocabulary (an error names a label outside it)."""
        if self.label_vocabulary is None:
            if labels.dtype == _dtypes.string:
                raise ValueError("Labels dtype should be integer. Instead got string: give label_vocabulary")
            return labels
        if labels.dtype != _dtypes.string:
            raise ValueError(f"Labels dtype should be string if there is a vocabulary. Got {labels.dtype.name}")
        vocab = array_ops.constant(np.asarray([v.encode() for v in self.label_vocabulary], dtype=object))
        eq = math_ops.equal(array_ops.expand_dims(labels, -1), vocab)              # [batch, 1, V]
        ok = check_ops.assert_equal(math_ops.reduce_all(math_ops.reduce_any(eq, -1)), True,
                                    message=f"Labels must be in label_vocabulary {list(self.label_vocabulary)}")
        with control_dependencies([ok]):
            return array_ops.identity(math_ops.argmax(math_ops.cast(eq, _dtypes.int32), -1))

    def __init__(self, weight_column=None, loss_reduction="weighted_sum"):
        if loss_reduction not in ("weighted_sum", "weighted_mean", "weighted_sum_over_batch_size",
                                  "weighted_sum_by_nonzero_weights"):
            raise ValueError(f"Invalid loss_reduction: {loss_reduction}")
        self._weight_column, self._loss_reduction = weight_column, loss_reduction

    def create_estimator_spec(self, features, mode, logits, labels=None, train_op_fn=None):
        predictions = self._predictions(logits)
        if mode == ModeKeys.PREDICT:
            return EstimatorSpec(mode=mode, predictions=predictions, export_outputs=self._export_outputs(predictions))
        if labels is None:
            raise ValueError("You must provide a labels Tensor. Given: None. Suggested troubleshooting steps: "
                             "Check that your data contain your label feature. Check that your input_fn properly "
                             "parses and returns labels.")
        labels = self._check_labels(labels)
        unreduced = self._unreduced_loss(labels, logits)
        weights = _weights(features, self._weight_column, unreduced)
        reduction = "weighted_sum" if self._loss_reduction == "weighted_sum" else "mean"
        training_loss = _reduce(unreduced, weights, reduction)
        if mode == ModeKeys.EVAL:
            return EstimatorSpec(mode=mode, predictions=predictions, loss=training_loss,
                                 eval_metric_ops=self._metrics(labels, predictions, unreduced, weights))
        if train_op_fn is None:
            raise ValueError("train_op_fn cannot be None.")
        _summaries(training_loss, unreduced, weights)
        return EstimatorSpec(mode=mode, predictions=predictions, loss=training_loss,
                             train_op=train_op_fn(training_loss))

    def _export_outputs(self, predictions) -> dict:
        """TF's classification heads' serving signatures: `serving_default` and `classification` (the
        probabilities as scores, every class name per example as classes) and `predict` (all predictions)."""
        classify = ClassificationOutput(scores=predictions["probabilities"], classes=predictions["all_classes"])
        return {DEFAULT_SERVING_KEY: classify, "classification": classify, "predict": PredictOutput(predictions)}

    def _check_labels(self, labels):
        labels = labels if hasattr(labels, "op") else array_ops.convert_to_tensor(labels)
        if labels.shape.ndims == 1:
            labels = array_ops.expand_dims(labels, -1)
        return labels


class MultiClassHead(_Head):
    def __init__(self, n_classes, weight_column=None, loss_reduction="weighted_sum"):
        super().__init__(weight_column, loss_reduction)
        self.logits_dimension = n_classes
        self._n_classes = n_classes

    def _predictions(self, logits):
        class_ids = array_ops.expand_dims(math_ops.argmax(logits, 1), -1)
        n = self._n_classes
        all_ids = np.arange(n, dtype=np.int32).reshape(1, n)
        ones = array_ops.ones_like(math_ops.cast(class_ids, _dtypes.int32))
        return {"logits": logits, "probabilities": nn_ops.softmax(logits), "class_ids": class_ids,
                "classes": self._classes(class_ids), "all_class_ids": math_ops.multiply(ones, all_ids),
                "all_classes": self._classes(math_ops.multiply(ones, all_ids))}

    def _check_labels(self, labels):
        labels = self._label_ids(super()._check_labels(labels))
        if not labels.dtype.is_integer:
            raise ValueError(f"Labels dtype should be integer. Instead got {labels.dtype.name}.")
        ok = check_ops.assert_less(labels, np.asarray(self._n_classes, labels.dtype.as_numpy_dtype),
                                   message="Labels must <= n_classes - 1")
        ok2 = check_ops.assert_non_negative(labels, message="Labels must >= 0")
        with control_dependencies([ok, ok2]):
            return array_ops.identity(math_ops.cast(labels, _dtypes.int64))

    def _unreduced_loss(self, labels, logits):
        per = nn_ops.sparse_softmax_cross_entropy_with_logits(labels=array_ops.squeeze(labels, [1]), logits=logits)
        return array_ops.expand_dims(per, -1)

    def _metrics(self, labels, predictions, unreduced, weights):
        return {"average_loss": metrics_ops.mean(unreduced, weights, name="average_loss"),
                "accuracy": metrics_ops.accuracy(labels, predictions["class_ids"], weights, name="accuracy")}


class BinaryHead(_Head):
    logits_dimension = 1

    def _predictions(self, logits):
        two = array_ops.concat([array_ops.zeros_like(logits), logits], 1)
        class_ids = array_ops.expand_dims(math_ops.argmax(two, 1), -1)
        ones = array_ops.ones_like(math_ops.cast(class_ids, _dtypes.int32))
        all_ids = math_ops.multiply(ones, np.arange(2, dtype=np.int32).reshape(1, 2))
        return {"logits": logits, "logistic": nn_ops.sigmoid(logits), "probabilities": nn_ops.softmax(two),
                "class_ids": class_ids, "classes": self._classes(class_ids),
                "all_class_ids": all_ids, "all_classes": self._classes(all_ids)}

    def _check_labels(self, labels):
        labels = self._label_ids(super()._check_labels(labels))
        ok = check_ops.assert_less_equal(labels, np.asarray(1, labels.dtype.as_numpy_dtype),
                                         message="Labels must <= n_classes - 1")
        ok2 = check_ops.assert_non_negative(labels, message="Labels must >= 0")
        with control_dependencies([ok, ok2]):
            return array_ops.identity(math_ops.cast(labels, _dtypes.float32))

    def _export_outputs(self, predictions) -> dict:
        """The binary head adds `regression`: the logistic (probability of class 1)."""
        return dict(super()._export_outputs(predictions), regression=RegressionOutput(predictions["logistic"]))

    def _unreduced_loss(self, labels, logits):
        return nn_ops.sigmoid_cross_entropy_with_logits(labels=labels, logits=logits)

    def _metrics(self, labels, predictions, unreduced, weights):
        logistic, class_ids = predictions["logistic"], predictions["class_ids"]
        label_mean = metrics_ops.mean(labels, weights, name="label/mean")
        return {"average_loss": metrics_ops.mean(unreduced, weights, name="average_loss"),
                "accuracy": metrics_ops.accuracy(labels, math_ops.cast(class_ids, _dtypes.float32), weights,
                                                 name="accuracy"),
                "precision": metrics_ops.precision(labels, class_ids, weights, name="precision"),
                "recall": metrics_ops.recall(labels, class_ids, weights, name="recall"),
                "prediction/mean": metrics_ops.mean(logistic, weights, name="prediction/mean"),
                "label/mean": label_mean,
                "accuracy_baseline": (math_ops.maximum(label_mean[0], 1 - label_mean[0]),
                                      math_ops.maximum(label_mean[1], 1 - label_mean[1])),
                "auc": metrics_ops.auc(labels, logistic, weights, curve="ROC", name="auc"),
                "auc_precision_recall": metrics_ops.auc(labels, logistic, weights, curve="PR",
                                                        name="auc_precision_recall")}


class RegressionHead(_Head):
    def __init__(self, label_dimension=1, weight_column=None, loss_reduction="weighted_sum"):
        super().__init__(weight_column, loss_reduction)
        if label_dimension < 1:
            raise ValueError(f"Invalid label_dimension {label_dimension}.")
        self.logits_dimension = label_dimension

    def _predictions(self, logits):
        return {"predictions": logits}

    def _export_outputs(self, predictions) -> dict:
        """TF's regression head: `serving_default` and `regression` (the predictions), `predict`."""
        regress = RegressionOutput(predictions["predictions"])
        return {DEFAULT_SERVING_KEY: regress, "regression": regress, "predict": PredictOutput(predictions)}

    def _check_labels(self, labels):
        labels = super()._check_labels(labels)
        return math_ops.cast(labels, _dtypes.float32)

    def _unreduced_loss(self, labels, logits):
        return math_ops.square(math_ops.subtract(labels, logits))

    def _metrics(self, labels, predictions, unreduced, weights):
        return {"average_loss": metrics_ops.mean(unreduced, weights, name="average_loss"),
                "prediction/mean": metrics_ops.mean(predictions["predictions"], weights, name="prediction/mean"),
                "label/mean": metrics_ops.mean(labels, weights, name="label/mean")}


def classification_head(n_classes, weight_column=None, label_vocabulary=None, loss_reduction="weighted_sum"):
    if n_classes is None or n_classes < 2:
        raise ValueError(f"n_classes must be > 1 for classification: {n_classes}.")
    if label_vocabulary is not None:
        if not isinstance(label_vocabulary, (list, tuple)):
            raise ValueError(f"label_vocabulary should be a list or a tuple. Given type: {type(label_vocabulary)}")
        if len(label_vocabulary) != n_classes:
            raise ValueError(f"label_vocabulary length ({len(label_vocabulary)}) is not equal to n_classes "
                             f"({n_classes}).")
    head = BinaryHead(weight_column, loss_reduction) if n_classes == 2 else \
        MultiClassHead(n_classes, weight_column, loss_reduction)
    head.label_vocabulary = tuple(label_vocabulary) if label_vocabulary is not None else None
    return head
