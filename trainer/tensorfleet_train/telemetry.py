"""The built-in roles' Prometheus endpoint: the one place the launcher touches `tensorfleet.metrics`.

Beside every role (cli.py starts it before the role, stops it after). `Telemetry.start()` builds the
trainer's series (`tensorfleet.metrics.TrainerMetrics`, the contract table in docs/metrics.md, labelled
`job_name`/`replica_type`/`replica_index` from TF_CONFIG and the pod's environment) and serves
`/metrics` on `TENSORFLEET_METRICS_PORT` (default 9100; `--metrics-port` overrides, 0 picks a free
port, -1 turns the endpoint off). The roles report through the small methods below and never see
prometheus_client.

Where this tensorfleet build has no `TrainerMetrics` yet, the endpoint serves the executor's series
only and says so once in the log.

At `stop()` the task's last progress (global step, target steps, loss, examples/s) is written as its
container's termination message, JSON `{"progress": {"globalStep": ..., ...}}` (at most 4 KiB, Kubernetes'
limit): the operator reads it from the pod's status when the chief ends, so `status.progress` shows every
job's final step, also one shorter than the operator's polling interval. The file is
`$TENSORFLEET_TERMINATION_MESSAGE_PATH` (local mode's kubelet sets it), else Kubernetes' default
`/dev/termination-log` when the kubelet mounted it; elsewhere nothing is written.
"""
from __future__ import annotations

import json
import math
import os
from typing import Any, Mapping, Optional

from . import runlog
from .exit_codes import ExitCode, LauncherExit

DEFAULT_METRICS_PORT = 9100
METRICS_PORT_ENV = "TENSORFLEET_METRICS_PORT"
TERMINATION_MESSAGE_ENV = "TENSORFLEET_TERMINATION_MESSAGE_PATH"
KUBERNETES_TERMINATION_LOG = "/dev/termination-log"
MAX_TERMINATION_MESSAGE_BYTES = 4096   # the kubelet keeps no more


def metrics_port_from(environ: Mapping[str, str], flag: Optional[int]) -> int:
    """--metrics-port, else TENSORFLEET_METRICS_PORT, else 9100; a bad value exits BAD_ARGUMENTS."""
    if flag is not None:
        port, where = flag, "--metrics-port"
    else:
        raw = environ.get(METRICS_PORT_ENV, "").strip()
        if not raw:
            return DEFAULT_METRICS_PORT
        if not raw.lstrip("-").isdigit():
            raise LauncherExit(ExitCode.BAD_ARGUMENTS, f"{METRICS_PORT_ENV} must be a port number, got {raw!r}")
        port, where = int(raw), METRICS_PORT_ENV
    if not -1 <= port <= 65535:
        raise LauncherExit(ExitCode.BAD_ARGUMENTS, f"{where} must be -1 (off), 0 (any) or 1-65535, got {port}")
    return port


def _peer_label(task: str) -> str:
    """'/job:ps/replica:0/task:1' -> 'ps:1' (docs/metrics.md's peer label); anything else as it is."""
    parts = dict(p.split(":", 1) for p in task.strip("/").split("/") if ":" in p)
    return f"{parts['job']}:{parts['task']}" if "job" in parts and "task" in parts else task


