"""Prometheus series for the executor, read from `executor.statistics()` at scrape time.

Sits beside the session, above the executor: `register_executor_metrics()` adds a
custom collector to a prometheus_client registry (the default one unless given);
each scrape takes one frozen `ExecutorStatistics` snapshot, so the series of
one scrape are consistent with each other.
"""
from __future__ import annotations

from . import executor

__all__: list = []


class ExecutorCollector:
    """A prometheus_client collector over `executor.statistics()`."""

    def collect(self):
        from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

        s = executor.statistics()
        p = "tensorfleet_executor_"
        yield CounterMetricFamily(p + "runs", "Session.run executions of a plan", value=s.runs)
        yield CounterMetricFamily(p + "nodes_executed", "Nodes (ops and copy nodes) executed",
                                  value=s.nodes_executed)
        yield CounterMetricFamily(p + "run_errors", "Runs that failed with an error", value=s.errors)
        yield CounterMetricFamily(p + "run_seconds", "Wall time spent inside plan runs", value=s.run_seconds_total)
        yield CounterMetricFamily(p + "plans_built", "Execution plans built (one per run signature)",
                                  value=s.plans_built)
        yield CounterMetricFamily(p + "pool_nodes", "Nodes handed to an inter-op thread pool", value=s.pool_nodes)
        yield CounterMetricFamily(p + "concurrent_runs", "Runs on the dependency-counting concurrent path",
                                  value=s.concurrent_runs)
        yield GaugeMetricFamily(p + "queue_depth", "Tasks waiting in the shared inter-op pools", value=s.queue_depth)
        yield GaugeMetricFamily(p + "max_ready_queue_depth", "Most nodes ready at once in a concurrent run",
                                value=s.max_ready_queue_depth)
        dev = CounterMetricFamily(p + "device_seconds", "Time spent running nodes, per device", labels=["device"])
        for name, seconds in s.device_seconds:
            dev.add_metric([name], seconds)
        yield dev


def register_executor_metrics(registry=None) -> ExecutorCollector:
    """Registers the executor collector with `registry` (prometheus_client's default REGISTRY if None)."""
    if registry is None:
        from prometheus_client import REGISTRY as registry  # noqa: N811
    collector = ExecutorCollector()
    registry.register(collector)
    return collector
