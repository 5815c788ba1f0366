"""Array ops: constants, placeholders, identity, reshape/squeeze/expand_dims/transpose, shape/size/rank,
fill/zeros/ones(_like), range/linspace.

Sits in `ops/`: wrappers + shape functions + gradients; kernels in `kernels/array_kernels.py` (and
`core_kernels.py` for Const/Placeholder/Identity). Slicing, gather, pad and one_hot live in `slicing_ops`,
concat/stack/split/tile in `join_ops`, eye/diag/einsum in `linalg_ops`; all are re-exported here.
"""

from __future__ import annotations

__all__ = ["constant", "placeholder", "placeholder_with_default", "identity", "stop_gradient", "reshape", "squeeze",
           "expand_dims", "transpose", "shape", "size", "rank", "fill", "zeros", "ones", "zeros_like", "ones_like"]

import builtins as _builtins

import numpy as np

from .. import dtypes as _dtypes
from ..default_graph import _set_constant_factory
from ..graph import Tensor
from ..default_graph import name_scope
from .common import (NotDifferentiable, TensorShape, as_shape, make_tensor, register_gradient, register_op,
                     unchanged_shape, convert_to_tensor, unknown_shape)
from .shape_util import axis_arg, normalize_axis, partial_shape_value, shape_arg


# -- Const --------------------------------------------------------------------
def _const_shape(op):
    v = op.get_attr("value")
    return [(op.get_attr("dtype"), TensorShape(v.shape))]


register_op("Const", _const_shape)
NotDifferentiable("Const")


def _is_text(arr) -> bool:
    """str/bytes values (numpy 'U'/'S' arrays, or object arrays holding only str/bytes)."""
    if arr.dtype.kind in "US":
        return True
    return arr.dtype.kind == "O" and arr.size > 0 and all(isinstance(v, (str, bytes)) for v in arr.reshape(-1))


def _to_numpy(value, dtype):
    if dtype is not None and _dtypes.as_dtype(dtype) is _dtypes.string:
        return _dtypes.string_array(value)
    if dtype is not None:
        npd = _dtypes.as_dtype(dtype).np_dtype
        arr = np.asarray(value)
        if arr.dtype.kind == "f" and npd.kind in "iub" and not np.all(np.equal(np.mod(arr, 1), 0)):
            raise TypeError(f"Expected {_dtypes.as_dtype(dtype).name}, got {value!r} of type "
                            f"'{type(value).__name__}' instead.")
        return np.asarray(value, dtype=npd)
    arr = np.asarray(value)
    if _is_text(arr):  # Python bytes keep their trailing NULs: numpy's fixed-width 'S' arrays would drop them
        return _dtypes.string_array(arr if isinstance(value, (np.ndarray, np.generic)) else value)
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
    arr = np.array(arr, order="C", copy=True)  # never freeze (or alias) the caller's array; keeps 0-d
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


# -- Reshape ------------------------------------------------------------------
def _reshape_target(op) -> TensorShape:
    static = op.get_attr("shape")
    if static is not None:
        return TensorShape([None if d == -1 else d for d in static]), static
    return partial_shape_value(op.inputs[1]), None


