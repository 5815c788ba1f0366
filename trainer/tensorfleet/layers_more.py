"""More of `tf.layers`: conv2d_transpose, and the layer classes TF1 scripts instantiate (Conv2D,
Conv2DTranspose, MaxPooling2D, AveragePooling2D, Flatten, Dropout, BatchNormalization).

Sits beside `layers.py` (re-exported from it) on top of `ops/`. A layer object builds its variables on
its first call, inside `variable_scope(name or a unique default)`, and every later call reuses them
(TF's `Layer.__call__` with `reuse=True` after the first build); the variable names are TF's
(`conv2d_transpose/kernel` [kh, kw, filters, in_channels], `conv2d_transpose/bias`).
"""
from __future__ import annotations

__all__ = ["conv2d_transpose", "Conv2D", "Conv2DTranspose", "MaxPooling2D", "AveragePooling2D", "Flatten",
           "Dropout", "BatchNormalization", "Layer", "conv1d", "max_pooling1d", "average_pooling1d", "Conv1D",
           "MaxPooling1D", "AveragePooling1D", "separable_conv2d", "SeparableConv2D"]

from . import layers as _layers
from .graph import GraphKeys
from .default_graph import get_default_graph
from .ops import array_ops, conv_ops, init_ops, join_ops, nn_extra_ops, nn_impl, variable_scope as _vs


def _deconv_length(size, kernel, stride, padding):
    """Keras' deconv_output_length: the spatial output size of a transposed convolution."""
    if size is None:
        return None
    return size * stride + max(kernel - stride, 0) if padding == "valid" else size * stride


def conv2d_transpose(inputs, filters, kernel_size, strides=(1, 1), padding="valid", data_format="channels_last",
                     activation=None, use_bias=True, kernel_initializer=None, bias_initializer=None,
                     kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                     kernel_constraint=None, bias_constraint=None, trainable=True, name=None, reuse=None):
    """`tf.layers.conv2d_transpose`: the gradient of a conv2d with respect to its input, as a layer.

    Output size per spatial dim: in * stride ('same') or in * stride + max(k - stride, 0) ('valid').
    """
    x = _layers._float_inputs(inputs, "Conv2DTranspose")
    fmt = _layers._tf_format(data_format)
    padding = padding.lower()
    if padding not in ("valid", "same"):
        raise ValueError(f"padding must be 'valid' or 'same', got {padding!r}")
    if x.shape.ndims is not None and x.shape.ndims != 4:
        raise ValueError(f"Input 0 of layer conv2d_transpose is incompatible with the layer: expected ndim=4, "
                         f"found ndim={x.shape.ndims}. Full shape received: {x.shape.as_list()}")
    c_axis, h_axis = (1, 2) if fmt == "NCHW" else (3, 1)
    in_ch = x.shape[c_axis] if x.shape.ndims else None
    if in_ch is None:
        raise ValueError("The channel dimension of the inputs should be defined. Found `None`.")
    kh, kw = _layers._pair(kernel_size, "kernel_size")
    sh, sw = _layers._pair(strides, "strides")
    filters = int(filters)
    with _layers._layer_scope(name, "conv2d_transpose", reuse):
        kernel = _layers._weight("kernel", [kh, kw, filters, in_ch], x.dtype,
                                 kernel_initializer or init_ops.glorot_uniform_initializer(), trainable,
                                 kernel_regularizer, kernel_constraint)
        dims = x.shape.as_list() if x.shape.ndims else [None] * 4
        out_h = _deconv_length(dims[h_axis], kh, sh, padding)
        out_w = _deconv_length(dims[h_axis + 1], kw, sw, padding)
        dyn = array_ops.shape(x)
        hw = [out_h if out_h is not None else _deconv_length(dyn[h_axis], kh, sh, padding),
              out_w if out_w is not None else _deconv_length(dyn[h_axis + 1], kw, sw, padding)]
        parts = [dyn[0], filters] + hw if fmt == "NCHW" else [dyn[0]] + hw + [filters]
        output_shape = join_ops.stack(parts)
        st = [1, 1, sh, sw] if fmt == "NCHW" else [1, sh, sw, 1]
        out = conv_ops.conv2d_transpose(x, kernel, output_shape, strides=st, padding=padding.upper(),
                                        data_format=fmt)
        static = [dims[0], filters, out_h, out_w] if fmt == "NCHW" else [dims[0], out_h, out_w, filters]
        out.set_shape(static)
        if use_bias:
            bias = _layers._weight("bias", [filters], x.dtype, bias_initializer or init_ops.zeros_initializer(),
                                   trainable, bias_regularizer, bias_constraint)
            out = nn_impl.bias_add(out, bias, data_format=fmt)
        return _layers._activity_regularize(_layers._activate(out, activation), activity_regularizer)


def _fmt1d(data_format):
    if data_format not in ("channels_last", "channels_first"):
        raise ValueError(f"data_format must be 'channels_last' or 'channels_first', got {data_format!r}")
    return "NWC" if data_format == "channels_last" else "NCW"


