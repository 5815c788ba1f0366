"""Merge layers (TF 1.15's keras/layers/merge.py): Add, Subtract, Multiply, Average, Maximum, Minimum,
Concatenate, Dot, and their functional forms (`add([a, b])`, `concatenate([a, b], axis=-1)`, ...).

Element-wise merges broadcast like numpy over the non-batch axes; inputs of different ranks are first
expanded at axis 1 until the ranks match. `Dot` is `K.batch_dot` over `axes` (optionally of l2-normalised
inputs): a [batch] result becomes [batch, 1].
"""
from __future__ import annotations

from ...ops import array_ops, math_ops, nn_composite
from ...tensor_shape import TensorShape
from .. import backend as K
from ..engine.base_layer import Layer


def _tuples(input_shape):
    if not isinstance(input_shape, (list, tuple)) or not input_shape or not isinstance(
            input_shape[0], (TensorShape, tuple, list, type(None))):
        return input_shape
    out = []
    for s in input_shape:
        s = TensorShape(s) if s is not None else None
        out.append(None if s is None or s.ndims is None else tuple(s.as_list()))
    return out


class _Merge(Layer):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.supports_masking = True
        self._reshape_required = False

    def _merge_function(self, inputs):
        raise NotImplementedError

    def _compute_elemwise_op_output_shape(self, shape1, shape2):
        if shape1 is None or shape2 is None:
            return None
        if len(shape1) < len(shape2):
            return self._compute_elemwise_op_output_shape(shape2, shape1)
        if not shape2:
            return shape1
        output_shape = list(shape1[:-len(shape2)])
        for i, j in zip(shape1[-len(shape2):], shape2):
            if i is None or j is None:
                output_shape.append(None)
            elif i == 1:
                output_shape.append(j)
            elif j == 1:
                output_shape.append(i)
            else:
                if i != j:
                    raise ValueError(f"Operands could not be broadcast together with shapes {shape1} {shape2}")
                output_shape.append(i)
        return tuple(output_shape)

    def build(self, input_shape):
        input_shape = _tuples(input_shape)
        if not isinstance(input_shape, list):
            raise ValueError("A merge layer should be called on a list of inputs.")
        if len(input_shape) < 2:
            raise ValueError(f"A merge layer should be called on a list of at least 2 inputs. Got {len(input_shape)} "
                             f"inputs.")
        batch_sizes = {s[0] for s in input_shape if s is not None} - {None}
        if len(batch_sizes) > 1:
            raise ValueError(f"Can not merge tensors with different batch sizes. Got tensors with shapes : "
                             f"{input_shape}")
        output_shape = input_shape[0][1:] if input_shape[0] is not None else None
        for shape in input_shape[1:]:
            output_shape = self._compute_elemwise_op_output_shape(output_shape, shape[1:] if shape is not None
                                                                  else None)
        self._reshape_required = not (None not in input_shape and len(set(map(len, input_shape))) == 1)
        self.built = True

    def call(self, inputs):
        if not isinstance(inputs, list):
            raise ValueError("A merge layer should be called on a list of inputs.")
        if not self._reshape_required:
            return self._merge_function(inputs)
        ndims = [x.shape.ndims for x in inputs]
        if None in ndims:
            raise NotImplementedError(f"{self.name}: merging inputs of unknown rank with inputs of other ranks is "
                                      f"not supported")
        reshaped = []
        for x in inputs:
            for _ in range(max(ndims) - x.shape.ndims):
                x = array_ops.expand_dims(x, axis=1)
            reshaped.append(x)
        return self._merge_function(reshaped)

    def compute_output_shape(self, input_shape):
        input_shape = _tuples(input_shape)
        output_shape = input_shape[0][1:] if input_shape[0] is not None else None
        for shape in input_shape[1:]:
            output_shape = self._compute_elemwise_op_output_shape(output_shape, shape[1:] if shape is not None
                                                                  else None)
        batch_sizes = {s[0] for s in input_shape if s is not None} - {None}
        batch = list(batch_sizes)[0] if len(batch_sizes) == 1 else None
        return (batch,) + tuple(output_shape) if output_shape is not None else None

    def compute_mask(self, inputs, mask=None):
        if mask is None:
            return None
        if not isinstance(mask, list):
            raise ValueError("`mask` should be a list.")
        if not isinstance(inputs, list):
            raise ValueError("`inputs` should be a list.")
        if len(mask) != len(inputs):
            raise ValueError("The lists `inputs` and `mask` should have the same length.")
        if all(m is None for m in mask):
            return None
        masks = [array_ops.expand_dims(m, axis=0) for m in mask if m is not None]
        return K.all(K.concatenate(masks, axis=0), axis=0, keepdims=False)


