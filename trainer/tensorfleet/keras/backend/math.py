"""`tf.keras.backend`: reductions, element-wise math, products and shape manipulation (TF 1.15 keras/backend.py).

Thin wrappers over `ops/` with Keras's argument names (`axis`, `keepdims`) and its conventions: `mean`/`var`/
`std` cast bool inputs to floatx, `concatenate` takes a negative axis modulo the rank, `dot` handles N-D
operands like Theano's dot, `batch_dot` is 1.15's version (reshape + matmul with adjoints).
"""
from __future__ import annotations

import numpy as np

from ... import dtypes as _dtypes
from ...default_graph import convert_to_tensor
from ...ops import array_ops, join_ops, math_ops, nn_composite, scan_sort_ops, slicing_ops
from .config import floatx
from .tensors import int_shape, ndim


def _float_if_bool(x):
    x = convert_to_tensor(x)
    return math_ops.cast(x, _dtypes.as_dtype(floatx())) if x.dtype == _dtypes.bool_ else x


# -- reductions ---------------------------------------------------------------------------------------------
def max(x, axis=None, keepdims=False):  # noqa: A001
    return math_ops.reduce_max(x, axis, keepdims)


def min(x, axis=None, keepdims=False):  # noqa: A001
    return math_ops.reduce_min(x, axis, keepdims)


def sum(x, axis=None, keepdims=False):  # noqa: A001
    return math_ops.reduce_sum(x, axis, keepdims)


def prod(x, axis=None, keepdims=False):
    return math_ops.reduce_prod(x, axis, keepdims)


def mean(x, axis=None, keepdims=False):
    return math_ops.reduce_mean(_float_if_bool(x), axis, keepdims)


def var(x, axis=None, keepdims=False):
    x = _float_if_bool(x)
    m = math_ops.reduce_mean(x, axis, True)
    return math_ops.reduce_mean(math_ops.square(x - m), axis, keepdims)


def std(x, axis=None, keepdims=False):
    return math_ops.sqrt(var(x, axis, keepdims))


def any(x, axis=None, keepdims=False):  # noqa: A001
    return math_ops.reduce_any(math_ops.cast(x, _dtypes.bool_), axis, keepdims)


def all(x, axis=None, keepdims=False):  # noqa: A001
    return math_ops.reduce_all(math_ops.cast(x, _dtypes.bool_), axis, keepdims)


def argmax(x, axis=-1):
    return math_ops.argmax(x, axis)


def argmin(x, axis=-1):
    return math_ops.argmin(x, axis)


def cumsum(x, axis=0):
    return scan_sort_ops.cumsum(x, axis=axis)


def cumprod(x, axis=0):
    return scan_sort_ops.cumprod(x, axis=axis)


def logsumexp(x, axis=None, keepdims=False):
    return math_ops.reduce_logsumexp(x, axis, keepdims)


# -- element-wise -------------------------------------------------------------------------------------------
def square(x):
    return math_ops.square(x)


def abs(x):  # noqa: A001
    return math_ops.abs(x)


def sqrt(x):
    """sqrt(max(x, 0)) (Keras clips negatives to 0 first)."""
    zero = convert_to_tensor(0.0, dtype=convert_to_tensor(x).dtype)
    return math_ops.sqrt(math_ops.clip_by_value(x, zero, convert_to_tensor(np.inf, dtype=zero.dtype)))


def exp(x):
    return math_ops.exp(x)


def log(x):
    return math_ops.log(x)


def round(x):  # noqa: A001
    return math_ops.round(x)


def sign(x):
    return math_ops.sign(x)


def pow(x, a):  # noqa: A001
    return math_ops.pow(x, a)


def clip(x, min_value, max_value):
    """clip_by_value; max_value < min_value is raised to min_value, None bounds are -inf / +inf."""
    if isinstance(min_value, (int, float)) and isinstance(max_value, (int, float)) and max_value < min_value:
        max_value = min_value
    if min_value is None:
        min_value = -np.inf
    if max_value is None:
        max_value = np.inf
    return math_ops.clip_by_value(x, min_value, max_value)


def equal(x, y):
    return math_ops.equal(x, y)


def not_equal(x, y):
    return math_ops.not_equal(x, y)


def greater(x, y):
    return math_ops.greater(x, y)


def greater_equal(x, y):
    return math_ops.greater_equal(x, y)


def less(x, y):
    return math_ops.less(x, y)


def less_equal(x, y):
    return math_ops.less_equal(x, y)


def maximum(x, y):
    return math_ops.maximum(x, y)


def minimum(x, y):
    return math_ops.minimum(x, y)


def sin(x):
    return math_ops.sin(x)


def cos(x):
    return math_ops.cos(x)


def l2_normalize(x, axis=None):
    return nn_composite.l2_normalize(x, axis=axis)


# -- products -----------------------------------------------------------------------------------------------
def _mixed_shape(x):
    dims = array_ops.shape(x)
    return [d if d is not None else dims[i] for i, d in enumerate(int_shape(x))]


