"""Slicing and tiling with bounds computed in the graph: TF's StridedSlice with begin/end/strides inputs (what
`x[:, :n]`, `x[i]` and `tf.strided_slice` build when an index is a computed tensor), and Tile with a
computed `multiples` (`tf.tile(x, [tf.shape(y)[0], 1])`).

The static forms (`slicing_ops`, `join_ops`) keep their index or multiples as attributes, the fast path;
these are the same op types with the values as extra int inputs, resolved when the op runs (TF's form of
StridedSlice: inputs input, begin, end, strides and its five masks). Shapes keep what is known: the rank,
whole-axis slices (`:`), new axes, and dims whose bounds are constants. Gradients are TF's
(StridedSliceGrad / TileGrad with the same extra inputs).
"""
from __future__ import annotations

import builtins as _builtins

import numpy as np

from .. import dtypes as _dtypes
from ..default_graph import name_scope
from .common import TensorShape, convert_to_tensor, make_tensor, unknown_shape
from .shape_util import constant_value

_py_slice = _builtins.slice
MASKS = ("begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask", "shrink_axis_mask")


def key_from_values(begin, end, strides, masks: dict) -> tuple:
    """TF's strided-slice spec (begin/end/strides values and masks) as a numpy basic-indexing key."""
    key: list = []
    for i, (b, e, s) in enumerate(zip(begin, end, strides)):
        bit = 1 << i
        if masks["ellipsis_mask"] & bit:
            key.append(Ellipsis)
        elif masks["new_axis_mask"] & bit:
            key.append(None)
        elif masks["shrink_axis_mask"] & bit:
            key.append(int(b))
        else:
            key.append(_py_slice(None if masks["begin_mask"] & bit else int(b),
                                 None if masks["end_mask"] & bit else int(e), int(s)))
    return tuple(key)


def _elements(t, n: int) -> list:
    """The build-time value of each element of a 1-D int tensor (None where computed)."""
    v = constant_value(t)
    if v is not None:
        return [int(x) for x in np.atleast_1d(v)]
    if t.op.type == "Pack" and len(t.op.inputs) == n:
        return [None if (c := constant_value(x)) is None else int(c) for x in t.op.inputs]
    return [None] * n


def dynamic_strided_slice_shape(op) -> TensorShape:
    x, begin, end, strides = op.inputs
    n = begin.shape.as_tuple()[0] if begin.shape.ndims == 1 else None
    if x.shape.ndims is None or n is None:
        return unknown_shape()
    masks = {m: op.get_attr(m) for m in MASKS}
    b, e, s = (_elements(t, n) for t in (begin, end, strides))
    dims, out, i = x.shape.as_tuple(), [], 0
    consuming = sum(1 for k in range(n) if not (masks["ellipsis_mask"] | masks["new_axis_mask"]) & (1 << k))
    for k in range(n):
        bit = 1 << k
        if masks["ellipsis_mask"] & bit:
            span = len(dims) - consuming
            out.extend(dims[i:i + span])
            i += span
        elif masks["new_axis_mask"] & bit:
            out.append(1)
        elif masks["shrink_axis_mask"] & bit:
            i += 1
        else:
            lo = None if masks["begin_mask"] & bit else b[k]
            hi = None if masks["end_mask"] & bit else e[k]
            known = s[k] is not None and (lo is not None or masks["begin_mask"] & bit) and \
                (hi is not None or masks["end_mask"] & bit)
            d = dims[i] if i < len(dims) else None
            out.append(len(range(*_py_slice(lo, hi, s[k]).indices(d))) if known and d is not None else None)
            i += 1
    if not masks["ellipsis_mask"]:
        out.extend(dims[i:])
    return TensorShape(out)


def _int_vector(values, name):
    dtype = _dtypes.int64 if any(getattr(v, "dtype", None) is _dtypes.int64 for v in values) else _dtypes.int32
    return convert_to_tensor(list(values), dtype=dtype, name=name)


def strided_slice_computed(input_, begin, end, strides, masks: dict, name=None):
    """StridedSlice in TF's form: begin/end/strides as int tensors (lists of ints and scalar tensors pack)."""
    with name_scope(name, "strided_slice") as scope:
        tensors = [begin if not isinstance(begin, (list, tuple)) else _int_vector(begin, "stack"),
                   end if not isinstance(end, (list, tuple)) else _int_vector(end, "stack_1"),
                   strides if not isinstance(strides, (list, tuple)) else _int_vector(strides, "stack_2")]
        tensors = [convert_to_tensor(t) for t in tensors]
        return make_tensor("StridedSlice", [convert_to_tensor(input_)] + tensors,
                           {m: int(masks.get(m, 0)) for m in MASKS}, name=scope)


def _check_index(v) -> None:
    """TF's _check_index: a computed index must be a scalar int32/int64 tensor."""
    if v is None or isinstance(v, (int, np.integer)):
        return
    t = convert_to_tensor(v)
    if t.dtype not in (_dtypes.int32, _dtypes.int64) or t.shape.ndims not in (None, 0):
        raise TypeError(f"Only integers, slices (`:`), ellipsis (`...`), tf.newaxis (`None`) and scalar "
                        f"tf.int32/tf.int64 tensors are valid indices, got {v!r} (use tf.gather for tensor "
                        f"indices)")


def getitem_computed(tensor, items: tuple, name="strided_slice"):
    """`tensor[...]` with a computed index: TF's `_slice_helper` (packs the spec, sets the masks)."""
    for s in items:
        for part in (s.start, s.stop, s.step) if isinstance(s, _py_slice) else (s,):
            if part is not Ellipsis:
                _check_index(part)
    begin, end, strides = [], [], []
    masks = dict.fromkeys(MASKS, 0)
    for i, s in enumerate(items):
        bit = 1 << i
        if isinstance(s, _py_slice):
            for value, dest, mask in ((s.start, begin, "begin_mask"), (s.stop, end, "end_mask")):
                dest.append(0 if value is None else value)
                masks[mask] |= bit if value is None else 0
            strides.append(1 if s.step is None else s.step)
        elif s is Ellipsis or s is None:
            begin.append(0), end.append(0), strides.append(1)
            masks["ellipsis_mask" if s is Ellipsis else "new_axis_mask"] |= bit
        else:
            begin.append(s)
            end.append(s + 1)
            strides.append(1)
            masks["shrink_axis_mask"] |= bit
    return strided_slice_computed(tensor, begin, end, strides, masks, name=name)


def tile_computed(input_, multiples, name=None):
    """Tile(input, multiples) with `multiples` an int tensor computed in the graph."""
    return make_tensor("Tile", [convert_to_tensor(input_), multiples], {"multiples": None}, name=name,
                       default_name="Tile")


def dynamic_tile_shape(op) -> TensorShape:
    x, multiples = op.inputs
    n = multiples.shape.as_tuple()[0] if multiples.shape.ndims == 1 else x.shape.ndims
    if x.shape.ndims is None and n is None:
        return unknown_shape()
    dims = x.shape.as_tuple() if x.shape.ndims is not None else (None,) * n
    m = _elements(multiples, len(dims))
    return TensorShape([None if d is None or k is None else d * k for d, k in zip(dims, m)])
