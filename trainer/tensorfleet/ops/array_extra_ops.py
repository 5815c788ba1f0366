"""More of TF 1.15's top-level array ops: unique, invert_permutation, bincount, setdiff1d, timestamp,
scatter_nd and tensor_scatter_nd_*, sort / argsort, roll, meshgrid,
confusion_matrix, truncatediv / truncatemod, shape_n, broadcast_static/dynamic_shape, get_static_value,
ensure_shape.

Sits in `ops/`; kernels in kernels/array_extra_kernels.py. ScatterNd has a gradient
(a gather of the incoming gradient, as TF's); the others are composites or have no gradient.
"""
from __future__ import annotations

__all__ = ["unique", "unique_with_counts", "invert_permutation", "bincount", "setdiff1d", "timestamp",
           "scatter_nd", "tensor_scatter_nd_add", "tensor_scatter_nd_sub", "tensor_scatter_nd_update",
           "tensor_scatter_add", "tensor_scatter_sub", "tensor_scatter_update", "sort", "argsort", "roll",
           "meshgrid", "confusion_matrix", "truncatediv", "truncatemod", "shape_n", "broadcast_static_shape",
           "broadcast_dynamic_shape", "get_static_value", "ensure_shape"]

import numpy as np

from .. import dtypes as _dtypes
from ..default_graph import name_scope
from ..tensor_shape import TensorShape, as_shape, unknown_shape
from . import array_ops as _a
from . import math_ops as _m
from .common import (NotDifferentiable, binary_inputs, broadcast_shape, convert_to_tensor, make_op, make_tensor,
                     register_gradient, register_op)
from .shape_util import constant_value

register_op("Unique", lambda op: [(op.inputs[0].dtype, TensorShape([None])),
                                  (op.get_attr("out_idx"), op.inputs[0].shape),
                                  (op.get_attr("out_idx"), TensorShape([None]))])


def unique_with_counts(x, out_idx=_dtypes.int32, name=None):
    """`tf.unique_with_counts`: (values in order of first occurrence, index of each x in values, counts)."""
    op = make_op("Unique", [convert_to_tensor(x)], {"out_idx": _dtypes.as_dtype(out_idx)}, name=name,
                 default_name="UniqueWithCounts")
    return tuple(op.outputs)


def unique(x, out_idx=_dtypes.int32, name=None):
    """`tf.unique`: (y, idx) with y the distinct values in order of first occurrence and x == y[idx]."""
    y, idx, _ = unique_with_counts(x, out_idx, name=name or "Unique")
    return y, idx


register_op("InvertPermutation", lambda op: [(op.inputs[0].dtype, op.inputs[0].shape)])


def invert_permutation(x, name=None):
    return make_tensor("InvertPermutation", [convert_to_tensor(x)], name=name, default_name="InvertPermutation")


register_op("Bincount", lambda op: [(op.get_attr("dtype"), TensorShape([None]))])


def bincount(arr, weights=None, minlength=None, maxlength=None, dtype=_dtypes.int32):
    """`tf.bincount`: counts (or summed weights) of each value in arr; output dtype = weights' or `dtype`."""
    arr = _m.cast(convert_to_tensor(arr), _dtypes.int32)
    if weights is None:
        w, dt = _a.constant(0, dtype=_dtypes.as_dtype(dtype)), _dtypes.as_dtype(dtype)
    else:
        w = convert_to_tensor(weights)
        dt = w.dtype
    return make_tensor("Bincount", [arr, w], {"minlength": minlength, "maxlength": maxlength, "dtype": dt,
                                              "unweighted": weights is None}, name="bincount")


register_op("SetDiff1d", lambda op: [(op.inputs[0].dtype, TensorShape([None])),
                                     (op.get_attr("index_dtype"), TensorShape([None]))])


def setdiff1d(x, y, index_dtype=_dtypes.int32, name=None):
    """`tf.setdiff1d`: (the values of x not in y, in x's order; their positions in x)."""
    x = convert_to_tensor(x)
    op = make_op("SetDiff1d", [x, convert_to_tensor(y, dtype=x.dtype)], {"index_dtype": _dtypes.as_dtype(index_dtype)},
                 name=name, default_name="ListDiff")
    return tuple(op.outputs)


register_op("Timestamp", lambda op: [(_dtypes.float64, TensorShape([]))], stateful=True)


def timestamp(name=None):
    """`tf.timestamp`: seconds since the epoch (float64) when the op runs."""
    return make_tensor("Timestamp", [], name=name, default_name="Timestamp")


for _t in ("Unique", "InvertPermutation", "Bincount", "SetDiff1d", "Timestamp"):
    NotDifferentiable(_t)


