"""Core `tf.keras.layers` (TF 1.15's keras/layers/core.py): Dense, Activation, Dropout, Flatten, Reshape,
Permute, RepeatVector, Lambda, ActivityRegularization, Masking.

Dense: `kernel` [in, units] (glorot_uniform) and `bias` [units] (zeros); rank-2 inputs are one MatMul +
BiasAdd, higher ranks a tensordot over the last axis. Dropout: `training` None reads the learning phase;
static when it is set to 0/1, else a `tf.cond` on the placeholder, as TF (the cond's gradient reuses the
forward mask, docs/control-flow.md). Lambda: configs
of named functions serialise by name; a lambda's bytecode is written as Keras writes it, but never loaded
back (docs/keras.md).
"""
from __future__ import annotations

import codecs
import marshal

import numpy as np

from ... import dtypes as _dtypes
from ...graph import Graph
from ...ops import array_ops, join_ops, linalg_ops, math_ops, nn_impl
from ...ops.functional_ops import nest_flatten, nest_pack
from ...tensor_shape import TensorShape
from .. import activations, constraints, initializers, regularizers
from .. import backend as K
from ..backend.nn import smart_cond
from ..engine.base_layer import Layer
from ..engine.input_spec import InputSpec
from ..utils.conv_utils import normalize_data_format
from ..utils.generic_utils import has_arg


class Dense(Layer):
    """`activation(inputs @ kernel + bias)`."""

    def __init__(self, units, activation=None, use_bias=True, kernel_initializer="glorot_uniform",
                 bias_initializer="zeros", kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 kernel_constraint=None, bias_constraint=None, **kwargs):
        if "input_shape" not in kwargs and "input_dim" in kwargs:
            kwargs["input_shape"] = (kwargs.pop("input_dim"),)
        super().__init__(activity_regularizer=regularizers.get(activity_regularizer), **kwargs)
        self.units = int(units)
        self.activation = activations.get(activation)
        self.use_bias = use_bias
        self.kernel_initializer = initializers.get(kernel_initializer)
        self.bias_initializer = initializers.get(bias_initializer)
        self.kernel_regularizer = regularizers.get(kernel_regularizer)
        self.bias_regularizer = regularizers.get(bias_regularizer)
        self.kernel_constraint = constraints.get(kernel_constraint)
        self.bias_constraint = constraints.get(bias_constraint)
        self.supports_masking = True
        self.input_spec = InputSpec(min_ndim=2)

    def build(self, input_shape):
        dtype = _dtypes.as_dtype(self.dtype or K.floatx())
        if not dtype.is_floating:
            raise TypeError(f"Unable to build `Dense` layer with non-floating point dtype {dtype.name}")
        input_shape = TensorShape(input_shape)
        last_dim = input_shape[-1] if input_shape.ndims else None
        if last_dim is None:
            raise ValueError("The last dimension of the inputs to `Dense` should be defined. Found `None`.")
        self.input_spec = InputSpec(min_ndim=2, axes={-1: last_dim})
        self.kernel = self.add_weight("kernel", shape=[last_dim, self.units], initializer=self.kernel_initializer,
                                      regularizer=self.kernel_regularizer, constraint=self.kernel_constraint,
                                      dtype=self.dtype, trainable=True)
        self.bias = None
        if self.use_bias:
            self.bias = self.add_weight("bias", shape=[self.units], initializer=self.bias_initializer,
                                        regularizer=self.bias_regularizer, constraint=self.bias_constraint,
                                        dtype=self.dtype, trainable=True)
        self.built = True

    def call(self, inputs):
        rank = inputs.shape.ndims
        if rank is not None and rank > 2:
            outputs = linalg_ops.tensordot(inputs, self.kernel, [[rank - 1], [0]])
            outputs.set_shape(inputs.shape.as_list()[:-1] + [self.units])
        else:
            if inputs.dtype != self.kernel.dtype:
                inputs = math_ops.cast(inputs, self.kernel.dtype)
            outputs = math_ops.matmul(inputs, self.kernel)
        if self.use_bias:
            outputs = nn_impl.bias_add(outputs, self.bias)
        if self.activation is not None:
            return self.activation(outputs)
        return outputs

    def compute_output_shape(self, input_shape):
        input_shape = TensorShape(input_shape)
        if input_shape.ndims is not None and input_shape.ndims < 2:
            raise ValueError(f"Shape {input_shape} must have rank at least 2")
        if input_shape[-1] is None:
            raise ValueError(f"The innermost dimension of input_shape must be defined, but saw: {input_shape}")
        return input_shape[:-1].concatenate([self.units])

    def get_config(self):
        config = {"units": self.units, "activation": activations.serialize(self.activation), "use_bias": self.use_bias,
                  "kernel_initializer": initializers.serialize(self.kernel_initializer),
                  "bias_initializer": initializers.serialize(self.bias_initializer),
                  "kernel_regularizer": regularizers.serialize(self.kernel_regularizer),
                  "bias_regularizer": regularizers.serialize(self.bias_regularizer),
                  "activity_regularizer": regularizers.serialize(self.activity_regularizer),
                  "kernel_constraint": constraints.serialize(self.kernel_constraint),
                  "bias_constraint": constraints.serialize(self.bias_constraint)}
        return {**super().get_config(), **config}


