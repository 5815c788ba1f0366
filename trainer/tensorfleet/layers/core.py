"""`tf.layers` core layers: dense (`Dense`), flatten (`Flatten`) and dropout (`Dropout`).

Variables are `<scope>/kernel` and `<scope>/bias`; the scope is `name`, or `dense`, `dense_1`, ... unique per
graph like TF. The default kernel initializer is glorot-uniform, the bias's zeros. `dense_input`,
`dense_weights` and `dense_apply` build a dense layer inside an already open scope: `tf.contrib.layers.
fully_connected` uses them under its own scope and variable names.
"""
from __future__ import annotations

from ..graph import Tensor
from ..default_graph import convert_to_tensor, get_default_graph
from ..ops import array_ops, init_ops, math_ops, nn_impl
from ..ops.array_ops import identity, transpose
from .base import NoWeightsLayer, activate, activity_regularize, float_inputs, layer_scope, weight

__all__ = ["Dense", "dense", "flatten", "dropout", "Flatten", "Dropout"]


# -- dense --------------------------------------------------------------------
def dense_input(inputs):
    """(inputs as a floating tensor of rank >= 2, its static last dimension), or TF's errors."""
    x = float_inputs(inputs, "Dense")
    if x.shape.ndims is None or x.shape.ndims < 2:
        raise ValueError(f"Input 0 of layer dense is incompatible with the layer: expected min_ndim=2, found "
                         f"ndim={x.shape.ndims}")
    in_dim = x.shape[-1] if x.shape.ndims else None
    if in_dim is None:
        raise ValueError("The last dimension of the inputs to `Dense` should be defined. Found `None`.")
    return x, in_dim


def dense_weights(in_dim, units, dtype, use_bias, kernel_initializer, bias_initializer, kernel_regularizer,
                  bias_regularizer, kernel_constraint, bias_constraint, trainable):
    """`kernel` [in_dim, units] and (if use_bias) `bias` [units] in the current variable scope."""
    kernel = weight("kernel", [in_dim, units], dtype, kernel_initializer or init_ops.glorot_uniform_initializer(),
                    trainable, kernel_regularizer, kernel_constraint)
    bias = None
    if use_bias:
        bias = weight("bias", [units], dtype, bias_initializer or init_ops.zeros_initializer(), trainable,
                      bias_regularizer, bias_constraint)
    return kernel, bias


def dense_apply(x, kernel, bias, units, activation=None, activity_regularizer=None):
    """activation(x @ kernel + bias); inputs of rank > 2 contract their last axis (TF's Tensordot)."""
    out = math_ops.matmul(x, kernel) if x.shape.ndims == 2 else _tensordot_last(x, kernel, units)
    if bias is not None:
        out = nn_impl.bias_add(out, bias)
    return activity_regularize(activate(out, activation), activity_regularizer)


def dense(inputs, units, activation=None, use_bias=True, kernel_initializer=None, bias_initializer=None,
          kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None, kernel_constraint=None,
          bias_constraint=None, trainable=True, name=None, reuse=None):
    """`tf.layers.dense`: activation(inputs @ kernel + bias) for rank-2 inputs; variables <name>/kernel, <name>/bias."""
    x, in_dim = dense_input(inputs)
    units = int(units)
    with layer_scope(name, "dense", reuse):
        kernel, bias = dense_weights(in_dim, units, x.dtype, use_bias, kernel_initializer, bias_initializer,
                                     kernel_regularizer, bias_regularizer, kernel_constraint, bias_constraint,
                                     trainable)
        return dense_apply(x, kernel, bias, units, activation, activity_regularizer)