def conv1d(inputs, filters, kernel_size, strides=1, padding="valid", data_format="channels_last", dilation_rate=1,
           activation=None, use_bias=True, kernel_initializer=None, bias_initializer=None, kernel_regularizer=None,
           bias_regularizer=None, activity_regularizer=None, kernel_constraint=None, bias_constraint=None,
           trainable=True, name=None, reuse=None):
    """`tf.layers.conv1d`: variables <name>/kernel [kernel_size, in_channels, filters] and <name>/bias."""
    x = _layers._float_inputs(inputs, "Conv1D")
    fmt = _fmt1d(data_format)
    if x.shape.ndims is not None and x.shape.ndims != 3:
        raise ValueError(f"Input 0 of layer conv1d is incompatible with the layer: expected ndim=3, found "
                         f"ndim={x.shape.ndims}. Full shape received: {x.shape.as_list()}")
    in_ch = x.shape[2 if fmt == "NWC" else 1] if x.shape.ndims else None
    if in_ch is None:
        raise ValueError("The channel dimension of the inputs should be defined. Found `None`.")
    k = int(kernel_size[0] if isinstance(kernel_size, (list, tuple)) else kernel_size)
    with _layers._layer_scope(name, "conv1d", reuse):
        kernel = _layers._weight("kernel", [k, in_ch, int(filters)], x.dtype,
                                 kernel_initializer or init_ops.glorot_uniform_initializer(), trainable,
                                 kernel_regularizer, kernel_constraint)
        out = nn_extra_ops.conv1d(x, kernel, stride=strides, padding=padding.upper(), data_format=fmt,
                                  dilations=dilation_rate)
        if use_bias:
            bias = _layers._weight("bias", [int(filters)], x.dtype, bias_initializer or init_ops.zeros_initializer(),
                                   trainable, bias_regularizer, bias_constraint)
            out = nn_impl.bias_add(out, bias, data_format="NHWC" if fmt == "NWC" else "NCHW")
        return _layers._activity_regularize(_layers._activate(out, activation), activity_regularizer)


def separable_conv2d(inputs, filters, kernel_size, strides=(1, 1), padding="valid", data_format="channels_last",
                     dilation_rate=(1, 1), depth_multiplier=1, activation=None, use_bias=True,
                     depthwise_initializer=None, pointwise_initializer=None, bias_initializer=None,
                     depthwise_regularizer=None, pointwise_regularizer=None, bias_regularizer=None,
                     activity_regularizer=None, depthwise_constraint=None, pointwise_constraint=None,
                     bias_constraint=None, trainable=True, name=None, reuse=None):
    """`tf.layers.separable_conv2d` (channels_last): variables <name>/depthwise_kernel [kh, kw, in, multiplier],
    <name>/pointwise_kernel [1, 1, in * multiplier, filters] and <name>/bias, as TF names them."""
    if data_format != "channels_last":
        raise ValueError("separable_conv2d: only data_format='channels_last' is supported")
    x = _layers._float_inputs(inputs, "SeparableConv2D")
    in_ch = x.shape[3] if x.shape.ndims == 4 else None
    if in_ch is None:
        raise ValueError("The channel dimension of the inputs should be defined. Found `None`.")
    kh, kw = _layers._pair(kernel_size, "kernel_size")
    sh, sw = _layers._pair(strides, "strides")
    dm, filters = int(depth_multiplier), int(filters)
    with _layers._layer_scope(name, "separable_conv2d", reuse):
        init = init_ops.glorot_uniform_initializer
        depthwise = _layers._weight("depthwise_kernel", [kh, kw, in_ch, dm], x.dtype, depthwise_initializer or init(),
                                    trainable, depthwise_regularizer, depthwise_constraint)
        pointwise = _layers._weight("pointwise_kernel", [1, 1, in_ch * dm, filters], x.dtype,
                                    pointwise_initializer or init(), trainable, pointwise_regularizer,
                                    pointwise_constraint)
        out = nn_extra_ops.separable_conv2d(x, depthwise, pointwise, [1, sh, sw, 1], padding.upper(),
                                            rate=_layers._pair(dilation_rate, "dilation_rate"))
        if use_bias:
            bias = _layers._weight("bias", [filters], x.dtype, bias_initializer or init_ops.zeros_initializer(),
                                   trainable, bias_regularizer, bias_constraint)
            out = nn_impl.bias_add(out, bias)
        return _layers._activity_regularize(_layers._activate(out, activation), activity_regularizer)


def _pool1d(fn, default_name, inputs, pool_size, strides, padding, data_format, name):
    x = _layers._float_inputs(inputs, default_name)
    with _layers._layer_scope(name, default_name, None):
        return fn(x, pool_size, strides, padding.upper(), data_format=_fmt1d(data_format))


