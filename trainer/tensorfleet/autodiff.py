"""Reverse-mode autodiff over the graph: `tf.gradients(ys, xs, grad_ys)`.

Flow: find the ops on some path from `xs` to `ys`, then visit them in reverse
topological order, summing the gradients that reach each output (AddN) and
calling the op type's registered gradient function (written beside the op in
`ops/`). The result is more graph: evaluating it is the executor's job.
"""
from __future__ import annotations

import weakref
from typing import Optional

from .graph import Tensor
from .default_graph import convert_to_tensor, get_default_graph
from .op_registry import get_op_def, gradient_function
from .indexed_slices import IndexedSlices
from .ops import array_ops, control_flow_ops, indexed_slices_ops, math_ops

#: ops whose gradient function passes an IndexedSlices gradient on as is (TF's _IdGrad)
_SPARSE_GRADIENT_OPS = frozenset({"Identity"})


def _as_list(x):
    return list(x) if isinstance(x, (list, tuple)) else [x]


def _closure(start, neighbours) -> set:
    """Every op reachable from `start` by repeatedly following `neighbours(op)`."""
    seen: set = set()
    stack = list(start)
    while stack:
        op = stack.pop()
        if op not in seen:
            seen.add(op)
            stack.extend(neighbours(op))
    return seen


def _reachable_from(xs_ops: set, ys_ops: set) -> set:
    """Ops that lie on a path from an op in xs_ops to an op in ys_ops (both inclusive)."""
    forward = _closure(xs_ops, lambda op: [c for out in op._outputs for c in out._consumers])
    return _closure([op for op in ys_ops if op in forward],
                    lambda op: [t._op for t in op._inputs if t._op in forward])


def _topo_reverse(between: set) -> list:
    """Ops of `between` so that every op comes after all its consumers within the set."""
    return sorted(between, key=lambda op: op._id, reverse=True)  # creation order is topological


def gradients(ys, xs, grad_ys=None, name="gradients", colocate_gradients_with_ops=False,
              gate_gradients=False, aggregation_method=None, stop_gradients=None,
              unconnected_gradients="none"):
    """Symbolic d(sum(ys))/d(xs); None for an x that no y depends on (or zeros with 'zero'). The gradient of a
    tensor read only through `tf.gather` / `embedding_lookup` is an IndexedSlices, as in TF.

    `gate_gradients=True` (what `Optimizer.compute_gradients` asks for with its default GATE_OP) passes the
    input gradients of every op that has more than one through `tf.tuple`, as TF does (`_gated`): none of
    them is available before all are computed. That is what keeps an update from changing a variable that another
    gradient of the same op still reads (`d(x @ W)/dx` reads W; its update waits for `d/dW`'s group)."""
    ys = [convert_to_tensor(y) for y in _as_list(ys)]
    xs_in = _as_list(xs)
    xs = [convert_to_tensor(x) for x in xs_in]
    grad_ys = _as_list(grad_ys) if grad_ys is not None else [None] * len(ys)
    if len(grad_ys) != len(ys):
        raise ValueError(f"Passed {len(grad_ys)} grad_ys for {len(ys)} ys")
    stop_ops = {convert_to_tensor(s).op for s in _as_list(stop_gradients)} if stop_gradients else set()
    g = ys[0].graph if ys else get_default_graph()

    with g.name_scope(name):
        between = _reachable_from({x.op for x in xs}, {y.op for y in ys})
        pending: dict[Tensor, list] = {}
        for y, gy in zip(ys, grad_ys):
            if gy is None:
                with g.colocate_with(y.op) if colocate_gradients_with_ops else _null():
                    gy = _ones_like(y)
            else:
                gy = convert_to_tensor(gy, dtype=y.dtype)
            pending.setdefault(y, []).append(gy)
        xs_set = set(xs)
        for op in _topo_reverse(between):
            out_grads = [_aggregate(pending.get(t)) for t in op._outputs]
            for t, gsum in zip(op._outputs, out_grads):
                if gsum is not None:
                    pending[t] = [gsum]
            if op.type not in _SPARSE_GRADIENT_OPS:  # others see an IndexedSlices gradient as a dense Tensor
                out_grads = [convert_to_tensor(gr) if isinstance(gr, IndexedSlices) else gr for gr in out_grads]
            if op in stop_ops or all(gr is None for gr in out_grads):
                continue
            if all(t in xs_set for t in op._outputs) and not any(t._op in between for t in op._inputs):
                continue  # a source: nothing upstream needs a gradient
            op_def = get_op_def(op.type)
            overridden = getattr(op, "_gradient_override", None) is not None
            if op_def.not_differentiable and not overridden:
                continue
            grad_fn = gradient_function(op)
            if grad_fn is None:
                raise LookupError(f"No gradient defined for operation '{op.name}' (op type: {op.type})")
            with g.name_scope(op.name + "_grad"), \
                    (g.colocate_with(op) if colocate_gradients_with_ops else _null()):
                in_grads = _as_list(grad_fn(op, *[gr if gr is not None else _unconnected_zeros(t)
                                                  for gr, t in zip(out_grads, op._outputs)]))
                if gate_gradients and sum(gr is not None for gr in in_grads) > 1:
                    in_grads = _gated(g, op, in_grads, between)
            if len(in_grads) != len(op._inputs):
                raise ValueError(f"Gradient function for {op.type} returned {len(in_grads)} gradients, "
                                 f"expected {len(op._inputs)}")
            for t, gr in zip(op._inputs, in_grads):
                if gr is None or t._op not in between or not t.dtype.is_differentiable:
                    continue
                pending.setdefault(t, []).append(gr)
        result = []
        for x in xs:
            gsum = _aggregate(pending.get(x))
            if gsum is None and unconnected_gradients == "zero":
                gsum = _zeros_like(x)
            result.append(gsum)
    return result