class Telemetry:
    """Trainer series for one task; every method is a no-op when the endpoint is off."""

    def __init__(self, role: str, index: int, port: int, address: str = "0.0.0.0",
                 environ: Optional[Mapping[str, str]] = None):
        self.role, self.index, self.port, self.address = role, index, port, address
        self.environ = os.environ if environ is None else environ
        self.metrics: Any = None     # tensorfleet.metrics.TrainerMetrics when available
        self.bound_port: Optional[int] = None
        self._server: Any = None
        #: the last progress reported, for the termination message (kept even with the endpoint off)
        self.final: dict = {}

    def start(self) -> "Telemetry":
        if self.port < 0:
            return self
        from prometheus_client import CollectorRegistry, start_http_server
        from tensorfleet import metrics

        tf_metrics: Any = metrics

        if hasattr(tf_metrics, "TrainerMetrics"):
            labels = tf_metrics.replica_labels(self.environ)
            labels.update(replica_type=self.role, replica_index=str(self.index))
            self.metrics = tf_metrics.TrainerMetrics(labels["job_name"], self.role, self.index)
            registry = self.metrics.registry
        else:
            registry = CollectorRegistry(auto_describe=True)
            tf_metrics.register_executor_metrics(registry)
            runlog.log("metrics_partial", "this tensorfleet has no TrainerMetrics: serving executor series only")
        try:
            self._server, _ = start_http_server(self.port, addr=self.address, registry=registry)
        except OSError as e:
            raise LauncherExit(ExitCode.BAD_ARGUMENTS,
                               f"cannot serve /metrics on {self.address}:{self.port}: {e.strerror or e}") from None
        self.bound_port = self._server.server_address[1]
        if self.metrics is not None:
            self._count_rpcs(self.metrics)
        runlog.log("metrics_serving", f"/metrics on {self.address}:{self.bound_port}", port=self.bound_port)
        return self

    @staticmethod
    def _count_rpcs(metrics: Any) -> None:
        """Feed every RPC this process issues or serves into the tensorfleet_rpc_* series."""
        try:
            from tensorfleet.distributed.rpc_accounting import set_rpc_observer
        except ImportError:          # a tensorfleet without the hook: those series stay empty
            return

        def observe(peer: str, method: str, side: str, sent: int, received: int, seconds: Optional[float]) -> None:
            peer = _peer_label(peer)
            if side == "client":     # this task called `peer`: request out, reply in, latency
                metrics.record_rpc(peer, method, "sent", sent, seconds)
                metrics.record_rpc_bytes(peer, "received", received)
            else:                    # served for a caller: request in, reply out
                metrics.record_rpc(peer, method, "received", received)
                metrics.record_rpc_bytes(peer, "sent", sent)
        set_rpc_observer(observe)

    def stop(self) -> None:
        self.write_termination_message()
        if self.metrics is not None:
            try:
                from tensorfleet.distributed.rpc_accounting import set_rpc_observer
                set_rpc_observer(None)
            except ImportError:
                pass
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def termination_message_path(self) -> Optional[str]:
        path = self.environ.get(TERMINATION_MESSAGE_ENV)
        if path:
            return path
        return KUBERNETES_TERMINATION_LOG if os.path.isfile(KUBERNETES_TERMINATION_LOG) else None

    def write_termination_message(self) -> None:
        """The last progress as the container's termination message (see the module docstring); never fails."""
        path = self.termination_message_path()
        if path is None or "globalStep" not in self.final:
            return
        text = json.dumps({"progress": self.final}, sort_keys=True)
        if len(text) > MAX_TERMINATION_MESSAGE_BYTES:
            return
        try:
            with open(path, "w") as f:
                f.write(text)
        except OSError as e:
            runlog.log("termination_message", f"cannot write {path}: {e.strerror or e}")

    def _remember(self, key: str, value) -> None:
        if value is not None and math.isfinite(value):
            self.final[key] = value

    # --- what the roles report ---------------------------------------------------------------------
    def step(self, seconds: float, examples: int, loss: Optional[float], global_step: Optional[int]) -> None:
        self._remember("loss", None if loss is None else float(loss))
        self._remember("globalStep", None if global_step is None else int(global_step))
        if self.metrics is not None:
            self.metrics.record_step(seconds, examples=examples, loss=loss, global_step=global_step)

    def rates(self, steps_per_second: float, examples_per_second: float) -> None:
        self._remember("examplesPerSecond", float(examples_per_second))
        if self.metrics is not None:
            self.metrics.set_rates(steps_per_second, examples_per_second)

    def target_steps(self, steps: int) -> None:
        self._remember("totalSteps", int(steps))
        if self.metrics is not None:
            self.metrics.set_target_steps(steps)

    def global_step(self, step: int) -> None:
        self._remember("globalStep", int(step))
        if self.metrics is not None:
            self.metrics.set_global_step(step)

    def loss(self, value: float) -> None:
        self._remember("loss", float(value))
        if self.metrics is not None:
            self.metrics.set_loss(value)

    def stale_gradients(self, count: int) -> None:
        if self.metrics is not None and count > 0 and hasattr(self.metrics, "record_stale_gradients"):
            self.metrics.record_stale_gradients(count)

    def barrier_wait(self, seconds: float) -> None:
        if self.metrics is not None and hasattr(self.metrics, "record_barrier_wait"):
            self.metrics.record_barrier_wait(seconds)

    def ps_variable_bytes(self, nbytes: int) -> None:
        if self.metrics is not None:
            self.metrics.set_ps_variable_bytes(nbytes)

    def checkpoint(self, seconds: float, when: float) -> None:
        if self.metrics is not None:
            self.metrics.record_checkpoint(seconds, when)
