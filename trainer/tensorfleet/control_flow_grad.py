"""Gradients of the functional control-flow ops `If` and `While` (registered at import).

Sits beside `autodiff` (it calls `autodiff.gradients` on the bodies, which the
ops layer cannot import); `tensorfleet/__init__` imports it. Both gradients are
functional ops too: the body's gradient function is built *inside* the body's
FuncGraph (its input placeholders and outputs are already there), with one new
placeholder per incoming output gradient. The gradient uses the forward pass's
values, as TF does (`control_flow_intermediates`):

- `If` -> an `If` on the same predicate whose branches are the branch gradient
  functions; the forward branch values the gradient reads become extra outputs
  of the forward `If` and inputs of the gradient's (nothing is recomputed, so a
  random op in a branch is not drawn again);
- `While` -> `WhileGrad`, which replays the forward loop storing each
  iteration's loop variables and runs the body's gradient function backwards
  over them (`executor/control_flow_kernels.py`); the values of the body's random
  ops are recorded per iteration by the forward `While` and fed to the replay and
  to the gradient instead of being drawn again.
"""
from __future__ import annotations

from . import autodiff
from .control_flow_intermediates import export_branch_values, forward_reads, record_random_values
from .default_graph import convert_to_tensor
from .func_graph import Function
from .graph import Operation
from .indexed_slices import IndexedSlices
from .op_registry import register_gradient
from .ops.functional_ops import make_functional_op, most_specific_compatible


def grad_function(fn: Function, ys_idx: list, xs_idx: list, name: str) -> tuple:
    """d sum(dy * fn.outputs[ys_idx]) / d fn.inputs[xs_idx], built inside fn's graph.

    Returns (Function (fn.inputs..., dy per ys_idx) -> the gradients, the forward tensors of fn's graph that the
    new gradient ops read, other than fn's inputs and constants)."""
    g = fn.graph
    marker = g._last_id
    with g.as_default(), g.name_scope(None), g.control_dependencies(None):
        dys = [g.placeholder(fn.outputs[i].dtype, fn.outputs[i].shape, "grad_y") for i in ys_idx]
        with g.name_scope(name):
            # fn's inputs that are not placeholders (forward values a gradient function is fed) are independent
            # inputs of fn: no gradient flows through them to the ops that computed them
            fed = [t for t in fn.inputs if t.op.type != "Placeholder"]
            dxs = autodiff.gradients([fn.outputs[i] for i in ys_idx], [fn.inputs[j] for j in xs_idx],
                                     grad_ys=dys, unconnected_gradients="zero", stop_gradients=fed or None)
            dxs = [convert_to_tensor(d) if isinstance(d, IndexedSlices) else d for d in dxs]  # body outputs: dense
    return Function(g, tuple(fn.inputs) + tuple(dys), tuple(dxs)), forward_reads(g, marker, fn.inputs)


@register_gradient("If")
def _if_grad(op: Operation, *grads):
    args = op.inputs[1:]
    ys = [i for i, t in enumerate(op.outputs) if t.dtype.is_differentiable and not autodiff.is_unconnected(grads[i])]
    xs = [j for j, t in enumerate(args) if t.dtype.is_differentiable]
    if not ys or not xs:
        return [None] * len(op.inputs)
    built = [grad_function(op.get_attr(key), ys, xs, key.split("_")[0] + "_grad")
             for key in ("then_branch", "else_branch")]
    exported = export_branch_values(op, [reads for _, reads in built])  # the forward If's outputs, updated
    fns = []
    for k, (key, (gfn, _)) in enumerate(zip(("then_branch", "else_branch"), built)):
        fwd = op.get_attr(key)
        inputs = list(fwd.inputs)
        for _, per_branch in exported:
            t = per_branch[k]
            if any(t is u for u in inputs):  # a branch returning its own input: fed already
                t = fwd.graph.placeholder(t.dtype, None, "unused_value")
            inputs.append(t)
        fns.append(Function(fwd.graph, tuple(inputs) + gfn.inputs[len(fwd.inputs):], gfn.outputs))
    shapes = tuple(most_specific_compatible(a.shape, b.shape)
                   for a, b in zip(fns[0].outputs, fns[1].outputs, strict=True))
    gop = make_functional_op("If", [op.inputs[0], *args, *[op.outputs[i] for i, _ in exported],
                                    *[grads[i] for i in ys]],
                             {"then_branch": fns[0], "else_branch": fns[1], "output_shapes": shapes}, [],
                             op.name.split("/")[-1] + "_grad")
    out: list = [None] * len(op.inputs)
    for k, j in enumerate(xs):
        out[1 + j] = gop.outputs[k]
    return out


