"""Pooling `tf.keras.layers` (TF 1.15's keras/layers/pooling.py): MaxPooling1D/2D, AveragePooling1D/2D and the
global poolings GlobalMax/AveragePooling1D/2D/3D (with the `MaxPool2D`, ... aliases).

`strides=None` means `pool_size`. 1-D pooling runs as 2-D pooling over an expanded axis (TF's Pooling1D).
GlobalAveragePooling1D honours a mask (the mean over the unmasked steps), as TF 1.15's does.
"""
from __future__ import annotations

from ...ops import array_ops, math_ops, reduction_ops
from ...tensor_shape import TensorShape
from ..backend import conv as KC
from ..engine.base_layer import Layer
from ..engine.input_spec import InputSpec
from ..utils import conv_utils


class Pooling(Layer):
    """Max or average pooling over 1 or 2 spatial axes."""

    def __init__(self, rank, mode, pool_size, strides, padding="valid", data_format=None, name=None, **kwargs):
        super().__init__(name=name, **kwargs)
        if strides is None:
            strides = pool_size
        self.rank, self.mode = rank, mode
        self.pool_size = conv_utils.normalize_tuple(pool_size, rank, "pool_size")
        self.strides = conv_utils.normalize_tuple(strides, rank, "strides")
        self.padding = conv_utils.normalize_padding(padding)
        self.data_format = conv_utils.normalize_data_format(data_format)
        self.input_spec = InputSpec(ndim=rank + 2)

    def call(self, inputs):
        if self.rank == 2:
            return KC.pool2d(inputs, self.pool_size, self.strides, self.padding, self.data_format, self.mode)
        axis = 2 if self.data_format == "channels_first" else 1  # [batch, 1, steps, channels]
        x = array_ops.expand_dims(inputs, axis)
        out = KC.pool2d(x, (1, self.pool_size[0]), (1, self.strides[0]), self.padding, self.data_format, self.mode)
        return array_ops.squeeze(out, [axis])

    def compute_output_shape(self, input_shape):
        shape = TensorShape(input_shape).as_list()
        space = shape[2:] if self.data_format == "channels_first" else shape[1:-1]
        space = [conv_utils.conv_output_length(d, self.pool_size[i], self.padding, self.strides[i])
                 for i, d in enumerate(space)]
        if self.data_format == "channels_first":
            return TensorShape(shape[:2] + space)
        return TensorShape([shape[0]] + space + [shape[-1]])

    def get_config(self):
        config = {"pool_size": self.pool_size, "padding": self.padding, "strides": self.strides,
                  "data_format": self.data_format}
        return {**super().get_config(), **config}


class MaxPooling1D(Pooling):
    def __init__(self, pool_size=2, strides=None, padding="valid", data_format="channels_last", **kwargs):
        super().__init__(1, "max", pool_size, strides, padding, data_format, **kwargs)


class AveragePooling1D(Pooling):
    def __init__(self, pool_size=2, strides=None, padding="valid", data_format="channels_last", **kwargs):
        super().__init__(1, "avg", pool_size, strides, padding, data_format, **kwargs)


class MaxPooling2D(Pooling):
    def __init__(self, pool_size=(2, 2), strides=None, padding="valid", data_format=None, **kwargs):
        super().__init__(2, "max", pool_size, strides, padding, data_format, **kwargs)


class AveragePooling2D(Pooling):
    def __init__(self, pool_size=(2, 2), strides=None, padding="valid", data_format=None, **kwargs):
        super().__init__(2, "avg", pool_size, strides, padding, data_format, **kwargs)


class GlobalPooling(Layer):
    """Max or mean over every spatial axis: [batch, ..., channels] -> [batch, channels]."""

    def __init__(self, rank, mode, data_format=None, **kwargs):
        super().__init__(**kwargs)
        self.rank, self.mode = rank, mode
        self.data_format = conv_utils.normalize_data_format(data_format)
        self.input_spec = InputSpec(ndim=rank + 2)

    def _axes(self):
        first = 2 if self.data_format == "channels_first" else 1
        return list(range(first, first + self.rank))

    def call(self, inputs):
        if self.mode == "max":
            return reduction_ops.reduce_max(inputs, axis=self._axes())
        return reduction_ops.reduce_mean(inputs, axis=self._axes())

    def compute_output_shape(self, input_shape):
        shape = TensorShape(input_shape).as_list()
        return TensorShape([shape[0], shape[1] if self.data_format == "channels_first" else shape[-1]])

    def get_config(self):
        return {**super().get_config(), "data_format": self.data_format}


class GlobalAveragePooling1D(GlobalPooling):
    def __init__(self, data_format="channels_last", **kwargs):
        super().__init__(1, "avg", data_format, **kwargs)
        self.supports_masking = True

    def call(self, inputs, mask=None):
        if mask is None:
            return super().call(inputs)
        axis = self._axes()[0]
        mask = math_ops.cast(mask, inputs.dtype)
        mask = array_ops.expand_dims(mask, 2 if self.data_format == "channels_last" else 1)
        return reduction_ops.reduce_sum(inputs * mask, axis=axis) / reduction_ops.reduce_sum(mask, axis=axis)

    def compute_mask(self, inputs, mask=None):
        return None


class GlobalMaxPooling1D(GlobalPooling):
    def __init__(self, data_format="channels_last", **kwargs):
        super().__init__(1, "max", data_format, **kwargs)


class GlobalAveragePooling2D(GlobalPooling):
    def __init__(self, data_format=None, **kwargs):
        super().__init__(2, "avg", data_format, **kwargs)


class GlobalMaxPooling2D(GlobalPooling):
    def __init__(self, data_format=None, **kwargs):
        super().__init__(2, "max", data_format, **kwargs)


class GlobalAveragePooling3D(GlobalPooling):
    def __init__(self, data_format=None, **kwargs):
        super().__init__(3, "avg", data_format, **kwargs)


class GlobalMaxPooling3D(GlobalPooling):
    def __init__(self, data_format=None, **kwargs):
        super().__init__(3, "max", data_format, **kwargs)


MaxPool1D, MaxPool2D = MaxPooling1D, MaxPooling2D
AvgPool1D, AvgPool2D = AveragePooling1D, AveragePooling2D
GlobalAvgPool1D, GlobalAvgPool2D, GlobalAvgPool3D = GlobalAveragePooling1D, GlobalAveragePooling2D, \
    GlobalAveragePooling3D
GlobalMaxPool1D, GlobalMaxPool2D, GlobalMaxPool3D = GlobalMaxPooling1D, GlobalMaxPooling2D, GlobalMaxPooling3D
