"""End of training: the chief releases the cluster, so ps tasks never live forever (TF's ps never exits).

Sits under `train` (MonitoredSession, Supervisor call it) and over `server`/`master`
(the Shutdown call of the worker service). The protocol:

- `release_cluster(server)`: the chief's training ended normally (its MonitoredSession
  closed without an exception, `Supervisor.stop()` without one, or the chief process
  exited with status 0). It first tells every other chief/worker task that training
  finished (`Shutdown` with `keep_serving`: their servers keep serving, their
  `MonitoredSession.should_stop()` / `Supervisor.should_stop()` become true and a step
  that then loses a ps ends with `OutOfRangeError`, which ends a `with` block cleanly),
  then releases every ps task. A released ps keeps serving until every chief/worker task
  has ended, or for a grace period (`ps_lifetime.py`); then it stops and its
  `server.join()` ends the ps process with exit status 0 (`SystemExit(0)`), so a script
  that falls through after `join()` never runs on. Every call carries the job token.
- `report_task_ended(server)`: a chief/worker task tells every ps that it needs them no
  more, once, when its server stops or its process exits (atexit, registered when the server
  starts: after an uncaught exception or `sys.exit(n)` too); the launcher reports for a script
  child that died without it (`report_ended_for`).
- `register_chief_exit(server)`: called when a chief session is created. At process exit
  (atexit) the cluster is released unless it was released already or the process is
  ending through an uncaught exception (main thread: `sys.excepthook`; other threads:
  `threading.excepthook`) or `sys.exit(n)` with n != 0: a chief that crashes leaves
  the ps running with their variables for the restarted chief. Signals and `os._exit`
  run no atexit handler, so they never release either.
- A ps whose chief never comes back: `Server.join()` of a ps task that has served no call
  for `TENSORFLEET_PS_IDLE_TIMEOUT_SECONDS` (default 1800; 0 turns it off) stops the server
  and raises `SystemExit(PS_IDLE_TIMEOUT_EXIT_CODE)` (203, retryable: the operator's
  `ExitCode` policy recreates the pod; the launcher's exit-code table pins the same value).
"""
from __future__ import annotations

import atexit
import logging
import os
import sys
import threading
from typing import Optional

logger = logging.getLogger("tensorfleet.distributed")

#: the exit code of a ps that served no call for the idle timeout (retryable: >= 128)
PS_IDLE_TIMEOUT_EXIT_CODE = 203
PS_IDLE_TIMEOUT_ENV = "TENSORFLEET_PS_IDLE_TIMEOUT_SECONDS"
DEFAULT_PS_IDLE_TIMEOUT_SECONDS = 1800.0
WORKER_JOBS = ("chief", "master", "worker")


def env_seconds(name: str, default: float, zero: str = "") -> float:
    """A number of seconds >= 0 from the environment variable `name` (read each time), else `default`; a bad
    value is a ValueError naming the variable (`zero` says what 0 means, for the message)."""
    raw = os.environ.get(name, "")
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        raise ValueError(f"{name}={raw!r} is not a number of seconds") from None
    if value < 0:
        raise ValueError(f"{name}={raw!r} must be >= 0{f' ({zero})' if zero else ''}")
    return value


def ps_idle_timeout() -> float:
    """Seconds a ps may serve no call before it exits (0: never)."""
    return env_seconds(PS_IDLE_TIMEOUT_ENV, DEFAULT_PS_IDLE_TIMEOUT_SECONDS, "0 turns the idle timeout off")


def server_for_target(target) -> Optional[object]:
    """The `tf.train.Server` of this process that `target` (a session's `grpc://` target) names, else None."""
    if not isinstance(target, str) or not target.startswith("grpc://"):
        return None
    from .server import local_server_for  # late: server imports this module

    return local_server_for(target)


def release_cluster(server, reason: str = "training finished") -> list:
    """The chief's end of training: tell the other workers, then release every ps (see the module docstring).
    Idempotent; returns the tasks that could not be told (already gone)."""
    with _LOCK:
        if server.released_cluster:
            return []
        server.released_cluster = True
    server.mark_training_finished(reason)
    master = server.master
    failed = []
    for job in WORKER_JOBS:
        failed += master.shutdown_tasks(job, reason, 0, keep_serving=True)
    failed += master.shutdown_tasks("ps", reason, 0)
    logger.info("Training finished: released the ps tasks of the cluster%s",
                f" ({', '.join(failed)} unreachable)" if failed else "")
    return failed


def training_tasks(cluster) -> list:
    """The chief/worker task names of a ClusterSpec: the tasks a released ps waits for (never the evaluator)."""
    return [f"/job:{job}/replica:0/task:{index}" for job, index, _ in cluster.tasks() if job in WORKER_JOBS]


