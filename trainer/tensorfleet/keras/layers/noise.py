"""Regularising noise layers, active in training only (TF 1.15's keras/layers/noise.py and the spatial dropouts
of core.py): GaussianNoise, GaussianDropout, AlphaDropout, SpatialDropout1D/2D/3D.

Each builds `K.in_train_phase(noisy, inputs, training)`: a `tf.cond` on the learning phase, or a static choice
when `training` (or the phase) is a Python value. The spatial dropouts drop whole feature maps: Dropout with a
noise shape of 1 along the steps/rows/cols.
"""
from __future__ import annotations

import numpy as np

from ...ops import array_ops, comparison_ops, math_ops
from .. import backend as K
from ..engine.base_layer import Layer
from ..engine.input_spec import InputSpec
from ..utils import conv_utils
from .core import Dropout


class _Noise(Layer):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.supports_masking = True

    def compute_output_shape(self, input_shape):
        return input_shape


class GaussianNoise(_Noise):
    """Adds N(0, stddev^2) noise."""

    def __init__(self, stddev, **kwargs):
        super().__init__(**kwargs)
        self.stddev = stddev

    def call(self, inputs, training=None):
        def noised():
            return inputs + K.random_normal(array_ops.shape(inputs), mean=0.0, stddev=self.stddev,
                                            dtype=inputs.dtype)

        return K.in_train_phase(noised, inputs, training=training)

    def get_config(self):
        return {**super().get_config(), "stddev": self.stddev}


class GaussianDropout(_Noise):
    """Multiplies by N(1, rate / (1 - rate)) noise."""

    def __init__(self, rate, **kwargs):
        super().__init__(**kwargs)
        self.rate = rate

    def call(self, inputs, training=None):
        if 0 < self.rate < 1:
            def noised():
                return inputs * K.random_normal(array_ops.shape(inputs), mean=1.0,
                                                stddev=float(np.sqrt(self.rate / (1.0 - self.rate))),
                                                dtype=inputs.dtype)

            return K.in_train_phase(noised, inputs, training=training)
        return inputs

    def get_config(self):
        return {**super().get_config(), "rate": self.rate}


class AlphaDropout(_Noise):
    """Dropout keeping SELU's self-normalisation: dropped units are set to SELU's negative saturation and the
    result is affinely rescaled to keep the mean and variance."""

    def __init__(self, rate, noise_shape=None, seed=None, **kwargs):
        super().__init__(**kwargs)
        self.rate, self.noise_shape, self.seed = rate, noise_shape, seed

    def call(self, inputs, training=None):
        if not 0.0 < self.rate < 1.0:
            return inputs
        rate = self.rate

        def dropped_inputs():
            alpha, scale = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946
            alpha_p = -alpha * scale
            shape = array_ops.shape(inputs) if self.noise_shape is None else self.noise_shape
            kept = comparison_ops.greater_equal(K.random_uniform(shape, seed=self.seed), rate)
            kept = math_ops.cast(kept, inputs.dtype)
            a = ((1 - rate) * (1 + rate * alpha_p ** 2)) ** -0.5
            b = -a * alpha_p * rate
            return a * (inputs * kept + alpha_p * (1 - kept)) + b

        return K.in_train_phase(dropped_inputs, inputs, training=training)

    def get_config(self):
        return {**super().get_config(), "rate": self.rate, "noise_shape": self.noise_shape, "seed": self.seed}


class SpatialDropout1D(Dropout):
    """Drops entire 1-D feature maps: noise shape (batch, 1, channels)."""

    def __init__(self, rate, **kwargs):
        super().__init__(rate, **kwargs)
        self.input_spec = InputSpec(ndim=3)

    def _get_noise_shape(self, inputs):
        return (None, 1, None)


class SpatialDropout2D(Dropout):
    """Drops entire 2-D feature maps: noise shape (batch, 1, 1, channels) (channels_first: (batch, channels, 1, 1))."""

    def __init__(self, rate, data_format=None, **kwargs):
        super().__init__(rate, **kwargs)
        self.data_format = conv_utils.normalize_data_format(data_format)
        self.input_spec = InputSpec(ndim=4)

    def _get_noise_shape(self, inputs):
        return (None, None, 1, 1) if self.data_format == "channels_first" else (None, 1, 1, None)

    def get_config(self):
        return {**super().get_config(), "data_format": self.data_format}


class SpatialDropout3D(Dropout):
    """Drops entire 3-D feature maps."""

    def __init__(self, rate, data_format=None, **kwargs):
        super().__init__(rate, **kwargs)
        self.data_format = conv_utils.normalize_data_format(data_format)
        self.input_spec = InputSpec(ndim=5)

    def _get_noise_shape(self, inputs):
        return (None, None, 1, 1, 1) if self.data_format == "channels_first" else (None, 1, 1, 1, None)

    def get_config(self):
        return {**super().get_config(), "data_format": self.data_format}
