"""`tf.layers` convolutions: conv2d, conv2d_transpose, conv1d, separable_conv2d and their layer classes.

Variables are TF's: `<scope>/kernel` ([kh, kw, in_channels, filters]; a transposed convolution's is
[kh, kw, filters, in_channels]) and `<scope>/bias`. `build_conv2d` and `build_conv2d_transpose` make the
variables and the (biased, not yet activated) output inside an already open scope: `tf.contrib.layers`'
convolutions use them under their own scope and variable names.
"""
from __future__ import annotations

from ..ops import array_ops, conv_composite, conv_ops, init_ops, join_ops, nn_impl
from .base import (Layer, activate, activity_regularize, float_inputs, fmt1d, layer_scope, pair, tf_format,
                   tf_padding, weight)

__all__ = ["conv2d", "conv2d_transpose", "conv1d", "separable_conv2d", "Conv2D", "Conv2DTranspose", "Conv1D",
           "SeparableConv2D"]


def _channels(x, fmt, layer, rank=4):
    if x.shape.ndims is not None and x.shape.ndims != rank:
        raise ValueError(f"Input 0 of layer {layer} is incompatible with the layer: expected ndim={rank}, found "
                         f"ndim={x.shape.ndims}. Full shape received: {x.shape.as_list()}")
    in_ch = x.shape[1 if fmt.startswith("NC") else rank - 1] if x.shape.ndims else None
    if in_ch is None:
        raise ValueError("The channel dimension of the inputs should be defined. Found `None`.")
    return in_ch


def _bias(out, filters, dtype, use_bias, bias_initializer, trainable, bias_regularizer, bias_constraint, fmt):
    """(out + bias, bias), or (out, None) without a bias."""
    if not use_bias:
        return out, None
    bias = weight("bias", [filters], dtype, bias_initializer or init_ops.zeros_initializer(), trainable,
                  bias_regularizer, bias_constraint)
    return nn_impl.bias_add(out, bias, data_format="NCHW" if fmt.startswith("NC") else "NHWC"), bias


# -- conv2d -------------------------------------------------------------------
def build_conv2d(x, filters, kernel_size, strides=(1, 1), padding="valid", data_format="channels_last",
                 dilation_rate=(1, 1), use_bias=True, kernel_initializer=None, bias_initializer=None,
                 kernel_regularizer=None, bias_regularizer=None, kernel_constraint=None, bias_constraint=None,
                 trainable=True):
    """(conv2d(x, kernel) + bias without activation, kernel, bias or None), the variables in the current scope."""
    fmt = tf_format(data_format)
    in_ch = _channels(x, fmt, "conv2d")
    kh, kw = pair(kernel_size, "kernel_size")
    filters = int(filters)
    kernel = weight("kernel", [kh, kw, in_ch, filters], x.dtype,
                    kernel_initializer or init_ops.glorot_uniform_initializer(), trainable, kernel_regularizer,
                    kernel_constraint)
    out = conv_ops.conv2d(x, kernel, strides=list(pair(strides, "strides")), padding=tf_padding(padding),
                          data_format=fmt, dilations=list(pair(dilation_rate, "dilation_rate")))
    out, bias = _bias(out, filters, x.dtype, use_bias, bias_initializer, trainable, bias_regularizer,
                      bias_constraint, fmt)
    return out, kernel, bias


def conv2d(inputs, filters, kernel_size, strides=(1, 1), padding="valid", data_format="channels_last",
           dilation_rate=(1, 1), activation=None, use_bias=True, kernel_initializer=None, bias_initializer=None,
           kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None, kernel_constraint=None,
           bias_constraint=None, trainable=True, name=None, reuse=None):
    """`tf.layers.conv2d`: kernel [kh, kw, in_channels, filters] + bias [filters]; padding 'valid'/'same'."""
    x = float_inputs(inputs, "Conv2D")
    with layer_scope(name, "conv2d", reuse):
        out, _, _ = build_conv2d(x, filters, kernel_size, strides, padding, data_format, dilation_rate, use_bias,
                           kernel_initializer, bias_initializer, kernel_regularizer, bias_regularizer,
                           kernel_constraint, bias_constraint, trainable)
        return activity_regularize(activate(out, activation), activity_regularizer)


# -- conv2d_transpose ---------------------------------------------------------
def _deconv_length(size, kernel, stride, padding):
    """Keras' deconv_output_length: the spatial output size of a transposed convolution."""
    if size is None:
        return None
    return size * stride + max(kernel - stride, 0) if padding == "valid" else size * stride


def build_conv2d_transpose(x, filters, kernel_size, strides=(1, 1), padding="valid", data_format="channels_last",
                           use_bias=True, kernel_initializer=None, bias_initializer=None, kernel_regularizer=None,
                           bias_regularizer=None, kernel_constraint=None, bias_constraint=None, trainable=True):
    """(the transposed convolution + bias, kernel [kh, kw, filters, in_channels], bias or None) in the current
    scope.

    Output size per spatial dim: in * stride ('same') or in * stride + max(k - stride, 0) ('valid').
    """
    fmt = tf_format(data_format)
    padding = tf_padding(padding).lower()
    in_ch = _channels(x, fmt, "conv2d_transpose")
    h_axis = 2 if fmt == "NCHW" else 1
    kh, kw = pair(kernel_size, "kernel_size")
    sh, sw = pair(strides, "strides")
    filters = int(filters)
    kernel = weight("kernel", [kh, kw, filters, in_ch], x.dtype,
                    kernel_initializer or init_ops.glorot_uniform_initializer(), trainable, kernel_regularizer,
                    kernel_constraint)
    dims = x.shape.as_list() if x.shape.ndims else [None] * 4
    out_h = _deconv_length(dims[h_axis], kh, sh, padding)
    out_w = _deconv_length(dims[h_axis + 1], kw, sw, padding)
    dyn = array_ops.shape(x)
    hw = [out_h if out_h is not None else _deconv_length(dyn[h_axis], kh, sh, padding),
          out_w if out_w is not None else _deconv_length(dyn[h_axis + 1], kw, sw, padding)]
    parts = [dyn[0], filters] + hw if fmt == "NCHW" else [dyn[0]] + hw + [filters]
    st = [1, 1, sh, sw] if fmt == "NCHW" else [1, sh, sw, 1]
    out = conv_ops.conv2d_transpose(x, kernel, join_ops.stack(parts), strides=st, padding=padding.upper(),
                                    data_format=fmt)
    out.set_shape([dims[0], filters, out_h, out_w] if fmt == "NCHW" else [dims[0], out_h, out_w, filters])
    out, bias = _bias(out, filters, x.dtype, use_bias, bias_initializer, trainable, bias_regularizer,
                      bias_constraint, fmt)
    return out, kernel, bias


