"""The concurrent run strategy: dependency counting in the caller's thread plus per-device thread pools.

Part of the executor (`execution.ExecutionPlan` asks `choose` once per plan).
A plan runs concurrently when independent expensive nodes sit on different
devices, or on one device and the first run measured both as big enough
(>= OFFLOAD_MIN_COST multiply-adds): `SizeProbe` holds that pending decision
and `ConcurrentRun` the outcome, so the measurements live here, not in the plan.

`ConcurrentRun.run` is TF's ExecutorState in miniature: pending counters per
node, ready lists of cheap and expensive nodes; cheap ones run inline, and when
two or more expensive nodes are ready all but one go to the inter-op pool of
their device (`thread_pools`). Completions come back on `done_q` as
(node index, error or None, seconds); the first error cancels the run: nothing
new starts, nodes already in a pool are waited for. A node whose value arrives
asynchronously (a Recv) would complete the same way: something else puts its
completion on the queue.
"""
from __future__ import annotations

import queue
import time
from typing import Optional, Sequence, Union

import numpy as np

from .plan import Node, NodeFailed, Plan
from .sequential import run_nodes
from .counters import count_concurrent

#: same-device expensive nodes are run concurrently only if both cost at least this many multiply-adds
OFFLOAD_MIN_COST = 1 << 24
_PAIR_ANALYSIS_LIMIT = 400


class _Cancelled(Exception):
    pass


class _CancelFlag:
    __slots__ = ("is_set",)

    def __init__(self):
        self.is_set = False

    def set(self):
        self.is_set = True


def _pool_task(node: Node, vals: list, done_q: queue.SimpleQueue, cancel: _CancelFlag) -> None:
    if cancel.is_set:
        done_q.put((node.index, _Cancelled(), 0.0))
        return
    t = time.perf_counter()
    try:
        run_nodes((node,), vals)
    except NodeFailed as f:
        done_q.put((node.index, f.error, 0.0))
        return
    done_q.put((node.index, None, time.perf_counter() - t))


def independent_pairs(plan: Plan, expensive: Sequence[bool], limit: int = _PAIR_ANALYSIS_LIMIT) -> list:
    """Pairs (i, j) of expensive nodes neither of which depends on the other (ancestor bitsets)."""
    exp = [i for i, e in enumerate(expensive) if e]
    if len(exp) < 2:
        return []
    if len(exp) > limit:
        return [(exp[0], exp[1])]
    anc = [0] * len(plan.nodes)
    for n in plan.nodes:  # nodes are in topological order
        a = 0
        for j in n.preds:
            a |= anc[j] | (1 << j)
        anc[n.index] = a
    return [(i, j) for x, i in enumerate(exp) for j in exp[x + 1:] if not (anc[j] >> i) & 1]


def cost(node: Node, vals: list) -> int:
    """Multiply-adds of an expensive node, from the shapes its first run saw."""
    out_sizes = [getattr(vals[s], "size", 0) for s in node.outputs]
    out_elems = max(out_sizes) if out_sizes else 0
    in_shapes: list = [getattr(vals[s], "shape", ()) for s in node.inputs]
    op = node.op
    if op.type in ("MatMul", "BatchMatMul", "BatchMatMulV2") and in_shapes and len(in_shapes[0]) >= 2:
        a = in_shapes[0]
        k = a[-2] if op.attrs.get("transpose_a") or op.attrs.get("adj_x") else a[-1]
        return int(out_elems) * int(k)
    if op.type.startswith("Conv") and len(in_shapes) >= 2 and len(in_shapes[1]) >= 2:
        return int(out_elems) * int(np.prod(in_shapes[1][:-1]))
    in_elems = sum(int(np.prod(s)) for s in in_shapes)
    return max(int(out_elems), in_elems) * 16


class ConcurrentRun:
    """The concurrent strategy for one plan: which nodes count as expensive, and the pools to use."""

    def __init__(self, plan: Plan, pools, expensive: Sequence[bool]):
        self.plan = plan
        self.pools = pools
        self.expensive = tuple(expensive)
        # values are dropped after their last reader, as the sequential strategy does: a variable's array read
        # earlier in the step is then the store's alone again, so its update can run in place
        keep = set(plan.fetch_slots)
        readers = [0] * plan.num_slots
        for n in plan.nodes:
            for slot in set(n.inputs):
                readers[slot] += 1
        self.readers = tuple(readers)
        self.released_after = tuple(
            (tuple(x for x in set(n.inputs) if x not in keep),
             tuple(x for x in n.outputs if not readers[x] and x not in keep)) for n in plan.nodes)

    def run(self, vals: list, per_dev: dict) -> int:
        """Runs the plan; returns the number of nodes run. Raises `NodeFailed` for the first failure."""
        state = _RunState(self, vals, per_dev)
        failure = state.schedule()
        count_concurrent(state.inline, state.pooled, state.max_ready)
        if failure is not None:
            error, node = failure
            raise NodeFailed(node, error, nodes_done=state.ran)
        return state.ran


