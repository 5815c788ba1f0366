"""`tf.estimator.DNNLinearCombinedClassifier` / `Regressor` (wide and deep): logits = linear part + DNN part.

The linear part lives in scope `linear/` (Ftrl), the DNN in `dnn/` (Adagrad 0.05), each optimizer
updates its own part's variables, and the global step is incremented once after both (TF 1.15).
"""
from __future__ import annotations

from ...default_graph import colocate_with, control_dependencies, get_collection
from ...graph import GraphKeys
from ...ops import math_ops, nn_ops, state_ops
from ...ops.variable_scope import variable_scope
from ...train.training_util import get_global_step
from ..estimator import Estimator
from . import head as head_lib
from .dnn import _LEARNING_RATE as _DNN_LEARNING_RATE
from .dnn import dnn_logits
from .linear import linear_learning_rate, linear_logits
from .optimizers import get_optimizer_instance

__all__ = ["DNNLinearCombinedClassifier", "DNNLinearCombinedRegressor"]


def _combined_model_fn(features, labels, mode, head, linear_feature_columns, linear_optimizer, dnn_feature_columns,
                       dnn_optimizer, dnn_hidden_units, dnn_activation_fn, dnn_dropout, batch_norm,
                       linear_sparse_combiner):
    if not isinstance(features, dict):
        raise ValueError(f"features should be a dictionary of `Tensor`s. Given type: {type(features)}")
    logits_parts = []
    if dnn_feature_columns:
        dnn_opt = get_optimizer_instance(dnn_optimizer, learning_rate=_DNN_LEARNING_RATE)
        with variable_scope("dnn"):
            logits_parts.append(dnn_logits(features, mode, dnn_hidden_units, dnn_feature_columns,
                                           head.logits_dimension, dnn_activation_fn, dnn_dropout, batch_norm))
    if linear_feature_columns:
        linear_opt = get_optimizer_instance(linear_optimizer,
                                            learning_rate=linear_learning_rate(len(linear_feature_columns)))
        with variable_scope("linear"):
            logits_parts.append(linear_logits(features, linear_feature_columns, head.logits_dimension,
                                              linear_sparse_combiner))
    logits = logits_parts[0] if len(logits_parts) == 1 else math_ops.add(logits_parts[0], logits_parts[1])

    def train_op_fn(loss):
        train_ops = []
        global_step = get_global_step()
        update_ops = get_collection(GraphKeys.UPDATE_OPS)
        with control_dependencies(update_ops):
            if dnn_feature_columns:
                train_ops.append(dnn_opt.minimize(loss, var_list=get_collection(GraphKeys.TRAINABLE_VARIABLES,
                                                                                "dnn")))
            if linear_feature_columns:
                train_ops.append(linear_opt.minimize(loss, var_list=get_collection(GraphKeys.TRAINABLE_VARIABLES,
                                                                                   "linear")))
        with control_dependencies(train_ops):
            with colocate_with(global_step):
                return state_ops.assign_add(global_step, 1)

    return head.create_estimator_spec(features=features, mode=mode, labels=labels, logits=logits,
                                      train_op_fn=train_op_fn)


class _CombinedBase(Estimator):
    def __init__(self, head, model_dir, linear_feature_columns, linear_optimizer, dnn_feature_columns, dnn_optimizer,
                 dnn_hidden_units, dnn_activation_fn, dnn_dropout, config, warm_start_from, batch_norm,
                 linear_sparse_combiner):
        linear_feature_columns = tuple(linear_feature_columns or ())
        dnn_feature_columns = tuple(dnn_feature_columns or ())
        if not linear_feature_columns and not dnn_feature_columns:
            raise ValueError("Either linear_feature_columns or dnn_feature_columns must be defined.")
        if dnn_feature_columns and not dnn_hidden_units:
            raise ValueError("dnn_hidden_units must be defined when dnn_feature_columns is specified.")

        def model_fn(features, labels, mode, config):
            return _combined_model_fn(features, labels, mode, head, linear_feature_columns, linear_optimizer,
                                      dnn_feature_columns, dnn_optimizer, dnn_hidden_units, dnn_activation_fn,
                                      dnn_dropout, batch_norm, linear_sparse_combiner)

        super().__init__(model_fn=model_fn, model_dir=model_dir, config=config, warm_start_from=warm_start_from)


class DNNLinearCombinedClassifier(_CombinedBase):
    """`tf.estimator.DNNLinearCombinedClassifier(model_dir=None, linear_feature_columns=None,
    linear_optimizer='Ftrl', dnn_feature_columns=None, dnn_optimizer='Adagrad', dnn_hidden_units=None,
    dnn_activation_fn=tf.nn.relu, dnn_dropout=None, n_classes=2, weight_column=None, label_vocabulary=None, ...)`."""

    def __init__(self, model_dir=None, linear_feature_columns=None, linear_optimizer="Ftrl", dnn_feature_columns=None,
                 dnn_optimizer="Adagrad", dnn_hidden_units=None, dnn_activation_fn=nn_ops.relu, dnn_dropout=None,
                 n_classes=2, weight_column=None, label_vocabulary=None, input_layer_partitioner=None, config=None,
                 warm_start_from=None, loss_reduction="weighted_sum", batch_norm=False, linear_sparse_combiner="sum"):
        head = head_lib.classification_head(n_classes, weight_column, label_vocabulary, loss_reduction)
        super().__init__(head, model_dir, linear_feature_columns, linear_optimizer, dnn_feature_columns,
                         dnn_optimizer, dnn_hidden_units, dnn_activation_fn, dnn_dropout, config, warm_start_from,
                         batch_norm, linear_sparse_combiner)


class DNNLinearCombinedRegressor(_CombinedBase):
    """`tf.estimator.DNNLinearCombinedRegressor(model_dir=None, linear_feature_columns=None, ..., label_dimension=1,
    ...)`."""

    def __init__(self, model_dir=None, linear_feature_columns=None, linear_optimizer="Ftrl", dnn_feature_columns=None,
                 dnn_optimizer="Adagrad", dnn_hidden_units=None, dnn_activation_fn=nn_ops.relu, dnn_dropout=None,
                 label_dimension=1, weight_column=None, input_layer_partitioner=None, config=None,
                 warm_start_from=None, loss_reduction="weighted_sum", batch_norm=False, linear_sparse_combiner="sum"):
        head = head_lib.RegressionHead(label_dimension, weight_column, loss_reduction)
        super().__init__(head, model_dir, linear_feature_columns, linear_optimizer, dnn_feature_columns,
                         dnn_optimizer, dnn_hidden_units, dnn_activation_fn, dnn_dropout, config, warm_start_from,
                         batch_norm, linear_sparse_combiner)
