"""Layers that pad, crop or upsample the spatial axes (TF 1.15's convolutional.py): ZeroPadding1D/2D,
Cropping1D/2D, UpSampling1D/2D.

Padding is zeros (`tf.pad`); cropping a slice; upsampling repeats each step/pixel (`interpolation='nearest'`, a
gather per axis) or interpolates bilinearly (TF 1.15's `resize_images` sampling).
"""
from __future__ import annotations

from ...tensor_shape import TensorShape
from ..backend import conv as KC
from ..engine.base_layer import Layer
from ..engine.input_spec import InputSpec
from ..utils import conv_utils


def _pair_of_pairs(value, name):
    """An int, 2 ints or 2 pairs -> ((a, b), (c, d)) (TF's argument forms for 2-D padding and cropping)."""
    if isinstance(value, int):
        return ((value, value), (value, value))
    if not hasattr(value, "__len__") or len(value) != 2:
        raise ValueError(f"`{name}` should have two elements. Found: {value}")
    if isinstance(value[0], int) and isinstance(value[1], int):
        return ((value[0], value[0]), (value[1], value[1]))
    return (conv_utils.normalize_tuple(value[0], 2, f"1st entry of {name}"),
            conv_utils.normalize_tuple(value[1], 2, f"2nd entry of {name}"))


def _add(d, extra):
    return None if d is None else d + extra


class ZeroPadding1D(Layer):
    """Pads the steps axis of [batch, steps, features] with zeros: `padding` int or (left, right)."""

    def __init__(self, padding=1, **kwargs):
        super().__init__(**kwargs)
        self.padding = conv_utils.normalize_tuple(padding, 2, "padding")
        self.input_spec = InputSpec(ndim=3)

    def compute_output_shape(self, input_shape):
        s = TensorShape(input_shape).as_list()
        return TensorShape([s[0], _add(s[1], sum(self.padding)), s[2]])

    def call(self, inputs):
        return KC.temporal_padding(inputs, padding=self.padding)

    def get_config(self):
        return {**super().get_config(), "padding": self.padding}


class ZeroPadding2D(Layer):
    """Pads rows and columns with zeros: `padding` int, (rows, cols) or ((top, bottom), (left, right))."""

    def __init__(self, padding=(1, 1), data_format=None, **kwargs):
        super().__init__(**kwargs)
        self.data_format = conv_utils.normalize_data_format(data_format)
        self.padding = _pair_of_pairs(padding, "padding")
        self.input_spec = InputSpec(ndim=4)

    def compute_output_shape(self, input_shape):
        s = TensorShape(input_shape).as_list()
        r, c = (2, 3) if self.data_format == "channels_first" else (1, 2)
        s[r], s[c] = _add(s[r], sum(self.padding[0])), _add(s[c], sum(self.padding[1]))
        return TensorShape(s)

    def call(self, inputs):
        return KC.spatial_2d_padding(inputs, padding=self.padding, data_format=self.data_format)

    def get_config(self):
        return {**super().get_config(), "padding": self.padding, "data_format": self.data_format}


class Cropping1D(Layer):
    """Crops (start, end) steps off the steps axis."""

    def __init__(self, cropping=(1, 1), **kwargs):
        super().__init__(**kwargs)
        self.cropping = conv_utils.normalize_tuple(cropping, 2, "cropping")
        self.input_spec = InputSpec(ndim=3)

    def compute_output_shape(self, input_shape):
        s = TensorShape(input_shape).as_list()
        return TensorShape([s[0], _add(s[1], -sum(self.cropping)), s[2]])

    def call(self, inputs):
        start, end = self.cropping
        return inputs[:, start:-end, :] if end else inputs[:, start:, :]

    def get_config(self):
        return {**super().get_config(), "cropping": self.cropping}


class Cropping2D(Layer):
    """Crops rows and columns: `cropping` int, (rows, cols) or ((top, bottom), (left, right))."""

    def __init__(self, cropping=((0, 0), (0, 0)), data_format=None, **kwargs):
        super().__init__(**kwargs)
        self.data_format = conv_utils.normalize_data_format(data_format)
        self.cropping = _pair_of_pairs(cropping, "cropping")
        self.input_spec = InputSpec(ndim=4)

    def compute_output_shape(self, input_shape):
        s = TensorShape(input_shape).as_list()
        r, c = (2, 3) if self.data_format == "channels_first" else (1, 2)
        s[r], s[c] = _add(s[r], -sum(self.cropping[0])), _add(s[c], -sum(self.cropping[1]))
        return TensorShape(s)

    def call(self, inputs):
        (top, bottom), (left, right) = self.cropping
        rows, cols = slice(top, -bottom if bottom else None), slice(left, -right if right else None)
        if self.data_format == "channels_first":
            return inputs[:, :, rows, cols]
        return inputs[:, rows, cols, :]

    def get_config(self):
        return {**super().get_config(), "cropping": self.cropping, "data_format": self.data_format}


class UpSampling1D(Layer):
    """Repeats each step `size` times."""

    def __init__(self, size=2, **kwargs):
        super().__init__(**kwargs)
        self.size = int(size)
        self.input_spec = InputSpec(ndim=3)

    def compute_output_shape(self, input_shape):
        s = TensorShape(input_shape).as_list()
        return TensorShape([s[0], None if s[1] is None else s[1] * self.size, s[2]])

    def call(self, inputs):
        return KC.repeat_axis(inputs, self.size, 1, inputs.shape.as_list()[1])

    def get_config(self):
        return {**super().get_config(), "size": self.size}


class UpSampling2D(Layer):
    """Upsamples rows and columns by `size` (nearest: each pixel repeated; or bilinear)."""

    def __init__(self, size=(2, 2), data_format=None, interpolation="nearest", **kwargs):
        super().__init__(**kwargs)
        self.data_format = conv_utils.normalize_data_format(data_format)
        self.size = conv_utils.normalize_tuple(size, 2, "size")
        if interpolation not in {"nearest", "bilinear"}:
            raise ValueError("`interpolation` argument should be one of `\"nearest\"` or `\"bilinear\"`.")
        self.interpolation = interpolation
        self.input_spec = InputSpec(ndim=4)

    def compute_output_shape(self, input_shape):
        s = TensorShape(input_shape).as_list()
        r, c = (2, 3) if self.data_format == "channels_first" else (1, 2)
        s[r] = None if s[r] is None else s[r] * self.size[0]
        s[c] = None if s[c] is None else s[c] * self.size[1]
        return TensorShape(s)

    def call(self, inputs):
        return KC.resize_images(inputs, self.size[0], self.size[1], self.data_format, self.interpolation)

    def get_config(self):
        return {**super().get_config(), "size": self.size, "data_format": self.data_format,
                "interpolation": self.interpolation}
