"""Prometheus metrics of the operator (prometheus-client), listed in docs/metrics.md.

The controller owns one :class:`OperatorMetrics`; ``apply.py`` feeds it the plan's
transitions after each successful status write, so counters move once per real
change (not once per reconcile, and not again after an operator restart,
because transitions come from the stored status). Each instance has its own
registry so tests and embedded operators do not collide.
"""
from __future__ import annotations

from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, start_http_server

PREFIX = 'tensorfleet_operator_'


class OperatorMetrics:
    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        self.registry = registry or CollectorRegistry()
        r = self.registry
        self.jobs_created = Counter(PREFIX + 'jobs_created_total', 'TFJobs seen for the first time.',
                                    ['namespace'], registry=r)
        self.jobs_succeeded = Counter(PREFIX + 'jobs_succeeded_total', 'TFJobs that succeeded.',
                                      ['namespace'], registry=r)
        self.jobs_failed = Counter(PREFIX + 'jobs_failed_total', 'TFJobs that failed, by terminal reason.',
                                   ['namespace', 'reason'], registry=r)
        self.jobs_restarted = Counter(PREFIX + 'jobs_restarted_total',
                                      'Replica restarts performed (pod recreations), by replica type.',
                                      ['namespace', 'replica_type'], registry=r)
        self.jobs = Gauge(PREFIX + 'jobs', 'TFJobs known to the operator, by their latest condition.',
                          ['condition'], registry=r)
        self.pods_created = Counter(PREFIX + 'pods_created_total', 'Pods created.', ['namespace'], registry=r)
        self.pods_deleted = Counter(PREFIX + 'pods_deleted_total', 'Pods deleted.', ['namespace'], registry=r)
        self.services_created = Counter(PREFIX + 'services_created_total', 'Services created.',
                                        ['namespace'], registry=r)
        self.reconcile_errors = Counter(PREFIX + 'reconcile_errors_total', 'Reconciles that raised.',
                                        registry=r)
        self.reconcile_duration = Histogram(
            PREFIX + 'reconcile_duration_seconds', 'Time of one reconcile of one TFJob (read, plan, apply).',
            buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10), registry=r)
        self.all_pods_running = Histogram(
            PREFIX + 'job_all_pods_running_seconds',
            'Time from TFJob creation until all its pods were first seen Running.',
            buckets=(1, 2, 5, 10, 20, 30, 60, 120, 300, 600, 1800, 3600), registry=r)
        self.progress_scrapes = Counter(
            PREFIX + 'progress_scrapes_total',
            'Reads of running jobs\' chief metrics for status.progress, by result (ok, unreachable, invalid).',
            ['result'], registry=r)
        self._condition: dict[Any, str] = {}

    def serve(self, port: int, address: str = '0.0.0.0') -> None:
        self._server = start_http_server(port, addr=address, registry=self.registry)

    def close(self) -> None:
        """Stop serving (an embedded operator, a test); the process exit does it otherwise."""
        server = getattr(self, '_server', None)
        if server is not None:
            httpd, thread = server
            httpd.shutdown()
            httpd.server_close()
            thread.join(timeout=10)
            self._server = None

    def job_condition(self, key: Any, condition: str | None) -> None:
        """Track the latest condition of a job for the per-condition gauge (None: forget it)."""
        old = self._condition.pop(key, None)
        if old is not None:
            self.jobs.labels(old).dec()
        if condition is not None:
            self._condition[key] = condition
            self.jobs.labels(condition).inc()

    def transitions(self, namespace: str, transitions: list[tuple[str, Any]],
                    since_creation: float | None) -> None:
        for kind, detail in transitions:
            if kind == 'created':
                self.jobs_created.labels(namespace).inc()
            elif kind == 'succeeded':
                self.jobs_succeeded.labels(namespace).inc()
            elif kind == 'failed':
                self.jobs_failed.labels(namespace, detail).inc()
            elif kind == 'restarted':
                self.jobs_restarted.labels(namespace, detail).inc()
            elif kind == 'all_running' and since_creation is not None:
                self.all_pods_running.observe(since_creation)