class _RunState:
    """One concurrent run (TF's ExecutorState): pending counts, ready lists, completions from the pools."""

    def __init__(self, strategy: ConcurrentRun, vals: list, per_dev: dict):
        plan = strategy.plan
        self.nodes, self.consumers, self.expensive = plan.nodes, plan.consumers, strategy.expensive
        self.pools, self.vals, self.per_dev = strategy.pools, vals, per_dev
        self.pending = list(plan.pending)
        self.readers, self.released_after = list(strategy.readers), strategy.released_after
        self.cheap = [i for i in plan.initial_ready if not self.expensive[i]]
        self.heavy = [i for i in plan.initial_ready if self.expensive[i]]
        self.done_q: queue.SimpleQueue = queue.SimpleQueue()
        self.cancel = _CancelFlag()
        self.outstanding = self.ran = self.inline = self.pooled = 0
        self.max_ready = len(self.cheap) + len(self.heavy)

    def schedule(self) -> Optional[tuple]:
        """Runs until every node is done or one failed; returns (error, node) of the first failure, else None."""
        cheap, heavy = self.cheap, self.heavy
        failure = None
        while failure is None:
            if cheap or heavy:
                failure = self.run_next()
            elif self.outstanding:
                failure = self.collect(wait=True)
            else:
                return None
        self.cancel.set()
        while self.outstanding:  # wait for running nodes; nothing new starts
            self.done_q.get()
            self.outstanding -= 1
        return failure

    def run_next(self) -> Optional[tuple]:
        """Runs one ready node inline (after handing all but one ready expensive node to the pools)."""
        cheap, heavy, nodes = self.cheap, self.heavy, self.nodes
        if cheap:
            i = cheap.pop()
        else:
            while len(heavy) > 1:  # two or more expensive nodes ready: all but one go to pools
                j = heavy.pop(0)
                self.pools.pool_for(nodes[j].device).submit(_pool_task, nodes[j], self.vals, self.done_q, self.cancel)
                self.outstanding += 1
                self.pooled += 1
            i = heavy.pop()
        t = time.perf_counter()
        try:
            run_nodes((nodes[i],), self.vals)
        except NodeFailed as f:
            return f.error, nodes[i]
        self.finished(i, time.perf_counter() - t)
        self.inline += 1
        self.max_ready = max(self.max_ready, len(cheap) + len(heavy))
        return self.collect(wait=False)

    def finished(self, i: int, seconds: float) -> None:
        """Node `i` is done: count it, drop the values nothing will read again, and make the consumers it was
        the last predecessor of ready."""
        self.ran += 1
        inputs, unread_outputs = self.released_after[i]
        vals, readers = self.vals, self.readers
        for slot in inputs:
            readers[slot] -= 1
            if not readers[slot]:
                vals[slot] = None
        for slot in unread_outputs:
            vals[slot] = None
        d = self.nodes[i].device.name
        self.per_dev[d] = self.per_dev.get(d, 0.0) + seconds
        pending, expensive = self.pending, self.expensive
        for c in self.consumers[i]:
            pending[c] -= 1
            if pending[c] == 0:
                (self.heavy if expensive[c] else self.cheap).append(c)

    def collect(self, wait: bool) -> Optional[tuple]:
        """Takes finished pool nodes (all that are done, or with `wait` the next one to finish);
        returns (error, node) for a failed one."""
        while self.outstanding and (wait or not self.done_q.empty()):
            j, err, dt = self.done_q.get()
            self.outstanding -= 1
            if err is not None:
                return err, self.nodes[j]
            self.finished(j, dt)
            if wait:
                break
        return None


class SizeProbe:
    """A decision left to the first run: same-device independent expensive pairs, sizes not known yet."""

    def __init__(self, plan: Plan, pools, pairs: list):
        self.plan, self.pools, self.pairs = plan, pools, pairs

    def decide(self, vals: list) -> Optional[ConcurrentRun]:
        """The concurrent strategy if two independent nodes each cost >= OFFLOAD_MIN_COST, from a run's values."""
        heavy = [n.expensive and cost(n, vals) >= OFFLOAD_MIN_COST for n in self.plan.nodes]
        if any(heavy[i] and heavy[j] for i, j in self.pairs):
            return ConcurrentRun(self.plan, self.pools, heavy)
        return None


def choose(plan: Plan, pools) -> Union[ConcurrentRun, SizeProbe, None]:
    """How `plan` runs when pools are available: concurrently, after measuring a first run, or not."""
    static = [n.expensive for n in plan.nodes]
    pairs = independent_pairs(plan, static)
    if any(plan.nodes[i].device.name != plan.nodes[j].device.name for i, j in pairs):
        return ConcurrentRun(plan, pools, static)
    if pairs:
        return SizeProbe(plan, pools, pairs)
    return None