class Activation(Layer):
    def __init__(self, activation, **kwargs):
        super().__init__(**kwargs)
        self.supports_masking = True
        self.activation = activations.get(activation)

    def call(self, inputs):
        return self.activation(inputs)

    def compute_output_shape(self, input_shape):
        return input_shape

    def get_config(self):
        return {**super().get_config(), "activation": activations.serialize(self.activation)}


class Dropout(Layer):
    """Drops inputs with probability `rate` (scaling the rest by 1 / (1 - rate)) in training only."""

    def __init__(self, rate, noise_shape=None, seed=None, **kwargs):
        super().__init__(**kwargs)
        self.rate = rate
        self.noise_shape = noise_shape
        self.seed = seed
        self.supports_masking = True

    def _get_noise_shape(self, inputs):
        return None if self.noise_shape is None else tuple(self.noise_shape)  # None entries: the inputs' dims

    def call(self, inputs, training=None):
        if training is None:
            training = K.learning_phase()

        def dropped_inputs():
            return nn_impl.dropout(inputs, noise_shape=self._get_noise_shape(inputs), seed=self.seed, rate=self.rate)

        return smart_cond(training, dropped_inputs, lambda: array_ops.identity(inputs))

    def compute_output_shape(self, input_shape):
        return input_shape

    def get_config(self):
        return {**super().get_config(), "rate": self.rate, "noise_shape": self.noise_shape, "seed": self.seed}


class Flatten(Layer):
    """[batch, ...] -> [batch, prod(...)]; channels_first inputs are flattened in channels_last order."""

    def __init__(self, data_format=None, **kwargs):
        super().__init__(**kwargs)
        self.data_format = normalize_data_format(data_format)
        self.input_spec = InputSpec(min_ndim=1)

    def call(self, inputs):
        ndim = inputs.shape.ndims
        if self.data_format == "channels_first" and ndim is not None and ndim > 1:
            inputs = array_ops.transpose(inputs, perm=[0] + list(range(2, ndim)) + [1])
        batch = inputs.shape[0] if inputs.shape.ndims else None
        if batch is None:
            batch = array_ops.shape(inputs)[0]
            outputs = array_ops.reshape(inputs, join_ops.stack([batch, -1]))
        else:
            outputs = array_ops.reshape(inputs, [batch, -1])
        outputs.set_shape(self.compute_output_shape(inputs.shape))
        return outputs

    def compute_output_shape(self, input_shape):
        input_shape = TensorShape(input_shape).as_list()
        if not input_shape:
            return TensorShape([1])
        rest = input_shape[1:]
        return TensorShape([input_shape[0], int(np.prod(rest)) if all(rest) else None])

    def get_config(self):
        return {**super().get_config(), "data_format": self.data_format}


