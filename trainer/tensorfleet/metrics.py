"""Prometheus series of a trainer process: training progress, RPC traffic, sync replicas, checkpoints, GPU
memory and the executor's statistics, each labelled with the replica it comes from.

Sits beside the session, above the executor (read at scrape time). The names, types, labels and buckets
are the contract in docs/metrics.md ("Trainer metrics"), shared with the Grafana dashboard, the alerts and
the operator's progress reader; a test checks the exposed set against that table.

* `TrainerMetrics(job_name, replica_type, replica_index, registry=None)` registers every series in a
  registry (a new one unless given) with the three replica labels; the trainer calls `record_step`,
  `record_rpc`, `record_checkpoint`, ... where those things happen. Series documented as "absent"
  until known (target steps, last checkpoint time) appear on their first value.
* `ExecutorCollector` turns `executor.statistics()` into series at scrape time (one frozen snapshot per
  scrape, so the series of one scrape agree); `GpuMemoryCollector` reads each CUDA device's pool.
* `serve_metrics(port, addr)` serves `/metrics` with prometheus_client's own HTTP server.
* `replica_labels(environ)` takes the labels from `TF_CONFIG` and the pod's environment.
"""
from __future__ import annotations

import json
import os
import re
import socket
from typing import Callable, Mapping, Optional

from . import executor

__all__: list = []

REPLICA_LABELS = ("job_name", "replica_type", "replica_index")
STEP_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60)
RPC_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10)
CHECKPOINT_BUCKETS = (0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 120, 300)
DEFAULT_METRICS_PORT = 9100


def _const_labels(labels: Optional[Mapping[str, str]]):
    names = list(labels) if labels else []
    values = [str(labels[k]) for k in names] if labels else []
    return names, values


class ExecutorCollector:
    """A prometheus_client collector over `executor.statistics()`, with constant labels (the replica's)."""

    def __init__(self, labels: Optional[Mapping[str, str]] = None):
        self._names, self._values = _const_labels(labels)

    def _family(self, cls, name: str, doc: str, value, extra=()):
        fam = cls(name, doc, labels=self._names + list(extra))
        if value is not None:
            fam.add_metric(self._values, value)
        return fam

    def collect(self):
        from prometheus_client.core import CounterMetricFamily as C, GaugeMetricFamily as G  # noqa: N817

        s = executor.statistics()
        p = "tensorfleet_executor_"
        yield self._family(C, p + "runs", "Session.run executions of a plan", s.runs)
        yield self._family(C, p + "nodes_executed", "Nodes (ops and copy nodes) executed", s.nodes_executed)
        yield self._family(C, p + "run_errors", "Runs that failed with an error", s.errors)
        yield self._family(C, p + "run_seconds", "Wall time spent inside plan runs", s.run_seconds_total)
        yield self._family(C, p + "plans_built", "Execution plans built (one per run signature)", s.plans_built)
        yield self._family(C, p + "pool_nodes", "Nodes handed to an inter-op thread pool", s.pool_nodes)
        yield self._family(C, p + "concurrent_runs", "Runs on the dependency-counting concurrent path",
                           s.concurrent_runs)
        yield self._family(G, p + "queue_depth", "Tasks waiting in the shared inter-op pools", s.queue_depth)
        yield self._family(G, p + "max_ready_queue_depth", "Most nodes ready at once in a concurrent run",
                           s.max_ready_queue_depth)
        dev = self._family(C, p + "device_seconds", "Time spent running nodes, per device", None, ["device"])
        for name, seconds in s.device_seconds:
            dev.add_metric(self._values + [name], seconds)
        yield dev


def register_executor_metrics(registry=None, labels: Optional[Mapping[str, str]] = None) -> ExecutorCollector:
    """Registers the executor collector with `registry` (prometheus_client's default REGISTRY if None)."""
    if registry is None:
        from prometheus_client import REGISTRY as registry  # noqa: N811
    collector = ExecutorCollector(labels)
    registry.register(collector)
    return collector


def _short_device(name: str) -> str:
    i = name.find("/device:")
    return name[i:] if i >= 0 else name


def _cuda_devices() -> list:
    from .kernels import gpu_memory

    return gpu_memory.known_cuda_memory()


class GpuMemoryCollector:
    """Device memory in use and its cap per GPU this process has touched (no series without a GPU)."""

    def __init__(self, labels: Optional[Mapping[str, str]] = None, devices: Callable[[], list] = _cuda_devices):
        self._names, self._values = _const_labels(labels)
        self._devices = devices

    def collect(self):
        from prometheus_client.core import GaugeMetricFamily

        devices = self._devices()
        if not devices:
            return
        used = GaugeMetricFamily("tensorfleet_gpu_memory_used_bytes", "Device memory in use (cupy's pool) per GPU",
                                 labels=self._names + ["device"])
        limit = GaugeMetricFamily("tensorfleet_gpu_memory_limit_bytes",
                                  "The cap on the device's memory (the pool's limit, else the device's total)",
                                  labels=self._names + ["device"])
        for mem in devices:
            dev = _short_device(mem.device_name)
            in_use = mem.in_use()
            used.add_metric(self._values + [dev], float(in_use or 0))
            limit.add_metric(self._values + [dev], float(mem.cap_bytes))
        yield used
        yield limit


