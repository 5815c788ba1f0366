"""Convolutional `tf.keras.layers` (TF 1.15's keras/layers/convolutional.py): Conv1D, Conv2D, Conv2DTranspose,
SeparableConv1D, SeparableConv2D, DepthwiseConv2D (and the `Convolution*` aliases).

Weights as TF 1.15 names and shapes them: `kernel` [*kernel_size, in, filters] (Conv2DTranspose: [kh, kw,
filters, in]), `bias` [filters]; separable: `depthwise_kernel` [*kernel_size, in, depth_multiplier],
`pointwise_kernel` [1.., in * depth_multiplier, filters]. The computation is the backend's (`backend/conv.py`):
channels_first inputs are transposed around channels_last ops; Conv1D's 'causal' padding is TF's left padding.
"""
from __future__ import annotations

from ...ops import array_ops, join_ops, nn_impl
from ...tensor_shape import TensorShape
from .. import regularizers
from ..backend import conv as KC
from ..engine.base_layer import Layer
from ..engine.input_spec import InputSpec
from ..utils import conv_utils
from .weight_args import set_weight_args, weight_args_config


class Conv(Layer):
    """The N-D convolution layer (rank 1 or 2): `activation(conv(inputs, kernel) + bias)`."""

    def __init__(self, rank, filters, kernel_size, strides=1, padding="valid", data_format=None, dilation_rate=1,
                 activation=None, use_bias=True, kernel_initializer="glorot_uniform", bias_initializer="zeros",
                 kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None, kernel_constraint=None,
                 bias_constraint=None, trainable=True, name=None, **kwargs):
        super().__init__(trainable=trainable, name=name, activity_regularizer=regularizers.get(activity_regularizer),
                         **kwargs)
        self.rank = rank
        if filters is not None and not isinstance(filters, int):
            filters = int(filters)
        self.filters = filters
        self.kernel_size = conv_utils.normalize_tuple(kernel_size, rank, "kernel_size")
        self.strides = conv_utils.normalize_tuple(strides, rank, "strides")
        self.padding = conv_utils.normalize_padding(padding)
        if self.padding == "causal" and not isinstance(self, (Conv1D, SeparableConv1D)):
            raise ValueError("Causal padding is only supported for `Conv1D` and ``SeparableConv1D`.")
        self.data_format = conv_utils.normalize_data_format(data_format)
        self.dilation_rate = conv_utils.normalize_tuple(dilation_rate, rank, "dilation_rate")
        self.use_bias = use_bias
        set_weight_args(self, activation=activation, kernel_initializer=kernel_initializer,
                        bias_initializer=bias_initializer, kernel_regularizer=kernel_regularizer,
                        bias_regularizer=bias_regularizer, kernel_constraint=kernel_constraint,
                        bias_constraint=bias_constraint)
        self.input_spec = InputSpec(ndim=self.rank + 2)

    def _channel_axis(self):
        return 1 if self.data_format == "channels_first" else -1

    def _input_dim(self, input_shape):
        input_shape = TensorShape(input_shape)
        if input_shape.ndims is None or input_shape[self._channel_axis()] is None:
            raise ValueError("The channel dimension of the inputs should be defined. Found `None`.")
        return int(input_shape[self._channel_axis()])

    def _add_bias(self, filters):
        self.bias = None
        if self.use_bias:
            self.bias = self.add_weight("bias", shape=(filters,), initializer=self.bias_initializer,
                                        regularizer=self.bias_regularizer, constraint=self.bias_constraint,
                                        trainable=True, dtype=self.dtype)

    def build(self, input_shape):
        input_dim = self._input_dim(input_shape)
        self.kernel = self.add_weight("kernel", shape=self.kernel_size + (input_dim, self.filters),
                                      initializer=self.kernel_initializer, regularizer=self.kernel_regularizer,
                                      constraint=self.kernel_constraint, trainable=True, dtype=self.dtype)
        self._add_bias(self.filters)
        self.input_spec = InputSpec(ndim=self.rank + 2, axes={self._channel_axis(): input_dim})
        self.built = True

    def _convolve(self, inputs):
        if self.rank == 1:
            return KC.conv1d(inputs, self.kernel, self.strides[0], self.padding, self.data_format,
                             self.dilation_rate[0])
        return KC.conv2d(inputs, self.kernel, self.strides, self.padding, self.data_format, self.dilation_rate)

    def _finish(self, outputs):
        if self.bias is not None:
            if self.data_format == "channels_first" and self.rank == 1:
                outputs = outputs + array_ops.reshape(self.bias, (1, -1, 1))
            else:
                outputs = nn_impl.bias_add(outputs, self.bias,
                                              data_format="NCHW" if self.data_format == "channels_first" else "NHWC")
        return self.activation(outputs) if self.activation is not None else outputs

    def call(self, inputs):
        return self._finish(self._convolve(inputs))

    def _spatial_output(self, space):
        return [conv_utils.conv_output_length(d, self.kernel_size[i], self.padding, self.strides[i],
                                              self.dilation_rate[i]) for i, d in enumerate(space)]

    def _out_channels(self, input_shape):
        return self.filters

    def compute_output_shape(self, input_shape):
        shape = TensorShape(input_shape).as_list()
        channels = self._out_channels(input_shape)
        if self.data_format == "channels_last":
            return TensorShape([shape[0]] + self._spatial_output(shape[1:-1]) + [channels])
        return TensorShape([shape[0], channels] + self._spatial_output(shape[2:]))

    def get_config(self):
        config = {"filters": self.filters, "kernel_size": self.kernel_size, "strides": self.strides,
                  "padding": self.padding, "data_format": self.data_format, "dilation_rate": self.dilation_rate,
                  "use_bias": self.use_bias}
        config.update(weight_args_config(self, ["activation", "kernel_initializer", "bias_initializer",
                                         "kernel_regularizer", "bias_regularizer", "activity_regularizer",
                                         "kernel_constraint", "bias_constraint"]))
        return {**super().get_config(), **config}