# -- scatter_nd ---------------------------------------------------------------------
def _scatter_nd_shape(op):
    v = constant_value(op.inputs[2])
    return [(op.inputs[1].dtype, TensorShape([int(d) for d in v]) if v is not None else unknown_shape())]


register_op("ScatterNd", _scatter_nd_shape)


@register_gradient("ScatterNd")
def _scatter_nd_grad(op, grad):
    from .index_ops import gather_nd
    return [None, gather_nd(grad, op.inputs[0]), None]


def scatter_nd(indices, updates, shape, name=None):
    """`tf.scatter_nd`: zeros of `shape` with `updates` added at `indices` (duplicates sum)."""
    updates = convert_to_tensor(updates)
    idx = convert_to_tensor(indices)
    return make_tensor("ScatterNd", [idx, updates, convert_to_tensor(shape, dtype=idx.dtype)], name=name,
                       default_name="ScatterNd")


def tensor_scatter_nd_add(tensor, indices, updates, name=None):
    """`tf.tensor_scatter_nd_add`: a copy of `tensor` with updates added at indices."""
    with name_scope(name, "TensorScatterAdd", [tensor, indices, updates]):
        t = convert_to_tensor(tensor)
        return _m.add(t, scatter_nd(indices, convert_to_tensor(updates, dtype=t.dtype), _a.shape(t)))


def tensor_scatter_nd_sub(tensor, indices, updates, name=None):
    with name_scope(name, "TensorScatterSub", [tensor, indices, updates]):
        t = convert_to_tensor(tensor)
        return _m.subtract(t, scatter_nd(indices, convert_to_tensor(updates, dtype=t.dtype), _a.shape(t)))


def tensor_scatter_nd_update(tensor, indices, updates, name=None):
    """`tf.tensor_scatter_nd_update`: a copy of `tensor` with the slices at indices replaced (unique indices)."""
    with name_scope(name, "TensorScatterUpdate", [tensor, indices, updates]):
        t = convert_to_tensor(tensor)
        u = convert_to_tensor(updates, dtype=t.dtype)
        hit = scatter_nd(indices, _a.ones_like(u), _a.shape(t))
        return _m.add(_m.multiply(t, _m.subtract(_a.ones_like(t), hit)), scatter_nd(indices, u, _a.shape(t)))


tensor_scatter_add, tensor_scatter_sub, tensor_scatter_update = (tensor_scatter_nd_add, tensor_scatter_nd_sub,
                                                                 tensor_scatter_nd_update)


# -- sorting, rolling, grids ------------------------------------------------------------
def _last_axis(x, axis):
    n = x.shape.ndims
    if n is None or axis not in (-1, n - 1):
        raise ValueError(f"sort/argsort: only the last axis is supported (got axis={axis}, rank {n})")


def sort(values, axis=-1, direction="ASCENDING", name=None):
    """`tf.sort` along the last axis (through top_k, so it has top_k's gradient)."""
    from .scan_sort_ops import top_k
    with name_scope(name, "sort", [values]):
        x = convert_to_tensor(values)
        _last_axis(x, axis)
        k = _a.shape(x)[-1]
        if direction == "DESCENDING":
            return top_k(x, k)[0]
        if direction != "ASCENDING":
            raise ValueError(f"direction must be 'ASCENDING' or 'DESCENDING', got {direction!r}")
        return _m.negative(top_k(_m.negative(x), k)[0])


def argsort(values, axis=-1, direction="ASCENDING", stable=False, name=None):
    """`tf.argsort` along the last axis (ties keep their order)."""
    from .scan_sort_ops import top_k
    with name_scope(name, "argsort", [values]):
        x = convert_to_tensor(values)
        _last_axis(x, axis)
        k = _a.shape(x)[-1]
        return top_k(x if direction == "DESCENDING" else _m.negative(x), k)[1]


def roll(input, shift, axis, name=None):
    """`tf.roll` with static shifts: elements leaving one end come back at the other (numpy's np.roll)."""
    from .join_ops import concat
    with name_scope(name, "Roll", [input]):
        x = convert_to_tensor(input)
        shifts, axes = np.atleast_1d(shift).tolist(), np.atleast_1d(axis).tolist()
        for s, ax in zip(shifts, axes, strict=True):
            n = x.shape.as_list()[ax]
            if n is None:
                raise ValueError("roll: the rolled dimensions must be known")
            s = int(s) % n
            if s:
                begin = [slice(None)] * x.shape.ndims
                head, tail = list(begin), list(begin)
                head[ax], tail[ax] = slice(n - s, None), slice(None, n - s)
                x = concat([x[tuple(head)], x[tuple(tail)]], ax)
        return x


