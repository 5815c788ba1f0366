"""`tf.contrib.layers` convolutions and pooling: convolution2d (= conv2d, and `convolution` for rank-4
inputs), convolution2d_transpose (= conv2d_transpose), max_pool2d, avg_pool2d -- TF 1.15's defaults.

conv2d: scope `Conv`, variables `weights` [kh, kw, in, num_outputs] and `biases`, stride 1, padding 'SAME',
activation_fn relu, xavier weights; conv2d_transpose: scope `Conv2d_transpose`, weights [kh, kw,
num_outputs, in]. As with fully_connected, a normalizer_fn replaces the biases. Pools open a name scope
(`MaxPool2D`, `AvgPool2D`) with kernel_size, stride=2, padding='VALID'. NCHW is `data_format='NCHW'`.
"""
from __future__ import annotations

from ...default_graph import convert_to_tensor, name_scope
from ...layers import convolutional as _conv
from ...layers.base import pair
from ...ops import conv_ops, nn_ops
from ..framework.arg_scope import add_arg_scope
from .core import XAVIER, ZEROS, _normalize_activate
from .utils import CORE_RENAMES, add_weights_to_collections, collect_named_outputs, model_variable_scope

__all__ = ["convolution", "convolution2d", "conv2d", "convolution2d_transpose", "conv2d_transpose", "max_pool2d",
           "avg_pool2d"]

_DATA_FORMATS = (None, "NWC", "NCW", "NHWC", "NCHW", "NDHWC", "NCDHW")


def _channels_format(data_format) -> str:
    return "channels_first" if data_format and data_format.startswith("NC") else "channels_last"


def _conv2d(inputs, num_outputs, kernel_size, stride, padding, data_format, rate, activation_fn, normalizer_fn,
            normalizer_params, weights_initializer, weights_regularizer, biases_initializer, biases_regularizer,
            reuse, variables_collections, outputs_collections, trainable, scope, conv_dims, caller):
    if data_format not in _DATA_FORMATS:
        raise ValueError(f"Invalid data_format: {data_format!r}")
    with model_variable_scope(scope, "Conv", [inputs], reuse, CORE_RENAMES) as sc:
        x = convert_to_tensor(inputs)
        rank = x.shape.ndims
        if conv_dims is not None and rank != conv_dims + 2:
            raise ValueError(f"Convolution expects input with rank {conv_dims + 2}, got {rank}")
        if rank != 4:
            raise NotImplementedError(f"tf.contrib.layers.{caller}: only 2-D convolutions (rank-4 inputs) are "
                                      f"supported, got an input of rank {rank}")
        use_bias = bool(not normalizer_fn and biases_initializer)
        outputs, weights, biases = _conv.build_conv2d(
            x, num_outputs, kernel_size, stride, padding, _channels_format(data_format), rate, use_bias,
            weights_initializer, biases_initializer, weights_regularizer, biases_regularizer, None, None, trainable)
        add_weights_to_collections(weights, biases, variables_collections)
        return _normalize_activate(outputs, normalizer_fn, normalizer_params, activation_fn, outputs_collections,
                                   sc.name)


@add_arg_scope
def convolution(inputs, num_outputs, kernel_size, stride=1, padding="SAME", data_format=None, rate=1,
                activation_fn=nn_ops.relu, normalizer_fn=None, normalizer_params=None,
                weights_initializer=XAVIER, weights_regularizer=None,
                biases_initializer=ZEROS, biases_regularizer=None, reuse=None,
                variables_collections=None, outputs_collections=None, trainable=True, scope=None, conv_dims=None):
    """An N-D convolution (only N = 2 here) followed by the optional normalizer and activation."""
    return _conv2d(inputs, num_outputs, kernel_size, stride, padding, data_format, rate, activation_fn,
                   normalizer_fn, normalizer_params, weights_initializer, weights_regularizer, biases_initializer,
                   biases_regularizer, reuse, variables_collections, outputs_collections, trainable, scope, conv_dims,
                   "convolution")