class _WithoutCreated:
    """Re-yields the families of `registry` without prometheus_client's `*_created` companion series (the
    contract lists every tensorfleet_* series served, and those timestamps carry nothing for a dashboard)."""

    def __init__(self, registry):
        self._registry = registry

    def collect(self):
        for fam in self._registry.collect():
            fam.samples = [s for s in fam.samples if not s.name.endswith("_created")]
            yield fam


class TrainerMetrics:
    """Every trainer series of docs/metrics.md for one replica, registered in `registry`."""

    def __init__(self, job_name: str, replica_type: str, replica_index, registry=None,
                 gpu_devices: Callable[[], list] = _cuda_devices):
        from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

        if not job_name:
            raise ValueError("job_name must be a non-empty string (the TFJob's name, or the local run's)")
        if replica_type not in ("chief", "master", "ps", "worker", "evaluator"):
            raise ValueError(f"replica_type must be chief, master, ps, worker or evaluator, got {replica_type!r}")
        self.labels = {"job_name": str(job_name), "replica_type": str(replica_type),
                       "replica_index": str(int(replica_index))}
        self.registry = CollectorRegistry(auto_describe=True) if registry is None else registry
        r, names = CollectorRegistry(auto_describe=True), list(REPLICA_LABELS)  # served through _WithoutCreated

        def gauge(name, doc, extra=()):
            return Gauge(name, doc, names + list(extra), registry=r)

        def counter(name, doc, extra=()):
            return Counter(name, doc, names + list(extra), registry=r)

        def histogram(name, doc, buckets, extra=()):
            return Histogram(name, doc, names + list(extra), registry=r, buckets=buckets)

        self.global_step = gauge("tensorfleet_train_global_step", "The global step this replica last saw")
        self.target_steps = gauge("tensorfleet_train_target_steps", "The step the job trains to, when known")
        self.steps = counter("tensorfleet_train_steps", "Training steps this replica completed")
        self.examples = counter("tensorfleet_train_examples", "Training examples this replica consumed")
        self.steps_per_second = gauge("tensorfleet_train_steps_per_second",
                                      "Steps per second over the last logging window")
        self.examples_per_second = gauge("tensorfleet_train_examples_per_second",
                                         "Examples per second over the last logging window")
        self.loss = gauge("tensorfleet_train_loss", "The last loss this replica computed")
        self.step_duration = histogram("tensorfleet_train_step_duration_seconds", "Wall time of one training step",
                                       STEP_BUCKETS)
        self.rpc_bytes = counter("tensorfleet_rpc_bytes", "Payload bytes exchanged with a peer task",
                                 ["peer", "direction"])
        self.rpc_requests = counter("tensorfleet_rpc_requests", "RPCs issued to or served for a peer task",
                                    ["peer", "method", "direction"])
        self.rpc_duration = histogram("tensorfleet_rpc_duration_seconds", "Client-side latency of one RPC",
                                      RPC_BUCKETS, ["method"])
        self.stale_gradients = counter("tensorfleet_sync_stale_gradients_dropped",
                                       "Gradients the sync-replicas accumulator dropped as stale")
        self.barrier_wait = histogram("tensorfleet_sync_barrier_wait_seconds",
                                      "Time one step waited at the sync-replicas barrier", STEP_BUCKETS)
        self.ps_variable_bytes = gauge("tensorfleet_ps_variable_bytes", "Bytes of variable values this ps holds")
        self.checkpoint_duration = histogram("tensorfleet_checkpoint_duration_seconds",
                                             "Time to write one checkpoint", CHECKPOINT_BUCKETS)
        self.checkpoint_last = gauge("tensorfleet_checkpoint_last_timestamp_seconds",
                                     "Unix time when the last checkpoint was written")
        # series present from the start (zero until something happens); the others appear on first use
        for metric in (self.global_step, self.steps, self.examples, self.steps_per_second, self.examples_per_second,
                       self.loss, self.step_duration, self.stale_gradients, self.barrier_wait,
                       self.checkpoint_duration):
            metric.labels(**self.labels)
        if replica_type == "ps":
            self.ps_variable_bytes.labels(**self.labels)
        self.registry.register(_WithoutCreated(r))
        self.registry.register(ExecutorCollector(self.labels))
        self.registry.register(GpuMemoryCollector(self.labels, gpu_devices))

    def _mine(self, metric, **extra):
        return metric.labels(**self.labels, **extra)

    def record_step(self, seconds: float, examples: int = 0, loss: Optional[float] = None,
                    global_step: Optional[int] = None) -> None:
        """One training step: its duration, the examples it consumed, its loss, the global step after it."""
        self._mine(self.steps).inc()
        self._mine(self.step_duration).observe(seconds)
        if examples:
            self._mine(self.examples).inc(examples)
        if loss is not None:
            self._mine(self.loss).set(float(loss))
        if global_step is not None:
            self._mine(self.global_step).set(int(global_step))

    def set_rates(self, steps_per_second: float, examples_per_second: float) -> None:
        """The rates over the last logging window (for one-scrape readers such as the operator)."""
        self._mine(self.steps_per_second).set(steps_per_second)
        self._mine(self.examples_per_second).set(examples_per_second)

    def set_global_step(self, step: int) -> None:
        self._mine(self.global_step).set(int(step))

    def set_target_steps(self, steps: int) -> None:
        self._mine(self.target_steps).set(int(steps))

    def set_loss(self, loss: float) -> None:
        self._mine(self.loss).set(float(loss))

    def record_rpc(self, peer: str, method: str, direction: str, nbytes: int = 0,
                   seconds: Optional[float] = None) -> None:
        """One RPC issued (`direction="sent"`, with its client-side latency) or served (`"received"`)."""
        if direction not in ("sent", "received"):
            raise ValueError(f"direction must be 'sent' or 'received', got {direction!r}")
        peer = peer or "unknown"
        self._mine(self.rpc_requests, peer=peer, method=method, direction=direction).inc()
        if nbytes:
            self._mine(self.rpc_bytes, peer=peer, direction=direction).inc(nbytes)
        if seconds is not None:
            self._mine(self.rpc_duration, method=method).observe(seconds)

    def record_rpc_bytes(self, peer: str, direction: str, nbytes: int) -> None:
        """Payload bytes sent to or received from `peer` (e.g. the response of an RPC issued)."""
        if direction not in ("sent", "received"):
            raise ValueError(f"direction must be 'sent' or 'received', got {direction!r}")
        self._mine(self.rpc_bytes, peer=peer or "unknown", direction=direction).inc(nbytes)

    def record_stale_gradients(self, count: int = 1) -> None:
        self._mine(self.stale_gradients).inc(count)

    def record_barrier_wait(self, seconds: float) -> None:
        self._mine(self.barrier_wait).observe(seconds)

    def set_ps_variable_bytes(self, nbytes: int) -> None:
        self._mine(self.ps_variable_bytes).set(nbytes)

    def record_checkpoint(self, seconds: float, when: float) -> None:
        """A checkpoint written in `seconds`, finished at Unix time `when`."""
        self._mine(self.checkpoint_duration).observe(seconds)
        self._mine(self.checkpoint_last).set(when)


