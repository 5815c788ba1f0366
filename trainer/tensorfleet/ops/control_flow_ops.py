"""Control-flow helpers of TF1 that need no dataflow control: no_op, group, tuple.

`group` is a NoOp whose control inputs are the grouped ops; the executor runs it
after all of them. (Dataflow `cond`/`while_loop` are not part of this runtime yet.)
"""

from __future__ import annotations

__all__ = ["no_op", "group"]

from ..graph import Operation, Tensor, _as_operation
from ..default_graph import convert_to_tensor, get_default_graph
from .common import NotDifferentiable, register_op
from .array_ops import identity
from ..indexed_slices import IndexedSlices

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


def with_dependencies(dependencies, output_tensor, name=None):
    """TF's `control_flow_ops.with_dependencies`: an identity of `output_tensor` (or of an IndexedSlices' values)
    that runs after `dependencies`, named `<name or 'control_dependency'>`."""
    g = get_default_graph()
    if not isinstance(output_tensor, (Tensor, IndexedSlices)):
        output_tensor = convert_to_tensor(output_tensor)
    with g.name_scope(name or "control_dependency") as scope, g.colocate_with(output_tensor.op), \
            g.control_dependencies(dependencies):
        if not isinstance(output_tensor, IndexedSlices):
            return identity(output_tensor, name=scope)
        return output_tensor.with_values(identity(output_tensor.values, name=scope))


def tuple_(tensors, name=None, control_inputs=None):
    """`tf.tuple`: identities of `tensors` (Tensors or IndexedSlices; an Operation becomes a group after the
    gate) that each wait for all of them, as TF: `<name or 'tuple'>/group_deps` gates
    `<name or 'tuple'>/control_dependency[_N]`."""
    tensors = list(tensors)
    g = get_default_graph()
    with g.name_scope(name or "tuple"):
        gating_ops = sorted({_as_operation(t) for t in tensors if t is not None}, key=lambda op: op._id)
        if control_inputs:
            gating_ops += [_as_operation(c) for c in control_inputs]
        if not gating_ops:
            raise ValueError(f"Must have at least one Tensor: {tensors}")
        gate = group(*gating_ops)
        out = []
        for t in tensors:
            if t is None:
                out.append(None)
            elif isinstance(t, Operation):
                with g.control_dependencies([gate]):
                    out.append(group(t))
            else:
                out.append(with_dependencies([gate], t))
    return out
