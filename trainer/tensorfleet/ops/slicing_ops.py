"""Slicing ops: strided_slice (behind `tensor[...]`), slice, gather, boolean_mask, reverse, pad, one_hot.

Sits in `ops/` beside `array_ops` (re-exported from there); kernels in `kernels/array_kernels.py`.
A slice is stored as a static numpy-style basic-indexing key (ints, slices, None, Ellipsis) in attr `key`.
"""
from __future__ import annotations

__all__ = ["strided_slice", "slice", "gather", "boolean_mask", "reverse", "reverse_v2", "pad", "one_hot"]

import builtins as _builtins

import numpy as np

from .. import dtypes as _dtypes
from ..default_graph import name_scope
from .common import (NotDifferentiable, TensorShape, convert_to_tensor, is_tensor_like, make_tensor,
                     register_gradient, register_op, unknown_shape)
from . import computed_bounds_ops as _bounds
from .shape_util import axis_arg, constant_value, normalize_axis

_py_slice = _builtins.slice


# -- StridedSlice / Slice -----------------------------------------------------
def key_shape(shape: TensorShape, key: tuple) -> TensorShape:
    """Static shape of `x[key]` for a basic-indexing key; out-of-range ints raise ValueError."""
    if shape.ndims is None:
        return unknown_shape()
    dims = shape.as_tuple()
    consuming = _builtins.sum(1 for k in key if k is not None and k is not Ellipsis)
    if consuming > len(dims):
        raise ValueError(f"Index out of range using input dim {len(dims)}; input has only {len(dims)} dims")
    out, i = [], 0
    for k in key:
        if k is None:
            out.append(1)
        elif k is Ellipsis:
            n = len(dims) - consuming
            out.extend(dims[i:i + n])
            i += n
        elif isinstance(k, _py_slice):
            d = dims[i]
            out.append(None if d is None else len(_builtins.range(*k.indices(d))))
            i += 1
        else:
            d = dims[i]
            if d is not None and not -d <= k < d:
                raise ValueError(f"slice index {k} of dimension {i} out of bounds.")
            i += 1
    if Ellipsis not in key:
        out.extend(dims[i:])
    return TensorShape(out)


def _strided_slice_shape(op):
    x = op.inputs[0]
    if len(op.inputs) == 4:  # TF's form: computed begin/end/strides (computed_bounds_ops)
        return [(x.dtype, _bounds.dynamic_strided_slice_shape(op))]
    return [(x.dtype, key_shape(x.shape, op.get_attr("key")))]


register_op("StridedSlice", _strided_slice_shape)
register_op("StridedSliceGrad", lambda op: [(op.inputs[0].dtype, op.inputs[1].shape)])


@register_gradient("StridedSlice")
def _strided_slice_grad(op, grad):
    bounds = list(op.inputs[1:])
    return [make_tensor("StridedSliceGrad", [grad, op.inputs[0]] + bounds, dict(op.attrs), name="StridedSliceGrad")
            ] + [None] * len(bounds)


@register_gradient("StridedSliceGrad")
def _strided_slice_grad_grad(op, grad):
    bounds = list(op.inputs[2:])
    return [make_tensor("StridedSlice", [grad] + bounds, dict(op.attrs), name="StridedSlice"), None] + \
        [None] * len(bounds)


def _index_value(v, what="index"):
    if v is None or isinstance(v, (int, np.integer)):
        return None if v is None else int(v)
    if is_tensor_like(v):
        cv = constant_value(convert_to_tensor(v))
        if cv is not None and cv.ndim == 0 and cv.dtype.kind in "iu":
            return int(cv)
    raise TypeError(f"Only integers, slices (`:`), ellipsis (`...`), tf.newaxis (`None`) and constant scalar "
                    f"int tensors are valid indices, got {v!r} ({what}); use tf.gather for tensor indices")


def _normalize_key(slice_spec) -> tuple:
    items = slice_spec if isinstance(slice_spec, tuple) else (slice_spec,)
    key = []
    for s in items:
        if s is None or s is Ellipsis:
            key.append(s)
        elif isinstance(s, _py_slice):
            step = _index_value(s.step, "step")
            if step == 0:
                raise ValueError("slice step cannot be zero")
            key.append(_py_slice(_index_value(s.start, "start"), _index_value(s.stop, "stop"), step))
        elif isinstance(s, (bool, np.bool_)):
            raise TypeError("Boolean indices are not supported; use tf.boolean_mask")
        else:
            key.append(_index_value(s))
    if key.count(Ellipsis) > 1:
        raise ValueError("Multiple ellipses in slice spec not allowed")
    return tuple(key)