class Add(_Merge):
    def _merge_function(self, inputs):
        output = inputs[0]
        for x in inputs[1:]:
            output = output + x
        return output


class Subtract(_Merge):
    def build(self, input_shape):
        super().build(input_shape)
        if len(input_shape) != 2:
            raise ValueError("A `Subtract` layer should be called on exactly 2 inputs")

    def _merge_function(self, inputs):
        if len(inputs) != 2:
            raise ValueError("A `Subtract` layer should be called on exactly 2 inputs")
        return inputs[0] - inputs[1]


class Multiply(_Merge):
    def _merge_function(self, inputs):
        output = inputs[0]
        for x in inputs[1:]:
            output = output * x
        return output


class Average(_Merge):
    def _merge_function(self, inputs):
        output = inputs[0]
        for x in inputs[1:]:
            output = output + x
        return output / len(inputs)


class Maximum(_Merge):
    def _merge_function(self, inputs):
        output = inputs[0]
        for x in inputs[1:]:
            output = math_ops.maximum(output, x)
        return output


class Minimum(_Merge):
    def _merge_function(self, inputs):
        output = inputs[0]
        for x in inputs[1:]:
            output = math_ops.minimum(output, x)
        return output


class Concatenate(_Merge):
    """Concatenates along `axis` (shapes must match on the other axes)."""

    def __init__(self, axis=-1, **kwargs):
        super().__init__(**kwargs)
        self.axis = axis
        self.supports_masking = True
        self._reshape_required = False

    def build(self, input_shape):
        input_shape = _tuples(input_shape)
        if not isinstance(input_shape, list) or len(input_shape) < 2:
            raise ValueError("A `Concatenate` layer should be called on a list of at least 2 inputs")
        if all(shape is None for shape in input_shape):
            return
        reduced = set()
        for shape in input_shape:
            shape = list(shape)
            del shape[self.axis]
            reduced.add(tuple(shape))
        if len(reduced) > 1:
            raise ValueError(f"A `Concatenate` layer requires inputs with matching shapes except for the concat axis. "
                             f"Got inputs shapes: {input_shape}")
        self.built = True

    def _merge_function(self, inputs):
        return K.concatenate(inputs, axis=self.axis)

    def compute_output_shape(self, input_shape):
        input_shape = _tuples(input_shape)
        if not isinstance(input_shape, list):
            raise ValueError("A `Concatenate` layer should be called on a list of inputs.")
        output_shape = list(input_shape[0])
        for shape in input_shape[1:]:
            if output_shape[self.axis] is None or shape[self.axis] is None:
                output_shape[self.axis] = None
                break
            output_shape[self.axis] += shape[self.axis]
        return tuple(output_shape)

    def compute_mask(self, inputs, mask=None):
        if mask is None or all(m is None for m in mask):
            return None
        masks = []
        for x, m in zip(inputs, mask):
            if m is None:
                masks.append(array_ops.ones_like(x, dtype="bool"))
            elif m.shape.ndims < x.shape.ndims:
                masks.append(array_ops.expand_dims(m, axis=-1))
            else:
                masks.append(m)
        return K.all(K.concatenate(masks, axis=self.axis), axis=-1, keepdims=False)

    def get_config(self):
        return {**super().get_config(), "axis": self.axis}


