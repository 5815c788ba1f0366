"""`tf.losses`: TF 1.15's loss functions, weighted reductions and the LOSSES collection helpers.

Sits above `ops/` beside `layers/`: every loss is composed of existing math/nn ops
(their registered gradients apply), reduced by `compute_weighted_loss` exactly as TF's
`losses_impl.py` does (float32 arithmetic, `div_no_nan` means, default reduction
SUM_BY_NONZERO_WEIGHTS) and added to `GraphKeys.LOSSES` so `get_total_loss()` sees it.
"""
from __future__ import annotations

__all__ = ["Reduction", "compute_weighted_loss", "absolute_difference", "mean_squared_error", "huber_loss",
           "log_loss", "hinge_loss", "cosine_distance", "sigmoid_cross_entropy", "softmax_cross_entropy",
           "sparse_softmax_cross_entropy", "add_loss", "get_losses", "get_regularization_losses",
           "get_regularization_loss", "get_total_loss"]

from . import dtypes as _dtypes
from .graph import GraphKeys
from .default_graph import add_to_collection, convert_to_tensor, get_collection, name_scope
from .ops import array_ops as _a
from .ops import math_ops as _m
from .ops import nn_ops as _nn


class Reduction:
    """Types of loss reduction (`tf.losses.Reduction`)."""
    NONE = "none"
    SUM = "weighted_sum"
    SUM_OVER_BATCH_SIZE = "weighted_sum_over_batch_size"
    MEAN = "weighted_mean"
    SUM_BY_NONZERO_WEIGHTS = "weighted_sum_by_nonzero_weights"
    SUM_OVER_NONZERO_WEIGHTS = SUM_BY_NONZERO_WEIGHTS

    @classmethod
    def all(cls):
        return (cls.NONE, cls.SUM, cls.MEAN, cls.SUM_OVER_BATCH_SIZE, cls.SUM_OVER_NONZERO_WEIGHTS,
                cls.SUM_BY_NONZERO_WEIGHTS)

    @classmethod
    def validate(cls, key):
        if key not in cls.all():
            raise ValueError(f"Invalid Reduction Key {key}.")


# -- collection helpers (tf.losses.add_loss & co) ---------------------------
def add_loss(loss, loss_collection=GraphKeys.LOSSES):
    if loss_collection:
        add_to_collection(loss_collection, loss)


def get_losses(scope=None, loss_collection=GraphKeys.LOSSES):
    return get_collection(loss_collection, scope)


def get_regularization_losses(scope=None):
    return get_collection(GraphKeys.REGULARIZATION_LOSSES, scope)


def get_regularization_loss(scope=None, name="total_regularization_loss"):
    losses = get_regularization_losses(scope)
    if losses:
        return _m.add_n(losses, name=name)
    return _a.constant(0.0)


def get_total_loss(add_regularization_losses=True, name="total_loss", scope=None):
    """Sum of the LOSSES collection (plus the regularization losses); ValueError if there are none."""
    losses = list(get_losses(scope=scope))
    if add_regularization_losses:
        losses += get_regularization_losses(scope=scope)
    if not losses:
        raise ValueError("No losses found in the LOSSES or REGULARIZATION_LOSSES collections.")
    return _m.add_n(losses, name=name)


# -- reduction ----------------------------------------------------------------
def _to_float32(x):
    x = convert_to_tensor(x)
    return x if x.dtype is _dtypes.float32 else _m.cast(x, _dtypes.float32)


def _num_present(losses, weights):
    """Number of loss elements whose (broadcast) weight is non-zero."""
    if isinstance(weights, float) and weights != 0.0:
        return _m.cast(_a.size(losses), _dtypes.float32)
    with name_scope(None, "num_present", (losses, weights)):
        present = _m.cast(_m.not_equal(weights, 0.0), _dtypes.float32)
        return _m.reduce_sum(present * _a.ones_like(losses))


