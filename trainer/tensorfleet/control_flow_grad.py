"""Gradients of the functional control-flow ops `If` and `While` (registered at import).

Sits beside `autodiff` (it calls `autodiff.gradients` on the bodies, which the
ops layer cannot import); `tensorfleet/__init__` imports it. Both gradients are
functional ops too: the body's gradient function is built *inside* the body's
FuncGraph (its input placeholders and outputs are already there), with one new
placeholder per incoming output gradient:

- `If` -> an `If` on the same predicate whose branches are the branch gradient
  functions (the taken branch's forward ops are recomputed, pruned to what the
  gradient needs);
- `While` -> `WhileGrad`, which replays the forward loop storing each
  iteration's loop variables and runs the body's gradient function backwards
  over them (`executor/control_flow_kernels.py`).
"""
from __future__ import annotations

from . import autodiff, errors
from .func_graph import Function
from .default_graph import convert_to_tensor
from .graph import Operation
from .indexed_slices import IndexedSlices
from .op_registry import register_gradient
from .ops.functional_ops import make_functional_op, most_specific_compatible


def grad_function(fn: Function, ys_idx: list, xs_idx: list, name: str) -> Function:
    """The Function (fn.inputs..., dy per ys_idx) -> d sum(dy * fn.outputs[ys_idx]) / d fn.inputs[xs_idx]."""
    g = fn.graph
    with g.as_default(), g.name_scope(None), g.control_dependencies(None):
        dys = [g.placeholder(fn.outputs[i].dtype, fn.outputs[i].shape, "grad_y") for i in ys_idx]
        with g.name_scope(name):
            dxs = autodiff.gradients([fn.outputs[i] for i in ys_idx], [fn.inputs[j] for j in xs_idx],
                                     grad_ys=dys, unconnected_gradients="zero")
            dxs = [convert_to_tensor(d) if isinstance(d, IndexedSlices) else d for d in dxs]  # body outputs: dense
    return Function(g, tuple(fn.inputs) + tuple(dys), tuple(dxs))


@register_gradient("If")
def _if_grad(op: Operation, *grads):
    args = op.inputs[1:]
    ys = [i for i, t in enumerate(op.outputs) if t.dtype.is_differentiable]
    xs = [j for j, t in enumerate(args) if t.dtype.is_differentiable]
    if not ys or not xs:
        return [None] * len(op.inputs)
    then_g = grad_function(op.get_attr("then_branch"), ys, xs, "then_grad")
    else_g = grad_function(op.get_attr("else_branch"), ys, xs, "else_grad")
    shapes = tuple(most_specific_compatible(a.shape, b.shape)
                   for a, b in zip(then_g.outputs, else_g.outputs, strict=True))
    gop = make_functional_op("If", [op.inputs[0], *args, *[grads[i] for i in ys]],
                             {"then_branch": then_g, "else_branch": else_g, "output_shapes": shapes}, [],
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
    body_grad = grad_function(body, dv, dv + [n + j for j in dc], "body_grad")
    _refuse_redrawn_randomness(op, body_grad)
    wrt = [loop_vars[k] for k in dv] + [caps[j] for j in dc]
    shape_only = _shape_only_inputs(body_grad, n)
    attrs = {"cond": op.get_attr("cond"), "body": body, "body_grad": body_grad, "num_vars": n,
             "has_max": bool(has_max), "num_diff_vars": len(dv), "diff_caps": tuple(dc), "shape_only": shape_only,
             "shapes": op.get_attr("shapes"), "Tout": tuple(t.dtype for t in wrt),
             "output_shapes": tuple(t.shape for t in wrt)}
    gop = make_functional_op("WhileGrad", [*op.inputs, *[grads[k] for k in dv]], attrs, [],
                             op.name.split("/")[-1] + "_grad")
    out: list = [None] * len(op.inputs)
    for k, idx in enumerate(dv):
        out[has_max + idx] = gop.outputs[k]
    for k, j in enumerate(dc):
        out[has_max + n + j] = gop.outputs[len(dv) + k]
    return out


#: ops whose values a recomputation would redraw (WhileGrad replays the body: its random numbers would differ)
RANDOM_OP_TYPES = frozenset({"RandomStandardNormal", "TruncatedNormal", "RandomUniform", "RandomUniformInt",
                             "Multinomial", "Dropout", "RandomShuffle"})


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


def _refuse_redrawn_randomness(op: Operation, body_grad: Function) -> None:
    """WhileGrad recomputes the body from the stored loop variables; a random op the gradient reads (dropout's
    mask) would draw new numbers there, giving a gradient that does not match the forward pass. Refuse loudly
    rather than train on a wrong gradient."""
    drawn = sorted(o.name for o in _needed_ops(body_grad) if o.type in RANDOM_OP_TYPES)
    if drawn:
        raise errors.UnimplementedError(
            None, op, f"Gradient of the while loop '{op.name}': its body draws random numbers ({', '.join(drawn)}) "
            "that the gradient needs; the loop's gradient recomputes the body and would draw different ones. "
            "Unroll the loop instead (e.g. dynamic_rnn with a static time dimension), or move the random op out "
            "of the loop body.")


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