def max_pooling1d(inputs, pool_size, strides, padding="valid", data_format="channels_last", name=None):
    """`tf.layers.max_pooling1d`."""
    return _pool1d(nn_extra_ops.max_pool1d, "max_pooling1d", inputs, pool_size, strides, padding, data_format, name)


def average_pooling1d(inputs, pool_size, strides, padding="valid", data_format="channels_last", name=None):
    """`tf.layers.average_pooling1d`."""
    return _pool1d(nn_extra_ops.avg_pool1d, "average_pooling1d", inputs, pool_size, strides, padding, data_format,
                   name)


class Layer:
    """A callable TF1 layer object. The first call reserves `variable_scope(name or a unique default)` and
    runs the functional layer in it, creating the variables; later calls run it again there with
    reuse=True, so they share them."""

    _default_name = "layer"

    def __init__(self, *args, name=None, trainable=True, **kwargs):
        self._args, self._kwargs = args, dict(kwargs)
        if self._has_weights():
            self._kwargs["trainable"] = trainable
        self.trainable = trainable
        self._name = name
        self._scope = None
        self._variables: list = []
        self.built = False

    @staticmethod
    def _functional(inputs, *args, **kwargs):
        raise NotImplementedError

    def _has_weights(self) -> bool:
        return True

    @property
    def name(self) -> str:
        return self._scope.name.rsplit("/", 1)[-1] if self._scope is not None else (self._name or self._default_name)

    def __call__(self, inputs, *args, **kwargs):
        g = get_default_graph()
        if self._scope is None:
            with _vs.variable_scope(self._name, default_name=self._default_name) as scope:
                self._scope = scope
        before = len(g.get_collection(GraphKeys.GLOBAL_VARIABLES))
        kw = dict(self._kwargs, **kwargs)
        if self._has_weights():
            kw["reuse"] = True if self.built else None
        out = self._functional(inputs, *self._args, *args, name=self._scope, **kw)
        if not self.built:
            self._variables = g.get_collection(GraphKeys.GLOBAL_VARIABLES)[before:]
            self.built = True
        return out

    @property
    def variables(self) -> list:
        return list(self._variables)

    weights = variables

    @property
    def trainable_variables(self) -> list:
        trainable = set(get_default_graph().get_collection(GraphKeys.TRAINABLE_VARIABLES))
        return [v for v in self._variables if v in trainable]

    trainable_weights = trainable_variables

    @property
    def non_trainable_variables(self) -> list:
        trainable = set(self.trainable_variables)
        return [v for v in self._variables if v not in trainable]

    non_trainable_weights = non_trainable_variables


class Conv2D(Layer):
    """`tf.layers.Conv2D(filters, kernel_size, strides=(1, 1), padding='valid', ...)`."""
    _default_name = "conv2d"
    _functional = staticmethod(_layers.conv2d)


class Conv2DTranspose(Layer):
    """`tf.layers.Conv2DTranspose(filters, kernel_size, strides=(1, 1), padding='valid', ...)`."""
    _default_name = "conv2d_transpose"
    _functional = staticmethod(conv2d_transpose)


class BatchNormalization(Layer):
    """`tf.layers.BatchNormalization(...)`; `training=` is given at call time, as in TF."""
    _default_name = "batch_normalization"
    _functional = staticmethod(_layers.batch_normalization)


class _NoWeights(Layer):
    def _has_weights(self) -> bool:
        return False


class MaxPooling2D(_NoWeights):
    """`tf.layers.MaxPooling2D(pool_size, strides, padding='valid', data_format='channels_last')`."""
    _default_name = "max_pooling2d"
    _functional = staticmethod(_layers.max_pooling2d)


class AveragePooling2D(_NoWeights):
    """`tf.layers.AveragePooling2D(pool_size, strides, padding='valid', data_format='channels_last')`."""
    _default_name = "average_pooling2d"
    _functional = staticmethod(_layers.average_pooling2d)


class Flatten(_NoWeights):
    """`tf.layers.Flatten()`."""
    _default_name = "flatten"
    _functional = staticmethod(_layers.flatten)


class Dropout(_NoWeights):
    """`tf.layers.Dropout(rate=0.5, noise_shape=None, seed=None)`; `training=` at call time."""
    _default_name = "dropout"
    _functional = staticmethod(_layers.dropout)


class Conv1D(Layer):
    """`tf.layers.Conv1D(filters, kernel_size, strides=1, padding='valid', ...)`."""
    _default_name = "conv1d"
    _functional = staticmethod(conv1d)


class MaxPooling1D(_NoWeights):
    _default_name = "max_pooling1d"
    _functional = staticmethod(max_pooling1d)


class AveragePooling1D(_NoWeights):
    _default_name = "average_pooling1d"
    _functional = staticmethod(average_pooling1d)


class SeparableConv2D(Layer):
    """`tf.layers.SeparableConv2D(filters, kernel_size, ...)`."""
    _default_name = "separable_conv2d"
    _functional = staticmethod(separable_conv2d)
