"""`tf.layers` pooling: max/average pooling in 1-D and 2-D and their layer classes (no variables).

Each opens `variable_scope(name or a unique default)` (`max_pooling2d`, `max_pooling2d_1`, ...) like TF, so the
op is `max_pooling2d/MaxPool`.
"""
from __future__ import annotations

from ..ops import conv_composite, conv_ops
from .base import NoWeightsLayer, float_inputs, fmt1d, layer_scope, pair, tf_format, tf_padding

__all__ = ["max_pooling2d", "average_pooling2d", "max_pooling1d", "average_pooling1d", "MaxPooling2D",
           "AveragePooling2D", "MaxPooling1D", "AveragePooling1D"]


def _pool(fn, default_name, inputs, pool_size, strides, padding, data_format, name):
    x = float_inputs(inputs, default_name)
    fmt = tf_format(data_format)
    with layer_scope(name, default_name, None):
        return fn(x, list(pair(pool_size, "pool_size")), list(pair(strides, "strides")), tf_padding(padding),
                  data_format=fmt)


def max_pooling2d(inputs, pool_size, strides, padding="valid", data_format="channels_last", name=None):
    """`tf.layers.max_pooling2d`."""
    return _pool(conv_ops.max_pool, "max_pooling2d", inputs, pool_size, strides, padding, data_format, name)


def average_pooling2d(inputs, pool_size, strides, padding="valid", data_format="channels_last", name=None):
    """`tf.layers.average_pooling2d`."""
    return _pool(conv_ops.avg_pool, "average_pooling2d", inputs, pool_size, strides, padding, data_format, name)


def _pool1d(fn, default_name, inputs, pool_size, strides, padding, data_format, name):
    x = float_inputs(inputs, default_name)
    with layer_scope(name, default_name, None):
        return fn(x, pool_size, strides, padding.upper(), data_format=fmt1d(data_format))


def max_pooling1d(inputs, pool_size, strides, padding="valid", data_format="channels_last", name=None):
    """`tf.layers.max_pooling1d`."""
    return _pool1d(conv_composite.max_pool1d, "max_pooling1d", inputs, pool_size, strides, padding, data_format, name)


def average_pooling1d(inputs, pool_size, strides, padding="valid", data_format="channels_last", name=None):
    """`tf.layers.average_pooling1d`."""
    return _pool1d(conv_composite.avg_pool1d, "average_pooling1d", inputs, pool_size, strides, padding, data_format,
                   name)


class MaxPooling2D(NoWeightsLayer):
    """`tf.layers.MaxPooling2D(pool_size, strides, padding='valid', data_format='channels_last')`."""
    _default_name = "max_pooling2d"
    _functional = staticmethod(max_pooling2d)


class AveragePooling2D(NoWeightsLayer):
    """`tf.layers.AveragePooling2D(pool_size, strides, padding='valid', data_format='channels_last')`."""
    _default_name = "average_pooling2d"
    _functional = staticmethod(average_pooling2d)


class MaxPooling1D(NoWeightsLayer):
    """`tf.layers.MaxPooling1D(pool_size, strides, padding='valid', data_format='channels_last')`."""
    _default_name = "max_pooling1d"
    _functional = staticmethod(max_pooling1d)


class AveragePooling1D(NoWeightsLayer):
    """`tf.layers.AveragePooling1D(pool_size, strides, padding='valid', data_format='channels_last')`."""
    _default_name = "average_pooling1d"
    _functional = staticmethod(average_pooling1d)
