"""Initializers (TF1 `tf.*_initializer` classes): callables `(shape, dtype=None, partition_info=None) -> Tensor`.

Sits in `ops/` on top of array_ops/random_ops; `tf.get_variable` (ops/variable_scope.py) calls them,
glorot_uniform being its default. Each builds ordinary graph ops (Const/Fill or random ops), so a
seeded initializer is reproducible by TF1's seed rule. `tf.initializers` gathers them under short names.
"""
from __future__ import annotations

__all__ = ["Initializer", "zeros_initializer", "ones_initializer", "constant_initializer",
           "random_normal_initializer", "truncated_normal_initializer", "random_uniform_initializer",
           "uniform_unit_scaling_initializer", "variance_scaling_initializer", "glorot_uniform_initializer",
           "glorot_normal_initializer", "orthogonal_initializer", "he_normal", "he_uniform", "lecun_normal",
           "lecun_uniform", "initializers"]

import math
import types

import numpy as np

from .. import dtypes as _dtypes
from .common import TensorShape, make_tensor, register_op, NotDifferentiable
from .random_seed import seed_attrs
from . import array_ops, random_ops


def _shape_list(shape):
    if isinstance(shape, TensorShape):
        return shape.as_list()
    return [int(d) for d in (shape if isinstance(shape, (list, tuple)) else np.atleast_1d(shape))]


class Initializer:
    """Base class: subclasses implement `__call__(shape, dtype=None, partition_info=None)`."""

    def __call__(self, shape, dtype=None, partition_info=None):
        raise NotImplementedError

    def get_config(self):
        return {}

    @classmethod
    def from_config(cls, config):
        return cls(**config)


def _dtype_arg(dtype, default, floating=False, who=""):
    dtype = _dtypes.as_dtype(dtype if dtype is not None else default)
    if floating and not dtype.is_floating:
        raise ValueError(f"Expected floating point type, got {dtype.name} ({who})")
    return dtype


class zeros_initializer(Initializer):
    def __init__(self, dtype=_dtypes.float32):
        self.dtype = _dtypes.as_dtype(dtype)

    def __call__(self, shape, dtype=None, partition_info=None):
        return array_ops.zeros(_shape_list(shape), _dtype_arg(dtype, self.dtype))

    def get_config(self):
        return {"dtype": self.dtype.name}


class ones_initializer(zeros_initializer):
    def __call__(self, shape, dtype=None, partition_info=None):
        return array_ops.ones(_shape_list(shape), _dtype_arg(dtype, self.dtype))


class constant_initializer(Initializer):
    """A scalar fills the shape; a list/array must have exactly the shape's element count (reshaped)."""

    def __init__(self, value=0, dtype=_dtypes.float32, verify_shape=False):
        self.value = value
        self.dtype = _dtypes.as_dtype(dtype)
        self._verify_shape = verify_shape

    def __call__(self, shape, dtype=None, partition_info=None, verify_shape=None):
        dtype = _dtype_arg(dtype, self.dtype)
        shape = _shape_list(shape)
        verify = self._verify_shape if verify_shape is None else verify_shape
        arr = np.asarray(self.value)
        if arr.size not in (1, int(np.prod(shape))):
            raise TypeError(f"Expected Tensor's shape: {tuple(shape)}, got {arr.shape}." if verify else
                            f"Too many elements provided. Needed at most {int(np.prod(shape))}, but received "
                            f"{arr.size}" if arr.size > int(np.prod(shape)) else
                            f"Not enough elements provided: needed {int(np.prod(shape))}, got {arr.size}")
        return array_ops.constant(self.value, dtype=dtype, shape=shape, verify_shape=verify)

    def get_config(self):
        return {"value": self.value, "dtype": self.dtype.name, "verify_shape": self._verify_shape}


