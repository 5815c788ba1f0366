"""`tf.keras.backend`: activations, cross-entropies, dropout, bias_add and train/test switching (TF 1.15).

The cross-entropies follow Keras 1.15 exactly: on probabilities they clip to [epsilon, 1 - epsilon] (and
`categorical_crossentropy` renormalises first); when `output` is produced by a Softmax (Sigmoid) op they use
that op's input as logits and call TF's fused `*_cross_entropy_with_logits` (TF's b/117284466 rule).
`in_train_phase`/`switch` build a `tf.cond` on the learning-phase placeholder, or pick a branch statically
when the phase is a Python 0/1.
"""
from __future__ import annotations

import itertools

import numpy as np

from ... import dtypes as _dtypes
from ...default_graph import convert_to_tensor
from ...graph import Tensor
from ...ops import array_ops, comparison_ops, cond_ops, join_ops, math_ops, nn_impl, nn_ops
from ...ops.shape_util import constant_value
from ...ops.state_ops import Variable
from .config import epsilon, floatx, image_data_format
from .session import learning_phase
from .tensors import int_shape, ndim


def _const(value, dtype):
    return convert_to_tensor(value, dtype=dtype)


def relu(x, alpha=0.0, max_value=None, threshold=0):
    """max(x, 0), with a leaky slope `alpha` below `threshold` and an optional cap `max_value`."""
    x = convert_to_tensor(x)
    if alpha != 0.0:
        if max_value is None and threshold == 0:
            return nn_ops.leaky_relu(x, alpha=alpha)
        negative_part = nn_ops.relu(-x + threshold) if threshold != 0 else nn_ops.relu(-x)
    clip_max = max_value is not None
    if threshold != 0:
        x = x * math_ops.cast(math_ops.greater(x, threshold), _dtypes.as_dtype(floatx()))
    elif max_value == 6:
        x = nn_ops.relu6(x)
        clip_max = False
    else:
        x = nn_ops.relu(x)
    if clip_max:
        x = math_ops.clip_by_value(x, _const(0.0, x.dtype), _const(max_value, x.dtype))
    if alpha != 0.0:
        x = x - _const(alpha, x.dtype) * negative_part
    return x


def elu(x, alpha=1.0):
    res = nn_ops.elu(x)
    if alpha == 1:
        return res
    return math_ops.where(math_ops.greater(x, 0), res, alpha * res)


def softmax(x, axis=-1):
    return nn_ops.softmax(x, axis=axis)


def softplus(x):
    return nn_ops.softplus(x)


def softsign(x):
    return x / (math_ops.abs(x) + 1)


def sigmoid(x):
    return nn_ops.sigmoid(x)


def hard_sigmoid(x):
    """clip(0.2 * x + 0.5, 0, 1)."""
    x = 0.2 * convert_to_tensor(x) + 0.5
    return math_ops.clip_by_value(x, _const(0.0, x.dtype), _const(1.0, x.dtype))


def tanh(x):
    return nn_ops.tanh(x)


def _produced_by(output, op_type):
    return isinstance(output, Tensor) and not isinstance(output, Variable) and output.op.type == op_type


def categorical_crossentropy(target, output, from_logits=False, axis=-1):
    """-sum(target * log(output)) over `axis` (see the module doc for probabilities vs logits)."""
    target, output = convert_to_tensor(target), convert_to_tensor(output)
    if not from_logits:
        if not _produced_by(output, "Softmax"):
            output = output / math_ops.reduce_sum(output, axis, True)
            eps = _const(epsilon(), output.dtype)
            output = math_ops.clip_by_value(output, eps, 1.0 - eps)
            return -math_ops.reduce_sum(target * math_ops.log(output), axis)
        output = output.op.inputs[0]
    return nn_ops.softmax_cross_entropy_with_logits_v2(labels=target, logits=output, axis=axis)


def sparse_categorical_crossentropy(target, output, from_logits=False, axis=-1):
    """Cross-entropy against integer class ids; `target` of any shape that flattens to output's batch."""
    target, output = convert_to_tensor(target), convert_to_tensor(output)
    if not from_logits:
        if not _produced_by(output, "Softmax"):
            eps = _const(epsilon(), output.dtype)
            output = math_ops.log(math_ops.clip_by_value(output, eps, 1 - eps))
        else:
            output = output.op.inputs[0]
    output_rank = output.shape.ndims
    if output_rank is not None:
        axis %= output_rank
        if axis != output_rank - 1:
            perm = list(itertools.chain(range(axis), range(axis + 1, output_rank), [axis]))
            output = array_ops.transpose(output, perm=perm)
    elif axis != -1:
        raise ValueError(f"Cannot compute sparse categorical crossentropy with `axis={axis}` on an output "
                         f"tensor with unknown rank.")
    target = math_ops.cast(target, _dtypes.int64)
    output_shape = array_ops.shape(output)
    target_rank = target.shape.ndims
    update_shape = target_rank is not None and output_rank is not None and target_rank != output_rank - 1
    if update_shape:
        target = array_ops.reshape(target, [-1])
        output = array_ops.reshape(output, join_ops.stack([-1, output_shape[-1]]))
    res = nn_ops.sparse_softmax_cross_entropy_with_logits(labels=target, logits=output)
    if update_shape and output_rank >= 3:
        return array_ops.reshape(res, output_shape[:-1])
    return res


