"""The functional control-flow ops `If`, `While` and `WhileGrad`, and the tracing of Python functions into them.

Ops layer. `cond_ops` (tf.cond, tf.case) and `while_ops` (tf.while_loop) trace
Python callables with `trace` into `func_graph.FuncGraph`s and create these ops;
each holds its bodies as `func_graph.Function` attributes:

- `If(pred, *args)`: attrs `then_branch`, `else_branch` (same inputs: one per
  arg), outputs as the branches' outputs (shapes: the most specific shape both
  branches agree on);
- `While([max_iterations,] *loop_vars, *captured)`: attrs `cond` (-> a bool
  scalar) and `body` (-> the next loop vars), `shapes` (the shape invariants,
  also the outputs' static shapes), `num_vars`, `has_max`;
- `WhileGrad`: the While gradient (see `control_flow_grad`).

The kernels are in `executor/control_flow_kernels.py`: a node runs its bodies
as sub-plans. `nest_flatten` / `nest_pack` are TF's `nest` for loop variables
and branch outputs (lists, tuples, namedtuples and dicts are structures).
"""
from __future__ import annotations

from typing import Callable

from .. import dtypes as _dtypes
from ..default_graph import convert_to_tensor, get_default_graph
from ..func_graph import FuncGraph, Function
from ..graph import Operation, Tensor
from ..tensor_shape import TensorShape
from .common import NotDifferentiable, register_op


# -- nest -----------------------------------------------------------------------------------------
def is_nested(x) -> bool:
    return isinstance(x, (list, tuple, dict))


def nest_flatten(structure) -> list:
    """Leaves in TF's order: sequences in order, dicts by sorted key."""
    if isinstance(structure, dict):
        return [leaf for k in sorted(structure) for leaf in nest_flatten(structure[k])]
    if isinstance(structure, (list, tuple)):
        return [leaf for item in structure for leaf in nest_flatten(item)]
    return [structure]


def nest_pack(structure, flat) -> object:
    """`flat` leaves arranged like `structure` (the inverse of `nest_flatten`)."""
    it = iter(flat)

    def build(s):
        if isinstance(s, dict):
            built = {k: build(s[k]) for k in sorted(s)}
            return type(s)((k, built[k]) for k in s) if type(s) is not dict else {k: built[k] for k in s}
        if isinstance(s, (list, tuple)):
            items = [build(x) for x in s]
            if hasattr(s, "_fields"):
                return type(s)(*items)
            return type(s)(items) if isinstance(s, tuple) else list(items)
        return next(it)

    return build(structure)


def assert_same_structure(a, b, what: str) -> None:
    def shape_of(s):
        if isinstance(s, dict):
            return ("dict", tuple((k, shape_of(s[k])) for k in sorted(s)))
        if isinstance(s, (list, tuple)):
            return ("seq", tuple(shape_of(x) for x in s))
        return "leaf"

    if shape_of(a) != shape_of(b):
        raise ValueError(f"{what}: the two structures don't have the same nested structure.\n\n"
                         f"First structure: {a!r}\n\nSecond structure: {b!r}")


# -- tracing --------------------------------------------------------------------------------------
def trace(name: str, fn: Callable, arg_specs: list, structure=None, unpack: bool = True, wrap=None):
    """Traces `fn` into a new FuncGraph inside the default graph.

    `arg_specs` are (dtype, shape, name) of the placeholders `fn` receives, packed
    like `structure` and passed as positional arguments when `unpack` and the
    structure is a list/tuple; `wrap(placeholders)` may replace some first (a
    TensorArray around its flow). Returns (graph, input placeholders, fn's raw result).
    """
    outer = get_default_graph()
    g = FuncGraph(name, outer)
    with g.as_default():
        with g.name_scope(name.replace("/", "_").strip("_") or "fn"):
            phs = [g.placeholder(dt, sh, nm) for dt, sh, nm in arg_specs]
            if structure is None:
                result = fn(*phs)
            else:
                packed = nest_pack(structure, wrap(phs) if wrap is not None else phs)
                if unpack and isinstance(packed, (list, tuple)) and not hasattr(packed, "_fields"):
                    result = fn(*packed)
                else:
                    result = fn(packed)
    return g, phs, result