def _computed(v) -> bool:
    """A tensor index whose value is not known when the graph is built."""
    return is_tensor_like(v) and constant_value(convert_to_tensor(v)) is None


def getitem(tensor, slice_spec, name="strided_slice"):
    """`tensor[slice_spec]` (Tensor.__getitem__): numpy basic indexing as one StridedSlice op; a computed
    scalar index or bound gives TF's form (begin/end/strides inputs, `computed_bounds_ops`)."""
    items = slice_spec if isinstance(slice_spec, tuple) else (slice_spec,)
    if any(_computed(p) for s in items for p in ((s.start, s.stop, s.step) if isinstance(s, _py_slice) else (s,))):
        if sum(s is Ellipsis for s in items) > 1:
            raise ValueError("Multiple ellipses in slice spec not allowed")
        return _bounds.getitem_computed(tensor, items, name=name)
    return make_tensor("StridedSlice", [convert_to_tensor(tensor)], {"key": _normalize_key(slice_spec)}, name=name)


def strided_slice(input_, begin, end, strides=None, begin_mask=0, end_mask=0, ellipsis_mask=0, new_axis_mask=0,
                  shrink_axis_mask=0, var=None, name=None):
    """`tf.strided_slice` with TF's masks; computed begin/end/strides give TF's form of the op."""
    if any(_computed_vector(v) for v in (begin, end, strides)):
        masks = {"begin_mask": begin_mask, "end_mask": end_mask, "ellipsis_mask": ellipsis_mask,
                 "new_axis_mask": new_axis_mask, "shrink_axis_mask": shrink_axis_mask}
        if strides is None:
            strides = [1] * len(begin) if isinstance(begin, (list, tuple)) else _ones_like_vector(begin)
        return _bounds.strided_slice_computed(input_, begin, end, strides, masks, name=name)
    begin = [_index_value(b) for b in _static_list(begin)]
    end = [_index_value(e) for e in _static_list(end)]
    strides = [1] * len(begin) if strides is None else [_index_value(s) for s in _static_list(strides)]
    if not len(begin) == len(end) == len(strides):
        raise ValueError("begin, end and strides must have the same length")
    key = []
    for i, (b, e, s) in enumerate(zip(begin, end, strides)):
        bit = 1 << i
        if ellipsis_mask & bit:
            key.append(Ellipsis)
        elif new_axis_mask & bit:
            key.append(None)
        elif shrink_axis_mask & bit:
            key.append(b)
        else:
            key.append(_py_slice(None if begin_mask & bit else b, None if end_mask & bit else e, s))
    return make_tensor("StridedSlice", [convert_to_tensor(input_)], {"key": _normalize_key(tuple(key))},
                       name=name, default_name="StridedSlice")


def _computed_vector(v) -> bool:
    if v is None:
        return False
    if isinstance(v, (list, tuple)):
        return any(_computed(x) for x in v)
    return _computed(v)


def _ones_like_vector(v):
    from .array_ops import ones_like
    return ones_like(convert_to_tensor(v))


def _static_list(v):
    if is_tensor_like(v):
        cv = constant_value(convert_to_tensor(v))
        if cv is None:
            raise TypeError("begin/end/strides/size must be static (Python ints or constants)")
        return [int(x) for x in np.atleast_1d(cv)]
    return list(v)


register_op("Slice", _strided_slice_shape)


@register_gradient("Slice")
def _slice_grad(op, grad):
    return _strided_slice_grad(op, grad)


