"""`tf.layers`: TF1 functional layers (dense, conv2d, pooling, flatten, dropout, batch_normalization) on `tf.nn`;
conv2d_transpose, conv1d, separable_conv2d, 1-D pooling and the layer classes are in `layers_more.py`.

Sits above `ops/` (it builds graph through `tf.nn`, `tf.matmul` and variables). Variables are
`<scope>/kernel` and `<scope>/bias`; the scope is `name`, or `dense`, `dense_1`, ... unique per graph
like TF. When `ops/variable_scope` provides `get_variable`/`variable_scope`, layers use them (so
`reuse=` and enclosing `tf.variable_scope`s work as in TF); otherwise they fall back to `tf.Variable`s
under a name scope. The default kernel initializer is glorot-uniform: `tf.glorot_uniform_initializer`
when `ops/init_ops` has it, else an nn-private uniform op seeded by TF1's graph/op seed rule.
"""
from __future__ import annotations

__all__ = ["Dense", "dense", "conv2d", "max_pooling2d", "average_pooling2d", "flatten", "dropout",
           "batch_normalization"]


import numpy as np

from . import dtypes as _dtypes
from .graph import GraphKeys, Tensor
from .default_graph import convert_to_tensor, get_default_graph
from .ops import conv_ops, init_ops, math_ops, nn_impl, state_ops
from .ops import variable_scope as _vs
from .ops.array_ops import constant
from .ops import array_ops, comparison_ops, nn_composite
from .ops.array_ops import transpose
from .ops.array_ops import identity


# -- variables ----------------------------------------------------------------
def _layer_scope(name, default_name, reuse):
    """TF's layer scope: variable_scope(name or a unique default_name), which also opens the name scope."""
    return _vs.variable_scope(name, default_name=default_name, reuse=reuse)


def _weight(name, shape, dtype, initializer, trainable, regularizer=None, constraint=None):
    """A layer variable through tf.get_variable (default kernel init: glorot_uniform, bias: zeros)."""
    return _vs.get_variable(name, shape=shape, dtype=dtype, initializer=initializer, trainable=trainable,
                            regularizer=regularizer, constraint=constraint)


def _activity_regularize(out, activity_regularizer):
    """TF adds activity_regularizer(output) to the REGULARIZATION_LOSSES collection."""
    if activity_regularizer is not None:
        with get_default_graph().name_scope("ActivityRegularizer"):
            loss = activity_regularizer(out)
        if loss is not None:
            get_default_graph().add_to_collection(GraphKeys.REGULARIZATION_LOSSES, loss)
    return out


def _float_inputs(inputs, layer):
    x = convert_to_tensor(inputs)
    if not x.dtype.is_floating:
        raise ValueError(f"{layer}: inputs must be floating point, got {x.dtype.name}")
    return x


def _activate(out, activation):
    return activation(out) if activation is not None else out


# -- dense --------------------------------------------------------------------
def _dense_input(inputs):
    x = _float_inputs(inputs, "Dense")
    if x.shape.ndims is None or x.shape.ndims < 2:
        raise ValueError(f"Input 0 of layer dense is incompatible with the layer: expected min_ndim=2, found "
                         f"ndim={x.shape.ndims}")
    in_dim = x.shape[-1] if x.shape.ndims else None
    if in_dim is None:
        raise ValueError("The last dimension of the inputs to `Dense` should be defined. Found `None`.")
    return x, in_dim


def _dense_weights(in_dim, units, dtype, use_bias, kernel_initializer, bias_initializer, kernel_regularizer,
                   bias_regularizer, kernel_constraint, bias_constraint, trainable):
    kernel = _weight("kernel", [in_dim, units], dtype, kernel_initializer or init_ops.glorot_uniform_initializer(),
                     trainable, kernel_regularizer, kernel_constraint)
    bias = None
    if use_bias:
        bias = _weight("bias", [units], dtype, bias_initializer or init_ops.zeros_initializer(), trainable,
                       bias_regularizer, bias_constraint)
    return kernel, bias