class Reshape(Layer):
    """Reshapes to (batch,) + target_shape (one entry may be -1)."""

    def __init__(self, target_shape, **kwargs):
        super().__init__(**kwargs)
        self.target_shape = tuple(target_shape)

    def _fix_unknown_dimension(self, input_shape, output_shape):
        output_shape = list(output_shape)
        msg = "total size of new array must be unchanged"
        known, unknown = 1, None
        for index, dim in enumerate(output_shape):
            if dim < 0:
                if unknown is not None:
                    raise ValueError("Can only specify one unknown dimension.")
                unknown = index
            else:
                known *= dim
        original = int(np.prod(input_shape, dtype=int))
        if unknown is not None:
            if known == 0 or original % known != 0:
                raise ValueError(msg)
            output_shape[unknown] = original // known
        elif original != known:
            raise ValueError(msg)
        return output_shape

    def compute_output_shape(self, input_shape):
        input_shape = TensorShape(input_shape).as_list()
        if None in input_shape[1:]:
            return TensorShape([input_shape[0]] + [s if s != -1 else None for s in self.target_shape])
        return TensorShape([input_shape[0]] + self._fix_unknown_dimension(input_shape[1:], self.target_shape))

    def call(self, inputs):
        shape = join_ops.stack([array_ops.shape(inputs)[0]] + [int(d) for d in self.target_shape])
        outputs = array_ops.reshape(inputs, shape)
        outputs.set_shape(self.compute_output_shape(inputs.shape))
        return outputs

    def get_config(self):
        return {**super().get_config(), "target_shape": self.target_shape}


class Permute(Layer):
    """Permutes the non-batch axes: `dims` is a permutation of 1..ndim-1."""

    def __init__(self, dims, **kwargs):
        super().__init__(**kwargs)
        self.dims = tuple(dims)
        if sorted(dims) != list(range(1, len(dims) + 1)):
            raise ValueError(f"Invalid permutation `dims` for Permute Layer: {dims}. The set of indices in `dims` must "
                             f"be consecutive and start from 1.")
        self.input_spec = InputSpec(ndim=len(self.dims) + 1)

    def compute_output_shape(self, input_shape):
        input_shape = TensorShape(input_shape).as_list()
        out = list(input_shape)
        for i, dim in enumerate(self.dims):
            out[i + 1] = input_shape[dim]
        return TensorShape(out)

    def call(self, inputs):
        return array_ops.transpose(inputs, perm=(0,) + self.dims)

    def get_config(self):
        return {**super().get_config(), "dims": self.dims}


class RepeatVector(Layer):
    """[batch, features] -> [batch, n, features]."""

    def __init__(self, n, **kwargs):
        super().__init__(**kwargs)
        self.n = n
        self.input_spec = InputSpec(ndim=2)

    def compute_output_shape(self, input_shape):
        input_shape = TensorShape(input_shape).as_list()
        return TensorShape([input_shape[0], self.n, input_shape[1]])

    def call(self, inputs):
        return K.repeat(inputs, self.n)

    def get_config(self):
        return {**super().get_config(), "n": self.n}


