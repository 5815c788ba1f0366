"""Executor counters and their frozen snapshot, `statistics()`, which `metrics` exports.

Part of the executor: every run strategy adds to one process-wide set of
counters under a lock; `statistics()` copies them into an `ExecutorStatistics`
record (trio's `statistics()` style), so the executor never imports
prometheus_client.
"""
from __future__ import annotations

import threading
import time
from dataclasses import dataclass

from .thread_pools import all_queue_depth


@dataclass(frozen=True)
class ExecutorStatistics:
    """A snapshot of executor counters, exported by `metrics` as Prometheus series."""

    runs: int
    nodes_executed: int
    errors: int
    run_seconds_total: float
    plans_built: int
    inline_nodes: int = 0           # nodes run in a concurrent run's caller thread
    pool_nodes: int = 0             # nodes handed to an inter-op pool
    concurrent_runs: int = 0        # runs that used the dependency-counting path
    max_ready_queue_depth: int = 0  # most nodes ready at once in a concurrent run
    queue_depth: int = 0            # tasks waiting in the shared inter-op pools now
    device_seconds: tuple = ()      # ((device name, seconds), ...)

    def device_seconds_dict(self) -> dict:
        return dict(self.device_seconds)


class _Counters:
    def __init__(self):
        self.lock = threading.Lock()
        self.runs = self.nodes = self.errors = self.plans = 0
        self.inline = self.pooled = self.concurrent = self.max_ready = 0
        self.seconds = 0.0
        self.device_seconds: dict = {}


COUNTERS = _Counters()


def statistics() -> ExecutorStatistics:
    c = COUNTERS
    with c.lock:
        return ExecutorStatistics(c.runs, c.nodes, c.errors, c.seconds, c.plans, c.inline, c.pooled, c.concurrent,
                                  c.max_ready, all_queue_depth(), tuple(sorted(c.device_seconds.items())))


def count_plan() -> None:
    with COUNTERS.lock:
        COUNTERS.plans += 1


def count_run(nodes: int, t0: float, per_dev, failed: bool = False) -> None:
    """Adds one run of `nodes` nodes that started at `t0` (perf_counter); `per_dev`: (device, seconds) pairs."""
    c = COUNTERS
    dt = time.perf_counter() - t0
    with c.lock:
        c.runs += 1
        c.nodes += nodes
        c.seconds += dt
        c.errors += failed
        ds = c.device_seconds
        for d, s in per_dev:
            ds[d] = ds.get(d, 0.0) + s


def count_concurrent(inline: int, pooled: int, max_ready: int) -> None:
    c = COUNTERS
    with c.lock:
        c.inline += inline
        c.pooled += pooled
        c.concurrent += 1
        c.max_ready = max(c.max_ready, max_ready)
