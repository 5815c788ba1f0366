"""`tf.keras.backend`: variables, placeholders, constants and shape introspection (TF 1.15's keras/backend.py).

Variables made here are `tf.Variable`s Keras tracks (`session.track_variable`), so `get_session()` initialises
them. Shapes: `int_shape` is the static shape as a tuple (None for unknown), `shape` the dynamic `tf.shape`.
"""
from __future__ import annotations

import numpy as np

from ... import dtypes as _dtypes
from ...default_graph import convert_to_tensor
from ...graph import Tensor
from ...ops import array_ops, math_ops, random_ops, state_ops
from .config import floatx
from .session import track_variable


def _dtype(dtype):
    return _dtypes.as_dtype(floatx() if dtype is None else dtype)


def _random_seed():
    return int(np.random.randint(10e6))


def variable(value, dtype=None, name=None, constraint=None):
    """A tracked `tf.Variable` holding `value` (dtype: floatx by default)."""
    dt = _dtype(dtype)
    if isinstance(value, state_ops.Variable):
        value = value.initialized_value()
    v = state_ops.Variable(value if isinstance(value, Tensor) else np.asarray(value, dtype=dt.as_numpy_dtype),
                           dtype=dt, name=name, constraint=constraint)
    if isinstance(value, np.ndarray):
        v._keras_shape = value.shape
    elif hasattr(value, "shape"):
        v._keras_shape = int_shape(value)
    track_variable(v)
    return v


def constant(value, dtype=None, shape=None, name=None):
    """`tf.constant` with floatx as the default dtype."""
    return array_ops.constant(value, dtype=_dtype(dtype), shape=shape, name=name or "Const")


def placeholder(shape=None, ndim=None, dtype=None, sparse=False, name=None, ragged=False):
    """`tf.placeholder(dtype, shape)`; `ndim` gives a shape of that many unknown dims."""
    if sparse or ragged:
        raise NotImplementedError("keras.backend.placeholder: sparse and ragged placeholders are not supported")
    if not shape and ndim:
        shape = (None,) * ndim
    x = array_ops.placeholder(_dtype(dtype), shape=shape, name=name)
    return x


def is_placeholder(x):
    try:
        return x.op.type == "Placeholder"
    except AttributeError:
        return False


def is_sparse(tensor):
    return False


def to_dense(tensor):
    return tensor


def is_keras_tensor(x):
    """True for a tensor a Keras layer (or `Input`) returned: it carries `_keras_history`."""
    if not isinstance(x, (Tensor, state_ops.Variable)):
        raise ValueError("Unexpectedly found an instance of type `" + str(type(x)) + "`. "
                         "Expected a symbolic tensor instance.")
    return hasattr(x, "_keras_history")


def int_shape(x):
    """The static shape of `x` as a tuple of ints and None, or None when the rank is unknown."""
    try:
        shape = x.shape
        return shape if isinstance(shape, tuple) else tuple(shape.as_list())
    except ValueError:
        return None


def shape(x):
    """The dynamic shape (`tf.shape`)."""
    return array_ops.shape(x)


def ndim(x):
    dims = x.shape.ndims if hasattr(x.shape, "ndims") else len(x.shape)
    return dims


def dtype(x):
    return x.dtype.name


def count_params(x):
    """The number of scalars in `x` (a variable or a tensor of static shape)."""
    return int(np.prod(x.shape.as_list()))


def eye(size, dtype=None, name=None):
    return variable(np.eye(size), dtype, name)


def zeros(shape, dtype=None, name=None):
    """A tracked variable of zeros (Keras's backend.zeros is a variable in graph mode)."""
    dt = _dtype(dtype)
    return variable(np.zeros(shape, dt.as_numpy_dtype), dt, name)


def ones(shape, dtype=None, name=None):
    dt = _dtype(dtype)
    return variable(np.ones(shape, dt.as_numpy_dtype), dt, name)


def zeros_like(x, dtype=None, name=None):
    return array_ops.zeros_like(x, dtype=dtype, name=name)


def ones_like(x, dtype=None, name=None):
    return array_ops.ones_like(x, dtype=dtype, name=name)


def identity(x, name=None):
    return array_ops.identity(x, name=name)


def cast(x, dtype):
    return math_ops.cast(x, _dtypes.as_dtype(dtype))


def random_uniform_variable(shape, low, high, dtype=None, name=None, seed=None):
    dt = _dtype(dtype)
    seed = _random_seed() if seed is None else seed
    return variable(random_ops.random_uniform(shape, low, high, dt, seed=seed), dt, name)


def random_normal_variable(shape, mean, scale, dtype=None, name=None, seed=None):
    dt = _dtype(dtype)
    seed = _random_seed() if seed is None else seed
    return variable(random_ops.random_normal(shape, mean, scale, dt, seed=seed), dt, name)


def random_normal(shape, mean=0.0, stddev=1.0, dtype=None, seed=None):
    seed = _random_seed() if seed is None else seed
    return random_ops.random_normal(shape, mean, stddev, _dtype(dtype), seed=seed)


def random_uniform(shape, minval=0.0, maxval=1.0, dtype=None, seed=None):
    seed = _random_seed() if seed is None else seed
    return random_ops.random_uniform(shape, minval, maxval, _dtype(dtype), seed=seed)


def truncated_normal(shape, mean=0.0, stddev=1.0, dtype=None, seed=None):
    seed = _random_seed() if seed is None else seed
    return random_ops.truncated_normal(shape, mean, stddev, _dtype(dtype), seed=seed)


def random_binomial(shape, p=0.0, dtype=None, seed=None):
    """1 with probability p, else 0 (`where(random_uniform < p, 1, 0)`)."""
    dt = _dtype(dtype)
    seed = _random_seed() if seed is None else seed
    return math_ops.where(random_ops.random_uniform(shape, dtype=dt, seed=seed) <= p,
                          array_ops.ones(shape, dtype=dt), array_ops.zeros(shape, dtype=dt))


def update(x, new_x):
    return state_ops.assign(x, new_x)


def update_add(x, increment):
    return state_ops.assign_add(x, increment)


def update_sub(x, decrement):
    return state_ops.assign_sub(x, decrement)


def moving_average_update(x, value, momentum):
    """x <- x * momentum + value * (1 - momentum). TF 1.15 zero-debiases (extra `biased`/`local_step`
    variables); this one does not (docs/keras.md)."""
    value = convert_to_tensor(value, dtype=x.dtype)
    return state_ops.assign_sub(x, (x.value() - value) * (1.0 - momentum))

