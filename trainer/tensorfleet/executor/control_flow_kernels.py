"""Kernels of the functional control-flow ops `If`, `While` and `WhileGrad`: bodies run as sub-plans.

Executor layer (a kernel here must build and run plans, which the kernels layer
below cannot). Each `Function` attribute of a node gets one sub-plan, built at
its first call with `plan.build_plan(outputs, feeds=inputs)` on the session's
resources and run with the sequential strategy (`sequential.SequentialRun`:
Const values cached, compiled to straight-line code from its second run). The
outer plan sees one node, so plans without control flow are untouched.

- `If`: runs the taken branch only.
- `While`: runs cond, then body, until cond is false or `maximum_iterations`;
  the first body result of a run is checked against the loop's shape
  invariants (graph construction already checked the static shapes).
- `WhileGrad`: re-runs the forward loop (fed the random values the forward
  `While` recorded per iteration, see control_flow_intermediates) keeping every iteration's loop
  variables (memory: iterations x loop-variable sizes; the map_fn/scan
  accumulators, whose values the gradient never reads, are kept as zero-size
  stand-ins of their shape), then walks the
  iterations backwards through the body's gradient function, summing the
  gradients of captured tensors.
Errors raised inside a body name the body's node and the functional op.
"""
from __future__ import annotations

import numpy as np

from .. import errors
from ..kernels.registry import register_kernel
from .plan import NodeFailed, build_plan
from .sequential import SequentialRun

_CACHE_KEY = "__control_flow_subplans"


def _runner(ctx, fn, what: str, drain: bool = False):
    """A callable args -> outputs of `fn`, over the node's cached sub-plan for `fn`; with `drain`, the args list
    is emptied as it is fed (`_drain`)."""
    cache = ctx.attrs.get(_CACHE_KEY)
    if cache is None:
        cache = ctx.attrs[_CACHE_KEY] = {}
    entry = cache.get((id(fn), drain))
    if entry is None:
        plan = build_plan(list(fn.outputs), list(fn.inputs), [], ctx.resources)
        seq, slots = SequentialRun(plan), plan.fetch_slots

        def call(args: list) -> list:
            try:
                vals = seq.run(_drain(args) if drain else args)
            except NodeFailed as f:
                raise _body_error(ctx, f, what) from None
            return [vals[s] for s in slots]

        entry = cache[(id(fn), drain)] = (call, fn)  # fn kept alive: its id() stays unique
    return entry[0]


def _drain(values: list):
    """Yields and forgets `values` (the caller's list ends empty): a loop variable fed to a body is then held by
    the sub-plan alone, so its last reader may own it and write in place (`kernels.ownership.owns`; an
    accumulator row write stays O(row), not O(accumulator)). Anything else still holding a value (the While's
    own arguments, the captured inputs, WhileGrad's stored iterations) keeps the kernels from writing into it."""
    values.reverse()
    while values:
        yield values.pop()


def _run(ctx, fn, args: list, what: str) -> list:
    return _runner(ctx, fn, what)(args)


def _body_error(ctx, failure: NodeFailed, what: str) -> errors.OpError:
    node, e = failure.node, failure.error
    where = f"in {what} of {ctx.op.type} '{ctx.op.name}'"
    if isinstance(e, errors.OpError):
        err = type(e)(e.node_def, e.op or node.op, f"{e.message} ({where})")
        err.error_code = e.error_code
        return err
    if not isinstance(e, Exception):
        raise e
    return errors.InvalidArgumentError(None, node.op, f"{type(e).__name__}: {e}\n\t [[node {node.name} "
                                                      f"(op: {node.op.type}) {where}]]")


@register_kernel("If", devices=("CPU",))
def if_kernel(ctx, pred, *args):
    taken = "then_branch" if bool(np.asarray(pred)) else "else_branch"
    outs = _run(ctx, ctx.attrs[taken], list(args), taken)
    return outs[0] if len(outs) == 1 else tuple(outs)


def _invariant_checks(ctx) -> tuple:
    """Per loop variable with a known-rank invariant: (index, rank, ((dim, size), ...) of the known dims)."""
    checks = ctx.attrs.get("__invariant_checks")
    if checks is None:
        checks = ctx.attrs["__invariant_checks"] = tuple(
            (k, inv.ndims, tuple((d, s) for d, s in enumerate(inv.as_tuple()) if s is not None))
            for k, inv in enumerate(ctx.attrs["shapes"]) if inv.ndims is not None)
    return checks


def _check_invariants(ctx, checks: tuple, values: list, it: int) -> None:
    """The static shape inference already guarantees these; a cheap net for shape functions that are too loose."""
    for k, rank, dims in checks:
        shape = np.shape(values[k])
        if len(shape) != rank or any(shape[d] != s for d, s in dims):
            raise errors.InvalidArgumentError(
                None, ctx.op, f"Loop variable {k} of while loop '{ctx.op.name}' has shape {list(shape)} after "
                              f"iteration {it + 1}, which is not compatible with its shape invariant "
                              f"{ctx.attrs['shapes'][k]}")


