"""Normalization `tf.keras.layers` (TF 1.15): BatchNormalization (TF 1.15's v1 BatchNormalizationBase) and
LayerNormalization.

BatchNormalization: weights `gamma`, `beta` (trainable) and `moving_mean`, `moving_variance` (not trainable),
momentum 0.99, epsilon 1e-3. `training` None reads `K.learning_phase()`; a Python/constant value picks statically,
a tensor builds `tf.cond`s as TF does (`backend.nn.smart_cond`). The moving averages are `updates`
(`moving -= (moving - batch_stat) * (1 - momentum)`, TF's `_assign_moving_average`) that `fit` runs with each
step. As TF 1.15's v1 layer, `fused=None` takes the fused path for 4-D inputs normalised over axis 1 or 3: its
moving variance is updated with the Bessel-corrected batch variance (TF's fused kernel) and epsilon is at least
1.001e-5; the non-fused path (other ranks, `fused=False`) uses the batch variance and a `tf.cond` around each
update. A frozen layer (`trainable=False`) still normalises with batch statistics in training (v1 behaviour)
and reports no updates.
"""
from __future__ import annotations

from ... import dtypes as _dtypes
from ...default_graph import convert_to_tensor
from ...graph import Tensor
from ...ops import array_ops, math_ops, nn_composite, nn_impl, state_ops
from ...tensor_shape import TensorShape
from .. import backend as K
from ..backend.nn import smart_cond, static_bool
from ..engine.base_layer import Layer
from ..engine.input_spec import InputSpec
from .weight_args import set_weight_args, weight_args_config

_FUSED_MIN_EPSILON = 1.001e-5


def _axes(axis):
    if isinstance(axis, (list, tuple)):
        return list(axis)
    if isinstance(axis, int):
        return [axis]
    raise TypeError("axis must be int or list, type given: %s" % type(axis))


def _normalized_axes(axes, ndims):
    out = [a + ndims if a < 0 else a for a in axes]
    for a in out:
        if a < 0 or a >= ndims:
            raise ValueError(f"Invalid axis: {a}")
    if len(out) != len(set(out)):
        raise ValueError(f"Duplicate axis: {axes}")
    return out