def _dense_apply(x, kernel, bias, units, activation, activity_regularizer):
    out = math_ops.matmul(x, kernel) if x.shape.ndims == 2 else _tensordot_last(x, kernel, units)
    if bias is not None:
        out = nn_impl.bias_add(out, bias)
    return _activity_regularize(_activate(out, activation), activity_regularizer)


def dense(inputs, units, activation=None, use_bias=True, kernel_initializer=None, bias_initializer=None,
          kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None, kernel_constraint=None,
          bias_constraint=None, trainable=True, name=None, reuse=None):
    """`tf.layers.dense`: activation(inputs @ kernel + bias) for rank-2 inputs; variables <name>/kernel, <name>/bias."""
    x, in_dim = _dense_input(inputs)
    units = int(units)
    with _layer_scope(name, "dense", reuse):
        kernel, bias = _dense_weights(in_dim, units, x.dtype, use_bias, kernel_initializer, bias_initializer,
                                      kernel_regularizer, bias_regularizer, kernel_constraint, bias_constraint,
                                      trainable)
        return _dense_apply(x, kernel, bias, units, activation, activity_regularizer)


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
        x, in_dim = _dense_input(inputs)
        if not self.built:
            with _layer_scope(self._name, "dense", None) as scope:
                self._scope_name = scope.name
                self._name_scope = get_default_graph().get_name_scope() + "/"
                self.kernel, self.bias = _dense_weights(
                    in_dim, self.units, x.dtype, self.use_bias, self.kernel_initializer, self.bias_initializer,
                    self.kernel_regularizer, self.bias_regularizer, self.kernel_constraint, self.bias_constraint,
                    self.trainable)
                self.built = True
                return _dense_apply(x, self.kernel, self.bias, self.units, self.activation,
                                    self.activity_regularizer)
        if in_dim != self.kernel.shape[0]:
            raise ValueError(f"Input 0 of layer {self.name} is incompatible with the layer: expected axis -1 of "
                             f"input shape to have value {self.kernel.shape[0]} but received input with shape "
                             f"{x.shape}")
        with get_default_graph().name_scope(self._name_scope):
            return _dense_apply(x, self.kernel, self.bias, self.units, self.activation, self.activity_regularizer)

    apply = __call__


def _tensordot_last(x, kernel, units):
    """x [..., in] @ kernel [in, units] -> [..., units] (TF's Tensordot for rank > 2 inputs)."""
    with get_default_graph().name_scope("Tensordot"):
        flat = array_ops.reshape(x, [-1, kernel.shape[0]])
        out = array_ops.reshape(math_ops.matmul(flat, kernel),
                                array_ops.concat([array_ops.shape(x)[:-1], [units]], 0))
    out.set_shape(x.shape[:-1].concatenate([units]))
    return out


# -- conv2d -------------------------------------------------------------------
def _pair(v, what):
    if isinstance(v, (int, np.integer)):
        return int(v), int(v)
    v = tuple(int(a) for a in v)
    if len(v) == 1:
        return v * 2
    if len(v) != 2:
        raise ValueError(f"The `{what}` argument must be a tuple of 2 integers. Received: {v}")
    return v


def _tf_padding(padding):
    p = str(padding).lower()
    if p not in ("valid", "same"):
        raise ValueError(f"The `padding` argument must be one of \"valid\", \"same\". Received: {padding}")
    return p.upper()


def _tf_format(data_format):
    if data_format in ("channels_last", None):
        return "NHWC"
    if data_format == "channels_first":
        return "NCHW"
    raise ValueError(f"The `data_format` argument must be one of \"channels_first\", \"channels_last\". "
                     f"Received: {data_format}")


