"""The plan's first two stages: which ops a plan runs (`prune`) and in what order (`order`).

Part of the executor (`plan.build_plan` calls both). `prune` walks back from the
fetched ops and targets to what they need (fed tensors cut the walk) and returns
a topological order; `order` then sinks variable updates after everything
independent of them and raises shape-only readers to right after their input's
producer. Only the order among independent nodes changes; every data and control
dependency is kept.
"""
from __future__ import annotations

import heapq
from typing import Sequence

from ..graph import Operation


def prune(fetch_ops: Sequence[Operation], fed: set) -> list:
    """Ops needed to compute `fetch_ops`, in topological order; fed tensors cut the walk."""
    order: list[Operation] = []
    state: dict[Operation, int] = {}  # 1 = on stack, 2 = done
    for root in fetch_ops:
        if state.get(root) == 2:
            continue
        stack = [(root, False)]
        while stack:
            op, expanded = stack.pop()
            if expanded:
                state[op] = 2
                order.append(op)
                continue
            if state.get(op):
                continue
            state[op] = 1
            stack.append((op, True))
            for c in reversed(op._control_inputs):
                if not state.get(c) and not _fed_placeholder(c, fed):
                    stack.append((c, False))
            for t in reversed(op._inputs):
                if t not in fed and not state.get(t._op):
                    stack.append((t._op, False))
    return order


def _fed_placeholder(op: Operation, fed: set) -> bool:
    """A control dependency on a fed placeholder is satisfied by the feed (TF's FeedInputs rewrite replaces the
    placeholder's control edges with ones from the feed; it is not run, so it does not ask for a value)."""
    return op.type in ("Placeholder", "PlaceholderV2") and bool(op._outputs) and op._outputs[0] in fed


def order(ops: list, fed: set) -> list:
    """`ops` (a topological order, e.g. from `prune`) reordered for the sequential run: updates late,
    shape readers early. Every dependency is kept."""
    return _hoist_shape_reads(_sink_updates(ops, fed))


#: op types that write a variable: the sequential order runs them as late as the graph allows
_UPDATE_PREFIXES = ("Apply", "Assign", "Scatter")


def _sink_updates(order: list, fed: set) -> list:
    """A topological order that runs variable updates only when nothing else is ready.

    Like hand-written training code (all gradients, then all updates): a gradient
    is consumed while its producer's other outputs are still in cache (a bias
    gradient no longer waits behind a weight update streaming megabytes), and
    more updates find no reader holding their variable, so they go in place.
    Dependencies (data and control) are all kept; only the order among
    independent nodes changes, which TF1 leaves unspecified too.
    """
    if not any(op.type.startswith(_UPDATE_PREFIXES) for op in order):
        return order
    index = {op: i for i, op in enumerate(order)}
    pending = [0] * len(order)
    consumers: list = [[] for _ in order]
    for i, op in enumerate(order):
        deps = {index[t._op] for t in op._inputs if t not in fed and t._op in index}
        deps.update(index[c] for c in op._control_inputs if c in index)
        pending[i] = len(deps)
        for j in deps:
            consumers[j].append(i)
    is_update = [op.type.startswith(_UPDATE_PREFIXES) for op in order]
    ready: list[list[int]] = [[], []]  # heaps of indices: other nodes, updates
    for i, n in enumerate(pending):
        if not n:
            heapq.heappush(ready[is_update[i]], i)
    out = []
    while ready[0] or ready[1]:
        i = heapq.heappop(ready[0] if ready[0] else ready[1])
        out.append(order[i])
        for j in consumers[i]:
            pending[j] -= 1
            if not pending[j]:
                heapq.heappush(ready[is_update[j]], j)
    return out


#: ops that read only the shape of their input: run right after it is produced; host values on a GPU
SHAPE_READERS = frozenset({"Shape", "Size", "Rank", "NnShape"})


def _hoist_shape_reads(order: list) -> list:
    """Moves shape-only readers (e.g. the `tf.shape(x)` of a broadcasting gradient) right after their
    input's producer, as a ready-queue executor would run them, so that `x` itself can be dropped
    after its last real reader instead of living until the backward pass."""
    produced = set(order)
    hoisted = {op for op in order if op.type in SHAPE_READERS and not op._control_inputs
               and len(op._inputs) == 1 and op._inputs[0]._op in produced}
    if not hoisted:
        return order
    after: dict = {}
    for op in order:
        if op in hoisted:
            after.setdefault(op._inputs[0]._op, []).append(op)
    out = []
    for op in order:
        if op not in hoisted:
            out.append(op)
            out.extend(after.get(op, ()))
    return out