class BatchNormalization(Layer):
    """Normalises the batch along `axis` with the batch statistics in training, the moving ones in inference."""

    def __init__(self, axis=-1, momentum=0.99, epsilon=1e-3, center=True, scale=True, beta_initializer="zeros",
                 gamma_initializer="ones", moving_mean_initializer="zeros", moving_variance_initializer="ones",
                 beta_regularizer=None, gamma_regularizer=None, beta_constraint=None, gamma_constraint=None,
                 renorm=False, renorm_clipping=None, renorm_momentum=0.99, fused=None, trainable=True,
                 virtual_batch_size=None, adjustment=None, name=None, **kwargs):
        super().__init__(name=name, trainable=trainable, **kwargs)
        if renorm or virtual_batch_size is not None or adjustment is not None:
            raise NotImplementedError("BatchNormalization: renorm, virtual_batch_size and adjustment are not "
                                      "supported")
        self.axis = _axes(axis)
        self.momentum, self.epsilon = momentum, epsilon
        self.center, self.scale = center, scale
        set_weight_args(self, beta_initializer=beta_initializer, gamma_initializer=gamma_initializer,
                        moving_mean_initializer=moving_mean_initializer,
                        moving_variance_initializer=moving_variance_initializer, beta_regularizer=beta_regularizer,
                        gamma_regularizer=gamma_regularizer, beta_constraint=beta_constraint,
                        gamma_constraint=gamma_constraint)
        self.renorm, self.renorm_clipping, self.renorm_momentum = renorm, renorm_clipping, renorm_momentum
        self.virtual_batch_size, self.adjustment = virtual_batch_size, adjustment
        self.fused = True if fused is None else fused
        self.supports_masking = True

    def build(self, input_shape):
        input_shape = TensorShape(input_shape)
        if input_shape.ndims is None:
            raise ValueError("Input has undefined rank:", input_shape)
        ndims = input_shape.ndims
        self.axis = _normalized_axes(self.axis, ndims)
        axis_to_dim = {x: input_shape[x] for x in self.axis}
        for d in axis_to_dim.values():
            if d is None:
                raise ValueError("Input has undefined `axis` dimension. Input shape: ", input_shape)
        self.input_spec = InputSpec(ndim=ndims, axes=axis_to_dim)
        if self.fused:
            self.fused = ndims == 4 and self.axis in ([1], [3])
        if self.fused:
            self.epsilon = max(self.epsilon, _FUSED_MIN_EPSILON)
        if len(axis_to_dim) == 1:
            param_shape = (list(axis_to_dim.values())[0],)
        else:
            param_shape = [axis_to_dim.get(i, 1) for i in range(ndims)]
        dtype = _dtypes.as_dtype(self.dtype or K.floatx())
        self._param_dtype = _dtypes.float32 if dtype == _dtypes.float16 else dtype
        self.gamma = self.beta = None
        if self.scale:
            self.gamma = self.add_weight("gamma", shape=param_shape, dtype=self._param_dtype,
                                         initializer=self.gamma_initializer, regularizer=self.gamma_regularizer,
                                         constraint=self.gamma_constraint, trainable=True)
        if self.center:
            self.beta = self.add_weight("beta", shape=param_shape, dtype=self._param_dtype,
                                        initializer=self.beta_initializer, regularizer=self.beta_regularizer,
                                        constraint=self.beta_constraint, trainable=True)
        self.moving_mean = self.add_weight("moving_mean", shape=param_shape, dtype=self._param_dtype,
                                           initializer=self.moving_mean_initializer, trainable=False)
        self.moving_variance = self.add_weight("moving_variance", shape=param_shape, dtype=self._param_dtype,
                                               initializer=self.moving_variance_initializer, trainable=False)
        self.built = True

    def _assign_moving_average(self, variable, value, momentum):
        with K.name_scope("AssignMovingAvg") as scope:
            if isinstance(momentum, Tensor):
                decay = math_ops.subtract(convert_to_tensor(1.0, dtype=momentum.dtype), momentum, name="decay")
            else:
                decay = convert_to_tensor(1.0 - momentum, name="decay")
            if decay.dtype != variable.dtype.base_dtype:
                decay = math_ops.cast(decay, variable.dtype.base_dtype)
            delta = (variable.value() - math_ops.cast(value, variable.dtype.base_dtype)) * decay
            return state_ops.assign_sub(variable, delta, name=scope)

    def _broadcast_shape(self, inputs):
        ndims = inputs.shape.ndims
        shape = [1] * ndims
        for a in self.axis:
            shape[a] = inputs.shape[a]
        return shape

    def _broadcast(self, v, inputs):
        ndims = inputs.shape.ndims
        reduction_axes = [i for i in range(ndims) if i not in self.axis]
        if v is not None and v.shape.ndims != ndims and reduction_axes != list(range(ndims - 1)):
            return array_ops.reshape(v, self._broadcast_shape(inputs))
        return v

    def _gamma_beta(self, dtype):
        ones = array_ops.ones(self.moving_mean.shape.as_list(), dtype=dtype) if self.gamma is None else None
        zeros = array_ops.zeros(self.moving_mean.shape.as_list(), dtype=dtype) if self.beta is None else None
        gamma = self.gamma.value() if self.gamma is not None else ones
        beta = self.beta.value() if self.beta is not None else zeros
        return gamma, beta

    def _fused_batch_norm(self, inputs, training):
        x = math_ops.cast(inputs, self._param_dtype)
        gamma, beta = self._gamma_beta(self._param_dtype)
        reduction_axes = [i for i in range(4) if i not in self.axis]

        def training_branch():
            mean, variance = nn_impl.moments(x, reduction_axes)
            out = nn_composite.batch_normalization(x, self._broadcast(mean, x), self._broadcast(variance, x),
                                                   self._broadcast(beta, x), self._broadcast(gamma, x), self.epsilon)
            n = math_ops.cast(array_ops.size(x) // array_ops.shape(x)[self.axis[0]], self._param_dtype)
            return out, mean, variance * n / math_ops.maximum(n - 1.0, 1.0)  # the fused kernel's Bessel correction

        def inference_branch():
            mean, variance = self.moving_mean.value(), self.moving_variance.value()
            out = nn_composite.batch_normalization(x, self._broadcast(mean, x), self._broadcast(variance, x),
                                                   self._broadcast(beta, x), self._broadcast(gamma, x), self.epsilon)
            return out, mean, variance

        output, mean, variance = smart_cond(training, training_branch, inference_branch)
        static = static_bool(training)
        if static is None:
            momentum = smart_cond(training, lambda: convert_to_tensor(self.momentum, dtype=self._param_dtype),
                                  lambda: convert_to_tensor(1.0, dtype=self._param_dtype))
        else:
            momentum = self.momentum
        if static is None or static:
            self.add_update(lambda: self._assign_moving_average(self.moving_mean, mean, momentum))
            self.add_update(lambda: self._assign_moving_average(self.moving_variance, variance, momentum))
        return math_ops.cast(output, inputs.dtype) if output.dtype != inputs.dtype else output

    def call(self, inputs, training=None):
        if training is None:
            training = K.learning_phase()
        if self.fused:
            return self._fused_batch_norm(inputs, training)
        ndims = inputs.shape.ndims
        reduction_axes = [i for i in range(ndims) if i not in self.axis]
        gamma, beta = self._gamma_beta(self._param_dtype)
        scale, offset = self._broadcast(gamma, inputs), self._broadcast(beta, inputs)
        static = static_bool(training)
        if static is False:
            mean, variance = self.moving_mean.value(), self.moving_variance.value()
        else:
            keep_dims = len(self.axis) > 1
            batch_mean, batch_variance = nn_impl.moments(math_ops.cast(inputs, self._param_dtype), reduction_axes,
                                                         keep_dims=keep_dims)
            mean = smart_cond(training, lambda: batch_mean, lambda: self.moving_mean.value())
            variance = smart_cond(training, lambda: batch_variance, lambda: self.moving_variance.value())
            if keep_dims:  # the moments kept the reduced axes: the moving statistics are [param_shape]
                mean_upd = array_ops.reshape(mean, self.moving_mean.shape.as_list())
                var_upd = array_ops.reshape(variance, self.moving_variance.shape.as_list())
            else:
                mean_upd, var_upd = mean, variance

            def update(variable, value):
                return lambda: smart_cond(training, lambda: self._assign_moving_average(variable, value,
                                                                                        self.momentum),
                                          lambda: variable.value())

            self.add_update(update(self.moving_mean, mean_upd))
            self.add_update(update(self.moving_variance, var_upd))
        mean, variance = math_ops.cast(mean, inputs.dtype), math_ops.cast(variance, inputs.dtype)
        scale = math_ops.cast(scale, inputs.dtype)
        offset = math_ops.cast(offset, inputs.dtype)
        outputs = nn_composite.batch_normalization(inputs, self._broadcast(mean, inputs),
                                                   self._broadcast(variance, inputs), offset, scale, self.epsilon)
        outputs.set_shape(inputs.shape)
        return outputs

    def compute_output_shape(self, input_shape):
        return TensorShape(input_shape)

    def get_config(self):
        config = {"axis": self.axis, "momentum": self.momentum, "epsilon": self.epsilon, "center": self.center,
                  "scale": self.scale}
        config.update(weight_args_config(self, ["beta_initializer", "gamma_initializer", "moving_mean_initializer",
                                         "moving_variance_initializer", "beta_regularizer", "gamma_regularizer",
                                         "beta_constraint", "gamma_constraint"]))
        return {**super().get_config(), **config}


class LayerNormalization(Layer):
    """Normalises each example over `axis` (its own mean and variance), then scales by `gamma` and shifts by
    `beta` (shape: the normalised axes)."""

    def __init__(self, axis=-1, epsilon=1e-3, center=True, scale=True, beta_initializer="zeros",
                 gamma_initializer="ones", beta_regularizer=None, gamma_regularizer=None, beta_constraint=None,
                 gamma_constraint=None, trainable=True, name=None, **kwargs):
        super().__init__(name=name, trainable=trainable, **kwargs)
        self.axis = list(axis) if isinstance(axis, (list, tuple)) else axis
        if not isinstance(self.axis, (list, int)):
            raise TypeError("Expected an int or a list/tuple of ints for the argument 'axis', but received instead: "
                            "%s" % axis)
        self.epsilon, self.center, self.scale = epsilon, center, scale
        set_weight_args(self, beta_initializer=beta_initializer, gamma_initializer=gamma_initializer,
                        beta_regularizer=beta_regularizer, gamma_regularizer=gamma_regularizer,
                        beta_constraint=beta_constraint, gamma_constraint=gamma_constraint)
        self.supports_masking = True

    def build(self, input_shape):
        input_shape = TensorShape(input_shape)
        ndims = input_shape.ndims
        self.axis = _normalized_axes(_axes(self.axis), ndims)
        param_shape = [input_shape[d] for d in self.axis]
        self.gamma = self.beta = None
        if self.scale:
            self.gamma = self.add_weight("gamma", shape=param_shape, initializer=self.gamma_initializer,
                                         regularizer=self.gamma_regularizer, constraint=self.gamma_constraint,
                                         trainable=True)
        if self.center:
            self.beta = self.add_weight("beta", shape=param_shape, initializer=self.beta_initializer,
                                        regularizer=self.beta_regularizer, constraint=self.beta_constraint,
                                        trainable=True)
        self.built = True

    def call(self, inputs):
        ndims = inputs.shape.ndims
        broadcast_shape = [1] * ndims
        for d in self.axis:
            broadcast_shape[d] = inputs.shape[d]

        def broadcast(v):
            if v is not None and v.shape.ndims != ndims and self.axis != [ndims - 1]:
                return array_ops.reshape(v, broadcast_shape)
            return v

        mean, variance = nn_impl.moments(inputs, self.axis, keep_dims=True)
        outputs = nn_composite.batch_normalization(inputs, mean, variance, broadcast(self.beta),
                                                   broadcast(self.gamma), self.epsilon)
        outputs.set_shape(inputs.shape)
        return outputs

    def compute_output_shape(self, input_shape):
        return TensorShape(input_shape)

    def get_config(self):
        config = {"axis": self.axis, "epsilon": self.epsilon, "center": self.center, "scale": self.scale}
        config.update(weight_args_config(self, ["beta_initializer", "gamma_initializer", "beta_regularizer",
                                         "gamma_regularizer", "beta_constraint", "gamma_constraint"]))
        return {**super().get_config(), **config}
