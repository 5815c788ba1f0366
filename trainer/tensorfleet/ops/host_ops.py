"""Ops that reach outside the graph from the host: `tf.py_func` / `tf.numpy_function` (op PyFunc: a Python function
called on the inputs' numpy values when the op runs) and `tf.timestamp` (op Timestamp: the host's clock, seconds
since the epoch as float64).

Sits in `ops/`; kernels in `kernels/host_kernels.py` (CPU only). The ops are stateful (never folded or
deduplicated) and have no gradient.
"""
from __future__ import annotations

__all__ = ["py_func", "numpy_function", "timestamp"]

from .. import dtypes as _dtypes
from ..tensor_shape import TensorShape, unknown_shape
from .common import NotDifferentiable, convert_to_tensor, make_op, make_tensor, register_op


register_op("PyFunc", lambda op: [(dt, unknown_shape()) for dt in op.get_attr("Tout")], stateful=True)
NotDifferentiable("PyFunc")


def py_func(func, inp, Tout, stateful=True, name=None):
    """`tf.py_func` / `tf.numpy_function`: runs `func` on the inputs' numpy values when the op runs (on the
    host); `Tout` is a dtype or a list of dtypes. Strings arrive as object arrays of bytes."""
    multiple = isinstance(Tout, (list, tuple))
    touts = tuple(_dtypes.as_dtype(t) for t in (Tout if multiple else [Tout]))
    op = make_op("PyFunc", [convert_to_tensor(x) for x in inp], {"func": func, "Tout": touts, "multiple": multiple},
                 name=name, default_name="PyFunc")
    outs = list(op.outputs)
    return outs if multiple else (outs[0] if outs else op)


def numpy_function(func, inp, Tout, name=None):
    return py_func(func, inp, Tout, name=name)


register_op("Timestamp", lambda op: [(_dtypes.float64, TensorShape([]))], stateful=True)
NotDifferentiable("Timestamp")


def timestamp(name=None):
    """`tf.timestamp`: seconds since the epoch (float64) when the op runs."""
    return make_tensor("Timestamp", [], name=name, default_name="Timestamp")
