"""Forward values that the gradients of `If` and `While` reuse instead of recomputing them.

Beside `control_flow_grad` (which builds the gradient functions inside the bodies' FuncGraphs and calls these).
TF's functional control flow differentiates against the forward pass's own values; so does this:

- `If`: the forward branch tensors a branch gradient reads (`forward_reads`) become extra outputs of the
  forward `If` op (`export_branch_values`); the other branch outputs a zero scalar in that position. The
  gradient `If` takes them as inputs and its branch functions are fed them, so none of the forward branch runs
  again: a dropout mask, a random draw or an assign inside a branch happens once, in the forward pass.
- `While`: the body's gradient runs per iteration on recomputed forward values (checkpointing; see
  docs/control-flow.md); what a recomputation would change is what the body draws at random. The forward
  `While` records, per iteration, the outputs of the body's random ops (and of functional ops holding random
  ops) that the body or its gradient reads (`record_random_values`): extra outputs of the `While`, stacked
  over iterations ([iterations, ...]), which `WhileGrad` feeds to the replay and to the gradient.

Both grow the forward op after it was built (new outputs, updated Function attributes), as TF's cond_v2 and
while_v2 gradients do; plans already built for the op keep their own copy of its attributes.
"""
from __future__ import annotations

import numpy as np

from . import dtypes as _dtypes
from .func_graph import FuncGraph, Function
from .graph import Operation, Tensor
from .ops import array_ops
from .ops.functional_ops import most_specific_compatible
from .tensor_shape import TensorShape

#: functional ops whose bodies may hold random ops (looked into recursively)
_FUNCTIONAL = frozenset({"If", "While", "WhileGrad"})


def forward_reads(g: FuncGraph, marker: int, own_inputs) -> list:
    """Tensors of `g` made before op id `marker` (the forward body) that ops made after it (the gradient) read,
    other than `own_inputs` (fed anyway) and constants (free to recompute), in creation order."""
    own = {id(t) for t in own_inputs}
    seen: dict = {}
    for op in g.get_operations():
        if op._id <= marker:
            continue
        for t in op.inputs:
            if t.op._id <= marker and id(t) not in own and t.op.type != "Const":
                seen.setdefault(t, None)
    return sorted(seen, key=lambda t: (t.op._id, t.value_index))


def _index_of(values, t) -> int:
    return next((i for i, u in enumerate(values) if u is t), -1)


def _zero_scalar(g: FuncGraph, dtype) -> Tensor:
    with g.as_default(), g.name_scope(None), g.control_dependencies(None):
        return array_ops.constant(b"" if dtype is _dtypes.string else np.zeros((), dtype.np_dtype), dtype=dtype,
                                  name="unused_value")


def _append_outputs(op: Operation, specs: list) -> None:
    for dtype, shape in specs:
        op._outputs.append(Tensor(op, len(op._outputs), dtype, TensorShape(shape)))


def export_branch_values(op: Operation, reads: list) -> list:
    """Makes the branch tensors `reads[k]` (k = 0 then, 1 else) outputs of the If `op`; returns, per tensor,
    (index of the op's output holding it, (then branch's tensor at that index, else branch's)), without
    repeats. Tensors that already are outputs (a branch output, or exported by an earlier gradient) are reused."""
    fns = [op.get_attr("then_branch"), op.get_attr("else_branch")]
    new: list = []  # (branch, tensor)
    where: dict = {}
    for k, ts in enumerate(reads):
        for t in ts:
            i = _index_of(fns[k].outputs, t)
            if i < 0:
                i = len(fns[k].outputs) + len(new)
                new.append((k, t))
            where.setdefault(i, None)
    if new:
        outs = [list(fn.outputs) for fn in fns]
        for k, t in new:
            for kk in (0, 1):
                outs[kk].append(t if kk == k else _zero_scalar(fns[kk].graph, t.dtype))
        fns = [Function(fn.graph, fn.inputs, tuple(o)) for fn, o in zip(fns, outs, strict=True)]
        shapes = tuple(op.get_attr("output_shapes")) + tuple(
            most_specific_compatible(a.shape, b.shape) for a, b in zip(outs[0][-len(new):], outs[1][-len(new):]))
        op._attrs.update(then_branch=fns[0], else_branch=fns[1], output_shapes=shapes)
        _append_outputs(op, [(t.dtype, s) for (_, t), s in zip(new, shapes[-len(new):], strict=True)])
    return [(i, (fns[0].outputs[i], fns[1].outputs[i])) for i in sorted(where)]


def draws_random_numbers(op: Operation, depth: int = 0) -> bool:
    """A random op (stateful, with TF's seed/seed2 attributes), or a functional op whose bodies run one (a
    gradient If fed the forward values does not)."""
    if op.op_def.stateful and "seed2" in op.attrs:
        return True
    if op.type in _FUNCTIONAL and depth < 32:
        for v in op.attrs.values():
            if isinstance(v, Function) and any(draws_random_numbers(o, depth + 1)
                                               for o in _ops_needed(v.outputs, set(v.inputs))):
                return True
    return False


def _ops_needed(outputs, fed: set) -> set:
    needed: set = set()
    stack = [t.op for t in outputs]
    while stack:
        o = stack.pop()
        if o not in needed:
            needed.add(o)
            stack.extend(t.op for t in o.inputs if t not in fed)
            stack.extend(o.control_inputs)
    return needed


def _computable(ops: set, fed: set) -> set:
    """The ops of `ops` whose inputs all come from `fed` or other such ops (no placeholder outside `fed`): what
    the forward body computes, as opposed to the gradient ops fed the output gradients."""
    memo: dict = {}
    for root in sorted(ops, key=lambda o: o._id):  # creation order is topological: inputs are decided first
        memo[root] = root.type != "Placeholder" and all(
            t in fed or memo.get(t.op, False) for t in root.inputs) and all(memo.get(c, False)
                                                                           for c in root.control_inputs)
    return {o for o, ok in memo.items() if ok}


def record_random_values(op: Operation, body: Function, body_grad: Function) -> tuple:
    """The body tensors drawn at random that the body's outputs or `body_grad` read, recorded per iteration by
    the While `op` (all of them so far, earlier gradients' first); new ones become outputs of `op` and of its
    `recorded` body (`executor/control_flow_kernels.while_kernel` stacks them)."""
    n = op.get_attr("num_vars")
    previous = op.attrs.get("recorded")
    have = list(previous.outputs[n:]) if previous is not None else []
    wanted = list(body.outputs) + list(body_grad.outputs)
    needed = _ops_needed(wanted, set(body.inputs))
    forward = _computable(needed, set(body.inputs))
    drawn = sorted((o for o in forward if draws_random_numbers(o)), key=lambda o: o._id)
    new = [t for o in drawn for t in o.outputs
           if (any(c in needed for c in t.consumers()) or any(t is w for w in wanted))
           and _index_of(have, t) < 0]
    if new:
        have += new
        op._attrs["recorded"] = Function(body.graph, tuple(body.inputs), tuple(body.outputs) + tuple(have))
        _append_outputs(op, [(t.dtype, TensorShape([None]).concatenate(t.shape)) for t in new])
    return tuple(have)