def conv2d_transpose(inputs, filters, kernel_size, strides=(1, 1), padding="valid", data_format="channels_last",
                     activation=None, use_bias=True, kernel_initializer=None, bias_initializer=None,
                     kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                     kernel_constraint=None, bias_constraint=None, trainable=True, name=None, reuse=None):
    """`tf.layers.conv2d_transpose`: the gradient of a conv2d with respect to its input, as a layer."""
    x = float_inputs(inputs, "Conv2DTranspose")
    with layer_scope(name, "conv2d_transpose", reuse):
        out, _, _ = build_conv2d_transpose(x, filters, kernel_size, strides, padding, data_format, use_bias,
                                     kernel_initializer, bias_initializer, kernel_regularizer, bias_regularizer,
                                     kernel_constraint, bias_constraint, trainable)
        return activity_regularize(activate(out, activation), activity_regularizer)


# -- conv1d, separable_conv2d -------------------------------------------------
def conv1d(inputs, filters, kernel_size, strides=1, padding="valid", data_format="channels_last", dilation_rate=1,
           activation=None, use_bias=True, kernel_initializer=None, bias_initializer=None, kernel_regularizer=None,
           bias_regularizer=None, activity_regularizer=None, kernel_constraint=None, bias_constraint=None,
           trainable=True, name=None, reuse=None):
    """`tf.layers.conv1d`: variables <name>/kernel [kernel_size, in_channels, filters] and <name>/bias."""
    x = float_inputs(inputs, "Conv1D")
    fmt = fmt1d(data_format)
    in_ch = _channels(x, fmt, "conv1d", rank=3)
    k = int(kernel_size[0] if isinstance(kernel_size, (list, tuple)) else kernel_size)
    with layer_scope(name, "conv1d", reuse):
        kernel = weight("kernel", [k, in_ch, int(filters)], x.dtype,
                        kernel_initializer or init_ops.glorot_uniform_initializer(), trainable, kernel_regularizer,
                        kernel_constraint)
        out = conv_composite.conv1d(x, kernel, stride=strides, padding=padding.upper(), data_format=fmt,
                                  dilations=dilation_rate)
        out, _ = _bias(out, int(filters), x.dtype, use_bias, bias_initializer, trainable, bias_regularizer,
                       bias_constraint, fmt)
        return activity_regularize(activate(out, activation), activity_regularizer)


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
    x = float_inputs(inputs, "SeparableConv2D")
    in_ch = x.shape[3] if x.shape.ndims == 4 else None
    if in_ch is None:
        raise ValueError("The channel dimension of the inputs should be defined. Found `None`.")
    kh, kw = pair(kernel_size, "kernel_size")
    sh, sw = pair(strides, "strides")
    dm, filters = int(depth_multiplier), int(filters)
    with layer_scope(name, "separable_conv2d", reuse):
        init = init_ops.glorot_uniform_initializer
        depthwise = weight("depthwise_kernel", [kh, kw, in_ch, dm], x.dtype, depthwise_initializer or init(),
                           trainable, depthwise_regularizer, depthwise_constraint)
        pointwise = weight("pointwise_kernel", [1, 1, in_ch * dm, filters], x.dtype, pointwise_initializer or init(),
                           trainable, pointwise_regularizer, pointwise_constraint)
        out = conv_composite.separable_conv2d(x, depthwise, pointwise, [1, sh, sw, 1], padding.upper(),
                                            rate=pair(dilation_rate, "dilation_rate"))
        out, _ = _bias(out, filters, x.dtype, use_bias, bias_initializer, trainable, bias_regularizer,
                       bias_constraint, "NHWC")
        return activity_regularize(activate(out, activation), activity_regularizer)


# -- layer classes ------------------------------------------------------------
class Conv2D(Layer):
    """`tf.layers.Conv2D(filters, kernel_size, strides=(1, 1), padding='valid', ...)`."""
    _default_name = "conv2d"
    _functional = staticmethod(conv2d)


class Conv2DTranspose(Layer):
    """`tf.layers.Conv2DTranspose(filters, kernel_size, strides=(1, 1), padding='valid', ...)`."""
    _default_name = "conv2d_transpose"
    _functional = staticmethod(conv2d_transpose)


class Conv1D(Layer):
    """`tf.layers.Conv1D(filters, kernel_size, strides=1, padding='valid', ...)`."""
    _default_name = "conv1d"
    _functional = staticmethod(conv1d)


class SeparableConv2D(Layer):
    """`tf.layers.SeparableConv2D(filters, kernel_size, ...)`."""
    _default_name = "separable_conv2d"
    _functional = staticmethod(separable_conv2d)