def conv2d(inputs, filters, kernel_size, strides=(1, 1), padding="valid", data_format="channels_last",
           dilation_rate=(1, 1), activation=None, use_bias=True, kernel_initializer=None, bias_initializer=None,
           kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None, kernel_constraint=None,
           bias_constraint=None, trainable=True, name=None, reuse=None):
    """`tf.layers.conv2d`: kernel [kh, kw, in_channels, filters] + bias [filters]; padding 'valid'/'same'."""
    x = _float_inputs(inputs, "Conv2D")
    fmt = _tf_format(data_format)
    if x.shape.ndims is not None and x.shape.ndims != 4:
        raise ValueError(f"Input 0 of layer conv2d is incompatible with the layer: expected ndim=4, found "
                         f"ndim={x.shape.ndims}. Full shape received: {x.shape.as_list()}")
    in_ch = x.shape[1 if fmt == "NCHW" else 3] if x.shape.ndims else None
    if in_ch is None:
        raise ValueError("The channel dimension of the inputs should be defined. Found `None`.")
    kh, kw = _pair(kernel_size, "kernel_size")
    strides, dilations = _pair(strides, "strides"), _pair(dilation_rate, "dilation_rate")
    with _layer_scope(name, "conv2d", reuse):
        kernel = _weight("kernel", [kh, kw, in_ch, int(filters)], x.dtype,
                         kernel_initializer or init_ops.glorot_uniform_initializer(), trainable, kernel_regularizer,
                         kernel_constraint)
        out = conv_ops.conv2d(x, kernel, strides=list(strides), padding=_tf_padding(padding), data_format=fmt,
                              dilations=list(dilations))
        if use_bias:
            bias = _weight("bias", [int(filters)], x.dtype, bias_initializer or init_ops.zeros_initializer(),
                           trainable, bias_regularizer, bias_constraint)
            out = nn_impl.bias_add(out, bias, data_format=fmt)
        return _activity_regularize(_activate(out, activation), activity_regularizer)


# -- pooling, flatten, dropout (no variables) ---------------------------------
def _pool(fn, default_name, inputs, pool_size, strides, padding, data_format, name):
    x = _float_inputs(inputs, default_name)
    fmt = _tf_format(data_format)
    with _layer_scope(name, default_name, None):
        return fn(x, list(_pair(pool_size, "pool_size")), list(_pair(strides, "strides")), _tf_padding(padding),
                  data_format=fmt)


def max_pooling2d(inputs, pool_size, strides, padding="valid", data_format="channels_last", name=None):
    """`tf.layers.max_pooling2d`."""
    return _pool(conv_ops.max_pool, "max_pooling2d", inputs, pool_size, strides, padding, data_format, name)


def average_pooling2d(inputs, pool_size, strides, padding="valid", data_format="channels_last", name=None):
    """`tf.layers.average_pooling2d`."""
    return _pool(conv_ops.avg_pool, "average_pooling2d", inputs, pool_size, strides, padding, data_format, name)


def flatten(inputs, name=None, data_format="channels_last"):
    """`tf.layers.flatten`: [N, ...] -> [N, prod(...)]; channels_first inputs are flattened in channels_last order."""
    x = convert_to_tensor(inputs)
    with _layer_scope(name, "flatten", None):
        if data_format == "channels_first" and x.shape.ndims is not None and x.shape.ndims > 2:
            x = transpose(x, [0] + list(range(2, x.shape.ndims)) + [1])
        return nn_impl.nn_flatten(x)


def dropout(inputs, rate=0.5, noise_shape=None, seed=None, training=False, name=None):
    """`tf.layers.dropout`: drops with probability `rate` only when `training` (a bool or a bool Tensor)."""
    x = _float_inputs(inputs, "Dropout")
    with _layer_scope(name, "dropout", None):
        if isinstance(training, (Tensor,)) or hasattr(training, "_as_graph_element"):
            # rate * cast(training): a rate of 0 keeps everything (mask 1), like TF's cond on `training`
            rate_t = math_ops.multiply(convert_to_tensor(float(rate) if not isinstance(rate, Tensor) else rate,
                                                         dtype=x.dtype),
                                       math_ops.cast(convert_to_tensor(training), x.dtype))
            return nn_impl.dropout(x, rate=rate_t, noise_shape=noise_shape, seed=seed)
        if not training:
            return identity(x)
        return nn_impl.dropout(x, rate=rate, noise_shape=noise_shape, seed=seed)



