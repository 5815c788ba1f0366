"""`tf.estimator.DNNClassifier` / `DNNRegressor`: feature columns -> hidden layers -> logits -> head.

Variables as TF 1.15 names them: `dnn/input_from_feature_columns/input_layer/<column>/...`,
`dnn/hiddenlayer_<i>/kernel|bias` (glorot-uniform), `dnn/logits/kernel|bias`; default optimizer
Adagrad(0.05); optional dropout in training.
"""
from __future__ import annotations

from ... import layers as layers_lib
from ...feature_column.layers import input_layer
from ...ops import nn_ops
from ...ops.init_ops import glorot_uniform_initializer
from ...ops.variable_scope import variable_scope
from ...train.training_util import get_global_step
from ..estimator import Estimator
from ..model_fn import ModeKeys
from . import head as head_lib
from .optimizers import get_optimizer_instance, minimize_with_update_ops

__all__ = ["DNNClassifier", "DNNRegressor"]

_LEARNING_RATE = 0.05


def dnn_logits(features, mode, hidden_units, feature_columns, units, activation_fn, dropout, batch_norm):
    if batch_norm:
        raise NotImplementedError("batch_norm=True is not supported in the canned DNN estimators")
    with variable_scope("input_from_feature_columns"):
        net = input_layer(features, feature_columns)
    for layer_id, n in enumerate(hidden_units):
        with variable_scope(f"hiddenlayer_{layer_id}") as scope:
            net = layers_lib.dense(net, units=n, activation=activation_fn,
                                   kernel_initializer=glorot_uniform_initializer(), name=scope)
            if dropout is not None and mode == ModeKeys.TRAIN:
                net = layers_lib.dropout(net, rate=dropout, training=True)
    with variable_scope("logits") as scope:
        return layers_lib.dense(net, units=units, activation=None, kernel_initializer=glorot_uniform_initializer(),
                                name=scope)


def _dnn_model_fn(features, labels, mode, head, hidden_units, feature_columns, optimizer, activation_fn, dropout,
                  batch_norm):
    if not isinstance(features, dict):
        raise ValueError(f"features should be a dictionary of `Tensor`s. Given type: {type(features)}")
    optimizer = get_optimizer_instance(optimizer, learning_rate=_LEARNING_RATE)
    with variable_scope("dnn"):
        logits = dnn_logits(features, mode, hidden_units, feature_columns, head.logits_dimension, activation_fn,
                            dropout, batch_norm)

    def train_op_fn(loss):
        return minimize_with_update_ops(optimizer, loss, get_global_step())

    return head.create_estimator_spec(features=features, mode=mode, labels=labels, logits=logits,
                                      train_op_fn=train_op_fn)


class _DNNBase(Estimator):
    def __init__(self, head, hidden_units, feature_columns, model_dir, optimizer, activation_fn, dropout, config,
                 warm_start_from, batch_norm):
        if not hidden_units:
            raise ValueError("hidden_units must be a non-empty list of layer sizes")
        feature_columns = tuple(feature_columns or ())
        if not feature_columns:
            raise ValueError("feature_columns must not be empty.")

        def model_fn(features, labels, mode, config):
            return _dnn_model_fn(features, labels, mode, head, hidden_units, feature_columns, optimizer,
                                 activation_fn, dropout, batch_norm)

        super().__init__(model_fn=model_fn, model_dir=model_dir, config=config, warm_start_from=warm_start_from)


class DNNClassifier(_DNNBase):
    """`tf.estimator.DNNClassifier(hidden_units, feature_columns, model_dir=None, n_classes=2, weight_column=None,
    label_vocabulary=None, optimizer='Adagrad', activation_fn=tf.nn.relu, dropout=None, ..., config=None,
    warm_start_from=None, loss_reduction=SUM, batch_norm=False)`."""

    def __init__(self, hidden_units, feature_columns, model_dir=None, n_classes=2, weight_column=None,
                 label_vocabulary=None, optimizer="Adagrad", activation_fn=nn_ops.relu, dropout=None,
                 input_layer_partitioner=None, config=None, warm_start_from=None, loss_reduction="weighted_sum",
                 batch_norm=False):
        head = head_lib.classification_head(n_classes, weight_column, label_vocabulary, loss_reduction)
        super().__init__(head, hidden_units, feature_columns, model_dir, optimizer, activation_fn, dropout, config,
                         warm_start_from, batch_norm)


class DNNRegressor(_DNNBase):
    """`tf.estimator.DNNRegressor(hidden_units, feature_columns, model_dir=None, label_dimension=1, ...)`."""

    def __init__(self, hidden_units, feature_columns, model_dir=None, label_dimension=1, weight_column=None,
                 optimizer="Adagrad", activation_fn=nn_ops.relu, dropout=None, input_layer_partitioner=None,
                 config=None, warm_start_from=None, loss_reduction="weighted_sum", batch_norm=False):
        head = head_lib.RegressionHead(label_dimension, weight_column, loss_reduction)
        super().__init__(head, hidden_units, feature_columns, model_dir, optimizer, activation_fn, dropout, config,
                         warm_start_from, batch_norm)