class Lambda(Layer):
    """Wraps `function(inputs, **arguments)` (also given `mask`/`training` when it accepts them)."""

    def __init__(self, function, output_shape=None, mask=None, arguments=None, **kwargs):
        super().__init__(**kwargs)
        self.function = function
        self.arguments = arguments if arguments else {}
        if mask is not None:
            self.supports_masking = True
        self.mask = mask
        self._output_shape = output_shape

    def call(self, inputs, mask=None, training=None):
        arguments = dict(self.arguments)
        if has_arg(self.function, "mask"):
            arguments["mask"] = mask
        if has_arg(self.function, "training"):
            arguments["training"] = training
        return self.function(inputs, **arguments)

    def compute_mask(self, inputs, mask=None):
        if callable(self.mask):
            return self.mask(inputs, mask)
        return self.mask

    def compute_output_shape(self, input_shape):
        if self._output_shape is None:  # infer it by tracing the function on placeholders in a scratch graph
            with Graph().as_default():
                def ph(shape):
                    return array_ops.placeholder(_dtypes.as_dtype(self.dtype or K.floatx()), shape=shape)
                shapes = input_shape if isinstance(input_shape, list) else None
                x = [ph(s) for s in shapes] if shapes is not None else ph(input_shape)
                out = self.function(x, **self.arguments)
                return nest_pack(out, [t.shape for t in nest_flatten(out)])
        if callable(self._output_shape):
            return self._output_shape(input_shape)
        first = TensorShape(input_shape[0] if isinstance(input_shape, list) else input_shape)
        batch = first[0] if first.ndims else None
        return TensorShape([batch] + list(self._output_shape))

    def get_config(self):
        config = {"arguments": self.arguments}
        config.update(_serialize_function(self.function, "function", "function_type", "module"))
        if callable(self._output_shape):
            config.update(_serialize_function(self._output_shape, "output_shape", "output_shape_type",
                                              "output_shape_module"))
        else:
            config.update({"output_shape": self._output_shape, "output_shape_type": "raw",
                           "output_shape_module": None})
        return {**super().get_config(), **config}

    @classmethod
    def from_config(cls, config, custom_objects=None):
        from ..utils.generic_utils import get_custom_objects
        config = dict(config)
        objects = {**get_custom_objects(), **(custom_objects or {})}
        for key, type_key in (("function", "function_type"), ("output_shape", "output_shape_type")):
            kind = config.pop(type_key, "raw")
            config.pop("module" if key == "function" else "output_shape_module", None)
            if kind == "lambda":
                raise ValueError(f"Lambda layer {config.get('name')}: its {key} is serialized Python bytecode; "
                                 f"tensorfleet never loads code from a config. Define the function in your program "
                                 f"and pass it in `custom_objects`.")
            if kind == "function":
                if config[key] not in objects:
                    raise ValueError(f"Unknown {key}: {config[key]} (pass it in `custom_objects`)")
                config[key] = objects[config[key]]
        return cls(**config)


def _serialize_function(fn, key, type_key, module_key):
    if getattr(fn, "__name__", "<lambda>") == "<lambda>":
        raw = marshal.dumps(fn.__code__)
        code = codecs.encode(raw, "base64").decode("ascii")
        return {key: (code, fn.__defaults__, None), type_key: "lambda", module_key: fn.__module__}
    return {key: fn.__name__, type_key: "function", module_key: fn.__module__}


class ActivityRegularization(Layer):
    """Adds `l1 * sum(|x|) + l2 * sum(x^2)` of its input (divided by the batch size) to the losses."""

    def __init__(self, l1=0.0, l2=0.0, **kwargs):
        super().__init__(activity_regularizer=regularizers.L1L2(l1=l1, l2=l2), **kwargs)
        self.supports_masking = True
        self.l1, self.l2 = l1, l2

    def compute_output_shape(self, input_shape):
        return input_shape

    def get_config(self):
        return {**super().get_config(), "l1": self.l1, "l2": self.l2}


class Masking(Layer):
    """Masks timesteps whose features all equal `mask_value` (outputs them as 0, sets `_keras_mask`)."""

    def __init__(self, mask_value=0.0, **kwargs):
        super().__init__(**kwargs)
        self.supports_masking = True
        self.mask_value = mask_value

    def compute_mask(self, inputs, mask=None):
        return K.any(math_ops.not_equal(inputs, self.mask_value), axis=-1)

    def call(self, inputs):
        boolean_mask = K.any(math_ops.not_equal(inputs, self.mask_value), axis=-1, keepdims=True)
        outputs = inputs * math_ops.cast(boolean_mask, inputs.dtype)
        outputs._keras_mask = array_ops.squeeze(boolean_mask, axis=[-1])
        return outputs

    def compute_output_shape(self, input_shape):
        return input_shape

    def get_config(self):
        return {**super().get_config(), "mask_value": self.mask_value}