def slice(input_, begin, size, name=None):  # noqa: A001
    """`tf.slice(input_, begin, size)`: size -1 takes everything to the end of that dimension."""
    input_ = convert_to_tensor(input_)
    if _computed_vector(begin) or _computed_vector(size):
        return _computed_slice(input_, begin, size, name)
    begin, size = _static_list(begin), _static_list(size)
    if len(begin) != len(size) or (input_.shape.ndims is not None and len(begin) != input_.shape.ndims):
        raise ValueError(f"Expected begin and size arguments to be 1-D tensors of size {input_.shape.ndims}, "
                         f"but got shapes [{len(begin)}] and [{len(size)}] instead.")
    dims = input_.shape.as_tuple() if input_.shape.ndims is not None else [None] * len(begin)
    key = []
    for i, (b, s, d) in enumerate(zip(begin, size, dims)):
        if b < 0 or s < -1 or (d is not None and (b > d or (s != -1 and b + s > d))):
            raise ValueError(f"Expected size[{i}] in [0, {(d - b) if d is not None else '?'}], but got {s}"
                             if b >= 0 else f"Expected begin[{i}] >= 0, got {b}")
        key.append(_py_slice(b, None if s == -1 else b + s, None))
    return make_tensor("Slice", [input_], {"key": tuple(key)}, name=name, default_name="Slice")


def _computed_slice(input_, begin, size, name):
    """tf.slice with computed begin/size: a StridedSlice in TF's form, end = begin + size (size -1: to the end)."""
    from .array_ops import ones_like, shape
    from .comparison_ops import where_v2
    from .math_ops import add, less

    with name_scope(name, "Slice") as scope:
        b = convert_to_tensor(begin, dtype=_dtypes.int32, name="begin")
        n = convert_to_tensor(size, dtype=_dtypes.int32, name="size")
        e = where_v2(less(n, 0), shape(input_, out_type=_dtypes.int32), add(b, n))
        return _bounds.strided_slice_computed(input_, b, e, ones_like(b), {}, name=scope)


# -- Gather -------------------------------------------------------------------
def _gather_shape(op):
    params, indices = op.inputs
    if not indices.dtype.is_integer:
        raise TypeError(f"Value passed to parameter 'indices' has DataType {indices.dtype.name} not in list of "
                        f"allowed values: int32, int64")
    axis = op.get_attr("axis")
    if params.shape.ndims is None or indices.shape.ndims is None:
        return [(params.dtype, unknown_shape())]
    if params.shape.ndims == 0:
        raise ValueError("Shape must be at least rank 1 but is rank 0")
    axis = normalize_axis(axis, params.shape.ndims)
    dims = params.shape.as_tuple()
    return [(params.dtype, TensorShape(dims[:axis] + indices.shape.as_tuple() + dims[axis + 1:]))]


register_op("GatherV2", _gather_shape)
register_op("GatherGrad", lambda op: [(op.inputs[0].dtype, op.inputs[2].shape)])


def gather(params, indices, validate_indices=None, name=None, axis=0, batch_dims=0):
    """`tf.gather`: slices of `params` along `axis` at `indices` (out-of-range raises at run time)."""
    if batch_dims != 0:
        raise NotImplementedError("tf.gather: batch_dims != 0 is not supported")
    params = convert_to_tensor(params)
    indices = convert_to_tensor(indices)
    axis = int(axis_arg(axis))
    if params.shape.ndims is not None:
        axis = normalize_axis(axis, params.shape.ndims)
    return make_tensor("GatherV2", [params, indices], {"axis": axis}, name=name, default_name="GatherV2")


@register_gradient("GatherV2")
def _gather_grad(op, grad):
    """Along axis 0 an IndexedSlices, as TF's; along another axis dense (repeated indices accumulate)."""
    params, indices = op.inputs
    if op.get_attr("axis") == 0:
        from .indexed_slices_ops import gather_gradient  # (it builds on this module's gather)
        return [gather_gradient(grad, indices, params), None]
    return [make_tensor("GatherGrad", [grad, indices, params], {"axis": op.get_attr("axis")}, name="GatherGrad"),
            None]


@register_gradient("GatherGrad")
def _gather_grad_grad(op, grad):
    return [gather(grad, op.inputs[1], axis=op.get_attr("axis")), None, None]


# -- BooleanMask --------------------------------------------------------------
def _boolean_mask_shape(op):
    x, mask = op.inputs
    axis = op.get_attr("axis")
    k = mask.shape.ndims
    if x.shape.ndims is None:
        return [(x.dtype, unknown_shape())]
    dims = x.shape.as_tuple()
    if not x.shape[axis:axis + k].is_compatible_with(mask.shape):
        raise ValueError(f"Shapes {x.shape[axis:axis + k]} and {mask.shape} are incompatible")
    return [(x.dtype, TensorShape(dims[:axis] + (None,) + dims[axis + k:]))]