def compute_weighted_loss(losses, weights=1.0, scope=None, loss_collection=GraphKeys.LOSSES,
                          reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    """`weights * losses` reduced by `reduction`, cast back to the losses' dtype and added to `loss_collection`."""
    Reduction.validate(reduction)
    with name_scope(scope, "weighted_loss", (losses, weights)):
        losses = convert_to_tensor(losses)
        input_dtype = losses.dtype
        losses = _to_float32(losses)
        weights_f = _to_float32(weights)
        if losses.shape.ndims is not None and weights_f.shape.ndims is not None:
            _check_broadcastable(weights_f.shape, losses.shape)
        weighted = _m.multiply(losses, weights_f)
        if reduction == Reduction.NONE:
            loss = weighted
        else:
            loss = _m.reduce_sum(weighted)
            if reduction == Reduction.MEAN:
                loss = _m.div_no_nan(loss, _m.reduce_sum(_a.ones_like(losses) * weights_f), name="value")
            elif reduction == Reduction.SUM_BY_NONZERO_WEIGHTS:
                loss = _m.div_no_nan(loss, _num_present(losses, weights if isinstance(weights, float)
                                                        else weights_f), name="value")
            elif reduction == Reduction.SUM_OVER_BATCH_SIZE:
                loss = _m.div_no_nan(loss, _m.cast(_a.size(losses), _dtypes.float32), name="value")
        if input_dtype is not _dtypes.float32:
            loss = _m.cast(loss, input_dtype)
        add_loss(loss, loss_collection)
        return loss


def _check_broadcastable(w_shape, l_shape):
    """TF's rule: weights are a scalar or have the losses' rank with each dim 1 or equal."""
    if w_shape.ndims == 0:
        return
    if w_shape.ndims != l_shape.ndims:
        raise ValueError(f"weights can not be broadcast to values. values.rank={l_shape.ndims}. "
                         f"weights.rank={w_shape.ndims}. values.shape={l_shape}. weights.shape={w_shape}.")
    for w, v in zip(w_shape.as_list(), l_shape.as_list()):
        if w is not None and v is not None and w not in (1, v):
            raise ValueError(f"weights can not be broadcast to values. values.shape={l_shape}. "
                             f"weights.shape={w_shape}.")


def _check_args(**kwargs):
    for name, value in kwargs.items():
        if value is None:
            raise ValueError(f"{name} must not be None.")


def _pair(labels, predictions):
    predictions, labels = _to_float32(predictions), _to_float32(labels)
    predictions.shape.assert_is_compatible_with(labels.shape)
    return labels, predictions


# -- regression losses ----------------------------------------------------------
def absolute_difference(labels, predictions, weights=1.0, scope=None, loss_collection=GraphKeys.LOSSES,
                        reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    _check_args(labels=labels, predictions=predictions)
    with name_scope(scope, "absolute_difference", (predictions, labels, weights)) as scope:
        labels, predictions = _pair(labels, predictions)
        losses = _m.abs(_m.subtract(predictions, labels))
        return compute_weighted_loss(losses, weights, scope, loss_collection, reduction=reduction)


def mean_squared_error(labels, predictions, weights=1.0, scope=None, loss_collection=GraphKeys.LOSSES,
                       reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    _check_args(labels=labels, predictions=predictions)
    with name_scope(scope, "mean_squared_error", (predictions, labels, weights)) as scope:
        labels, predictions = _pair(labels, predictions)
        losses = _m.squared_difference(predictions, labels)
        return compute_weighted_loss(losses, weights, scope, loss_collection, reduction=reduction)


def huber_loss(labels, predictions, weights=1.0, delta=1.0, scope=None, loss_collection=GraphKeys.LOSSES,
               reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    _check_args(labels=labels, predictions=predictions)
    with name_scope(scope, "huber_loss", (predictions, labels, weights)) as scope:
        labels, predictions = _pair(labels, predictions)
        abs_error = _m.abs(_m.subtract(predictions, labels))
        quadratic = _m.minimum(abs_error, delta)
        linear = _m.subtract(abs_error, quadratic)
        losses = _m.add(_m.multiply(0.5, _m.multiply(quadratic, quadratic)), _m.multiply(delta, linear))
        return compute_weighted_loss(losses, weights, scope, loss_collection, reduction=reduction)


def log_loss(labels, predictions, weights=1.0, epsilon=1e-7, scope=None, loss_collection=GraphKeys.LOSSES,
             reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    _check_args(labels=labels, predictions=predictions)
    with name_scope(scope, "log_loss", (predictions, labels, weights)) as scope:
        labels, predictions = _pair(labels, predictions)
        losses = -_m.multiply(labels, _m.log(predictions + epsilon)) - \
            _m.multiply(1.0 - labels, _m.log(1.0 - predictions + epsilon))
        return compute_weighted_loss(losses, weights, scope, loss_collection, reduction=reduction)


def hinge_loss(labels, logits, weights=1.0, scope=None, loss_collection=GraphKeys.LOSSES,
               reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    """Labels in {0, 1} are mapped to {-1, 1}; loss = relu(1 - labels * logits)."""
    _check_args(labels=labels, logits=logits)
    with name_scope(scope, "hinge_loss", (logits, labels, weights)) as scope:
        labels, logits = _pair(labels, logits)
        all_ones = _a.ones_like(labels)
        labels = _m.subtract(2.0 * labels, all_ones)
        losses = _nn.relu(_m.subtract(all_ones, _m.multiply(labels, logits)))
        return compute_weighted_loss(losses, weights, scope, loss_collection, reduction=reduction)


def cosine_distance(labels, predictions, axis=None, weights=1.0, scope=None, loss_collection=GraphKeys.LOSSES,
                    reduction=Reduction.SUM_BY_NONZERO_WEIGHTS, dim=None):
    """1 - sum(labels * predictions, axis) for unit-normalized inputs."""
    if dim is not None:
        if axis is not None:
            raise ValueError("Cannot specify both 'axis' and 'dim'")
        axis = dim
    if axis is None:
        raise ValueError("You must specify 'axis'.")
    _check_args(labels=labels, predictions=predictions)
    with name_scope(scope, "cosine_distance_loss", (predictions, labels, weights)) as scope:
        labels, predictions = _pair(labels, predictions)
        losses = 1.0 - _m.reduce_sum(_m.multiply(predictions, labels), axis=(axis,), keepdims=True)
        return compute_weighted_loss(losses, weights, scope, loss_collection, reduction=reduction)


# -- classification losses ------------------------------------------------------
def sigmoid_cross_entropy(multi_class_labels, logits, weights=1.0, label_smoothing=0, scope=None,
                          loss_collection=GraphKeys.LOSSES, reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    _check_args(multi_class_labels=multi_class_labels, logits=logits)
    with name_scope(scope, "sigmoid_cross_entropy_loss", (logits, multi_class_labels, weights)) as scope:
        logits = convert_to_tensor(logits)
        labels = _m.cast(multi_class_labels, logits.dtype)
        logits.shape.assert_is_compatible_with(labels.shape)
        if label_smoothing > 0:
            labels = labels * (1 - label_smoothing) + 0.5 * label_smoothing
        losses = _nn.sigmoid_cross_entropy_with_logits(labels=labels, logits=logits, name="xentropy")
        return compute_weighted_loss(losses, weights, scope, loss_collection, reduction=reduction)


def softmax_cross_entropy(onehot_labels, logits, weights=1.0, label_smoothing=0, scope=None,
                          loss_collection=GraphKeys.LOSSES, reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    _check_args(onehot_labels=onehot_labels, logits=logits)
    with name_scope(scope, "softmax_cross_entropy_loss", (logits, onehot_labels, weights)) as scope:
        logits = convert_to_tensor(logits)
        labels = _m.cast(onehot_labels, logits.dtype)
        logits.shape.assert_is_compatible_with(labels.shape)
        if label_smoothing > 0:
            num_classes = _m.cast(_a.shape(labels)[-1], logits.dtype)
            labels = labels * (1.0 - label_smoothing) + label_smoothing / num_classes
        labels = _a.stop_gradient(labels, name="labels_stop_gradient")
        losses = _nn.softmax_cross_entropy_with_logits_v2(labels=labels, logits=logits, name="xentropy")
        return compute_weighted_loss(losses, weights, scope, loss_collection, reduction=reduction)


def sparse_softmax_cross_entropy(labels, logits, weights=1.0, scope=None, loss_collection=GraphKeys.LOSSES,
                                 reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    _check_args(labels=labels, logits=logits)
    with name_scope(scope, "sparse_softmax_cross_entropy_loss", (logits, labels, weights)) as scope:
        logits, labels = convert_to_tensor(logits), convert_to_tensor(labels)
        # labels of shape [batch, 1] (rank of logits) lose their last dimension, as in TF.
        if labels.shape.ndims is not None and logits.shape.ndims is not None and \
                labels.shape.ndims == logits.shape.ndims and labels.shape[-1] in (1, None):
            labels = _a.squeeze(labels, [-1])
        if not isinstance(weights, (int, float)):
            weights = convert_to_tensor(weights)
            if weights.shape.ndims is not None and logits.shape.ndims is not None and \
                    weights.shape.ndims == logits.shape.ndims and weights.shape[-1] == 1:
                weights = _a.squeeze(weights, [-1])
        losses = _nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits, name="xentropy")
        return compute_weighted_loss(losses, weights, scope, loss_collection, reduction=reduction)
