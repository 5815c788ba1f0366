"""TF's numeric checks: `tf.debugging.check_numerics` (CheckNumerics op), `tf.verify_tensor_all_finite`,
`tf.add_check_numerics_ops`.

Sits in `ops/` (kernel in kernels/check_kernels.py). As TF 1.15: `check_numerics(tensor, message)` returns
`tensor` and, when it holds a NaN or an Inf at run time, raises InvalidArgumentError
"<message> : Tensor had NaN values" (or "Inf", "Inf and NaN") naming the CheckNumerics node; only
float16/32/64 tensors are accepted (TypeError at graph-build time otherwise). Its gradient is the incoming
gradient, itself checked ("Not a number (NaN) or infinity (Inf) values detected in gradient. <message>").
`verify_tensor_all_finite(t, msg)` is `t` with a control dependency on a check. `add_check_numerics_ops()`
checks every floating output of every op in the default graph (message "<op name>:<output index>"), the
checks chained by control dependencies, and returns a group op that runs them all.
"""
from __future__ import annotations

from .. import dtypes as _dtypes
from ..default_graph import get_default_graph, name_scope
from .array_ops import identity
from .common import convert_to_tensor, make_tensor, register_gradient, register_op
from .control_flow_ops import group

__all__ = ["check_numerics", "verify_tensor_all_finite", "add_check_numerics_ops"]

_FLOATS = (_dtypes.float16, _dtypes.float32, _dtypes.float64)

register_op("CheckNumerics", lambda op: [(op.inputs[0].dtype, op.inputs[0].shape)])


def check_numerics(tensor, message, name=None):
    """`tf.debugging.check_numerics`: `tensor`, or InvalidArgumentError at run time if it has a NaN or an Inf."""
    tensor = convert_to_tensor(tensor, name="tensor")
    if tensor.dtype.base_dtype not in _FLOATS:
        raise TypeError(f"Value passed to parameter 'tensor' has DataType {tensor.dtype.name} not in list of "
                        f"allowed values: float16, float32, float64")
    if not isinstance(message, (str, bytes)):
        raise TypeError(f"Expected string for argument 'message' not {message!r}.")
    message = message.decode() if isinstance(message, bytes) else message
    return make_tensor("CheckNumerics", [tensor], {"message": message}, name=name, default_name="CheckNumerics")


@register_gradient("CheckNumerics")
def _check_numerics_grad(op, grad):
    return check_numerics(grad, "Not a number (NaN) or infinity (Inf) values detected in gradient. "
                          + op.attrs["message"])


def verify_tensor_all_finite(t=None, msg=None, name=None, x=None, message=None):
    """`tf.verify_tensor_all_finite` / `tf.debugging.assert_all_finite`: `t`, run after a CheckNumerics of it."""
    t = x if t is None else t
    msg = message if msg is None else msg
    if t is None or msg is None:
        raise TypeError("verify_tensor_all_finite() needs a tensor (t or x) and a message (msg or message)")
    with name_scope(name, "VerifyFinite", [t]):
        t = convert_to_tensor(t, name="x")
        check = check_numerics(t, message=msg)
        with t.graph.control_dependencies([check]):
            return identity(t)


def add_check_numerics_ops():
    """`tf.add_check_numerics_ops`: a group op checking every float16/32/64 output in the default graph."""
    graph = get_default_graph()
    checks: list = []
    for op in list(graph.get_operations()):  # producers come before consumers
        for out in op.outputs:
            if out.dtype.base_dtype in _FLOATS:
                with graph.control_dependencies(checks):
                    checks = [check_numerics(out, message=f"{op.name}:{out.value_index}")]
    return group(*checks)