def report_task_ended(server, reason: str = "the task ended") -> list:
    """Tells every ps that this chief/worker task ended (once per server; see the module docstring). Returns the
    ps tasks that could not be told."""
    with _LOCK:
        if server.job_name not in WORKER_JOBS or server.end_reported:
            return []
        server.end_reported = True
    return server.master.shutdown_tasks("ps", reason, 0, keep_serving=True, ended_task=server.task_name,
                                        ended_incarnation=server.worker_service.incarnation)


def report_ended_for(cluster, job: str, index: int, reason: str) -> list:
    """`report_task_ended` on behalf of task (`job`, `index`) of `cluster` (a dict or ClusterSpec), from a process
    without that task's server: the launcher, for a script child that ended without reporting (killed). Returns
    the ps tasks that could not be told."""
    from .client import RpcClient, Timeouts   # late: the launcher imports this module before it needs RPCs
    from .cluster import ClusterSpec
    from .protos import service_pb2

    spec = cluster if isinstance(cluster, ClusterSpec) else ClusterSpec(cluster)
    request = service_pb2.ShutdownRequest(reason=reason, keep_serving=True,
                                          ended_task=f"/job:{job}/replica:0/task:{index}")

    def tell(name: str, address: str) -> None:
        client = RpcClient(address, "WorkerService", name)
        try:
            client.call("Shutdown", request, service_pb2.ShutdownResponse, timeout=Timeouts().connect_seconds)
        finally:
            client.close()

    return tell_all(tell, [(f"/job:ps/replica:0/task:{i}", address) for job_, i, address in spec.tasks()
                           if job_ == "ps"])


def tell_all(tell, targets: list) -> list:
    """`tell(name, address)` for every (task name, address) at once, each in its own thread (a call is bounded by
    its own timeout); returns the names whose call failed in any way (gone, refused, unresolvable), sorted."""
    failed: list = []

    def one(name: str, address: str) -> None:
        try:
            tell(name, address)
        except Exception:   # noqa: BLE001 - it cannot be told: say which
            failed.append(name)

    threads = [threading.Thread(target=one, args=t, name=f"tf-tell-{t[0]}", daemon=True) for t in targets]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return sorted(failed)


def register_task_end(server) -> None:
    """Reports this chief/worker task's end to the ps when the process exits (see the module docstring)."""
    global _end_hook_installed
    with _LOCK:
        _task_servers.append(server)
        if _end_hook_installed:
            return
        _end_hook_installed = True
    atexit.register(_report_all_ended)


def _report_all_ended() -> None:
    for server in list(_task_servers):
        try:
            report_task_ended(server, "the task's process exited")
        except Exception as e:  # noqa: BLE001 - at exit: log, never raise
            logger.warning("Could not report the end of %s to the ps tasks: %s", server.task_name, e)


def cluster_released(server) -> bool:
    """True once this task was told (or decided, as the chief) that the cluster's training finished."""
    return server is not None and server.training_finished.is_set()


# -- the chief process's exit --------------------------------------------------------------------
_LOCK = threading.Lock()
_chief_servers: list = []
_task_servers: list = []
_end_hook_installed = False
_crashed = False
_installed = False


def register_chief_exit(server) -> None:
    """Releases the cluster when this (chief) process exits normally; see the module docstring."""
    global _installed
    with _LOCK:
        if not any(s is server for s in _chief_servers):
            _chief_servers.append(server)
        if _installed:
            return
        _installed = True
    _install_crash_hooks()
    atexit.register(_at_exit)


def process_crashed() -> bool:
    """True once an uncaught exception (any thread) or sys.exit(n != 0) was seen in this process."""
    return _crashed


def _mark_crashed() -> None:
    global _crashed
    _crashed = True


def _install_crash_hooks() -> None:
    previous_hook = sys.excepthook
    previous_thread_hook = threading.excepthook
    previous_exit = sys.exit

    def excepthook(exc_type, exc, tb):
        _mark_crashed()
        previous_hook(exc_type, exc, tb)

    def thread_excepthook(args):
        if args.exc_type is not SystemExit:
            _mark_crashed()
        previous_thread_hook(args)

    def exit_(status=None):
        if status not in (None, 0):
            _mark_crashed()
        previous_exit(status)

    sys.excepthook = excepthook
    threading.excepthook = thread_excepthook
    sys.exit = exit_


def _at_exit() -> None:
    if _crashed:
        if _chief_servers:
            logger.warning("The chief is exiting after an error: the ps tasks keep their variables for its restart")
        return
    for server in list(_chief_servers):
        if server.is_stopped or server.released_cluster:
            continue
        try:
            release_cluster(server, "the chief process exited")
        except Exception as e:  # noqa: BLE001 - at exit: log, never raise
            logger.warning("Could not release the cluster at exit: %s", e)