def _dot_axes(axes, ndims):
    if isinstance(axes, int):
        return [axes % n for n in ndims] if axes < 0 else [axes] * 2
    return [a % n if a < 0 else a for a, n in zip(axes, ndims)]


class Dot(_Merge):
    """The dot product of two samples-wise tensors along `axes` (an int or a pair)."""

    def __init__(self, axes, normalize=False, **kwargs):
        super().__init__(**kwargs)
        if not isinstance(axes, int):
            if not isinstance(axes, (list, tuple)):
                raise TypeError("Invalid type for `axes` - should be a list or an int.")
            if len(axes) != 2:
                raise ValueError("Invalid format for `axes` - should contain two elements.")
            if not isinstance(axes[0], int) or not isinstance(axes[1], int):
                raise ValueError('Invalid format for `axes` - list elements should be "int".')
        self.axes = axes
        self.normalize = normalize
        self.supports_masking = True
        self._reshape_required = False

    def build(self, input_shape):
        input_shape = _tuples(input_shape)
        if not isinstance(input_shape, list) or len(input_shape) != 2:
            raise ValueError("A `Dot` layer should be called on a list of 2 inputs.")
        shape1, shape2 = input_shape
        if shape1 is None or shape2 is None:
            return
        axes = _dot_axes(self.axes, [len(shape1), len(shape2)]) if isinstance(self.axes, int) and self.axes < 0 \
            else ([self.axes] * 2 if isinstance(self.axes, int) else list(self.axes))
        if shape1[axes[0]] != shape2[axes[1]]:
            raise ValueError(f"Dimension incompatibility {shape1[axes[0]]} != {shape2[axes[1]]}. Layer shapes: "
                             f"{shape1}, {shape2}")
        self.built = True

    def _merge_function(self, inputs):
        if len(inputs) != 2:
            raise ValueError("A `Dot` layer should be called on exactly 2 inputs")
        x1, x2 = inputs
        axes = _dot_axes(self.axes, [x1.shape.ndims, x2.shape.ndims])
        if self.normalize:
            x1 = nn_composite.l2_normalize(x1, axis=axes[0])
            x2 = nn_composite.l2_normalize(x2, axis=axes[1])
        return K.batch_dot(x1, x2, axes)

    def compute_output_shape(self, input_shape):
        input_shape = _tuples(input_shape)
        if not isinstance(input_shape, list) or len(input_shape) != 2:
            raise ValueError("A `Dot` layer should be called on a list of 2 inputs.")
        shape1, shape2 = list(input_shape[0]), list(input_shape[1])
        axes = ([self.axes % len(shape1), self.axes % len(shape2)] if self.axes < 0 else [self.axes] * 2) \
            if isinstance(self.axes, int) else self.axes
        shape1.pop(axes[0])
        shape2.pop(axes[1])
        shape2.pop(0)
        output_shape = shape1 + shape2
        if len(output_shape) == 1:
            output_shape += [1]
        return tuple(output_shape)

    def compute_mask(self, inputs, mask=None):
        return None

    def get_config(self):
        return {**super().get_config(), "axes": self.axes, "normalize": self.normalize}


def add(inputs, **kwargs):
    return Add(**kwargs)(inputs)


def subtract(inputs, **kwargs):
    return Subtract(**kwargs)(inputs)


def multiply(inputs, **kwargs):
    return Multiply(**kwargs)(inputs)


def average(inputs, **kwargs):
    return Average(**kwargs)(inputs)


def maximum(inputs, **kwargs):
    return Maximum(**kwargs)(inputs)


def minimum(inputs, **kwargs):
    return Minimum(**kwargs)(inputs)


def concatenate(inputs, axis=-1, **kwargs):
    return Concatenate(axis=axis, **kwargs)(inputs)


def dot(inputs, axes, normalize=False, **kwargs):
    return Dot(axes=axes, normalize=normalize, **kwargs)(inputs)
