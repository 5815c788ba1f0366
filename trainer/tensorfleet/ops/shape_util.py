"""Build-time helpers shared by the op modules: static values of tensors and shape/axis arguments.

Sits in `ops/` beside `common.py`: op wrappers call `shape_arg` for `shape`/`dims`
arguments (a static tuple attr when known at build time, else a runtime int tensor
input) and `constant_value` to fold what TF's `tensor_util.constant_value` folds.
"""
from __future__ import annotations

from typing import Optional

import numpy as np

from .. import dtypes as _dtypes
from ..graph import Tensor
from .common import TensorShape, convert_to_tensor, is_tensor_like, unknown_shape


def constant_value(t) -> Optional[np.ndarray]:
    """The value of `t` if it can be computed at graph-build time (Const, Shape of a known shape,
    Pack/StridedSlice/Cast/Identity/Range of such), else None."""
    if not isinstance(t, Tensor):
        return None
    op = t.op
    if op.type == "Const":
        return op.get_attr("value")
    if op.type == "Shape":
        shape = op.inputs[0].shape
        return np.array(shape.as_list(), dtype=t.dtype.np_dtype) if shape.is_fully_defined() else None
    if op.type == "Size":
        n = op.inputs[0].shape.num_elements()
        return None if n is None else np.array(n, dtype=t.dtype.np_dtype)
    if op.type == "Rank":
        r = op.inputs[0].shape.ndims
        return None if r is None else np.array(r, dtype=np.int32)
    if op.type == "Pack":
        vals = [constant_value(x) for x in op.inputs]
        if any(v is None for v in vals):
            return None
        return np.stack(vals, axis=op.get_attr("axis"))
    if op.type == "Range":
        vals = [constant_value(x) for x in op.inputs]
        if any(v is None for v in vals):
            return None
        return range_values(*(np.asarray(v).item() for v in vals), op.get_attr("Tidx").np_dtype)
    if op.type in ("StridedSlice", "Identity", "Cast"):
        v = constant_value(op.inputs[0])
        if v is None:
            return None
        if op.type == "StridedSlice":
            return np.asarray(v[op.get_attr("key")])
        if op.type == "Cast":
            return v.astype(op.get_attr("DstT").np_dtype)
        return v
    return None


def range_size(start, limit, delta, integral: bool) -> int:
    """The length of TF's Range (its RangeOp rule and errors, as ValueError)."""
    if delta == 0:
        raise ValueError(f"Requires delta != 0: {delta}")
    if delta > 0 and start > limit:
        raise ValueError(f"Requires start <= limit when delta > 0: {start}/{limit}")
    if delta < 0 and start < limit:
        raise ValueError(f"Requires start >= limit when delta < 0: {start}/{limit}")
    if integral:
        return int((abs(limit - start) + abs(delta) - 1) // abs(delta))
    return int(np.ceil(abs((limit - start) / delta)))


def range_values(start, limit, delta, np_dtype) -> np.ndarray:
    """TF 1.15's Range values: ints exact; floats accumulate `val += delta` in the dtype, as its kernel's loop
    (a sequential cumsum: 0.1 steps in float32 give 0.70000005 where start + 7 * delta gives 0.7)."""
    dt = np.dtype(np_dtype)
    n = range_size(start, limit, delta, dt.kind in "iu")
    if dt.kind in "iu":
        return (start + delta * np.arange(n, dtype=np.int64)).astype(dt)
    steps = np.full(n, delta, dtype=dt)
    if n:
        steps[0] = start
    return np.cumsum(steps, dtype=dt)


def partial_shape_value(t: Tensor) -> TensorShape:
    """The static shape a 1-D int tensor describes, with None for elements unknown at build time."""
    v = constant_value(t)
    if v is not None:
        return TensorShape([None if int(d) < 0 else int(d) for d in np.atleast_1d(v)])
    if t.op.type == "Shape" and t.op.inputs[0].shape.ndims is not None:
        return t.op.inputs[0].shape
    if t.op.type == "Pack" and t.op.get_attr("axis") == 0:
        dims = []
        for x in t.op.inputs:
            xv = constant_value(x)
            dims.append(None if xv is None or int(xv) < 0 else int(xv))
        return TensorShape(dims)
    if t.shape.ndims == 1 and t.shape[0] is not None:
        return unknown_shape(t.shape[0])
    return unknown_shape()


def shape_arg(shape, what="shape"):
    """Splits a `shape` argument into (static tuple or None, runtime int tensor or None).

    Lists/tuples of ints (and constant tensors) become a static tuple; a list that mixes
    ints and scalar tensors is packed into one int32 tensor (TF's auto-packing).
    """
    if isinstance(shape, TensorShape):
        if not shape.is_fully_defined():
            raise ValueError(f"{what} must be fully defined, got {shape}")
        return tuple(shape.as_list()), None
    if is_tensor_like(shape):
        t = convert_to_tensor(shape)
        v = constant_value(t)
        if v is not None:
            return tuple(int(d) for d in np.atleast_1d(v)), None
        if not t.dtype.is_integer:
            raise TypeError(f"{what} must be an int32/int64 tensor, got {t.dtype.name}")
        return None, t
    if isinstance(shape, (list, tuple)):
        if any(is_tensor_like(d) for d in shape):
            vals = [constant_value(convert_to_tensor(d)) if is_tensor_like(d) else d for d in shape]
            if all(v is not None for v in vals):
                return tuple(int(v) for v in vals), None
            from .array_ops import stack  # late: array_ops imports shape_util at load
            parts = [convert_to_tensor(d) if is_tensor_like(d) else convert_to_tensor(int(d), _dtypes.int32)
                     for d in shape]
            parts = [p if p.dtype is _dtypes.int32 else _cast(p) for p in parts]
            return None, stack(parts, name="stack")
        return tuple(int(d.value if hasattr(d, "value") else d) for d in shape), None
    arr = np.asarray(shape)
    if arr.dtype.kind not in "iu":
        raise TypeError(f"{what} must be a list of ints, got {shape!r}")
    return tuple(int(d) for d in np.atleast_1d(arr)), None


def _cast(t):
    from .math_ops import cast  # late: reduction_ops (under math_ops) imports shape_util at load
    return cast(t, _dtypes.int32)


def axis_arg(axis, what="axis"):
    """A static axis attr: None, an int, or a tuple of ints (Tensors must be constants)."""
    if axis is None:
        return None
    if is_tensor_like(axis):
        v = constant_value(convert_to_tensor(axis))
        if v is None:
            raise TypeError(f"{what} must be a static value (Python int/list or a constant), not a computed Tensor")
        axis = v.tolist()
    if isinstance(axis, (list, tuple, np.ndarray)):
        return tuple(int(a) for a in axis)
    return int(axis)


def normalize_axis(axis: int, ndims: Optional[int], what="axis") -> int:
    """Maps a negative axis to its positive index; out-of-range raises TF's ValueError."""
    if ndims is None:
        if axis < 0:
            raise ValueError(f"{what} {axis} needs a known rank")
        return axis
    if not -ndims <= axis < ndims:
        raise ValueError(f"{what} {axis} is out of bounds: must be in the range [{-ndims}, {ndims})")
    return axis % ndims
