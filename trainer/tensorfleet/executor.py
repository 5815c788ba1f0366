"""The executor: turns (fetches, feeds, targets) into a pruned, kernel-bound plan and runs it.

Flow: `Session.run` asks for a plan (built once per signature and cached by the
session); the plan holds the needed ops in topological order, each bound to its
kernel and `KernelContext`, with integer value slots for every tensor. A run
fills the feed slots, executes the nodes and reads the fetch slots.
"""
from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Callable, Optional, Sequence

from . import errors
from .graph import Operation, Tensor
from .kernels import KernelContext, ResourceStore, lookup
from .kernels.backend import array_module


@dataclass(frozen=True)
class ExecutorStatistics:
    """A snapshot of executor counters, exported by `metrics` as Prometheus series."""

    runs: int
    nodes_executed: int
    errors: int
    run_seconds_total: float
    plans_built: int


class _Counters:
    def __init__(self):
        self.lock = threading.Lock()
        self.runs = 0
        self.nodes = 0
        self.errors = 0
        self.seconds = 0.0
        self.plans = 0


_COUNTERS = _Counters()


def statistics() -> ExecutorStatistics:
    c = _COUNTERS
    with c.lock:
        return ExecutorStatistics(c.runs, c.nodes, c.errors, c.seconds, c.plans)


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
                if not state.get(c):
                    stack.append((c, False))
            for t in reversed(op._inputs):
                if t not in fed and not state.get(t._op):
                    stack.append((t._op, False))
    return order


class ExecutionPlan:
    """A pruned, kernel-bound schedule for one (fetches, feeds, targets) signature."""

    def __init__(self, fetches: Sequence[Tensor], feeds: Sequence[Tensor], targets: Sequence[Operation],
                 resources: ResourceStore, device_type_of: Callable[[Operation], str]):
        fed = set(feeds)
        roots = [t.op for t in fetches if t not in fed] + list(targets)
        self.ops = prune(roots, fed)
        slot: dict[Tensor, int] = {}
        for t in feeds:
            slot.setdefault(t, len(slot))
        for op in self.ops:
            for out in op._outputs:
                if out not in slot:
                    slot[out] = len(slot)
        self.num_slots = len(slot)
        self.feed_slots = [slot[t] for t in feeds]
        self.fetch_slots = [slot[t] for t in fetches]
        self.steps = []
        for op in self.ops:
            dev_type = device_type_of(op)
            fn = lookup(op, dev_type)
            if fn is None:
                raise errors.InvalidArgumentError(
                    None, op, f"No {dev_type} kernel registered for op '{op.name}' of type {op.type} "
                              f"(dtype {op.outputs[0].dtype.name if op.outputs else 'n/a'})")
            ctx = KernelContext(op=op, xp=array_module(dev_type), resources=resources, device=op.device,
                                attrs=dict(op.attrs))
            ins = tuple(slot[t] for t in op._inputs)
            outs = tuple(slot[t] for t in op._outputs)
            self.steps.append((fn, ctx, ins, outs, op))
        with _COUNTERS.lock:
            _COUNTERS.plans += 1

    def run(self, feed_values: Sequence) -> list:
        """Runs the plan; the first failing node's error is raised with its name."""
        t0 = time.perf_counter()
        vals: list = [None] * self.num_slots
        for s, v in zip(self.feed_slots, feed_values):
            vals[s] = v
        n = 0
        try:
            for fn, ctx, ins, outs, op in self.steps:
                result = fn(ctx, *[vals[i] for i in ins])
                if len(outs) == 1:
                    vals[outs[0]] = result
                elif outs:
                    for s, r in zip(outs, result):
                        vals[s] = r
                n += 1
        except errors.OpError as e:
            self._count(n, t0, failed=True)
            if e.op is None:
                e._op = self.steps[n][4]
            raise
        except Exception as e:  # a kernel bug or bad value: name the node
            self._count(n, t0, failed=True)
            op = self.steps[n][4]
            raise errors.InvalidArgumentError(None, op, f"{type(e).__name__}: {e}\n\t [[node {op.name} "
                                                        f"(op: {op.type})]]") from e
        self._count(n, t0)
        return [vals[s] for s in self.fetch_slots]

    @staticmethod
    def _count(n: int, t0: float, failed: bool = False) -> None:
        c = _COUNTERS
        with c.lock:
            c.runs += 1
            c.nodes += n
            c.seconds += time.perf_counter() - t0
            c.errors += failed
