"""`tf.contrib.layers.batch_norm` and `layer_norm` with TF 1.15's defaults, variables and update rules.

batch_norm (scope `BatchNorm`): decay=0.999, center=True, **scale=False** (no gamma), epsilon=0.001,
is_training=True. Model variables `beta`, `gamma` (when scale), `moving_mean`, `moving_variance` over the
channel axis (last for NHWC, 1 for NCHW); float32 for float16 inputs. Training normalizes with the batch
moments and updates `moving -= (moving - batch) * (1 - decay)`; those two update ops go to
`updates_collections` (default UPDATE_OPS, which the train op must depend on), or, with
`updates_collections=None`, run in place: the output depends on them. An `is_training` tensor decides at
run time (False: the moving statistics, no update). As TF, with `fused` (the default) and rank-2 or rank-4
inputs the fused kernel's rules apply: the moving variance takes the Bessel-corrected batch variance
(n / (n - 1)) and epsilon is at least 1.001e-5; otherwise the biased batch variance. Not supported
(NotImplementedError naming the argument): batch_weights, zero_debias_moving_mean, renorm, adjustment.

layer_norm (scope `LayerNorm`): normalizes over axes begin_norm_axis.. (default 1..) with epsilon 1e-12
(1e-3 for float16), then `gamma`, `beta` of shape inputs.shape[begin_params_axis:] (default the last axis).
"""
from __future__ import annotations

from ... import dtypes as _dtypes
from ...graph import GraphKeys
from ...default_graph import control_dependencies, convert_to_tensor, get_default_graph
from ...layers.normalization import assign_moving_average, bessel_corrected
from ...ops import array_ops, comparison_ops, init_ops, math_ops, nn_composite, nn_impl
from ...ops import variable_scope as _vs
from ...ops.array_ops import constant, identity
from ..framework.arg_scope import add_arg_scope
from ..framework.variables import model_variable
from .utils import collect_named_outputs, get_variable_collections, static_bool

__all__ = ["batch_norm", "layer_norm"]

_FUSED_MIN_EPSILON = 1.001e-5  # TF's fused_batch_norm raises smaller epsilons to this (cuDNN's minimum)


def _unsupported(**flags) -> None:
    for arg, used in flags.items():
        if used:
            raise NotImplementedError(f"tf.contrib.layers.batch_norm: {arg} is not supported")


@add_arg_scope
def batch_norm(inputs, decay=0.999, center=True, scale=False, epsilon=0.001, activation_fn=None,
               param_initializers=None, param_regularizers=None, updates_collections=GraphKeys.UPDATE_OPS,
               is_training=True, reuse=None, variables_collections=None, outputs_collections=None, trainable=True,
               batch_weights=None, fused=None, data_format="NHWC", zero_debias_moving_mean=False, scope=None,
               renorm=False, renorm_clipping=None, renorm_decay=0.99, adjustment=None):
    """Batch normalization (Ioffe and Szegedy), usable as a layer's `normalizer_fn`."""
    _unsupported(batch_weights=batch_weights is not None, zero_debias_moving_mean=zero_debias_moving_mean,
                 renorm=renorm, adjustment=adjustment is not None)
    if data_format not in ("NCHW", "NHWC"):
        raise ValueError("data_format has to be either NCHW or NHWC.")
    x = convert_to_tensor(inputs)
    rank = x.shape.ndims
    fused_kernel = (True if fused is None else bool(fused)) and rank in (2, 4)
    # TF builds with the core BatchNormalization layer (gamma created before beta) unless it calls its own
    # fused function (rank 2 or custom updates_collections) or the legacy one (custom updates_collections)
    core_layer = updates_collections == GraphKeys.UPDATE_OPS and not (fused_kernel and rank == 2)
    with _vs.variable_scope(scope, "BatchNorm", [inputs], reuse=reuse) as sc:
        if rank is None:
            raise ValueError(f"Inputs {x.name} has undefined rank.")
        axis = 1 if data_format == "NCHW" else rank - 1
        channels = x.shape[axis]
        if channels is None:
            raise ValueError(f"Inputs {x.name} has undefined `C` dimension {x.shape[axis:axis + 1]}.")
        dtype = _dtypes.float32 if x.dtype.base_dtype is _dtypes.float16 else x.dtype.base_dtype
        inits, regs = dict(param_initializers or {}), dict(param_regularizers or {})

        def param(name, default_init, trainable_param, enabled=True):
            if not enabled:
                return None
            return model_variable(name, shape=[channels], dtype=dtype, initializer=inits.get(name, default_init),
                                  regularizer=regs.get(name) if trainable_param else None, trainable=trainable_param
                                  and trainable, collections=get_variable_collections(variables_collections, name))

        if core_layer:
            gamma = param("gamma", init_ops.ones_initializer(), True, scale)
            beta = param("beta", init_ops.zeros_initializer(), True, center)
        else:
            beta = param("beta", init_ops.zeros_initializer(), True, center)
            gamma = param("gamma", init_ops.ones_initializer(), True, scale)
        moving_mean = param("moving_mean", init_ops.zeros_initializer(), False)
        moving_variance = param("moving_variance", init_ops.ones_initializer(), False)

        xp = math_ops.cast(x, dtype) if dtype is not x.dtype.base_dtype else x
        mean, variance, updates = _statistics(xp, axis, rank, is_training, decay, moving_mean, moving_variance,
                                              fused_kernel)
        if updates and updates_collections is not None:
            for update in updates:
                get_default_graph().add_to_collections(updates_collections, update)

        def bcast(t):  # [C] -> [1, C, 1, ...] when the channel axis is not the last
            if t is None or axis == rank - 1:
                return t
            return array_ops.reshape(t, [channels if i == axis else 1 for i in range(rank)])

        eps = max(epsilon, _FUSED_MIN_EPSILON) if fused_kernel else epsilon
        outputs = nn_composite.batch_normalization(xp, bcast(mean), bcast(variance), bcast(beta), bcast(gamma), eps)
        if updates and updates_collections is None:
            with control_dependencies(updates):
                outputs = identity(outputs)
        if dtype is not x.dtype.base_dtype:
            outputs = math_ops.cast(outputs, x.dtype.base_dtype)
        outputs.set_shape(x.shape)
        if activation_fn is not None:
            outputs = activation_fn(outputs)
        return collect_named_outputs(outputs_collections, sc.name, outputs)