@add_arg_scope
def convolution2d(inputs, num_outputs, kernel_size, stride=1, padding="SAME", data_format=None, rate=1,
                  activation_fn=nn_ops.relu, normalizer_fn=None, normalizer_params=None,
                  weights_initializer=XAVIER, weights_regularizer=None,
                  biases_initializer=ZEROS, biases_regularizer=None, reuse=None,
                  variables_collections=None, outputs_collections=None, trainable=True, scope=None):
    """activation_fn(normalizer_fn(conv) or conv + biases): variables `<scope>/weights`, `<scope>/biases`
    (scope `Conv`, `Conv_1`, ...); `rate` is the dilation."""
    return _conv2d(inputs, num_outputs, kernel_size, stride, padding, data_format, rate, activation_fn,
                   normalizer_fn, normalizer_params, weights_initializer, weights_regularizer, biases_initializer,
                   biases_regularizer, reuse, variables_collections, outputs_collections, trainable, scope, 2,
                   "conv2d")


conv2d = convolution2d


@add_arg_scope
def convolution2d_transpose(inputs, num_outputs, kernel_size, stride=1, padding="SAME", data_format="NHWC",
                            activation_fn=nn_ops.relu, normalizer_fn=None, normalizer_params=None,
                            weights_initializer=XAVIER, weights_regularizer=None,
                            biases_initializer=ZEROS, biases_regularizer=None, reuse=None,
                            variables_collections=None, outputs_collections=None, trainable=True, scope=None):
    """A transposed 2-D convolution (scope `Conv2d_transpose`): `weights` [kh, kw, num_outputs, in],
    output size in * stride ('SAME') or in * stride + max(k - stride, 0) ('VALID')."""
    with model_variable_scope(scope, "Conv2d_transpose", [inputs], reuse, CORE_RENAMES) as sc:
        if data_format not in ("NCHW", "NHWC"):
            raise ValueError("data_format has to be either NCHW or NHWC.")
        x = convert_to_tensor(inputs)
        use_bias = bool(not normalizer_fn and biases_initializer)
        outputs, weights, biases = _conv.build_conv2d_transpose(
            x, num_outputs, kernel_size, stride, padding, _channels_format(data_format), use_bias,
            weights_initializer, biases_initializer, weights_regularizer, biases_regularizer, None, None, trainable)
        add_weights_to_collections(weights, biases, variables_collections)
        return _normalize_activate(outputs, normalizer_fn, normalizer_params, activation_fn, outputs_collections,
                                   sc.name)


conv2d_transpose = convolution2d_transpose


def _pool(fn, default_name, inputs, kernel_size, stride, padding, data_format, outputs_collections, scope):
    if data_format not in ("NCHW", "NHWC"):
        raise ValueError("data_format has to be either NCHW or NHWC.")
    with name_scope(scope, default_name, [inputs]) as sc:
        x = convert_to_tensor(inputs)
        kh, kw = pair(kernel_size, "pool_size")
        sh, sw = pair(stride, "strides")
        nchw = data_format == "NCHW"
        outputs = fn(x, [1, 1, kh, kw] if nchw else [1, kh, kw, 1], [1, 1, sh, sw] if nchw else [1, sh, sw, 1],
                     str(padding).upper(), data_format=data_format)
        return collect_named_outputs(outputs_collections, sc, outputs)


@add_arg_scope
def max_pool2d(inputs, kernel_size, stride=2, padding="VALID", data_format="NHWC", outputs_collections=None,
               scope=None):
    """2-D max pooling over [kernel_height, kernel_width] windows (name scope `MaxPool2D`)."""
    return _pool(conv_ops.max_pool, "MaxPool2D", inputs, kernel_size, stride, padding, data_format,
                 outputs_collections, scope)


@add_arg_scope
def avg_pool2d(inputs, kernel_size, stride=2, padding="VALID", data_format="NHWC", outputs_collections=None,
               scope=None):
    """2-D average pooling (name scope `AvgPool2D`); SAME windows divide by their count of valid inputs."""
    return _pool(conv_ops.avg_pool, "AvgPool2D", inputs, kernel_size, stride, padding, data_format,
                 outputs_collections, scope)
