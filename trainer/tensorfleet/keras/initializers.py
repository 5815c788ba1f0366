"""`tf.keras.initializers` (TF 1.15, the v1 API): TF1's initializer classes under Keras's names and defaults.

The classes are those of `ops/init_ops.py` (same call signature `(shape, dtype=None, partition_info=None)`,
same ops and seeds); Keras changes three defaults: RandomNormal/TruncatedNormal stddev 0.05, RandomUniform
[-0.05, 0.05]. `get('glorot_uniform')` instantiates the class the name stands for; `serialize` gives
`{'class_name': 'GlorotUniform', 'config': {...}}`. Layers default to glorot_uniform kernels, zeros biases.
"""
from __future__ import annotations

from .. import dtypes as _dtypes
from ..ops import init_ops as _init_ops
from ..ops import linalg_ops as _linalg_ops
from ..ops.init_ops import Initializer
from .utils.generic_utils import deserialize_keras_object, get_from_identifier, serialize_keras_object


class Zeros(_init_ops.zeros_initializer):
    """All zeros."""


class Ones(_init_ops.ones_initializer):
    """All ones."""


class Constant(_init_ops.constant_initializer):
    """A constant value (a scalar, or a list/array with the shape's element count)."""


class RandomNormal(_init_ops.random_normal_initializer):
    def __init__(self, mean=0.0, stddev=0.05, seed=None, dtype=_dtypes.float32):
        super().__init__(mean=mean, stddev=stddev, seed=seed, dtype=dtype)


class RandomUniform(_init_ops.random_uniform_initializer):
    def __init__(self, minval=-0.05, maxval=0.05, seed=None, dtype=_dtypes.float32):
        super().__init__(minval=minval, maxval=maxval, seed=seed, dtype=dtype)


class TruncatedNormal(_init_ops.truncated_normal_initializer):
    def __init__(self, mean=0.0, stddev=0.05, seed=None, dtype=_dtypes.float32):
        super().__init__(mean=mean, stddev=stddev, seed=seed, dtype=dtype)


class VarianceScaling(_init_ops.variance_scaling_initializer):
    """stddev = sqrt(scale / n) with n from `mode` (fan_in/fan_out/fan_avg); normal, uniform, ..."""


class Orthogonal(_init_ops.orthogonal_initializer):
    """A random (semi-)orthogonal matrix times `gain`."""


class GlorotUniform(_init_ops.glorot_uniform_initializer):
    """Uniform in +-sqrt(6 / (fan_in + fan_out)): Keras's default kernel initializer."""


class GlorotNormal(_init_ops.glorot_normal_initializer):
    """Truncated normal with stddev sqrt(2 / (fan_in + fan_out))."""


class Identity(Initializer):
    """`gain` times the identity matrix (2-D shapes only; rectangular ones get ones on the diagonal)."""

    def __init__(self, gain=1.0, dtype=_dtypes.float32):
        self.gain = gain
        self.dtype = _dtypes.as_dtype(dtype)

    def __call__(self, shape, dtype=None, partition_info=None):
        full_shape = list(shape) if partition_info is None else list(partition_info.full_shape)
        if len(full_shape) != 2:
            raise ValueError("Identity matrix initializer can only be used for 2D matrices.")
        dtype = _dtypes.as_dtype(dtype if dtype is not None else self.dtype)
        return self.gain * _linalg_ops.eye(int(full_shape[0]), int(full_shape[1]), dtype=dtype)

    def get_config(self):
        return {"gain": self.gain, "dtype": self.dtype.name}


def lecun_normal(seed=None):
    return VarianceScaling(scale=1.0, mode="fan_in", distribution="truncated_normal", seed=seed)


def lecun_uniform(seed=None):
    return VarianceScaling(scale=1.0, mode="fan_in", distribution="uniform", seed=seed)


def he_normal(seed=None):
    return VarianceScaling(scale=2.0, mode="fan_in", distribution="truncated_normal", seed=seed)


def he_uniform(seed=None):
    return VarianceScaling(scale=2.0, mode="fan_in", distribution="uniform", seed=seed)


# Keras's lower-case aliases (tf.keras.initializers.zeros, .glorot_uniform, ...)
zero = zeros = Zeros
one = ones = Ones
constant = Constant
uniform = random_uniform = RandomUniform
normal = random_normal = RandomNormal
truncated_normal = TruncatedNormal
identity = Identity
orthogonal = Orthogonal
glorot_normal = GlorotNormal
glorot_uniform = GlorotUniform

_TABLE = {name: obj for name, obj in dict(globals()).items()
          if not name.startswith("_") and (isinstance(obj, type) or name.startswith(("lecun_", "he_")))
          and name not in ("annotations",)}


def serialize(initializer):
    return serialize_keras_object(initializer)


def deserialize(config, custom_objects=None):
    return deserialize_keras_object(config, module_objects=_TABLE, custom_objects=custom_objects,
                                    printable_module_name="initializer")


def get(identifier):
    """None -> None; a config dict or a name -> a new initializer; a callable -> itself."""
    return get_from_identifier(identifier, deserialize, "initializer")


__all__ = sorted(_TABLE) + ["Initializer", "serialize", "deserialize", "get"]