def to_graph_tensors(g: FuncGraph, values: list, what: str) -> list:
    """Results of a traced function as tensors of `g` (Variables and Python values converted, outer captured)."""
    out = []
    with g.as_default():
        for v in values:
            if v is None:
                raise ValueError(f"{what} returned None where a tensor was expected")
            if isinstance(v, Operation):
                raise TypeError(f"{what} returned the Operation {v.name!r}; return tensors "
                                f"(e.g. tf.identity of a value under tf.control_dependencies([op]))")
            t = convert_to_tensor(v)
            out.append(g.capture(t) if t.graph is not g else t)
    return out


def captured_union(graphs: list) -> list:
    """The outer tensors any of `graphs` captured, in first-capture order."""
    seen: dict = {}
    for g in graphs:
        for t in g.captures:
            seen.setdefault(t, None)
    return list(seen)


def function_of(g: FuncGraph, own_inputs: list, union: list, outputs: list) -> Function:
    """A Function whose inputs are `own_inputs` then one placeholder per outer tensor of `union`."""
    caps = [g.capture(t) for t in union]
    return Function(g, tuple(own_inputs) + tuple(caps), tuple(outputs))


def outer_controls(graphs: list) -> list:
    out: list = []
    for g in graphs:
        out.extend(c for c in g.outer_controls if c not in out)
    return out


# -- shapes ---------------------------------------------------------------------------------------
def most_specific_compatible(a: TensorShape, b: TensorShape) -> TensorShape:
    """The most specific shape both `a` and `b` are instances of (unknown rank if ranks differ)."""
    if a.ndims is None or b.ndims is None or a.ndims != b.ndims:
        return TensorShape(None)
    return TensorShape([x if x == y else None for x, y in zip(a.as_tuple(), b.as_tuple(), strict=True)])


def shape_less_or_equal(s: TensorShape, invariant: TensorShape) -> bool:
    """True if `s` is at least as specific as `invariant` (TF's _ShapeLessThanOrEqual)."""
    if invariant.ndims is None:
        return True
    if s.ndims != invariant.ndims:
        return False
    return all(i is None or i == d for d, i in zip(s.as_tuple(), invariant.as_tuple(), strict=True))


def _if_shape(op: Operation):
    return [(t.dtype, sh) for t, sh in zip(op.get_attr("then_branch").outputs, op.get_attr("output_shapes"),
                                           strict=True)]


def _while_shape(op: Operation):
    """The loop variables, then the body values recorded per iteration for the gradient (`recorded`, added by
    control_flow_intermediates): [iterations, ...]."""
    n, first = op.get_attr("num_vars"), int(op.get_attr("has_max"))
    out = [(t.dtype, sh) for t, sh in zip(op.inputs[first:first + n], op.get_attr("shapes"), strict=True)]
    recorded = op.attrs.get("recorded")
    if recorded is not None:
        out += [(t.dtype, TensorShape([None]).concatenate(t.shape)) for t in recorded.outputs[n:]]
    return out


def _while_grad_shape(op: Operation):
    return list(zip(op.get_attr("Tout"), op.get_attr("output_shapes"), strict=True))


register_op("If", _if_shape, stateful=True, expensive=True)
register_op("While", _while_shape, stateful=True, expensive=True)
register_op("WhileGrad", _while_grad_shape, stateful=True, expensive=True)
# KNOWN GAP: no second derivatives through tf.while_loop (docs/control-flow.md)
NotDifferentiable("WhileGrad")


def make_functional_op(op_type: str, inputs: list, attrs: dict, controls: list, name: str) -> Operation:
    """Creates the op in the default graph, with the bodies' outer control inputs added."""
    g = get_default_graph()
    op = g.create_op(op_type, inputs, attrs, name=name)
    for c in controls:
        if isinstance(g, FuncGraph) and c.graph is not g:
            g._add_outer_control(c)
        else:
            op._add_control_input(c)
    return op


def check_bool_scalar(t: Tensor, what: str) -> None:
    if t.dtype is not _dtypes.bool_:
        raise TypeError(f"{what} must be a bool tensor, got {t.dtype.name}")
    if t.shape.ndims not in (None, 0):
        raise ValueError(f"{what} must be a scalar, got shape {t.shape}")
