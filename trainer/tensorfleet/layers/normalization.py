"""`tf.layers.batch_normalization` and `tf.layers.BatchNormalization`.

Variables `<name>/gamma`, `beta`, `moving_mean`, `moving_variance` (scope `batch_normalization`, `..._1`, ...).
training=True (or a bool Tensor that is true) normalizes with the batch moments and puts the moving-average
updates `moving -= (moving - batch) * (1 - momentum)` in GraphKeys.UPDATE_OPS (a False tensor makes them
no-ops: momentum 1, as TF's smart_cond); otherwise the moving statistics are used. As TF's fused kernel
(4-D inputs, channel axis), the moving variance is updated with the Bessel-corrected batch variance.
"""
from __future__ import annotations

from .. import dtypes as _dtypes
from ..graph import GraphKeys
from ..default_graph import convert_to_tensor, get_default_graph
from ..ops import array_ops, comparison_ops, init_ops, math_ops, nn_composite, nn_impl, state_ops
from ..ops.array_ops import constant
from .base import Layer, float_inputs, is_tensor, layer_scope, weight

__all__ = ["batch_normalization", "BatchNormalization"]


def batch_normalization(inputs, axis=-1, momentum=0.99, epsilon=1e-3, center=True, scale=True,
                        beta_initializer=None, gamma_initializer=None, moving_mean_initializer=None,
                        moving_variance_initializer=None, beta_regularizer=None, gamma_regularizer=None,
                        beta_constraint=None, gamma_constraint=None, training=False, trainable=True, name=None,
                        reuse=None, renorm=False, renorm_clipping=None, renorm_momentum=0.99, fused=None,
                        virtual_batch_size=None, adjustment=None):
    """`tf.layers.batch_normalization`: variables <name>/gamma, beta, moving_mean, moving_variance."""
    if renorm or virtual_batch_size is not None or adjustment is not None:
        raise NotImplementedError("batch_normalization: renorm, virtual_batch_size and adjustment are not supported")
    x = float_inputs(inputs, "BatchNormalization")
    ndims = x.shape.ndims
    if ndims is None:
        raise ValueError("Input has undefined rank.")
    ax = axis if axis >= 0 else ndims + axis
    if not 0 <= ax < ndims:
        raise ValueError(f"Invalid axis: {axis}")
    channels = x.shape[ax]
    if channels is None:
        raise ValueError(f"Input has undefined `axis` dimension. Input shape: {x.shape}")
    reduce_axes = [i for i in range(ndims) if i != ax]
    bessel = ndims == 4 and ax in (1, 3) and fused is not False
    param_dtype = _dtypes.float32 if x.dtype is _dtypes.float16 else x.dtype
    with layer_scope(name, "batch_normalization", reuse):
        gamma = weight("gamma", [channels], param_dtype, gamma_initializer or init_ops.ones_initializer(),
                       trainable, gamma_regularizer, gamma_constraint) if scale else None
        beta = weight("beta", [channels], param_dtype, beta_initializer or init_ops.zeros_initializer(),
                      trainable, beta_regularizer, beta_constraint) if center else None
        moving_mean = weight("moving_mean", [channels], param_dtype,
                             moving_mean_initializer or init_ops.zeros_initializer(), False)
        moving_var = weight("moving_variance", [channels], param_dtype,
                            moving_variance_initializer or init_ops.ones_initializer(), False)

        def bcast(t):  # [C] -> broadcastable against x when the channel axis is not last
            if t is None or ax == ndims - 1:
                return t
            return array_ops.reshape(t, [channels if i == ax else 1 for i in range(ndims)])

        if not is_tensor(training) and not training:
            mean, variance = moving_mean.value(), moving_var.value()
        else:
            batch_mean, batch_var = nn_impl.moments(math_ops.cast(x, param_dtype), reduce_axes)
            update_var = bessel_corrected(batch_var, x, reduce_axes) if bessel else batch_var
            if is_tensor(training):
                train_t = convert_to_tensor(training)
                mean = comparison_ops.where_v2(train_t, batch_mean, moving_mean.value())
                variance = comparison_ops.where_v2(train_t, batch_var, moving_var.value())
                decay = comparison_ops.where_v2(train_t, constant(momentum, dtype=param_dtype),
                                                constant(1.0, dtype=param_dtype))
            else:
                mean, variance = batch_mean, batch_var
                decay = constant(momentum, dtype=param_dtype)
            g = get_default_graph()
            for var, value in ((moving_mean, batch_mean), (moving_var, update_var)):
                g.add_to_collection(GraphKeys.UPDATE_OPS, assign_moving_average(var, value, decay))
        out = nn_composite.batch_normalization(math_ops.cast(x, param_dtype), bcast(mean), bcast(variance),
                                               bcast(beta), bcast(gamma), epsilon)
        return math_ops.cast(out, x.dtype) if param_dtype is not x.dtype else out


def bessel_corrected(variance, x, reduce_axes):
    """variance * n / (n - 1), n the number of values reduced per channel (TF's fused kernel's batch variance)."""
    n = 1
    for i in reduce_axes:
        n = n * (array_ops.shape(x)[i])
    n = math_ops.cast(n, variance.dtype)
    return variance * n / math_ops.maximum(n - 1.0, 1.0)


def assign_moving_average(var, value, decay):
    """`var -= (var - value) * (1 - decay)`, colocated with var, named AssignMovingAvg like TF's."""
    g = get_default_graph()
    with g.colocate_with(var.op):
        return state_ops.assign_sub(var, (var.value() - value) * (1.0 - decay), name="AssignMovingAvg")


class BatchNormalization(Layer):
    """`tf.layers.BatchNormalization(...)`; `training=` is given at call time, as in TF."""
    _default_name = "batch_normalization"
    _functional = staticmethod(batch_normalization)