class random_normal_initializer(Initializer):
    def __init__(self, mean=0.0, stddev=1.0, seed=None, dtype=_dtypes.float32):
        self.mean, self.stddev, self.seed = mean, stddev, seed
        self.dtype = _dtype_arg(dtype, None, True, "random_normal_initializer")

    def __call__(self, shape, dtype=None, partition_info=None):
        dtype = _dtype_arg(dtype, self.dtype, True, type(self).__name__)
        return random_ops.random_normal(_shape_list(shape), self.mean, self.stddev, dtype, seed=self.seed)

    def get_config(self):
        return {"mean": self.mean, "stddev": self.stddev, "seed": self.seed, "dtype": self.dtype.name}


class truncated_normal_initializer(random_normal_initializer):
    def __call__(self, shape, dtype=None, partition_info=None):
        dtype = _dtype_arg(dtype, self.dtype, True, type(self).__name__)
        return random_ops.truncated_normal(_shape_list(shape), self.mean, self.stddev, dtype, seed=self.seed)


class random_uniform_initializer(Initializer):
    def __init__(self, minval=0, maxval=None, seed=None, dtype=_dtypes.float32):
        self.minval, self.maxval, self.seed = minval, maxval, seed
        self.dtype = _dtypes.as_dtype(dtype)

    def __call__(self, shape, dtype=None, partition_info=None):
        dtype = _dtype_arg(dtype, self.dtype)
        return random_ops.random_uniform(_shape_list(shape), self.minval, self.maxval, dtype, seed=self.seed)

    def get_config(self):
        return {"minval": self.minval, "maxval": self.maxval, "seed": self.seed, "dtype": self.dtype.name}


def _compute_fans(shape):
    """TF's fan computation: (fan_in, fan_out); conv kernels multiply by the receptive field size."""
    if len(shape) < 1:
        return 1, 1
    if len(shape) == 1:
        return shape[0], shape[0]
    if len(shape) == 2:
        return shape[0], shape[1]
    receptive = int(np.prod(shape[:-2]))
    return shape[-2] * receptive, shape[-1] * receptive


class variance_scaling_initializer(Initializer):
    """stddev = sqrt(scale / n), n = fan_in, fan_out or their average; distribution truncated_normal
    (stddev corrected by 0.8796...), untruncated_normal, or uniform in [-sqrt(3 scale / n), +...]."""

    def __init__(self, scale=1.0, mode="fan_in", distribution="truncated_normal", seed=None,
                 dtype=_dtypes.float32):
        if scale <= 0.0:
            raise ValueError("`scale` must be positive float.")
        if mode not in ("fan_in", "fan_out", "fan_avg"):
            raise ValueError(f"Invalid `mode` argument: {mode}")
        distribution = distribution.lower()
        if distribution not in ("normal", "uniform", "truncated_normal", "untruncated_normal"):
            raise ValueError(f"Invalid `distribution` argument: {distribution}")
        self.scale, self.mode, self.distribution, self.seed = scale, mode, distribution, seed
        self.dtype = _dtype_arg(dtype, None, True, "variance_scaling_initializer")

    def __call__(self, shape, dtype=None, partition_info=None):
        dtype = _dtype_arg(dtype, self.dtype, True, type(self).__name__)
        shape = _shape_list(shape)
        scale_shape = shape if partition_info is None else list(partition_info.full_shape)
        fan_in, fan_out = _compute_fans(scale_shape)
        n = {"fan_in": fan_in, "fan_out": fan_out, "fan_avg": (fan_in + fan_out) / 2.0}[self.mode]
        scale = self.scale / max(1.0, n)
        if self.distribution in ("normal", "truncated_normal"):
            stddev = math.sqrt(scale) / .87962566103423978
            return random_ops.truncated_normal(shape, 0.0, stddev, dtype, seed=self.seed)
        if self.distribution == "untruncated_normal":
            return random_ops.random_normal(shape, 0.0, math.sqrt(scale), dtype, seed=self.seed)
        limit = math.sqrt(3.0 * scale)
        return random_ops.random_uniform(shape, -limit, limit, dtype, seed=self.seed)

    def get_config(self):
        return {"scale": self.scale, "mode": self.mode, "distribution": self.distribution, "seed": self.seed,
                "dtype": self.dtype.name}