def _gated(g, op, in_grads: list, between: set) -> list:
    """`in_grads` through TF's `tuple` (`<op>_grad/tuple/group_deps` gates `.../tuple/control_dependency[_N]`),
    names as TF's. The gate waits for the gradients something uses (of inputs on the path); TF's also waits
    for the others (e.g. `d/dx` of a first layer's `x @ W`), which nothing reads: leaving them out changes no
    value and spares computing them."""
    used = [gr for gr, t in zip(in_grads, op._inputs)
            if gr is not None and t._op in between and t.dtype.is_differentiable]
    with g.colocate_with(None, ignore_existing=True), g.name_scope("tuple"):
        gate = control_flow_ops.group(*sorted({gr.op for gr in used}, key=lambda o: o._id))
        return [None if gr is None else control_flow_ops.with_dependencies([gate], gr) for gr in in_grads]


def _aggregate(grads: Optional[list]):
    """The sum of a tensor's gradients: IndexedSlices stay sparse (rows concatenated) when all are."""
    if not grads:
        return None
    if len(grads) == 1:
        return grads[0]
    if all(isinstance(g, IndexedSlices) for g in grads):
        return indexed_slices_ops.add_indexed_slices(grads)
    return math_ops.add_n([convert_to_tensor(g) if isinstance(g, IndexedSlices) else g for g in grads])


def _ones_like(t: Tensor) -> Tensor:
    one = array_ops.constant(1, dtype=t.dtype)
    if t.shape.ndims == 0:
        return one
    return math_ops.broadcast_like(one, t)


#: the zeros handed to a gradient function for outputs no y depends on (see `is_unconnected`)
_UNCONNECTED: "weakref.WeakSet[Tensor]" = weakref.WeakSet()


def _unconnected_zeros(t: Tensor) -> Tensor:
    z = _zeros_like(t)
    _UNCONNECTED.add(z)
    return z


def is_unconnected(grad) -> bool:
    """True for the zeros `gradients` passes a gradient function for an output that no y depends on: a function
    that builds a sub-gradient per output (the If gradient) can leave such outputs out."""
    return isinstance(grad, Tensor) and grad in _UNCONNECTED


def _zeros_like(t: Tensor) -> Tensor:
    zero = array_ops.constant(0, dtype=t.dtype)
    return math_ops.broadcast_like(zero, t)


class _null:
    def __enter__(self):
        return None

    def __exit__(self, *exc):
        return False
