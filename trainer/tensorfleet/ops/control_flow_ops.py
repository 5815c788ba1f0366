"""Control-flow helpers of TF1 that need no dataflow control: no_op, group, tuple.

`group` is a NoOp whose control inputs are the grouped ops; the executor runs it
after all of them. (Dataflow `cond`/`while_loop` are not part of this runtime yet.)
"""

from __future__ import annotations

__all__ = ["no_op", "group"]

from ..graph import Operation, Tensor, _as_operation
from ..default_graph import get_default_graph
from .common import NotDifferentiable, register_op
from .array_ops import identity

register_op("NoOp", lambda op: [])
NotDifferentiable("NoOp")  # no outputs


def no_op(name=None) -> Operation:
    return get_default_graph().create_op("NoOp", [], name=name or "NoOp")


def group(*inputs, name=None) -> Operation:
    """An op that runs after all `inputs` (ops, tensors or variables); outputs nothing."""
    ops = []
    for x in inputs:
        for item in (x if isinstance(x, (list, tuple)) else [x]):
            if item is not None:
                ops.append(_as_operation(item))
    g = ops[0].graph if ops else get_default_graph()
    with g.control_dependencies(ops):
        return g.create_op("NoOp", [], name=name or "group_deps")


def tuple_(tensors, name=None, control_inputs=None):
    """`tf.tuple`: identities of `tensors` that each wait for all of them."""
    tensors = list(tensors)
    gate = group(*[t for t in tensors if t is not None], *(control_inputs or []), name=name)
    out = []
    with get_default_graph().control_dependencies([gate]):
        for t in tensors:
            out.append(None if t is None else identity(t) if isinstance(t, Tensor) else gate)
    return out