def binary_crossentropy(target, output, from_logits=False):
    """Element-wise -(t log(o + eps) + (1 - t) log(1 - o + eps)) on clipped probabilities, or TF's
    sigmoid_cross_entropy_with_logits on logits (also when `output` is produced by a Sigmoid)."""
    target, output = convert_to_tensor(target), convert_to_tensor(output)
    if not from_logits:
        if not _produced_by(output, "Sigmoid"):
            eps = _const(epsilon(), output.dtype)
            output = math_ops.clip_by_value(output, eps, 1.0 - eps)
            bce = target * math_ops.log(output + epsilon())
            bce = bce + (1 - target) * math_ops.log(1 - output + epsilon())
            return -bce
        output = output.op.inputs[0]
    return nn_ops.sigmoid_cross_entropy_with_logits(labels=target, logits=output)


def dropout(x, level, noise_shape=None, seed=None):
    """`tf.nn.dropout(x, rate=level)` (seeded from numpy's global RNG when `seed` is None, as Keras)."""
    if seed is None:
        seed = int(np.random.randint(10e6))
    return nn_impl.dropout(x, rate=level, noise_shape=noise_shape, seed=seed)


def bias_add(x, bias, data_format=None):
    """Adds a 1-D bias on the channel axis, or an N-D bias (ndim(x) - 1 dims) by broadcasting."""
    data_format = image_data_format() if data_format is None else data_format
    if data_format not in {"channels_first", "channels_last"}:
        raise ValueError("Unknown data_format: " + str(data_format))
    bias_shape = int_shape(bias)
    if len(bias_shape) != 1 and len(bias_shape) != ndim(x) - 1:
        raise ValueError(f"Unexpected bias dimensions {len(bias_shape)}, expect to be 1 or {ndim(x) - 1} "
                         f"dimensions")
    if len(bias_shape) == 1:
        return nn_impl.bias_add(x, bias, data_format="NCHW" if data_format == "channels_first" else "NHWC")
    if ndim(x) in (3, 4, 5):
        if data_format == "channels_first":
            return x + array_ops.reshape(bias, (1, bias_shape[-1]) + tuple(bias_shape[:-1]))
        return x + array_ops.reshape(bias, (1,) + tuple(bias_shape))
    return nn_impl.bias_add(x, bias)


def static_bool(pred):
    """True/False when `pred` is a Python value or a constant tensor, else None."""
    if isinstance(pred, (bool, int, np.integer, np.bool_)):
        return bool(pred)
    if isinstance(pred, Variable):
        return None
    value = constant_value(pred) if isinstance(pred, Tensor) else None
    return None if value is None else bool(value)


def smart_cond(pred, true_fn, false_fn):
    """`true_fn()` / `false_fn()` when `pred` is static, else `tf.cond(pred, true_fn, false_fn)`."""
    static = static_bool(pred)
    if static is not None:
        return true_fn() if static else false_fn()
    return cond_ops.cond(pred, true_fn, false_fn)


def switch(condition, then_expression, else_expression):
    """A scalar condition: `tf.cond`; a tensor condition: element-wise `tf.where` (broadcast by tiling)."""
    condition = convert_to_tensor(condition)
    if condition.dtype != _dtypes.bool_:
        condition = math_ops.cast(condition, _dtypes.bool_)
    cond_ndim = ndim(condition)
    if not cond_ndim:
        then_fn = then_expression if callable(then_expression) else (lambda: then_expression)
        else_fn = else_expression if callable(else_expression) else (lambda: else_expression)
        return cond_ops.cond(condition, then_fn, else_fn)
    if callable(then_expression):
        then_expression = then_expression()
    if callable(else_expression):
        else_expression = else_expression()
    expr_ndim = ndim(then_expression)
    if cond_ndim > expr_ndim:
        raise ValueError(f"Rank of `condition` should be less than or equal to rank of `then_expression` and "
                         f"`else_expression`. ndim(condition)={cond_ndim}, ndim(then_expression)={expr_ndim}")
    if cond_ndim > 1:  # Keras tiles the reshaped condition to the expressions' shape; where_v2 broadcasts it
        cond_shape = array_ops.shape(condition)
        if expr_ndim > cond_ndim:
            cond_shape = join_ops.concat([cond_shape, array_ops.ones([expr_ndim - cond_ndim], _dtypes.int32)], 0)
        condition = array_ops.reshape(condition, cond_shape)
        return comparison_ops.where_v2(condition, then_expression, else_expression)
    return math_ops.where(condition, then_expression, else_expression)


def in_train_phase(x, alt, training=None):
    """`x` in the training phase, `alt` otherwise (`training` defaults to the learning phase)."""
    if training is None:
        training = learning_phase()
    if not isinstance(training, Tensor) and training in (1, True):
        return x() if callable(x) else x
    if not isinstance(training, Tensor) and training in (0, False):
        return alt() if callable(alt) else alt
    return switch(training, x, alt)


def in_test_phase(x, alt, training=None):
    return in_train_phase(alt, x, training=training)


def in_top_k(predictions, targets, k):
    return nn_impl.in_top_k(predictions, targets, k)
