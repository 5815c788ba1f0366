"""Loss reduction and weighting (TF 1.15's python/ops/losses/loss_reduction.py and keras losses_utils).

`compute_weighted_loss(losses, sample_weight, reduction)` multiplies per-sample losses by the weights (after
matching their ranks: a trailing 1 is squeezed, a missing axis added) and reduces: SUM_OVER_BATCH_SIZE is
sum(weighted) / number of loss elements (not the sum of weights), as Keras 1.15 does.
"""
from __future__ import annotations

from ... import dtypes as _dtypes
from ...default_graph import convert_to_tensor, get_default_graph
from ...ops import array_ops, math_ops


class ReductionV2:
    """`tf.keras.losses.Reduction`."""

    AUTO = "auto"
    NONE = "none"
    SUM = "sum"
    SUM_OVER_BATCH_SIZE = "sum_over_batch_size"

    @classmethod
    def all(cls):
        return (cls.AUTO, cls.NONE, cls.SUM, cls.SUM_OVER_BATCH_SIZE)

    @classmethod
    def validate(cls, key):
        if key not in cls.all():
            raise ValueError(f"Invalid Reduction Key {key}.")


def remove_squeezable_dimensions(labels, predictions, expected_rank_diff=0):
    """Squeezes a trailing size-1 axis of labels or predictions when their ranks differ by one."""
    labels, predictions = convert_to_tensor(labels), convert_to_tensor(predictions)
    p_rank, l_rank = predictions.shape.ndims, labels.shape.ndims
    if p_rank is not None and l_rank is not None:
        diff = p_rank - l_rank
        if diff == expected_rank_diff + 1 and predictions.shape[-1] in (1, None):
            predictions = array_ops.squeeze(predictions, [-1])
        elif diff == expected_rank_diff - 1 and labels.shape[-1] in (1, None):
            labels = array_ops.squeeze(labels, [-1])
    return labels, predictions


def squeeze_or_expand_dimensions(y_pred, y_true=None, sample_weight=None):
    """(y_pred, y_true[, sample_weight]) with ranks matched as Keras does (static ranks)."""
    y_pred = convert_to_tensor(y_pred)
    y_pred_rank = y_pred.shape.ndims
    if y_true is not None:
        y_true = convert_to_tensor(y_true)
        y_true_rank = y_true.shape.ndims
        if y_true_rank is not None and y_pred_rank is not None:
            if y_pred_rank - y_true_rank != 1 or y_pred.shape[-1] == 1:
                y_true, y_pred = remove_squeezable_dimensions(y_true, y_pred)
    if sample_weight is None:
        return y_pred, y_true
    sample_weight = convert_to_tensor(sample_weight)
    w_rank = sample_weight.shape.ndims
    if w_rank == 0:
        return y_pred, y_true, sample_weight
    y_pred_rank = y_pred.shape.ndims
    if y_pred_rank is not None and w_rank is not None:
        if w_rank - y_pred_rank == 1:
            sample_weight = array_ops.squeeze(sample_weight, [-1])
        elif y_pred_rank - w_rank == 1:
            sample_weight = array_ops.expand_dims(sample_weight, -1)
    return y_pred, y_true, sample_weight


def _num_elements(losses):
    with get_default_graph().name_scope("num_elements") as scope:
        return math_ops.cast(array_ops.size(losses, name=scope), dtype=losses.dtype)


def reduce_weighted_loss(weighted_losses, reduction=ReductionV2.SUM_OVER_BATCH_SIZE):
    if reduction == ReductionV2.NONE:
        return weighted_losses
    loss = math_ops.reduce_sum(weighted_losses)
    if reduction == ReductionV2.SUM_OVER_BATCH_SIZE:
        loss = math_ops.div_no_nan(loss, _num_elements(weighted_losses), name="value")
    return loss


def compute_weighted_loss(losses, sample_weight=None, reduction=ReductionV2.SUM_OVER_BATCH_SIZE, name=None):
    """The weighted, reduced loss (computed in float32, returned in the losses' dtype)."""
    ReductionV2.validate(reduction)
    if reduction == ReductionV2.AUTO:
        reduction = ReductionV2.SUM_OVER_BATCH_SIZE
    if sample_weight is None:
        sample_weight = 1.0
    with get_default_graph().name_scope(name or "weighted_loss"):
        losses = convert_to_tensor(losses)
        input_dtype = losses.dtype
        losses = math_ops.cast(losses, _dtypes.float32)
        sample_weight = math_ops.cast(convert_to_tensor(sample_weight), _dtypes.float32)
        losses, _, sample_weight = squeeze_or_expand_dimensions(losses, None, sample_weight)
        loss = reduce_weighted_loss(math_ops.multiply(losses, sample_weight), reduction)
        return math_ops.cast(loss, input_dtype) if input_dtype != _dtypes.float32 else loss