register_op("BooleanMask", _boolean_mask_shape)
register_op("BooleanMaskGrad", lambda op: [(op.inputs[0].dtype, op.inputs[2].shape)])


def boolean_mask(tensor, mask, name="boolean_mask", axis=None):
    """`tf.boolean_mask`: the elements (or slices) of `tensor` where the k-D bool `mask` is true."""
    tensor = convert_to_tensor(tensor)
    mask = convert_to_tensor(mask)
    if not mask.dtype.is_bool:
        raise TypeError(f"mask must be a bool tensor, got {mask.dtype.name}")
    if mask.shape.ndims is None:
        raise ValueError("Number of mask dimensions must be specified, even if some dimensions are None.")
    if mask.shape.ndims == 0:
        raise ValueError("mask cannot be scalar.")
    axis = 0 if axis is None else int(axis_arg(axis))
    if tensor.shape.ndims is not None:
        axis = normalize_axis(axis, tensor.shape.ndims)
    return make_tensor("BooleanMask", [tensor, mask], {"axis": axis}, name=name)


@register_gradient("BooleanMask")
def _boolean_mask_grad(op, grad):
    x, mask = op.inputs
    return [make_tensor("BooleanMaskGrad", [grad, mask, x], dict(op.attrs), name="BooleanMaskGrad"), None]


@register_gradient("BooleanMaskGrad")
def _boolean_mask_grad_grad(op, grad):
    return [make_tensor("BooleanMask", [grad, op.inputs[1]], dict(op.attrs), name="BooleanMask"), None, None]


# -- ReverseV2 ----------------------------------------------------------------
def _reverse_shape(op):
    x = op.inputs[0]
    for a in op.get_attr("axis"):
        normalize_axis(a, x.shape.ndims)
    return [(x.dtype, x.shape)]


register_op("ReverseV2", _reverse_shape)


def reverse(tensor, axis, name=None):
    """`tf.reverse(tensor, axis)` (op ReverseV2): flips the listed axes."""
    axis = axis_arg(axis)
    axis = (axis,) if isinstance(axis, int) else tuple(axis)
    return make_tensor("ReverseV2", [convert_to_tensor(tensor)], {"axis": axis}, name=name,
                       default_name="ReverseV2")


reverse_v2 = reverse


@register_gradient("ReverseV2")
def _reverse_grad(op, grad):
    return [make_tensor("ReverseV2", [grad], dict(op.attrs), name="ReverseV2")]


# -- Pad ----------------------------------------------------------------------
def _pad_shape(op):
    x = op.inputs[0]
    pads = op.get_attr("paddings")
    if x.shape.ndims is None:
        return [(x.dtype, unknown_shape(len(pads)))]
    if len(pads) != x.shape.ndims:
        raise ValueError(f"The first dimension of paddings must be the rank of inputs[{len(pads)},2] "
                         f"{list(x.shape.as_tuple())}")
    dims = x.shape.as_tuple()
    if op.type == "MirrorPad":
        off = 0 if op.get_attr("mode") == "reflect" else 1
        for (a, b), d in zip(pads, dims):
            if d is not None and (a > d - 1 + off or b > d - 1 + off):
                raise ValueError(f"paddings must be less than{'' if off == 0 else ' or equal to'} the dimension "
                                 f"size: {a}, {b} not less than {d}")
    return [(x.dtype, TensorShape([None if d is None else d + a + b for d, (a, b) in zip(dims, pads)]))]


register_op("Pad", _pad_shape)
register_op("MirrorPad", _pad_shape)
# MirrorPadGrad(grad, like): folds the mirrored borders of `grad` back onto `like`'s shape (TF's MirrorPadGrad)
register_op("MirrorPadGrad", lambda op: [(op.inputs[0].dtype, op.inputs[1].shape)])


@register_gradient("Pad")
def _pad_grad(op, grad):
    key = tuple(_py_slice(a, -b if b else None, None) for a, b in op.get_attr("paddings"))
    return [make_tensor("StridedSlice", [grad], {"key": key}, name="Slice")]


@register_gradient("MirrorPad")
def _mirror_pad_grad(op, grad):
    return [make_tensor("MirrorPadGrad", [grad, op.inputs[0]], dict(op.attrs), name="MirrorPadGrad")]