def _stand_in(value):
    """A read-only array of `value`'s shape and dtype that takes no memory (a broadcast zero)."""
    return np.broadcast_to(np.zeros((), dtype=np.asarray(value).dtype), np.shape(value))


def _forward(ctx, args, history=None, shape_only=(), recorded=None) -> list:
    """The loop; appends each iteration's input loop variables to `history` when given (a stand-in for the
    `shape_only` ones). The body values the gradient needs unchanged (control_flow_intermediates) are, in the
    forward While, appended per iteration to the `recorded` list; in WhileGrad's replay (`recorded` a tuple of
    [iterations, ...] arrays) fed to the body instead of being drawn again."""
    has_max, n = int(ctx.attrs["has_max"]), ctx.attrs["num_vars"]
    limit = int(args[0]) if has_max else None
    loop_vars, caps = list(args[has_max:has_max + n]), list(args[has_max + n:])
    records = isinstance(recorded, list)
    body_fn = ctx.attrs["recorded"] if records else ctx.attrs["body"]
    cond, body = _runner(ctx, ctx.attrs["cond"], "cond"), _runner(ctx, body_fn, "body", drain=True)
    it = 0
    while (limit is None or it < limit) and cond(loop_vars + caps)[0]:
        if history is not None:
            kept = list(loop_vars)
            for k in shape_only:
                kept[k] = _stand_in(kept[k])
            history.append(kept)
        step_args, loop_vars = loop_vars + caps, []
        if recorded and not records:
            step_args += [r[it] for r in recorded]
        outs = body(step_args)  # drains step_args: see _drain
        loop_vars = outs[:n]
        if records:
            recorded.append(outs[n:])
        if it == 0:
            _check_invariants(ctx, _invariant_checks(ctx), loop_vars, it)
        it += 1
    return loop_vars


def _stacked(ctx, per_iteration: list) -> list:
    """The recorded values as one [iterations, ...] array each; a value whose shape changes between iterations
    (an If's exported value: the untaken branch gives a scalar) as a 1-D object array of the iterations' arrays,
    which only WhileGrad reads."""
    fn, n = ctx.attrs["recorded"], ctx.attrs["num_vars"]
    out = []
    for j, t in enumerate(fn.outputs[n:]):
        values = [np.asarray(step[j]) for step in per_iteration]
        if not values:
            dims = t.shape.as_list() if t.shape.is_fully_defined() else []
            out.append(np.zeros([0] + dims, t.dtype.np_dtype))
        elif all(v.shape == values[0].shape for v in values):
            out.append(np.stack(values))
        else:
            ragged = np.empty(len(values), dtype=object)
            for i, v in enumerate(values):
                ragged[i] = v
            out.append(ragged)
    return out


@register_kernel("While", devices=("CPU",))
def while_kernel(ctx, *args):
    if "recorded" not in ctx.attrs:
        out = _forward(ctx, args)
    else:
        per_iteration: list = []
        out = _forward(ctx, args, recorded=per_iteration)
        out = list(out) + _stacked(ctx, per_iteration)
    return out[0] if len(out) == 1 else tuple(out)


@register_kernel("WhileGrad", devices=("CPU",))
def while_grad_kernel(ctx, *args):
    """Inputs: [max,] loop vars, captured, output grads of the differentiable loop vars."""
    has_max, n, nd = int(ctx.attrs["has_max"]), ctx.attrs["num_vars"], ctx.attrs["num_diff_vars"]
    nr = ctx.attrs.get("num_recorded", 0)
    fwd_args, dys = args[:len(args) - nd - nr], list(args[len(args) - nd:])
    recorded = tuple(args[len(args) - nd - nr:len(args) - nd])
    caps = list(fwd_args[has_max + n:])
    diff_caps = ctx.attrs["diff_caps"]
    history: list = []
    _forward(ctx, fwd_args, history, ctx.attrs.get("shape_only", ()), recorded)
    grad_fn = ctx.attrs["body_grad"]
    cap_grads: list = [None] * len(diff_caps)
    for it in range(len(history) - 1, -1, -1):
        loop_vars = history.pop()
        outs = _run(ctx, grad_fn, loop_vars + caps + [r[it] for r in recorded] + dys, "body gradient")
        dys = outs[:nd]
        for j, g in enumerate(outs[nd:]):
            if cap_grads[j] is None:
                cap_grads[j] = np.array(g, copy=True)  # our own sum from here on: added to in place
            else:
                cap_grads[j] += g
    history.clear()
    for j, c in enumerate(diff_caps):
        if cap_grads[j] is None:
            cap_grads[j] = np.zeros_like(caps[c])
    out = [np.asarray(d) for d in dys] + cap_grads
    return out[0] if len(out) == 1 else tuple(out)
