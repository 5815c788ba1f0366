"""`tf.estimator.ModeKeys` and `tf.estimator.EstimatorSpec`: what a `model_fn` returns.

The contract between a user's `model_fn(features, labels, mode, params, config)` and `Estimator`:
TRAIN needs `loss` and `train_op`, EVAL needs `loss` (and may add `eval_metric_ops`, each a
`(value, update_op)` pair as `tf.metrics` returns), PREDICT needs `predictions`. Checks and
messages as TF 1.15's `model_fn.py`.
"""
from __future__ import annotations

import collections

from ..graph import Operation, Tensor
from .export.export_lib import get_export_outputs

__all__ = ["ModeKeys", "EstimatorSpec"]

LOSS_METRIC_KEY = "loss"
AVERAGE_LOSS_METRIC_KEY = "average_loss"


class ModeKeys:
    TRAIN = "train"
    EVAL = "eval"
    PREDICT = "infer"


def _is_tensorish(x) -> bool:
    return isinstance(x, (Tensor, Operation)) or hasattr(x, "op") and hasattr(x, "dtype")


_Fields = collections.namedtuple("_Fields", [
    "mode", "predictions", "loss", "train_op", "eval_metric_ops", "export_outputs", "training_chief_hooks",
    "training_hooks", "scaffold", "evaluation_hooks", "prediction_hooks"])


class EstimatorSpec(_Fields):  # (TF's is a namedtuple named EstimatorSpec too; repr shows this class's name)
    """`EstimatorSpec(mode, predictions=None, loss=None, train_op=None, eval_metric_ops=None, export_outputs=None,
    training_chief_hooks=None, training_hooks=None, scaffold=None, evaluation_hooks=None, prediction_hooks=None)`."""

    def __new__(cls, mode, predictions=None, loss=None, train_op=None, eval_metric_ops=None, export_outputs=None,
                training_chief_hooks=None, training_hooks=None, scaffold=None, evaluation_hooks=None,
                prediction_hooks=None):
        from ..train.monitored_session import Scaffold
        if mode not in (ModeKeys.TRAIN, ModeKeys.EVAL, ModeKeys.PREDICT):
            raise ValueError(f"mode={mode} unrecognized.")
        _check_loss_and_train_op(mode, loss, train_op)
        predictions = _check_predictions(mode, predictions)
        eval_metric_ops = dict(eval_metric_ops or {})
        for k, v in eval_metric_ops.items():
            if not (isinstance(v, tuple) and len(v) == 2):
                raise TypeError(f"Values of eval_metric_ops must be (metric_value, update_op) tuples, given: {v} "
                                f"for key: {k}")
        scaffold = scaffold if scaffold is not None else Scaffold()
        if not isinstance(scaffold, Scaffold):
            raise TypeError(f"scaffold must be tf.train.Scaffold. Given: {scaffold}")
        if mode == ModeKeys.PREDICT:
            export_outputs = get_export_outputs(export_outputs, predictions)
        hooks = _check_hooks(training_chief_hooks=training_chief_hooks, training_hooks=training_hooks,
                             evaluation_hooks=evaluation_hooks, prediction_hooks=prediction_hooks)
        return super().__new__(cls, mode, predictions, loss, train_op, eval_metric_ops, export_outputs,
                               hooks["training_chief_hooks"], hooks["training_hooks"], scaffold,
                               hooks["evaluation_hooks"], hooks["prediction_hooks"])

    def _replace(self, **kwds):
        if "mode" in kwds and self.mode != kwds["mode"]:
            raise ValueError("mode of EstimatorSpec cannot be changed.")
        fields = dict(self._asdict(), **kwds)
        return EstimatorSpec(**fields)


def _check_loss_and_train_op(mode, loss, train_op):
    if loss is not None:
        if not _is_tensorish(loss):
            raise TypeError(f"loss must be Tensor or Operation. Given: {loss!r}")
        if loss.shape.ndims not in (None, 0) and not (loss.shape.ndims == 1 and loss.shape.dims[0].value == 1):
            raise ValueError(f"Loss must be scalar, given: {loss.shape}")
    elif mode in (ModeKeys.TRAIN, ModeKeys.EVAL):
        raise ValueError("Missing loss.")
    if train_op is None:
        if mode == ModeKeys.TRAIN:
            raise ValueError("Missing train_op.")
    elif not _is_tensorish(train_op):
        raise TypeError(f"train_op must be Operation or Tensor, given: {train_op!r}")


def _check_predictions(mode, predictions):
    if predictions is None:
        if mode == ModeKeys.PREDICT:
            raise ValueError("Missing predictions.")
        return {}
    if isinstance(predictions, dict):
        for k, v in predictions.items():
            if not _is_tensorish(v):
                raise TypeError(f"predictions[{k}] must be Tensor, given: {v!r}")
    elif not _is_tensorish(predictions):
        raise TypeError(f"predictions must be Tensor or dict of Tensor, given: {predictions!r}")
    return predictions


def _check_hooks(**groups):
    from ..train.basic_session_run_hooks import SessionRunHook
    hooks = {}
    for name, value in groups.items():
        value = tuple(value or ())
        for h in value:
            if not isinstance(h, SessionRunHook):
                raise TypeError(f"All hooks must be SessionRunHook instances, given: {h}")
        hooks[name] = value
    return hooks
