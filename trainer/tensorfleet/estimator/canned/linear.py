"""`tf.estimator.LinearClassifier` / `LinearRegressor`: `linear_model` over the feature columns -> head.

Variables `linear/linear_model/<column>/weights` and `linear/linear_model/bias_weights` (zeros), as
TF 1.15; default optimizer Ftrl with learning rate min(0.2, 1/sqrt(number of columns)).
"""
from __future__ import annotations

import math

from ...feature_column.layers import linear_model
from ...ops.variable_scope import variable_scope
from ...train.training_util import get_global_step
from ..estimator import Estimator
from . import head as head_lib
from .optimizers import get_optimizer_instance, minimize_with_update_ops

__all__ = ["LinearClassifier", "LinearRegressor"]

_LEARNING_RATE = 0.2


def linear_learning_rate(num_feature_columns):
    return min(_LEARNING_RATE, 1.0 / math.sqrt(num_feature_columns))


def linear_logits(features, feature_columns, units, sparse_combiner):
    return linear_model(features, feature_columns, units=units, sparse_combiner=sparse_combiner)


class _LinearBase(Estimator):
    def __init__(self, head, feature_columns, model_dir, optimizer, config, warm_start_from, sparse_combiner):
        feature_columns = tuple(feature_columns or ())
        if not feature_columns:
            raise ValueError("feature_columns must not be empty.")

        def model_fn(features, labels, mode, config):
            if not isinstance(features, dict):
                raise ValueError(f"features should be a dictionary of `Tensor`s. Given type: {type(features)}")
            opt = get_optimizer_instance(optimizer, learning_rate=linear_learning_rate(len(feature_columns)))
            with variable_scope("linear"):
                logits = linear_logits(features, feature_columns, head.logits_dimension, sparse_combiner)
            return head.create_estimator_spec(features=features, mode=mode, labels=labels, logits=logits,
                                              train_op_fn=lambda loss: minimize_with_update_ops(opt, loss,
                                                                                                get_global_step()))

        super().__init__(model_fn=model_fn, model_dir=model_dir, config=config, warm_start_from=warm_start_from)


class LinearClassifier(_LinearBase):
    """`tf.estimator.LinearClassifier(feature_columns, model_dir=None, n_classes=2, weight_column=None,
    label_vocabulary=None, optimizer='Ftrl', config=None, partitioner=None, warm_start_from=None,
    loss_reduction=SUM, sparse_combiner='sum')`."""

    def __init__(self, feature_columns, model_dir=None, n_classes=2, weight_column=None, label_vocabulary=None,
                 optimizer="Ftrl", config=None, partitioner=None, warm_start_from=None, loss_reduction="weighted_sum",
                 sparse_combiner="sum"):
        head = head_lib.classification_head(n_classes, weight_column, label_vocabulary, loss_reduction)
        super().__init__(head, feature_columns, model_dir, optimizer, config, warm_start_from, sparse_combiner)


class LinearRegressor(_LinearBase):
    """`tf.estimator.LinearRegressor(feature_columns, model_dir=None, label_dimension=1, weight_column=None,
    optimizer='Ftrl', config=None, partitioner=None, warm_start_from=None, loss_reduction=SUM,
    sparse_combiner='sum')`."""

    def __init__(self, feature_columns, model_dir=None, label_dimension=1, weight_column=None, optimizer="Ftrl",
                 config=None, partitioner=None, warm_start_from=None, loss_reduction="weighted_sum",
                 sparse_combiner="sum"):
        head = head_lib.RegressionHead(label_dimension, weight_column, loss_reduction)
        super().__init__(head, feature_columns, model_dir, optimizer, config, warm_start_from, sparse_combiner)
