"""The ps role of the built-in models: start this task's server and serve until told to stop.

Flow: cli.py -> `serve(...)` here. TF's idiom is `server.join()`; it runs in a helper thread so the
main thread can react to SIGTERM (exit 143 within the grace period). `join()` returning (the chief
releasing the ps at the end of training: tensorfleet.distributed.shutdown) exits 0; a ps that served no
call for TENSORFLEET_PS_IDLE_TIMEOUT_SECONDS (its chief never came back) exits PS_IDLE_TIMEOUT. A ps waits for no
peer at start-up: it only serves, and a restarted ps must not wait for workers that have finished.
Every second it reports the bytes of the variable values its worker service holds.
A bad TENSORFLEET_PS_IDLE_TIMEOUT_SECONDS or TENSORFLEET_PS_RELEASE_GRACE_SECONDS exits BAD_ARGUMENTS (2) at
start-up, naming the variable; a `join()` that fails in any other way exits TRAINING_ERROR (1), never 0.
"""
from __future__ import annotations

import threading
from typing import Any

import tensorfleet as _tensorfleet

from . import runlog
from .exit_codes import ExitCode, LauncherExit

tf: Any = _tensorfleet   # its namespace is filled at import time: no static attributes


VARIABLE_BYTES_EVERY = 1.0   # seconds between updates of tensorfleet_ps_variable_bytes


def _variable_bytes(server) -> int:
    """Bytes of the variable values this task's worker service holds (0 where the runtime does not say)."""
    resources = getattr(getattr(server, "worker_service", None), "resources", None)
    if resources is None:
        return 0
    with resources.lock:
        values = list(resources.variables.values())
    return sum(int(getattr(v, "nbytes", 0)) for v in values)


def serve(args, task, shutdown, telemetry) -> int:
    if not hasattr(tf.train, "Server"):
        raise LauncherExit(ExitCode.TRAINING_ERROR, "this tensorfleet build has no tf.train.Server: the ps role "
                                                    "needs the distributed runtime (issue 10)")
    cluster = tf.train.ClusterSpec(task.training_cluster())
    from tensorfleet.distributed import shutdown as lib_shutdown

    try:   # read now (join() reads it again): a bad value is a configuration error, not a ps that exits 0
        lib_shutdown.ps_idle_timeout()
        server = tf.train.Server(cluster, job_name=task.type, task_index=task.index)
    except ValueError as e:
        raise LauncherExit(ExitCode.BAD_ARGUMENTS, f"bad environment value: {e}") from None
    runlog.log("server_started", f"{task.name} serving at {server.target}", target=server.target)
    telemetry.target_steps(args.steps)
    joined = threading.Event()
    failed: list = []

    def join():
        try:
            server.join()
        except SystemExit:   # released or the library's idle timeout: server.exit_code says which code
            pass
        except Exception as e:   # noqa: BLE001 - anything else fails the ps (main thread: exit 1)
            failed.append(e)
        finally:
            joined.set()
            shutdown.event.set()   # wakes the main thread

    threading.Thread(target=join, name="ps-join", daemon=True).start()
    while not shutdown.event.wait(VARIABLE_BYTES_EVERY):
        telemetry.ps_variable_bytes(_variable_bytes(server))
    if failed:
        if hasattr(server, "stop"):
            server.stop()
        error = failed[0]
        raise LauncherExit(ExitCode.TRAINING_ERROR, f"the ps's server.join() failed: {type(error).__name__}: {error}")
    if joined.is_set() and shutdown.signum is None:
        code = getattr(server, "exit_code", None)
        if code is None:   # join() returned without a release or idle timeout: not a success to report
            raise LauncherExit(ExitCode.TRAINING_ERROR, "the ps's server stopped without being released")
        reason = getattr(server, "shutdown_reason", "") or "server stopped"
        if code == ExitCode.PS_IDLE_TIMEOUT:
            runlog.log("ps_idle_timeout", f"no call from any task: {reason}", exit_code=int(code))
        else:
            runlog.log("done", f"released by the chief: {reason}", exit_code=int(code))
        return code
    if hasattr(server, "stop"):
        server.stop()
    runlog.log("stopped", "stopped by a signal", exit_code=shutdown.exit_code)
    return shutdown.exit_code
