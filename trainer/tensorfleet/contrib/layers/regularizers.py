"""`tf.contrib.layers` regularizers (TF 1.15's contrib/layers/python/layers/regularizers.py).

A regularizer is `fn(weights) -> scalar Tensor or None`; `tf.get_variable(regularizer=...)` and the
contrib layers' `weights_regularizer` put its value in GraphKeys.REGULARIZATION_LOSSES.
l1: scale * sum(|w|); l2: scale * sum(w^2) / 2 (`tf.nn.l2_loss`); a scale of 0 gives a regularizer that
returns None; an integer or negative scale is a ValueError. `apply_regularization` sums a regularizer over
a list of weights (default: the WEIGHTS collection) and adds the sum to REGULARIZATION_LOSSES.
"""
from __future__ import annotations

import numbers

from ...graph import GraphKeys
from ...default_graph import convert_to_tensor, get_collection, get_default_graph, name_scope
from ...ops import math_ops, nn_impl
from ...ops.array_ops import constant
from ...platform import tf_logging as logging

__all__ = ["l1_regularizer", "l2_regularizer", "l1_l2_regularizer", "sum_regularizer", "apply_regularization"]


def _checked_scale(scale):
    """None when the regularizer is disabled (scale 0), else the scale; TF's errors for bad scales."""
    if isinstance(scale, numbers.Integral):
        raise ValueError(f"scale cannot be an integer: {scale}")
    if isinstance(scale, numbers.Real):
        if scale < 0.0:
            raise ValueError(f"Setting a scale less than 0 on a regularizer: {scale:g}.")
        if scale == 0.0:
            logging.info("Scale of 0 disables regularizer.")
            return None
    return scale


def l1_regularizer(scale, scope=None):
    """`fn(weights) = scale * reduce_sum(abs(weights))` (op named by `scope` or `l1_regularizer`)."""
    if _checked_scale(scale) is None:
        return lambda _: None

    def l1(weights, name=None):
        with name_scope(scope, "l1_regularizer", [weights]) as name:
            my_scale = convert_to_tensor(scale, dtype=weights.dtype.base_dtype, name="scale")
            return math_ops.multiply(my_scale, math_ops.reduce_sum(math_ops.abs(weights)), name=name)
    return l1


def l2_regularizer(scale, scope=None):
    """`fn(weights) = scale * l2_loss(weights)` = scale * sum(weights**2) / 2."""
    if _checked_scale(scale) is None:
        return lambda _: None

    def l2(weights):
        with name_scope(scope, "l2_regularizer", [weights]) as name:
            my_scale = convert_to_tensor(scale, dtype=weights.dtype.base_dtype, name="scale")
            return math_ops.multiply(my_scale, nn_impl.l2_loss(weights), name=name)
    return l2


def l1_l2_regularizer(scale_l1=1.0, scale_l2=1.0, scope=None):
    """The sum of l1_regularizer(scale_l1) and l2_regularizer(scale_l2)."""
    return sum_regularizer([l1_regularizer(scale_l1), l2_regularizer(scale_l2)], scope=scope or "l1_l2_regularizer")


def sum_regularizer(regularizer_list, scope=None):
    """A regularizer adding those of `regularizer_list` (None entries dropped; None if none is left)."""
    regularizer_list = [reg for reg in regularizer_list if reg is not None]
    if not regularizer_list:
        return None

    def sum_reg(weights):
        with name_scope(scope, "sum_regularizer", [weights]) as name:
            terms = [t for t in (reg(weights) for reg in regularizer_list) if t is not None]
            return math_ops.add_n(terms, name=name) if terms else None
    return sum_reg


def apply_regularization(regularizer, weights_list=None):
    """The summed penalty of `regularizer` over `weights_list` (default: GraphKeys.WEIGHTS), also added to
    REGULARIZATION_LOSSES; ValueError if there are no weights or a penalty is not a scalar."""
    if not weights_list:
        weights_list = get_collection(GraphKeys.WEIGHTS)
    if not weights_list:
        raise ValueError("No weights to regularize.")
    with name_scope("get_regularization_penalty", values=weights_list) as scope:
        penalties = [regularizer(w) for w in weights_list]
        penalties = [p if p is not None else constant(0.0) for p in penalties]
        for p in penalties:
            if p.get_shape().ndims != 0:
                raise ValueError(f"regularizer must return a scalar Tensor instead of a Tensor with rank "
                                 f"{p.get_shape().ndims}.")
        summed = math_ops.add_n(penalties, name=scope)
    get_default_graph().add_to_collection(GraphKeys.REGULARIZATION_LOSSES, summed)
    return summed
