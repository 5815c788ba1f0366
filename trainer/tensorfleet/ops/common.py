"""Shared helpers for op definitions: input conversion, op creation, shape functions.

Every module in `ops/` declares its ops with `register_op(type, shape_fn)`, writes
the Python wrapper (TF's name, arguments and default op name) and, right beside
it, the gradient with `@register_gradient`. Kernels live in `kernels/`.
"""
from __future__ import annotations

from typing import Optional, Sequence

import numpy as np

from .. import default_graph as _graph_mod
from .. import dtypes as _dtypes
from ..graph import Operation, Tensor
from ..default_graph import convert_to_tensor, get_default_graph
from ..op_registry import NotDifferentiable, register_gradient, register_op  # noqa: F401  (re-export)
from ..tensor_shape import TensorShape, as_shape, unknown_shape

__all__ = [
    "make_op", "make_tensor", "binary_inputs", "is_tensor_like", "unchanged_shape", "broadcast_shape",
    "broadcast_binary",
    "scalar_shape", "static_value", "register_op", "register_gradient", "NotDifferentiable",
    "convert_to_tensor", "TensorShape", "unknown_shape", "as_shape", "reduced_shape", "check_dtype", "INDEX_TYPES",
    "REAL_TYPES", "NUMBER_TYPES",
]


def _graph_for(inputs) -> "object":
    """The first input's graph; the default graph instead when it is a control-flow body nested in that graph."""
    for t in inputs:
        if isinstance(t, Tensor):
            g = t.graph
            inner = get_default_graph()
            if inner is not g and getattr(inner, "outer_graph", None) is not None:
                return inner  # a FuncGraph: it captures outer tensors (func_graph.py)
            return g
    return get_default_graph()


def make_op(op_type: str, inputs: Sequence = (), attrs: Optional[dict] = None, name: Optional[str] = None,
            default_name: Optional[str] = None) -> Operation:
    """Creates an op in the inputs' graph (or the default graph)."""
    return _graph_for(inputs).create_op(op_type, inputs, attrs, name=name or default_name or op_type)


def make_tensor(op_type, inputs=(), attrs=None, name=None, default_name=None) -> Tensor:
    """Creates a single-output op and returns its output."""
    return make_op(op_type, inputs, attrs, name, default_name)._outputs[0]


def is_tensor_like(value) -> bool:
    """A Tensor or an object with a registered conversion (e.g. a Variable)."""
    return isinstance(value, Tensor) or any(isinstance(value, base) for base, _ in _graph_mod._conversion_functions)


def binary_inputs(x, y, op_name: str, arg_names=("x", "y")):
    """Converts both operands; a Python value takes the dtype of the tensor beside it.

    Mismatched tensor dtypes raise TF's TypeError naming the op, its argument names (`arg_names`: the op
    def's, e.g. MatMul's "a"/"b") and both types.
    """
    x = convert_to_tensor(x) if is_tensor_like(x) else x
    y = convert_to_tensor(y) if is_tensor_like(y) else y
    if isinstance(x, Tensor) and not isinstance(y, Tensor):
        y = convert_to_tensor(y, dtype=x.dtype)
    elif isinstance(y, Tensor) and not isinstance(x, Tensor):
        x = convert_to_tensor(x, dtype=y.dtype)
    elif not isinstance(x, Tensor):
        x = convert_to_tensor(x)
        y = convert_to_tensor(y, dtype=x.dtype)
    if x.dtype is not y.dtype:
        raise TypeError(f"Input '{arg_names[1]}' of '{op_name}' Op has type {y.dtype.name} that does not match "
                        f"type {x.dtype.name} of argument '{arg_names[0]}'.")
    return x, y


# -- shape functions ----------------------------------------------------------
def unchanged_shape(op: Operation):
    t = op.inputs[0]
    return [(t.dtype, t.shape)]


def scalar_shape(dtype):
    return lambda op: [(dtype, TensorShape([]))]


def broadcast_shape(a: TensorShape, b: TensorShape) -> TensorShape:
    """numpy broadcasting on partially known shapes; incompatible dims raise ValueError."""
    if a.ndims is None or b.ndims is None:
        return unknown_shape()
    da, db = list(a.as_tuple()), list(b.as_tuple())
    n = max(len(da), len(db))
    da = [1] * (n - len(da)) + da
    db = [1] * (n - len(db)) + db
    out = []
    for x, y in zip(da, db):
        if x == 1:
            out.append(y)
        elif y == 1:
            out.append(x)
        elif x is None:
            out.append(y)
        elif y is None or x == y:
            out.append(x)
        else:
            raise ValueError(f"Dimensions must be equal, but are {x} and {y}")
    return TensorShape(out)


def broadcast_binary(op: Operation):
    x, y = op.inputs
    return [(x.dtype, broadcast_shape(x.shape, y.shape))]


def reduced_shape(shape: TensorShape, axis, keepdims: bool) -> TensorShape:
    """Static shape of a reduction over `axis` (None = all axes)."""
    if shape.ndims is None:
        return unknown_shape()
    n = shape.ndims
    if axis is None:
        axes = set(range(n))
    else:
        axes = set()
        for a in np.atleast_1d(axis).tolist():
            if not -n <= a < max(n, 1):
                raise ValueError(f"Invalid reduction dimension {a} for input with {n} dimensions")
            axes.add(a % n if n else 0)
    dims = shape.as_tuple()
    if keepdims:
        return TensorShape([1 if i in axes else d for i, d in enumerate(dims)])
    return TensorShape([d for i, d in enumerate(dims) if i not in axes])


def static_value(t: Tensor):
    """The value of a tensor when known at graph-build time (a Const), else None."""
    if isinstance(t, Tensor) and t.op.type == "Const":
        return t.op.get_attr("value")
    return None


# -- TF's op-def dtype lists and check ----------------------------------------
INDEX_TYPES = (_dtypes.int32, _dtypes.int64)
REAL_TYPES = (_dtypes.float32, _dtypes.float64, _dtypes.int32, _dtypes.uint8, _dtypes.int16, _dtypes.int8,
              _dtypes.int64, _dtypes.uint16, _dtypes.float16, _dtypes.uint32, _dtypes.uint64)
NUMBER_TYPES = REAL_TYPES + (_dtypes.complex64, _dtypes.complex128)


def check_dtype(param: str, t, allowed) -> None:
    """TF's op-def check of an input's dtype: TypeError naming the parameter and the allowed types."""
    if t.dtype.base_dtype not in allowed:
        raise TypeError(f"Value passed to parameter '{param}' has DataType {t.dtype.name} not in list of allowed "
                        f"values: {', '.join(d.name for d in allowed)}")