# -- batch_normalization --------------------------------------------------------
def _is_tensor(v) -> bool:
    return isinstance(v, Tensor) or hasattr(v, "_as_graph_element")


def batch_normalization(inputs, axis=-1, momentum=0.99, epsilon=1e-3, center=True, scale=True,
                        beta_initializer=None, gamma_initializer=None, moving_mean_initializer=None,
                        moving_variance_initializer=None, beta_regularizer=None, gamma_regularizer=None,
                        beta_constraint=None, gamma_constraint=None, training=False, trainable=True, name=None,
                        reuse=None, renorm=False, renorm_clipping=None, renorm_momentum=0.99, fused=None,
                        virtual_batch_size=None, adjustment=None):
    """`tf.layers.batch_normalization`: variables <name>/gamma, beta, moving_mean, moving_variance.

    training=True (or a bool Tensor that is true) normalizes with the batch moments and puts the
    moving-average updates `moving -= (moving - batch) * (1 - momentum)` in GraphKeys.UPDATE_OPS
    (a False tensor makes them no-ops: momentum 1, as TF's smart_cond); otherwise the moving statistics
    are used. As TF's fused kernel (4-D inputs, channel axis), the moving variance is updated with the
    Bessel-corrected batch variance.
    """
    if renorm or virtual_batch_size is not None or adjustment is not None:
        raise NotImplementedError("batch_normalization: renorm, virtual_batch_size and adjustment are not supported")
    x = _float_inputs(inputs, "BatchNormalization")
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
    with _layer_scope(name, "batch_normalization", reuse):
        gamma = _weight("gamma", [channels], param_dtype, gamma_initializer or init_ops.ones_initializer(),
                        trainable, gamma_regularizer, gamma_constraint) if scale else None
        beta = _weight("beta", [channels], param_dtype, beta_initializer or init_ops.zeros_initializer(),
                       trainable, beta_regularizer, beta_constraint) if center else None
        moving_mean = _weight("moving_mean", [channels], param_dtype,
                              moving_mean_initializer or init_ops.zeros_initializer(), False)
        moving_var = _weight("moving_variance", [channels], param_dtype,
                             moving_variance_initializer or init_ops.ones_initializer(), False)

        def bcast(t):  # [C] -> broadcastable against x when the channel axis is not last
            if t is None or ax == ndims - 1:
                return t
            return array_ops.reshape(t, [channels if i == ax else 1 for i in range(ndims)])

        if not _is_tensor(training) and not training:
            mean, variance = moving_mean.value(), moving_var.value()
        else:
            batch_mean, batch_var = nn_impl.moments(math_ops.cast(x, param_dtype), reduce_axes)
            update_var = batch_var
            if bessel:
                n = 1
                for i in reduce_axes:
                    n = n * (array_ops.shape(x)[i])
                n = math_ops.cast(n, param_dtype)
                update_var = batch_var * n / math_ops.maximum(n - 1.0, 1.0)
            if _is_tensor(training):
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
                with g.colocate_with(var.op):
                    update = state_ops.assign_sub(var, (var.value() - value) * (1.0 - decay),
                                                  name="AssignMovingAvg")
                g.add_to_collection(GraphKeys.UPDATE_OPS, update)
        out = nn_composite.batch_normalization(math_ops.cast(x, param_dtype), bcast(mean), bcast(variance),
                                               bcast(beta), bcast(gamma), epsilon)
        return math_ops.cast(out, x.dtype) if param_dtype is not x.dtype else out


from .layers_more import *  # noqa: E402,F401,F403
from .layers_more import __all__ as _more_all  # noqa: E402

__all__ += _more_all