class Conv1D(Conv):
    """1-D convolution over [batch, steps, channels] (or channels_first); padding 'valid', 'same' or 'causal'."""

    def __init__(self, filters, kernel_size, strides=1, padding="valid", data_format="channels_last",
                 dilation_rate=1, activation=None, use_bias=True, kernel_initializer="glorot_uniform",
                 bias_initializer="zeros", kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 kernel_constraint=None, bias_constraint=None, **kwargs):
        super().__init__(1, filters, kernel_size, strides, padding, data_format, dilation_rate, activation, use_bias,
                         kernel_initializer, bias_initializer, kernel_regularizer, bias_regularizer,
                         activity_regularizer, kernel_constraint, bias_constraint, **kwargs)


class Conv2D(Conv):
    """2-D convolution over [batch, rows, cols, channels] (or channels_first)."""

    def __init__(self, filters, kernel_size, strides=(1, 1), padding="valid", data_format=None,
                 dilation_rate=(1, 1), activation=None, use_bias=True, kernel_initializer="glorot_uniform",
                 bias_initializer="zeros", kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 kernel_constraint=None, bias_constraint=None, **kwargs):
        super().__init__(2, filters, kernel_size, strides, padding, data_format, dilation_rate, activation, use_bias,
                         kernel_initializer, bias_initializer, kernel_regularizer, bias_regularizer,
                         activity_regularizer, kernel_constraint, bias_constraint, **kwargs)