class glorot_uniform_initializer(variance_scaling_initializer):
    """Uniform in [-limit, limit], limit = sqrt(6 / (fan_in + fan_out)) (tf.get_variable's default)."""

    def __init__(self, seed=None, dtype=_dtypes.float32):
        super().__init__(1.0, "fan_avg", "uniform", seed, dtype)

    def get_config(self):
        return {"seed": self.seed, "dtype": self.dtype.name}


class glorot_normal_initializer(variance_scaling_initializer):
    """Truncated normal with stddev = sqrt(2 / (fan_in + fan_out))."""

    def __init__(self, seed=None, dtype=_dtypes.float32):
        super().__init__(1.0, "fan_avg", "truncated_normal", seed, dtype)

    def get_config(self):
        return {"seed": self.seed, "dtype": self.dtype.name}


class uniform_unit_scaling_initializer(Initializer):
    """TF1's (deprecated) uniform unit scaling: uniform in +-sqrt(3 / fan_in) * factor."""

    def __init__(self, factor=1.0, seed=None, dtype=_dtypes.float32):
        self.factor, self.seed = factor, seed
        self.dtype = _dtype_arg(dtype, None, True, "uniform_unit_scaling_initializer")

    def __call__(self, shape, dtype=None, partition_info=None):
        dtype = _dtype_arg(dtype, self.dtype, True, type(self).__name__)
        shape = _shape_list(shape)
        input_size = 1.0
        for d in shape[:-1]:
            input_size *= float(d)
        max_val = math.sqrt(3 / max(input_size, 1.0)) * self.factor
        return random_ops.random_uniform(shape, -max_val, max_val, dtype, seed=self.seed)


def he_normal(seed=None):
    return variance_scaling_initializer(2.0, "fan_in", "truncated_normal", seed)


def he_uniform(seed=None):
    return variance_scaling_initializer(2.0, "fan_in", "uniform", seed)


def lecun_normal(seed=None):
    return variance_scaling_initializer(1.0, "fan_in", "truncated_normal", seed)


def lecun_uniform(seed=None):
    return variance_scaling_initializer(1.0, "fan_in", "uniform", seed)


# RandomOrthogonal: a (semi-)orthogonal matrix from the QR of a normal matrix (sign-corrected), reshaped.
register_op("RandomOrthogonal", lambda op: [(op.get_attr("dtype"), TensorShape(op.get_attr("shape")))],
            stateful=True)
NotDifferentiable("RandomOrthogonal")


class orthogonal_initializer(Initializer):
    """A random orthogonal matrix (flattened to [prod(shape[:-1]), shape[-1]]) times `gain`."""

    def __init__(self, gain=1.0, seed=None, dtype=_dtypes.float32):
        self.gain, self.seed = gain, seed
        self.dtype = _dtype_arg(dtype, None, True, "orthogonal_initializer")

    def __call__(self, shape, dtype=None, partition_info=None):
        dtype = _dtype_arg(dtype, self.dtype, True, type(self).__name__)
        shape = tuple(_shape_list(shape))
        if len(shape) < 2:
            raise ValueError("The tensor to initialize must be at least two-dimensional")
        attrs = {"shape": shape, "dtype": dtype, "gain": float(self.gain), **seed_attrs(self.seed)}
        return make_tensor("RandomOrthogonal", [], attrs, name="orthogonal")

    def get_config(self):
        return {"gain": self.gain, "seed": self.seed, "dtype": self.dtype.name}


initializers = types.SimpleNamespace(
    zeros=zeros_initializer, ones=ones_initializer, constant=constant_initializer,
    random_normal=random_normal_initializer, truncated_normal=truncated_normal_initializer,
    random_uniform=random_uniform_initializer, uniform_unit_scaling=uniform_unit_scaling_initializer,
    variance_scaling=variance_scaling_initializer, glorot_uniform=glorot_uniform_initializer,
    glorot_normal=glorot_normal_initializer, orthogonal=orthogonal_initializer, he_normal=he_normal,
    he_uniform=he_uniform, lecun_normal=lecun_normal, lecun_uniform=lecun_uniform,
)
"""`tf.initializers.*`: the initializer classes under TF's short names (global_variables etc. live elsewhere)."""