@register_gradient("While")
def _while_grad(op: Operation, *grads):
    if not op.get_attr("back_prop"):
        return [None] * len(op.inputs)
    has_max, n = int(op.get_attr("has_max")), op.get_attr("num_vars")
    loop_vars, caps = op.inputs[has_max:has_max + n], op.inputs[has_max + n:]
    dv = [k for k, t in enumerate(loop_vars) if t.dtype.is_differentiable]
    dc = [j for j, t in enumerate(caps) if t.dtype.is_differentiable]
    if not dv:
        return [None] * len(op.inputs)
    body = op.get_attr("body")
    body_grad, _ = grad_function(body, dv, dv + [n + j for j in dc], "body_grad")
    recorded = record_random_values(op, body, body_grad)  # the body values the forward While records per iteration
    n_in = len(body.inputs)
    replay = Function(body.graph, tuple(body.inputs) + recorded, tuple(body.outputs))
    body_grad = Function(body.graph, tuple(body.inputs) + recorded + body_grad.inputs[n_in:], body_grad.outputs)
    wrt = [loop_vars[k] for k in dv] + [caps[j] for j in dc]
    shape_only = _shape_only_inputs(body_grad, n)
    attrs = {"cond": op.get_attr("cond"), "body": replay, "body_grad": body_grad, "num_vars": n,
             "has_max": bool(has_max), "num_diff_vars": len(dv), "diff_caps": tuple(dc), "shape_only": shape_only,
             "num_recorded": len(recorded), "shapes": op.get_attr("shapes"), "Tout": tuple(t.dtype for t in wrt),
             "output_shapes": tuple(t.shape for t in wrt)}
    gop = make_functional_op("WhileGrad", [*op.inputs, *op.outputs[n:n + len(recorded)], *[grads[k] for k in dv]],
                             attrs, [], op.name.split("/")[-1] + "_grad")
    out: list = [None] * len(op.inputs)
    for k, idx in enumerate(dv):
        out[has_max + idx] = gop.outputs[k]
    for k, j in enumerate(dc):
        out[has_max + n + j] = gop.outputs[len(dv) + k]
    return out


def _needed_ops(fn: Function) -> set:
    needed: set = set()
    stack = [t.op for t in fn.outputs]
    while stack:
        op = stack.pop()
        if op not in needed:
            needed.add(op)
            stack.extend(t.op for t in op.inputs)
            stack.extend(op.control_inputs)
    return needed


def _shape_only_inputs(fn: Function, n: int) -> tuple:
    """Loop variables (of the first `n` inputs) whose value the gradient function never reads, only its shape:
    the map_fn/scan accumulators, read by LoopAccumulatorWriteGrad alone. WhileGrad stores a zero-size stand-in
    of their shape per iteration instead of a copy (memory O(iterations x row), not O(iterations^2 x row))."""
    needed = _needed_ops(fn)
    out = []
    for k in range(n):
        ph = fn.inputs[k]
        users = [c for c in ph.consumers() if c in needed]
        if users and all(c.type == "LoopAccumulatorWriteGrad" and c.inputs[0] is not ph and c.inputs[1] is not ph
                         for c in users):
            out.append(k)
    return tuple(out)