class Conv2DTranspose(Conv2D):
    """Transposed 2-D convolution (the gradient of a Conv2D with respect to its input); kernel [kh, kw, filters,
    in]; output size per axis `conv_utils.deconv_output_length` (with `output_padding`)."""

    def __init__(self, filters, kernel_size, strides=(1, 1), padding="valid", output_padding=None, data_format=None,
                 dilation_rate=(1, 1), activation=None, use_bias=True, kernel_initializer="glorot_uniform",
                 bias_initializer="zeros", kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 kernel_constraint=None, bias_constraint=None, **kwargs):
        super().__init__(filters, kernel_size, strides, padding, data_format, dilation_rate, activation, use_bias,
                         kernel_initializer, bias_initializer, kernel_regularizer, bias_regularizer,
                         activity_regularizer, kernel_constraint, bias_constraint, **kwargs)
        self.output_padding = output_padding
        if output_padding is not None:
            self.output_padding = conv_utils.normalize_tuple(output_padding, 2, "output_padding")
            for stride, out_pad in zip(self.strides, self.output_padding):
                if out_pad >= stride:
                    raise ValueError(f"Stride {self.strides} must be greater than output padding "
                                     f"{self.output_padding}")

    def build(self, input_shape):
        input_shape = TensorShape(input_shape)
        if input_shape.ndims != 4:
            raise ValueError(f"Inputs should have rank 4. Received input shape: {input_shape}")
        input_dim = self._input_dim(input_shape)
        self.input_spec = InputSpec(ndim=4, axes={self._channel_axis(): input_dim})
        self.kernel = self.add_weight("kernel", shape=self.kernel_size + (self.filters, input_dim),
                                      initializer=self.kernel_initializer, regularizer=self.kernel_regularizer,
                                      constraint=self.kernel_constraint, trainable=True, dtype=self.dtype)
        self._add_bias(self.filters)
        self.built = True

    def _lengths(self, sizes):
        pads = self.output_padding or (None, None)
        return [conv_utils.deconv_output_length(s, self.kernel_size[i], self.padding, pads[i], self.strides[i],
                                                self.dilation_rate[i]) for i, s in enumerate(sizes)]

    def call(self, inputs):
        h_axis, w_axis = (2, 3) if self.data_format == "channels_first" else (1, 2)
        static, dyn = inputs.shape.as_list(), array_ops.shape(inputs)
        sizes = [static[a] if static[a] is not None else dyn[a] for a in (h_axis, w_axis)]
        out_h, out_w = self._lengths(sizes)
        batch = dyn[0]
        parts = [batch, self.filters, out_h, out_w] if self.data_format == "channels_first" else \
            [batch, out_h, out_w, self.filters]
        outputs = KC.conv2d_transpose(inputs, self.kernel, join_ops.stack(parts), self.strides, self.padding,
                                      self.data_format, self.dilation_rate)
        outputs.set_shape(self.compute_output_shape(inputs.shape))
        return self._finish(outputs)

    def compute_output_shape(self, input_shape):
        shape = TensorShape(input_shape).as_list()
        if self.data_format == "channels_first":
            return TensorShape([shape[0], self.filters] + self._lengths(shape[2:]))
        return TensorShape([shape[0]] + self._lengths(shape[1:3]) + [self.filters])

    def get_config(self):
        return {**super().get_config(), "output_padding": self.output_padding}


class SeparableConv(Conv):
    """A depthwise convolution (per input channel, `depth_multiplier` filters each) then a pointwise (1x1)
    convolution mixing channels."""

    def __init__(self, rank, filters, kernel_size, strides=1, padding="valid", data_format=None, dilation_rate=1,
                 depth_multiplier=1, activation=None, use_bias=True, depthwise_initializer="glorot_uniform",
                 pointwise_initializer="glorot_uniform", bias_initializer="zeros", depthwise_regularizer=None,
                 pointwise_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 depthwise_constraint=None, pointwise_constraint=None, bias_constraint=None, trainable=True,
                 name=None, **kwargs):
        super().__init__(rank, filters, kernel_size, strides, padding, data_format, dilation_rate, activation,
                         use_bias, bias_initializer=bias_initializer, bias_regularizer=bias_regularizer,
                         activity_regularizer=activity_regularizer, bias_constraint=bias_constraint,
                         trainable=trainable, name=name, **kwargs)
        self.depth_multiplier = depth_multiplier
        set_weight_args(self, depthwise_initializer=depthwise_initializer, pointwise_initializer=pointwise_initializer,
                        depthwise_regularizer=depthwise_regularizer, pointwise_regularizer=pointwise_regularizer,
                        depthwise_constraint=depthwise_constraint, pointwise_constraint=pointwise_constraint)

    def build(self, input_shape):
        input_dim = self._input_dim(input_shape)
        self.input_spec = InputSpec(ndim=self.rank + 2, axes={self._channel_axis(): input_dim})
        self.depthwise_kernel = self.add_weight(
            "depthwise_kernel", shape=self.kernel_size + (input_dim, self.depth_multiplier),
            initializer=self.depthwise_initializer, regularizer=self.depthwise_regularizer,
            constraint=self.depthwise_constraint, trainable=True, dtype=self.dtype)
        self.pointwise_kernel = self.add_weight(
            "pointwise_kernel", shape=(1,) * self.rank + (self.depth_multiplier * input_dim, self.filters),
            initializer=self.pointwise_initializer, regularizer=self.pointwise_regularizer,
            constraint=self.pointwise_constraint, trainable=True, dtype=self.dtype)
        self._add_bias(self.filters)
        self.built = True

    def _convolve(self, inputs):
        if self.rank == 2:
            return KC.separable_conv2d(inputs, self.depthwise_kernel, self.pointwise_kernel, self.strides,
                                       self.padding, self.data_format, self.dilation_rate)
        # 1-D: as TF, a 2-D separable convolution over [batch, 1, steps, channels]
        padding = self.padding
        if padding == "causal":
            inputs = KC.temporal_padding(KC._to_last(inputs, self.data_format),
                                         (self.dilation_rate[0] * (self.kernel_size[0] - 1), 0))
            inputs, padding = KC._to_first(inputs, self.data_format), "valid"
        axis = 2 if self.data_format == "channels_first" else 1
        x = array_ops.expand_dims(inputs, axis)
        out = KC.separable_conv2d(x, array_ops.expand_dims(self.depthwise_kernel, 0),
                                  array_ops.expand_dims(self.pointwise_kernel, 0), (1, self.strides[0]), padding,
                                  self.data_format, (1, self.dilation_rate[0]))
        return array_ops.squeeze(out, [axis])

    def get_config(self):
        config = super().get_config()
        for n in ("kernel_initializer", "kernel_regularizer", "kernel_constraint"):
            config.pop(n)
        config["depth_multiplier"] = self.depth_multiplier
        config.update(weight_args_config(self, ["depthwise_initializer", "pointwise_initializer",
                                                "depthwise_regularizer", "pointwise_regularizer",
                                                "depthwise_constraint", "pointwise_constraint"]))
        return config