class Dense:
    """`tf.layers.Dense`: a callable layer object; the first call creates `<name>/kernel` and `<name>/bias`
    (name: `name`, or `dense`, `dense_1`, ... unique per graph) and every later call reuses them.

    Later calls put their ops in the first call's name scope (TF1's `dense/MatMul_1`); their input's last
    dimension must match the kernel's.
    """

    def __init__(self, units, activation=None, use_bias=True, kernel_initializer=None, bias_initializer=None,
                 kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None, kernel_constraint=None,
                 bias_constraint=None, trainable=True, name=None, **kwargs):
        self.units = int(units)
        self.activation = activation
        self.use_bias = use_bias
        self.kernel_initializer, self.bias_initializer = kernel_initializer, bias_initializer
        self.kernel_regularizer, self.bias_regularizer = kernel_regularizer, bias_regularizer
        self.activity_regularizer = activity_regularizer
        self.kernel_constraint, self.bias_constraint = kernel_constraint, bias_constraint
        self.trainable = trainable
        self._name = name
        self._scope_name = None
        self.kernel = None
        self.bias = None
        self.built = False

    @property
    def name(self):
        return self._scope_name.rsplit("/", 1)[-1] if self._scope_name else (self._name or "dense")

    @property
    def weights(self) -> list:
        return [w for w in (self.kernel, self.bias) if w is not None]

    variables = weights

    @property
    def trainable_variables(self) -> list:
        return self.weights if self.trainable else []

    trainable_weights = trainable_variables

    @property
    def non_trainable_variables(self) -> list:
        return [] if self.trainable else self.weights

    non_trainable_weights = non_trainable_variables

    def __call__(self, inputs, *args, **kwargs):
        x, in_dim = dense_input(inputs)
        if not self.built:
            with layer_scope(self._name, "dense", None) as scope:
                self._scope_name = scope.name
                self._name_scope = get_default_graph().get_name_scope() + "/"
                self.kernel, self.bias = dense_weights(
                    in_dim, self.units, x.dtype, self.use_bias, self.kernel_initializer, self.bias_initializer,
                    self.kernel_regularizer, self.bias_regularizer, self.kernel_constraint, self.bias_constraint,
                    self.trainable)
                self.built = True
                return dense_apply(x, self.kernel, self.bias, self.units, self.activation,
                                   self.activity_regularizer)
        if in_dim != self.kernel.shape[0]:
            raise ValueError(f"Input 0 of layer {self.name} is incompatible with the layer: expected axis -1 of "
                             f"input shape to have value {self.kernel.shape[0]} but received input with shape "
                             f"{x.shape}")
        with get_default_graph().name_scope(self._name_scope):
            return dense_apply(x, self.kernel, self.bias, self.units, self.activation, self.activity_regularizer)

    apply = __call__


def _tensordot_last(x, kernel, units):
    """x [..., in] @ kernel [in, units] -> [..., units] (TF's Tensordot for rank > 2 inputs)."""
    with get_default_graph().name_scope("Tensordot"):
        flat = array_ops.reshape(x, [-1, kernel.shape[0]])
        out = array_ops.reshape(math_ops.matmul(flat, kernel),
                                array_ops.concat([array_ops.shape(x)[:-1], [units]], 0))
    out.set_shape(x.shape[:-1].concatenate([units]))
    return out


# -- flatten, dropout (no variables) ------------------------------------------
def flatten(inputs, name=None, data_format="channels_last"):
    """`tf.layers.flatten`: [N, ...] -> [N, prod(...)]; channels_first inputs are flattened in channels_last order."""
    x = convert_to_tensor(inputs)
    with layer_scope(name, "flatten", None):
        if data_format == "channels_first" and x.shape.ndims is not None and x.shape.ndims > 2:
            x = transpose(x, [0] + list(range(2, x.shape.ndims)) + [1])
        return nn_impl.nn_flatten(x)


def apply_dropout(x, rate, noise_shape=None, seed=None, training=False):
    """`tf.nn.dropout(x, rate)` when `training` (a bool, or a bool Tensor decided at run time), else x."""
    if isinstance(training, Tensor) or hasattr(training, "_as_graph_element"):
        # rate * cast(training): a rate of 0 keeps everything (mask 1), like TF's cond on `training`
        rate_t = math_ops.multiply(convert_to_tensor(float(rate) if not isinstance(rate, Tensor) else rate,
                                                     dtype=x.dtype),
                                   math_ops.cast(convert_to_tensor(training), x.dtype))
        return nn_impl.dropout(x, rate=rate_t, noise_shape=noise_shape, seed=seed)
    if not training:
        return identity(x)
    return nn_impl.dropout(x, rate=rate, noise_shape=noise_shape, seed=seed)


def dropout(inputs, rate=0.5, noise_shape=None, seed=None, training=False, name=None):
    """`tf.layers.dropout`: drops with probability `rate` only when `training` (a bool or a bool Tensor)."""
    x = float_inputs(inputs, "Dropout")
    with layer_scope(name, "dropout", None):
        return apply_dropout(x, rate, noise_shape, seed, training)


class Flatten(NoWeightsLayer):
    """`tf.layers.Flatten()`."""
    _default_name = "flatten"
    _functional = staticmethod(flatten)


class Dropout(NoWeightsLayer):
    """`tf.layers.Dropout(rate=0.5, noise_shape=None, seed=None)`; `training=` at call time."""
    _default_name = "dropout"
    _functional = staticmethod(dropout)