def dot(x, y):
    """Matrix product; for N-D operands: the last axis of x against the second-to-last of y (Theano's dot)."""
    if ndim(x) is not None and (ndim(x) > 2 or ndim(y) > 2):
        x_shape, y_shape = _mixed_shape(x), _mixed_shape(y)
        perm = list(range(ndim(y)))
        perm = [perm.pop(-2)] + perm
        xt = array_ops.reshape(x, [-1, x_shape[-1]])
        yt = array_ops.reshape(array_ops.transpose(y, perm=perm), [y_shape[-2], -1])
        out_shape = x_shape[:-1] + y_shape[:-2] + y_shape[-1:]
        if all_static(out_shape):
            return array_ops.reshape(math_ops.matmul(xt, yt), out_shape)
        return array_ops.reshape(math_ops.matmul(xt, yt), join_ops.stack(
            [convert_to_tensor(d, dtype=_dtypes.int32) for d in out_shape]))
    return math_ops.matmul(x, y)


def all_static(dims):
    return not [d for d in dims if not isinstance(d, (int, np.integer))]


def batch_dot(x, y, axes=None):
    """Batch-wise dot product (TF 1.15): axes default to (ndim(x) - 1, ndim(y) - 2); 1-D results get an axis."""
    if isinstance(axes, int):
        axes = (axes, axes)
    x_ndim, y_ndim = ndim(x), ndim(y)
    if axes is None:
        axes = [x_ndim - 1, y_ndim - 2]
    diff = 0
    if x_ndim > y_ndim:
        diff = x_ndim - y_ndim
        y = array_ops.reshape(y, join_ops.concat([array_ops.shape(y), [1] * diff], axis=0))
    elif y_ndim > x_ndim:
        diff = y_ndim - x_ndim
        x = array_ops.reshape(x, join_ops.concat([array_ops.shape(x), [1] * diff], axis=0))
    if ndim(x) == 2 and ndim(y) == 2:
        if axes[0] == axes[1]:
            out = math_ops.reduce_sum(math_ops.multiply(x, y), axes[0])
        else:
            out = math_ops.reduce_sum(math_ops.multiply(array_ops.transpose(x, [1, 0]), y), axes[1])
    else:
        adj_x = axes[0] != ndim(x) - 1
        adj_y = axes[1] == ndim(y) - 1
        out = math_ops.matmul(x, y, adjoint_a=adj_x, adjoint_b=adj_y)
    if diff:
        idx = x_ndim + y_ndim - 3 if x_ndim > y_ndim else x_ndim - 1
        out = array_ops.squeeze(out, list(range(idx, idx + diff)))
    if ndim(out) == 1:
        out = array_ops.expand_dims(out, 1)
    return out


def transpose(x):
    return array_ops.transpose(x)


def gather(reference, indices):
    return slicing_ops.gather(reference, indices)


# -- shapes ---------------------------------------------------------------------------------------------------
def concatenate(tensors, axis=-1):
    if axis < 0:
        rank = ndim(tensors[0])
        axis = axis % rank if rank else 0
    return join_ops.concat(list(tensors), axis)


def reshape(x, shape):
    return array_ops.reshape(x, shape)


def permute_dimensions(x, pattern):
    return array_ops.transpose(x, perm=list(pattern))


def repeat_elements(x, rep, axis):
    """Repeats each element `rep` times along `axis` (np.repeat)."""
    x_shape = int_shape(x)
    if x_shape[axis] is not None:
        splits = join_ops.split(x, x_shape[axis], axis=axis)
        return join_ops.concat([s for s in splits for _ in range(rep)], axis)
    auxiliary_axis = axis + 1
    x_dyn = array_ops.shape(x)
    x_rep = array_ops.expand_dims(x, axis=auxiliary_axis)
    reps = np.ones(len(x_shape) + 1, dtype=np.int32)
    reps[auxiliary_axis] = rep
    x_rep = join_ops.tile(x_rep, reps)
    reps = np.delete(reps, auxiliary_axis)
    reps[axis] = rep
    x_rep = array_ops.reshape(x_rep, x_dyn * convert_to_tensor(reps))
    return x_rep


def repeat(x, n):
    """[batch, dim] -> [batch, n, dim]."""
    if ndim(x) != 2:
        raise ValueError(f"repeat: expected a 2-D tensor, got rank {ndim(x)}")
    return join_ops.tile(array_ops.expand_dims(x, 1), [1, n, 1])


def arange(start, stop=None, step=1, dtype="int32"):
    if stop is None and start < 0:
        start = 0
    result = array_ops.range(start, limit=stop, delta=step, name="arange")
    if dtype != "int32":
        result = math_ops.cast(result, _dtypes.as_dtype(dtype))
    return result


def tile(x, n):
    if isinstance(n, int):
        n = [n]
    return join_ops.tile(x, n)


def flatten(x):
    return array_ops.reshape(x, [-1])


def batch_flatten(x):
    """[batch, ...] -> [batch, prod(...)]."""
    return array_ops.reshape(x, join_ops.stack([-1, math_ops.reduce_prod(array_ops.shape(x)[1:])]))


def expand_dims(x, axis=-1):
    return array_ops.expand_dims(x, axis)


def squeeze(x, axis):
    return array_ops.squeeze(x, [axis])


def stack(x, axis=0):
    return join_ops.stack(x, axis=axis)


def one_hot(indices, num_classes):
    return slicing_ops.one_hot(indices, depth=num_classes, axis=-1)


def reverse(x, axes):
    if isinstance(axes, int):
        axes = [axes]
    return slicing_ops.reverse(x, axes)


def stop_gradient(variables):
    if isinstance(variables, (list, tuple)):
        return [array_ops.stop_gradient(v) for v in variables]
    return array_ops.stop_gradient(variables)