class SeparableConv1D(SeparableConv):
    def __init__(self, filters, kernel_size, strides=1, padding="valid", data_format=None, dilation_rate=1,
                 depth_multiplier=1, **kwargs):
        super().__init__(1, filters, kernel_size, strides, padding, data_format, dilation_rate, depth_multiplier,
                         **kwargs)


class SeparableConv2D(SeparableConv):
    def __init__(self, filters, kernel_size, strides=(1, 1), padding="valid", data_format=None,
                 dilation_rate=(1, 1), depth_multiplier=1, **kwargs):
        super().__init__(2, filters, kernel_size, strides, padding, data_format, dilation_rate, depth_multiplier,
                         **kwargs)


class DepthwiseConv2D(Conv2D):
    """Each input channel convolved with its own `depth_multiplier` filters (no mixing of channels)."""

    def __init__(self, kernel_size, strides=(1, 1), padding="valid", depth_multiplier=1, data_format=None,
                 activation=None, use_bias=True, depthwise_initializer="glorot_uniform", bias_initializer="zeros",
                 depthwise_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 depthwise_constraint=None, bias_constraint=None, **kwargs):
        super().__init__(None, kernel_size, strides=strides, padding=padding, data_format=data_format,
                         activation=activation, use_bias=use_bias, bias_regularizer=bias_regularizer,
                         activity_regularizer=activity_regularizer, bias_constraint=bias_constraint, **kwargs)
        self.depth_multiplier = depth_multiplier
        set_weight_args(self, depthwise_initializer=depthwise_initializer, bias_initializer=bias_initializer,
                        depthwise_regularizer=depthwise_regularizer, depthwise_constraint=depthwise_constraint)

    def build(self, input_shape):
        TensorShape(input_shape).with_rank(4)
        input_dim = self._input_dim(input_shape)
        self.depthwise_kernel = self.add_weight(
            "depthwise_kernel", shape=self.kernel_size + (input_dim, self.depth_multiplier),
            initializer=self.depthwise_initializer, regularizer=self.depthwise_regularizer,
            constraint=self.depthwise_constraint, trainable=True, dtype=self.dtype)
        self._add_bias(input_dim * self.depth_multiplier)
        self.input_spec = InputSpec(ndim=4, axes={self._channel_axis(): input_dim})
        self.built = True

    def _convolve(self, inputs):
        return KC.depthwise_conv2d(inputs, self.depthwise_kernel, self.strides, self.padding, self.data_format,
                                   self.dilation_rate)

    def _out_channels(self, input_shape):
        channels = TensorShape(input_shape)[self._channel_axis()]
        return None if channels is None else channels * self.depth_multiplier

    def get_config(self):
        config = super().get_config()
        for n in ("filters", "kernel_initializer", "kernel_regularizer", "kernel_constraint"):
            config.pop(n)
        config["depth_multiplier"] = self.depth_multiplier
        config.update(weight_args_config(self, ["depthwise_initializer", "depthwise_regularizer",
                                                "depthwise_constraint"]))
        return config


Convolution1D = Conv1D
Convolution2D = Conv2D
Convolution2DTranspose = Conv2DTranspose
SeparableConvolution1D = SeparableConv1D
SeparableConvolution2D = SeparableConv2D