def _statistics(x, axis, rank, is_training, decay, moving_mean, moving_variance, bessel):
    """(mean, variance, [update ops]) for normalizing `x`: the batch's or the moving ones per `is_training`."""
    training = static_bool(is_training)
    if training is False:
        return moving_mean.value(), moving_variance.value(), []
    reduce_axes = [i for i in range(rank) if i != axis]
    batch_mean, batch_var = nn_impl.moments(x, reduce_axes)
    update_var = bessel_corrected(batch_var, x, reduce_axes) if bessel else batch_var
    if training is None:  # decided at run time: where(), and a decay of 1 (no change) when not training
        flag = math_ops.cast(convert_to_tensor(is_training), _dtypes.bool_)
        mean = comparison_ops.where_v2(flag, batch_mean, moving_mean.value())
        variance = comparison_ops.where_v2(flag, batch_var, moving_variance.value())
        decay_t = comparison_ops.where_v2(flag, constant(decay, dtype=x.dtype), constant(1.0, dtype=x.dtype))
    else:
        mean, variance, decay_t = batch_mean, batch_var, constant(decay, dtype=x.dtype)
    updates = [assign_moving_average(moving_mean, batch_mean, decay_t),
               assign_moving_average(moving_variance, update_var, decay_t)]
    return mean, variance, updates


@add_arg_scope
def layer_norm(inputs, center=True, scale=True, activation_fn=None, reuse=None, variables_collections=None,
               outputs_collections=None, trainable=True, begin_norm_axis=1, begin_params_axis=-1, scope=None):
    """Layer normalization (Ba, Kiros and Hinton): moments over axes begin_norm_axis.., then gamma and beta
    over inputs.shape[begin_params_axis:]."""
    with _vs.variable_scope(scope, "LayerNorm", [inputs], reuse=reuse) as sc:
        x = convert_to_tensor(inputs)
        rank = x.shape.ndims
        if rank is None:
            raise ValueError(f"Inputs {x.name} has undefined rank.")
        dtype = x.dtype.base_dtype
        if begin_norm_axis < 0:
            begin_norm_axis = rank + begin_norm_axis
        if begin_params_axis >= rank or begin_norm_axis >= rank:
            raise ValueError(f"begin_params_axis ({begin_params_axis}) and begin_norm_axis ({begin_norm_axis}) "
                             f"must be < rank(inputs) ({rank})")
        params_shape = x.shape[begin_params_axis:]
        if not params_shape.is_fully_defined():
            raise ValueError(f"Inputs {x.name}: shape(inputs)[{begin_params_axis}:] is not fully defined: {x.shape}")
        beta = gamma = None
        if center:
            beta = model_variable("beta", shape=params_shape, dtype=dtype, initializer=init_ops.zeros_initializer(),
                                  collections=get_variable_collections(variables_collections, "beta"),
                                  trainable=trainable)
        if scale:
            gamma = model_variable("gamma", shape=params_shape, dtype=dtype, initializer=init_ops.ones_initializer(),
                                   collections=get_variable_collections(variables_collections, "gamma"),
                                   trainable=trainable)
        mean, variance = nn_impl.moments(x, list(range(begin_norm_axis, rank)), keep_dims=True)
        epsilon = 1e-3 if dtype is _dtypes.float16 else 1e-12
        outputs = nn_composite.batch_normalization(x, mean, variance, beta, gamma, epsilon)
        outputs.set_shape(x.shape)
        if activation_fn is not None:
            outputs = activation_fn(outputs)
        return collect_named_outputs(outputs_collections, sc.name, outputs)
