"""TF's sequence ops: `tf.range` (op Range) and `tf.linspace` (op LinSpace), re-exported by `array_ops`.

Range takes start, limit and delta as scalar inputs, as TF's, so any of them may be computed in the graph
(its length is then dynamic); its length rule, errors and float values are TF 1.15's
(`shape_util.range_size` / `range_values`, shared with the kernel and `constant_value`).
"""
from __future__ import annotations

import builtins as _builtins

import numpy as np

from .. import dtypes as _dtypes
from ..default_graph import name_scope
from ..graph import Tensor
from .common import NotDifferentiable, TensorShape, convert_to_tensor, make_tensor, register_op
from .shape_util import constant_value, range_size

__all__ = ["range", "linspace", "lin_space"]


def _static_scalar(v, what):
    if isinstance(v, Tensor) or hasattr(v, "op"):
        cv = constant_value(convert_to_tensor(v))
        if cv is None:
            raise TypeError(f"{what} must be a static value (Python number or constant), not a computed Tensor")
        return cv.item(), _dtypes.as_dtype(cv.dtype)
    return v, None


def _range_shape(op):
    """[n] when start, limit and delta are known at build time (TF's shape function, errors included), else
    [None]: a range with a computed bound has a dynamic length."""
    dtype = op.get_attr("Tidx")
    for t, what in zip(op.inputs, ("start", "limit", "delta")):
        if t.shape.ndims not in (None, 0):
            raise ValueError(f"{what} must be a scalar, not shape {t.shape} for 'Range' (op: '{op.name}')")
    vals = [constant_value(t) for t in op.inputs]
    if any(v is None for v in vals):
        return [(dtype, TensorShape([None]))]
    start, limit, delta = (np.asarray(v).item() for v in vals)
    return [(dtype, TensorShape([range_size(start, limit, delta, dtype.is_integer)]))]


register_op("Range", _range_shape)
NotDifferentiable("Range")

_RANGE_ORDER = [_dtypes.int32, _dtypes.int64, _dtypes.float32, _dtypes.float64]


def range(start, limit=None, delta=1, dtype=None, name="range"):  # noqa: A001
    """`tf.range(start, limit=None, delta=1, dtype=None)`: like Python's range, numbers may be floats, and
    any argument may be a computed scalar tensor (the result's length is then known only when it runs).
    As TF: the arguments convert to `<name>/start`, `<name>/limit`, `<name>/delta`, the dtype is the widest
    of theirs (int32 < int64 < float32 < float64) unless given, and `start > limit` with `delta > 0` is an
    error, not an empty range."""
    if limit is None:
        start, limit = 0, start
    with name_scope(name) as scope:
        args = [convert_to_tensor(v, dtype=dtype, name=what)
                for v, what in ((start, "start"), (limit, "limit"), (delta, "delta"))]
        if dtype is None:
            for t in args:
                if t.dtype not in _RANGE_ORDER:
                    raise TypeError(f"tf.range: {t.dtype.name} is not one of int32, int64, float32, float64")
            dtype = _builtins.max((t.dtype for t in args), key=_RANGE_ORDER.index)
            args = [t if t.dtype is dtype else _cast(t, dtype) for t in args]
        return make_tensor("Range", args, {"Tidx": _dtypes.as_dtype(dtype)}, name=scope)


def _cast(t, dtype):
    from .math_ops import cast  # late: math_ops imports this module at load
    return cast(t, dtype)


register_op("LinSpace", lambda op: [(op.get_attr("dtype"), TensorShape([op.get_attr("num")]))])
NotDifferentiable("LinSpace")


def linspace(start, stop, num, name=None):
    """`tf.linspace(start, stop, num)`: `num` evenly spaced values, both ends included (float32 default)."""
    start, dt = _static_scalar(start, "start")
    stop, _ = _static_scalar(stop, "stop")
    num, _ = _static_scalar(num, "num")
    dtype = dt if dt is not None and dt.is_floating else _dtypes.float32
    if not isinstance(start, float) and dt is None:
        raise TypeError("linspace: start must be a float (TF requires float32/float64)")
    return make_tensor("LinSpace", [], {"start": float(start), "stop": float(stop), "num": int(num),
                                        "dtype": dtype}, name=name, default_name="LinSpace")


lin_space = linspace