def meshgrid(*args, **kwargs):
    """`tf.meshgrid(*vectors, indexing='xy')`, as numpy.meshgrid."""
    indexing = kwargs.pop("indexing", "xy")
    name = kwargs.pop("name", "meshgrid")
    if kwargs:
        raise TypeError(f"meshgrid got unexpected keyword arguments {sorted(kwargs)}")
    if indexing not in ("xy", "ij"):
        raise ValueError("indexing parameter must be either 'xy' or 'ij'")
    with name_scope(name, "meshgrid", args):
        vecs = [_a.reshape(convert_to_tensor(v), [-1]) for v in args]
        n = len(vecs)
        shapes = [_a.size(v) for v in vecs]
        if indexing == "xy" and n > 1:
            shapes[0], shapes[1] = shapes[1], shapes[0]
        out = []
        for i, v in enumerate(vecs):
            axis = (1 - i if i < 2 else i) if indexing == "xy" and n > 1 else i
            shape = [1] * n
            shape[axis] = -1
            out.append(_m.add(_a.reshape(v, shape), _a.zeros(_a.stack(shapes), dtype=v.dtype)))
        return out


def confusion_matrix(labels, predictions, num_classes=None, dtype=_dtypes.int32, name=None, weights=None):
    """`tf.confusion_matrix`: [num_classes, num_classes], rows are labels, columns predictions."""
    with name_scope(name, "confusion_matrix", [labels, predictions]):
        lab = _m.cast(_a.reshape(convert_to_tensor(labels), [-1]), _dtypes.int64)
        pred = _m.cast(_a.reshape(convert_to_tensor(predictions), [-1]), _dtypes.int64)
        if num_classes is None:
            n = _m.add(_m.maximum(_m.reduce_max(lab), _m.reduce_max(pred)), _a.constant(1, dtype=_dtypes.int64))
        else:
            n = _a.constant(int(num_classes), dtype=_dtypes.int64)
        dt = _dtypes.as_dtype(dtype)
        w = _a.ones_like(_m.cast(lab, dt)) if weights is None else _m.cast(_a.reshape(weights, [-1]), dt)
        return scatter_nd(_a.stack([lab, pred], axis=1), w, _a.stack([n, n]))


def truncatediv(x, y, name=None):
    """`tf.truncatediv`: x / y rounded toward zero (C semantics)."""
    with name_scope(name, "truncatediv", [x, y]):
        x, y = binary_inputs(x, y, "TruncateDiv")
        q = _m.floordiv(_m.abs(x), _m.abs(y))
        return _m.multiply(_m.multiply(_m.sign(x), _m.sign(y)), q)


def truncatemod(x, y, name=None):
    """`tf.truncatemod`: the remainder with the sign of x (C's fmod)."""
    with name_scope(name, "truncatemod", [x, y]):
        x, y = binary_inputs(x, y, "TruncateMod")
        return _m.subtract(x, _m.multiply(truncatediv(x, y), y))


# -- shapes --------------------------------------------------------------------------
def shape_n(input, out_type=_dtypes.int32, name=None):
    """`tf.shape_n`: [tf.shape(t) for t in input]."""
    with name_scope(name, "ShapeN", input):
        return [_a.shape(t, out_type=out_type) for t in input]


def broadcast_static_shape(shape_x, shape_y):
    """`tf.broadcast_static_shape`: the broadcast TensorShape (ValueError if incompatible)."""
    return broadcast_shape(as_shape(shape_x), as_shape(shape_y))


def broadcast_dynamic_shape(shape_x, shape_y):
    """`tf.broadcast_dynamic_shape`: the broadcast shape of two shape vectors, as a tensor."""
    x = _a.zeros(convert_to_tensor(shape_x, dtype=_dtypes.int32), dtype=_dtypes.int8)
    y = _a.zeros(convert_to_tensor(shape_y, dtype=_dtypes.int32), dtype=_dtypes.int8)
    return _a.shape(_m.add(x, y))


def get_static_value(tensor, partial=False):
    """`tf.get_static_value`: the tensor's value if it is known when the graph is built, else None."""
    return constant_value(convert_to_tensor(tensor))


def ensure_shape(x, shape, name=None):
    """`tf.ensure_shape`: x with its static shape refined to `shape`; ValueError if they cannot both hold.

    Checked when the graph is built only (TF also checks the runtime shape)."""
    x = convert_to_tensor(x)
    want = as_shape(shape)
    if not x.shape.is_compatible_with(want):
        raise ValueError(f"Shape {x.shape} is not compatible with expected shape {want}.")
    out = _a.identity(x, name=name or "EnsureShape")
    out.set_shape(x.shape.merge_with(want))
    return out
