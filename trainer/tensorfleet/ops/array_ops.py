"""Array ops (core subset): constants, placeholders, identity, stop_gradient.

Sits in `ops/`: wrappers + shape functions + gradients; kernels in `kernels/array_kernels.py`.
"""

from __future__ import annotations

__all__ = ["constant", "placeholder", "placeholder_with_default", "identity", "stop_gradient"]

import numpy as np

from .. import dtypes as _dtypes
from ..graph import _set_constant_factory
from .common import (NotDifferentiable, TensorShape, as_shape, make_op, make_tensor, register_gradient,
                     register_op, unchanged_shape, convert_to_tensor)


# -- Const --------------------------------------------------------------------
def _const_shape(op):
    v = op.get_attr("value")
    return [(op.get_attr("dtype"), TensorShape(v.shape))]


register_op("Const", _const_shape)
NotDifferentiable("Const")


def _to_numpy(value, dtype):
    if dtype is not None:
        npd = _dtypes.as_dtype(dtype).np_dtype
        arr = np.asarray(value)
        if arr.dtype.kind == "f" and npd.kind in "iub" and not np.all(np.equal(np.mod(arr, 1), 0)):
            raise TypeError(f"Expected {_dtypes.as_dtype(dtype).name}, got {value!r} of type "
                            f"'{type(value).__name__}' instead.")
        return np.asarray(value, dtype=npd)
    arr = np.asarray(value)
    if arr.dtype.kind in "OUS":
        raise TypeError(f"Failed to convert object of type {type(value).__name__} to Tensor. Contents: {value!r}.")
    if not isinstance(value, (np.ndarray, np.generic)):  # Python values: TF's defaults
        if arr.dtype.kind == "f":
            return arr.astype(np.float32)
        if arr.dtype.kind in "iu":
            fits = arr.size == 0 or (arr.min() >= -2**31 and arr.max() < 2**31)
            return arr.astype(np.int32 if fits else np.int64)
    return arr


def constant(value, dtype=None, shape=None, name="Const", verify_shape=False):
    """`tf.constant`: Python floats default to float32 and ints to int32 (numpy arrays keep their dtype)."""
    arr = _to_numpy(value, dtype)
    if shape is not None:
        shape = tuple(as_shape(shape).as_list())
        if arr.shape != shape:
            if verify_shape:
                raise TypeError(f"Expected Tensor's shape: {shape}, got {arr.shape}.")
            if arr.size == 1:
                arr = np.full(shape, arr.reshape(()), dtype=arr.dtype)
            elif arr.size == int(np.prod(shape)):
                arr = arr.reshape(shape)
            else:
                raise TypeError(f"Eager execution of tf.constant with unsupported shape (value has "
                                f"{arr.size} elements, shape is {shape} with {int(np.prod(shape))} elements).")
    arr = np.ascontiguousarray(arr)
    arr.flags.writeable = False
    return make_tensor("Const", (), {"value": arr, "dtype": _dtypes.as_dtype(arr.dtype)}, name=name)


_set_constant_factory(lambda value, dtype=None, name="Const": constant(value, dtype=dtype, name=name))


# -- Placeholder --------------------------------------------------------------
register_op("Placeholder", lambda op: [(op.get_attr("dtype"), op.get_attr("shape"))])
NotDifferentiable("Placeholder")


def placeholder(dtype, shape=None, name=None):
    """`tf.placeholder`: must be fed; `shape` may contain None dims or be None (any shape)."""
    return make_tensor("Placeholder", (), {"dtype": _dtypes.as_dtype(dtype), "shape": as_shape(shape)},
                       name=name, default_name="Placeholder")


def _pwd_shape(op):
    inp = op.inputs[0]
    shape = as_shape(op.get_attr("shape"))
    if not inp.shape.is_compatible_with(shape):
        raise ValueError(f"Shape of default {inp.shape} is not compatible with {shape}")
    return [(inp.dtype, shape)]


register_op("PlaceholderWithDefault", _pwd_shape)


def placeholder_with_default(input, shape, name=None):
    """`tf.placeholder_with_default`: yields `input` unless fed."""
    input = convert_to_tensor(input)
    return make_tensor("PlaceholderWithDefault", [input], {"shape": as_shape(shape)}, name=name,
                       default_name="PlaceholderWithDefault")


@register_gradient("PlaceholderWithDefault")
def _pwd_grad(op, grad):
    return [grad]


# -- Identity / StopGradient --------------------------------------------------
register_op("Identity", unchanged_shape)


def identity(input, name=None):
    return make_tensor("Identity", [convert_to_tensor(input)], name=name, default_name="Identity")


@register_gradient("Identity")
def _identity_grad(op, grad):
    return [grad]


register_op("StopGradient", unchanged_shape)
NotDifferentiable("StopGradient")


def stop_gradient(input, name=None):
    return make_tensor("StopGradient", [convert_to_tensor(input)], name=name, default_name="StopGradient")