def serve_metrics(registry, port: int = DEFAULT_METRICS_PORT, addr: str = "0.0.0.0"):
    """Serves `/metrics` of `registry` with prometheus_client's HTTP server on `addr:port` (port 0: any free
    one). Returns (server, thread); `stop_serving(server)` stops it. The bound port is
    `server.server_address[1]`."""
    from prometheus_client import start_http_server

    return start_http_server(int(port), addr=addr, registry=registry)


def stop_serving(server) -> None:
    """Stops a server from `serve_metrics` and closes its socket."""
    server.shutdown()
    server.server_close()


def metrics_port(environ: Optional[Mapping[str, str]] = None) -> int:
    """`TENSORFLEET_METRICS_PORT` (what the operator injects), else 9100; a bad value is a clear error."""
    env = os.environ if environ is None else environ
    raw = env.get("TENSORFLEET_METRICS_PORT", "")
    if not raw:
        return DEFAULT_METRICS_PORT
    if not raw.isdigit() or not 0 <= int(raw) <= 65535:
        raise ValueError(f"TENSORFLEET_METRICS_PORT must be a port number (0-65535), got {raw!r}")
    return int(raw)


_POD_NAME = re.compile(r"^(?P<job>.+)-(?P<type>chief|master|ps|worker|evaluator)-(?P<index>\d+)$")


def replica_labels(environ: Optional[Mapping[str, str]] = None) -> dict:
    """job_name, replica_type and replica_index of this process.

    The type and index come from `TF_CONFIG`'s task (a local process without one is `worker` 0); the job
    name from `TENSORFLEET_JOB_NAME` when set, else from this pod's name `<job>-<type>-<index>` (the
    operator's naming; `HOSTNAME` or the host name), else from the first cluster address's host part.
    """
    env = os.environ if environ is None else environ
    raw = env.get("TF_CONFIG", "")
    try:
        config = json.loads(raw) if raw else {}
    except ValueError as e:
        raise ValueError(f"TF_CONFIG is not valid JSON: {e}") from None
    task = config.get("task") or {}
    replica_type = str(task.get("type", "worker")).lower()
    replica_index = str(int(task.get("index", 0)))
    job = env.get("TENSORFLEET_JOB_NAME", "")
    if not job:
        m = _POD_NAME.match((env.get("HOSTNAME") or socket.gethostname()).split(".")[0])
        if m:
            job = m.group("job")
    if not job:
        for addresses in (config.get("cluster") or {}).values():
            for address in addresses or ():
                m = _POD_NAME.match(str(address).split(".")[0].split(":")[0])
                if m:
                    job = m.group("job")
                    break
            if job:
                break
    return {"job_name": job or "local", "replica_type": replica_type, "replica_index": replica_index}