def _reshape_shape(op):
    x = op.inputs[0]
    target, static = _reshape_target(op)
    if static is not None:
        if _builtins.sum(1 for d in static if d == -1) > 1:
            raise ValueError(f"Cannot infer multiple unknown dimensions in shape {list(static)}")
        if _builtins.any(d < -1 for d in static):
            raise ValueError(f"Dimension {_builtins.min(static)} must be >= -1")
        n = x.shape.num_elements()
        if n is not None:
            known = int(np.prod([d for d in static if d != -1]))
            if -1 in static:
                if (known == 0 and n != 0) or (known and n % known):
                    raise ValueError(f"Cannot reshape a tensor with {n} elements to shape {list(static)} "
                                     f"({known} elements)")
                target = TensorShape([n // known if d == -1 and known else d for d in static])
            elif known != n:
                raise ValueError(f"Cannot reshape a tensor with {n} elements to shape {list(static)} "
                                 f"({known} elements)")
    return [(x.dtype, target)]


register_op("Reshape", _reshape_shape)


def reshape(tensor, shape, name=None):
    """`tf.reshape`: `shape` is a list/tuple (one -1 allowed) or an int tensor (static when constant)."""
    tensor = convert_to_tensor(tensor)
    static, dynamic = shape_arg(shape)
    inputs = [tensor] if dynamic is None else [tensor, dynamic]
    return make_tensor("Reshape", inputs, {"shape": static}, name=name, default_name="Reshape")


@register_gradient("Reshape")
def _reshape_grad(op, grad):
    return [reshape_like(grad, op.inputs[0])] + [None] * (len(op.inputs) - 1)


register_op("ReshapeLike", lambda op: [(op.inputs[0].dtype, op.inputs[1].shape)])


def reshape_like(x: Tensor, like: Tensor) -> Tensor:
    """Reshapes `x` to `like`'s shape: static Reshape when known, else the runtime shape of `like`."""
    if like.shape.is_fully_defined():
        return make_tensor("Reshape", [x], {"shape": tuple(like.shape.as_list())}, name="Reshape")
    return make_tensor("ReshapeLike", [x, like], name="ReshapeLike")


@register_gradient("ReshapeLike")
def _reshape_like_grad(op, grad):
    return [reshape_like(grad, op.inputs[0]), None]


# -- Squeeze / ExpandDims -----------------------------------------------------
def _squeeze_shape(op):
    x = op.inputs[0]
    axes = op.get_attr("squeeze_dims")
    if x.shape.ndims is None:
        return [(x.dtype, unknown_shape())]
    dims = x.shape.as_tuple()
    if not axes:
        if _builtins.any(d is None for d in dims):
            return [(x.dtype, unknown_shape())]
        return [(x.dtype, TensorShape([d for d in dims if d != 1]))]
    axes = {normalize_axis(a, len(dims), "squeeze_dims") for a in axes}
    for a in sorted(axes):
        if dims[a] is not None and dims[a] != 1:
            raise ValueError(f"Can not squeeze dim[{a}], expected a dimension of 1, got {dims[a]}")
    return [(x.dtype, TensorShape([d for i, d in enumerate(dims) if i not in axes]))]


register_op("Squeeze", _squeeze_shape)


def squeeze(input, axis=None, name=None, squeeze_dims=None):
    """`tf.squeeze`: removes size-1 dims (all of them, or those in `axis`)."""
    axis = axis if axis is not None else squeeze_dims
    axis = axis_arg(axis)
    if isinstance(axis, int):
        axis = (axis,)
    return make_tensor("Squeeze", [convert_to_tensor(input)], {"squeeze_dims": axis or ()}, name=name,
                       default_name="Squeeze")


@register_gradient("Squeeze")
def _squeeze_grad(op, grad):
    return [reshape_like(grad, op.inputs[0])]


def _expand_dims_shape(op):
    x = op.inputs[0]
    axis = op.get_attr("axis")
    if x.shape.ndims is None:
        return [(x.dtype, unknown_shape())]
    n = x.shape.ndims
    if not -n - 1 <= axis <= n:
        raise ValueError(f"axis {axis} is out of bounds: must be in the range [{-n - 1}, {n}]")
    dims = list(x.shape.as_tuple())
    dims.insert(axis % (n + 1), 1)
    return [(x.dtype, TensorShape(dims))]


register_op("ExpandDims", _expand_dims_shape)


def expand_dims(input, axis=None, name=None, dim=None):
    """`tf.expand_dims(input, axis)` (TF1 alias `dim`): inserts a size-1 dimension."""
    if axis is not None and dim is not None:
        raise ValueError("Cannot specify both 'axis' and 'dim'")
    axis = axis if axis is not None else dim
    if axis is None:
        raise ValueError("Must specify an axis argument to tf.expand_dims()")
    return make_tensor("ExpandDims", [convert_to_tensor(input)], {"axis": int(axis_arg(axis))}, name=name,
                       default_name="ExpandDims")


@register_gradient("ExpandDims")
def _expand_dims_grad(op, grad):
    return [reshape_like(grad, op.inputs[0])]


# -- Transpose ----------------------------------------------------------------
def _transpose_shape(op):
    x = op.inputs[0]
    perm = op.get_attr("perm")
    if x.shape.ndims is None:
        return [(x.dtype, unknown_shape(None if perm is None else len(perm)))]
    dims = x.shape.as_tuple()
    if perm is None:
        return [(x.dtype, TensorShape(dims[::-1]))]
    if len(perm) != len(dims):
        raise ValueError(f"Dimension must be {len(dims)} but is {len(perm)}")
    if sorted(p % len(dims) for p in perm) != list(_builtins.range(len(dims))):
        raise ValueError(f"perm {list(perm)} is not a permutation of 0..{len(dims) - 1}")
    return [(x.dtype, TensorShape([dims[p] for p in perm]))]


register_op("Transpose", _transpose_shape)


def transpose(a, perm=None, name="transpose", conjugate=False):
    """`tf.transpose`: permutes dims by `perm` (default: reversed)."""
    a = convert_to_tensor(a)
    perm = axis_arg(perm)
    if perm is not None and a.shape.ndims is not None:
        perm = tuple(p % a.shape.ndims for p in perm)
    return make_tensor("Transpose", [a], {"perm": perm}, name=name)


@register_gradient("Transpose")
def _transpose_grad(op, grad):
    perm = op.get_attr("perm")
    inv = None if perm is None else tuple(int(i) for i in np.argsort(perm))
    return [make_tensor("Transpose", [grad], {"perm": inv}, name="transpose")]


# -- Shape / Size / Rank (constants when statically known, as TF1's optimize=True) --
def _out_type(op):
    return op.get_attr("out_type")


register_op("Shape", lambda op: [(_out_type(op), TensorShape([op.inputs[0].shape.ndims]))])
register_op("Size", lambda op: [(_out_type(op), TensorShape([]))])
register_op("Rank", lambda op: [(_dtypes.int32, TensorShape([]))])
for _t in ("Shape", "Size", "Rank"):
    NotDifferentiable(_t)


def shape(input, name=None, out_type=_dtypes.int32):
    """`tf.shape`: the runtime shape as a 1-D int tensor (a Const when the static shape is fully known)."""
    input = convert_to_tensor(input)
    out_type = _dtypes.as_dtype(out_type)
    if input.shape.is_fully_defined():
        return constant(input.shape.as_list(), dtype=out_type, name=name or "Shape")
    return make_tensor("Shape", [input], {"out_type": out_type}, name=name, default_name="Shape")


def size(input, name=None, out_type=_dtypes.int32):
    input = convert_to_tensor(input)
    out_type = _dtypes.as_dtype(out_type)
    if input.shape.is_fully_defined():
        return constant(input.shape.num_elements(), dtype=out_type, name=name or "Size")
    return make_tensor("Size", [input], {"out_type": out_type}, name=name, default_name="Size")


def rank(input, name=None):
    input = convert_to_tensor(input)
    if input.shape.ndims is not None:
        return constant(input.shape.ndims, dtype=_dtypes.int32, name=name or "Rank")
    return make_tensor("Rank", [input], {"out_type": _dtypes.int32}, name=name, default_name="Rank")


# -- Fill / zeros / ones ------------------------------------------------------
def _fill_shape(op):
    value = op.inputs[0]
    if value.shape.ndims not in (None, 0):
        raise ValueError(f"Shape must be rank 0 but is rank {value.shape.ndims} for 'value' of 'Fill'")
    static = op.get_attr("shape")
    if static is not None:
        if _builtins.any(d < 0 for d in static):
            raise ValueError(f"Fill dimensions must be >= 0, got dims {list(static)}")
        return [(value.dtype, TensorShape(static))]
    return [(value.dtype, partial_shape_value(op.inputs[1]))]


register_op("Fill", _fill_shape)


@register_gradient("Fill")
def _fill_grad(op, grad):
    from .reduction_ops import reduce_sum  # late: reduction_ops imports array_ops at load
    return [reduce_sum(grad)] + [None] * (len(op.inputs) - 1)


def fill(dims, value, name=None):
    """`tf.fill(dims, value)`: a tensor of shape `dims` filled with the scalar `value`."""
    value = convert_to_tensor(value)
    static, dynamic = shape_arg(dims, "dims")
    inputs = [value] if dynamic is None else [value, dynamic]
    return make_tensor("Fill", inputs, {"shape": static}, name=name, default_name="Fill")


def _filled(shape_, value, dtype, name, default_name):
    dtype = _dtypes.as_dtype(dtype)
    static, dynamic = shape_arg(shape_)
    with name_scope(name, default_name, []) as scope:
        if dynamic is None and int(np.prod(static)) < 1000 and min(static, default=0) >= 0:  # TF1 folds small fills
            return constant(np.full(static, value, dtype=dtype.np_dtype), name=scope)
        return make_tensor("Fill", [constant(value, dtype=dtype)] + ([] if dynamic is None else [dynamic]),
                           {"shape": static}, name=scope)


def zeros(shape, dtype=_dtypes.float32, name=None):
    return _filled(shape, 0, dtype, name, "zeros")


def ones(shape, dtype=_dtypes.float32, name=None):
    return _filled(shape, 1, dtype, name, "ones")


def _like_shape(op):
    return [(op.get_attr("dtype"), op.inputs[0].shape)]


register_op("ZerosLike", _like_shape)
register_op("OnesLike", _like_shape)
NotDifferentiable("ZerosLike")
NotDifferentiable("OnesLike")


def _filled_like(op_type, tensor, dtype, name, default_name, optimize):
    tensor = convert_to_tensor(tensor)
    dtype = _dtypes.as_dtype(dtype) if dtype is not None else tensor.dtype
    if optimize and tensor.shape.is_fully_defined():
        value = 0 if op_type == "ZerosLike" else 1
        return _filled(tuple(tensor.shape.as_list()), value, dtype, name, default_name)
    return make_tensor(op_type, [tensor], {"dtype": dtype}, name=name, default_name=default_name)


def zeros_like(tensor, dtype=None, name=None, optimize=True):
    return _filled_like("ZerosLike", tensor, dtype, name, "zeros_like", optimize)


def ones_like(tensor, dtype=None, name=None, optimize=True):
    return _filled_like("OnesLike", tensor, dtype, name, "ones_like", optimize)


from .slicing_ops import *  # noqa: E402,F401,F403  (TF's array_ops holds these)
from .slicing_ops import __all__ as _slicing_all  # noqa: E402
from .join_ops import *  # noqa: E402,F401,F403
from .join_ops import __all__ as _join_all  # noqa: E402
from .linalg_ops import *  # noqa: E402,F401,F403
from .linalg_ops import __all__ as _linalg_all  # noqa: E402
from .sequence_ops import *  # noqa: E402,F401,F403  (tf.range, tf.linspace)
from .sequence_ops import __all__ as _sequence_all  # noqa: E402

__all__ += _slicing_all + _join_all + _linalg_all + _sequence_all
