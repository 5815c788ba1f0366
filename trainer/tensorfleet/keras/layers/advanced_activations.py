"""Activation layers (TF 1.15's keras/layers/advanced_activations.py): LeakyReLU (alpha 0.3), PReLU (a learned
`alpha` per unit, `shared_axes`), ELU, ThresholdedReLU, ReLU (`max_value`, `negative_slope`, `threshold`) and
Softmax (`axis`)."""
from __future__ import annotations

from ...ops import comparison_ops, math_ops
from ...tensor_shape import TensorShape
from .. import backend as K
from .. import constraints, initializers, regularizers
from ..engine.base_layer import Layer
from ..engine.input_spec import InputSpec


class _Elementwise(Layer):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.supports_masking = True

    def compute_output_shape(self, input_shape):
        return input_shape


class LeakyReLU(_Elementwise):
    """x for x >= 0, alpha * x below."""

    def __init__(self, alpha=0.3, **kwargs):
        super().__init__(**kwargs)
        self.alpha = K.cast_to_floatx(alpha)

    def call(self, inputs):
        return K.relu(inputs, alpha=self.alpha)

    def get_config(self):
        return {**super().get_config(), "alpha": float(self.alpha)}


class PReLU(_Elementwise):
    """x for x >= 0, alpha * x below, with `alpha` a weight (one per unit, shared along `shared_axes`)."""

    def __init__(self, alpha_initializer="zeros", alpha_regularizer=None, alpha_constraint=None, shared_axes=None,
                 **kwargs):
        super().__init__(**kwargs)
        self.alpha_initializer = initializers.get(alpha_initializer)
        self.alpha_regularizer = regularizers.get(alpha_regularizer)
        self.alpha_constraint = constraints.get(alpha_constraint)
        if shared_axes is None:
            self.shared_axes = None
        elif not isinstance(shared_axes, (list, tuple)):
            self.shared_axes = [shared_axes]
        else:
            self.shared_axes = list(shared_axes)

    def build(self, input_shape):
        input_shape = TensorShape(input_shape).as_list()
        param_shape = list(input_shape[1:])
        if self.shared_axes is not None:
            for i in self.shared_axes:
                param_shape[i - 1] = 1
        self.alpha = self.add_weight("alpha", shape=param_shape, initializer=self.alpha_initializer,
                                     regularizer=self.alpha_regularizer, constraint=self.alpha_constraint)
        axes = {}
        if self.shared_axes:
            for i in range(1, len(input_shape)):
                if i not in self.shared_axes:
                    axes[i] = input_shape[i]
        self.input_spec = InputSpec(ndim=len(input_shape), axes=axes)
        self.built = True

    def call(self, inputs):
        return K.relu(inputs) + (-self.alpha.value()) * K.relu(-inputs)

    def get_config(self):
        return {**super().get_config(), "alpha_initializer": initializers.serialize(self.alpha_initializer),
                "alpha_regularizer": regularizers.serialize(self.alpha_regularizer),
                "alpha_constraint": constraints.serialize(self.alpha_constraint), "shared_axes": self.shared_axes}


class ELU(_Elementwise):
    """x for x > 0, alpha * (exp(x) - 1) below."""

    def __init__(self, alpha=1.0, **kwargs):
        super().__init__(**kwargs)
        self.alpha = K.cast_to_floatx(alpha)

    def call(self, inputs):
        return K.elu(inputs, self.alpha)

    def get_config(self):
        return {**super().get_config(), "alpha": float(self.alpha)}


class ThresholdedReLU(_Elementwise):
    """x for x > theta, else 0."""

    def __init__(self, theta=1.0, **kwargs):
        super().__init__(**kwargs)
        if theta is None or theta < 0:
            raise ValueError("Theta of a Thresholded ReLU layer cannot be None, requires a float. Got %s" % theta)
        self.theta = K.cast_to_floatx(theta)

    def call(self, inputs):
        return inputs * math_ops.cast(comparison_ops.greater(inputs, self.theta), inputs.dtype)

    def get_config(self):
        return {**super().get_config(), "theta": float(self.theta)}


class Softmax(_Elementwise):
    def __init__(self, axis=-1, **kwargs):
        super().__init__(**kwargs)
        self.axis = axis

    def call(self, inputs):
        return K.softmax(inputs, axis=self.axis)

    def get_config(self):
        return {**super().get_config(), "axis": self.axis}


class ReLU(_Elementwise):
    """min(max(x, 0), max_value), with slope `negative_slope` below `threshold`."""

    def __init__(self, max_value=None, negative_slope=0, threshold=0, **kwargs):
        super().__init__(**kwargs)
        if max_value is not None and max_value < 0.0:
            raise ValueError("max_value of Relu layer cannot be negative value: " + str(max_value))
        if negative_slope < 0.0:
            raise ValueError("negative_slope of Relu layer cannot be negative value: " + str(negative_slope))
        if max_value is not None:
            max_value = K.cast_to_floatx(max_value)
        self.max_value = max_value
        self.negative_slope = K.cast_to_floatx(negative_slope)
        self.threshold = K.cast_to_floatx(threshold)

    def call(self, inputs):
        return K.relu(inputs, alpha=self.negative_slope, max_value=self.max_value, threshold=self.threshold)

    def get_config(self):
        return {**super().get_config(), "max_value": self.max_value, "negative_slope": self.negative_slope,
                "threshold": self.threshold}