@register_gradient("MirrorPadGrad")
def _mirror_pad_grad_grad(op, grad):
    return [make_tensor("MirrorPad", [grad], dict(op.attrs), name="MirrorPad"), None]


def pad(tensor, paddings, mode="CONSTANT", name=None, constant_values=0):
    """`tf.pad`: paddings is a static [rank, 2] list; mode CONSTANT (differentiable), REFLECT or SYMMETRIC."""
    tensor = convert_to_tensor(tensor)
    pads = tuple((int(a), int(b)) for a, b in np.asarray(_static_pad(paddings)).reshape(-1, 2).tolist())
    if _builtins.any(a < 0 or b < 0 for a, b in pads):
        raise ValueError(f"Paddings must be non-negative: {list(pads)}")
    mode = mode.upper()
    if mode == "CONSTANT":
        cv = np.asarray(constant_values, dtype=tensor.dtype.np_dtype)
        return make_tensor("Pad", [tensor], {"paddings": pads, "constant_values": cv}, name=name,
                           default_name="Pad" if not cv.any() else "PadV2")
    if mode in ("REFLECT", "SYMMETRIC"):
        return make_tensor("MirrorPad", [tensor], {"paddings": pads, "mode": mode.lower()}, name=name,
                           default_name="MirrorPad")
    raise ValueError(f"Unknown padding mode: {mode}")


def _static_pad(p):
    if is_tensor_like(p):
        cv = constant_value(convert_to_tensor(p))
        if cv is None:
            raise TypeError("paddings must be static (a list or a constant)")
        return cv
    return p


# -- OneHot -------------------------------------------------------------------
def _one_hot_shape(op):
    idx = op.inputs[0]
    if not idx.dtype.is_integer:
        raise TypeError(f"Value passed to parameter 'indices' has DataType {idx.dtype.name} not in list of "
                        f"allowed values: uint8, int32, int64")
    depth, axis = op.get_attr("depth"), op.get_attr("axis")
    if idx.shape.ndims is None:
        return [(op.get_attr("dtype"), unknown_shape())]
    dims = list(idx.shape.as_tuple())
    n = len(dims)
    if not -1 <= axis <= n:
        raise ValueError(f"Expected axis to be -1 or between [0, {n}).  But received: {axis}")
    dims.insert(n if axis == -1 else axis, depth)
    return [(op.get_attr("dtype"), TensorShape(dims))]


register_op("OneHot", _one_hot_shape)
NotDifferentiable("OneHot")


def one_hot(indices, depth, on_value=None, off_value=None, axis=None, dtype=None, name=None):
    """`tf.one_hot`: on/off values must be static; out-of-range indices give an all-off row."""
    indices = convert_to_tensor(indices)
    depth_v = constant_value(convert_to_tensor(depth)) if is_tensor_like(depth) else depth
    if depth_v is None:
        raise TypeError("one_hot: depth must be static")
    values = {}
    inferred = None
    for key, v in (("on", on_value), ("off", off_value)):
        if is_tensor_like(v):
            t = convert_to_tensor(v)
            v = constant_value(t)
            if v is None:
                raise TypeError(f"one_hot: {key}_value must be static")
            inferred = inferred or t.dtype
        elif v is not None and inferred is None:
            python_default = {bool: _dtypes.bool_, int: _dtypes.int32, float: _dtypes.float32}  # TF's constants
            inferred = python_default.get(type(v)) or _dtypes.as_dtype(np.asarray(v).dtype)
        values[key] = v
    dtype = _dtypes.as_dtype(dtype) if dtype is not None else (inferred or _dtypes.float32)
    if inferred is not None and dtype is not inferred and dtype is not None and (on_value is not None or
                                                                                 off_value is not None):
        if (is_tensor_like(on_value) or is_tensor_like(off_value)):
            raise TypeError(f"dtype {dtype.name} of on_value/off_value does not match dtype parameter")
    on = np.asarray(1 if values["on"] is None else values["on"], dtype=dtype.np_dtype)
    off = np.asarray(0 if values["off"] is None else values["off"], dtype=dtype.np_dtype)
    with name_scope(name, "one_hot", [indices]) as scope:
        return make_tensor("OneHot", [indices], {"depth": int(depth_v), "on": on, "off": off,
                                                 "axis": -1 if axis is None else int(axis), "dtype": dtype},
                           name=scope)


