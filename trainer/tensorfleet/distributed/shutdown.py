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
  (atexit) the cluster is released if this process can tell that it exits with status 0
  (`exit_status`): its main module's code returned, or the last exit the main thread asked
  for (`sys.exit`, builtin `exit`/`quit`: wrapped when this module is imported, so that
  `sys.exit(main())` is seen too; a SystemExit through a chief session's close) had
  code 0/None. A non-zero exit never releases: an uncaught exception (`sys.excepthook`,
  `threading.excepthook`), `sys.exit(n)`/`exit(n)`/`quit(n)`/`raise SystemExit(n)` through a
  chief session with n != 0: a chief that crashes leaves the ps running with their variables
  for the restarted chief. Where the status cannot be told (a top-level `raise SystemExit(...)`,
  whose code Python shows to no hook; an error other than the end of input that went through a
  chief session's close) the process does not release; under the launcher it writes the file
  `TENSORFLEET_CHIEF_EXIT_FILE` names, and the launcher releases (`release_for`) if the
  script's real exit status is 0. Signals and `os._exit` run no atexit handler: never released.
- A ps whose chief never comes back: `Server.join()` of a ps task that has served no call
  for `TENSORFLEET_PS_IDLE_TIMEOUT_SECONDS` (default 1800; 0 turns it off) stops the server
  and raises `SystemExit(PS_IDLE_TIMEOUT_EXIT_CODE)` (203, retryable: the operator's
  `ExitCode` policy recreates the pod; the launcher's exit-code table pins the same value).
"""
from __future__ import annotations

import atexit
import dis
import logging
import os
import sys
import threading
from typing import Optional

from .. import errors

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
    without that task's server: the launcher, for a script child that ended without reporting (killed). The report
    carries no incarnation (the ps takes it for the task's latest process). Returns the ps tasks that could not
    be told."""
    from .protos import service_pb2

    request = service_pb2.ShutdownRequest(reason=reason, keep_serving=True, ended_task=_name(job, index))
    return _tell_tasks(cluster, ("ps",), "", request)


def release_for(cluster, job: str, index: int, reason: str) -> list:
    """`release_cluster` on behalf of the chief task (`job`, `index`) of `cluster`, from a process without its
    server: the launcher, once a chief script that could not tell its own exit status (`CHIEF_EXIT_FILE_ENV`)
    has exited with 0. Returns the tasks that could not be told."""
    from .protos import service_pb2

    told = service_pb2.ShutdownRequest(reason=reason, keep_serving=True)
    failed = _tell_tasks(cluster, WORKER_JOBS, _name(job, index), told)
    return failed + _tell_tasks(cluster, ("ps",), "", service_pb2.ShutdownRequest(reason=reason))


def _name(job: str, index: int) -> str:
    return f"/job:{job}/replica:0/task:{index}"


def _tell_tasks(cluster, jobs: tuple, but: str, request) -> list:
    """Sends the Shutdown `request` to every task of `jobs` in `cluster` but `but`, at once (`tell_all`)."""
    from .client import RpcClient, Timeouts   # late: the launcher imports this module before it needs RPCs
    from .cluster import ClusterSpec
    from .protos import service_pb2

    spec = cluster if isinstance(cluster, ClusterSpec) else ClusterSpec(cluster)

    def tell(name: str, address: str) -> None:
        client = RpcClient(address, "WorkerService", name)
        try:
            client.call("Shutdown", request, service_pb2.ShutdownResponse, timeout=Timeouts().connect_seconds)
        finally:
            client.close()

    return tell_all(tell, [(_name(j, i), address) for j, i, address in spec.tasks()
                           if j in jobs and _name(j, i) != but])


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
#: set by the launcher for a script it runs: a chief process that cannot tell its own exit status writes this file
#: at exit instead of releasing, and the launcher releases the cluster if the script's real status is 0
CHIEF_EXIT_FILE_ENV = "TENSORFLEET_CHIEF_EXIT_FILE"
_RETURN_OPS = ("RETURN_VALUE", "RETURN_CONST")
_LOCK = threading.Lock()
_chief_servers: list = []
_task_servers: list = []
_end_hook_installed = False
_crashed = False
_exit_codes: list = []      # [the code of the last exit the main thread asked for] (sys.exit, exit, quit, a chief
                            # session's close with a SystemExit in flight); [] before any
_session_error = ""         # the type of an error (not the end of input) that went through a chief session's close
_main_frame = None          # the main thread's outermost frame (how it ended tells how the process exits)
_installed = False


def register_chief_exit(server) -> None:
    """Releases the cluster when this (chief) process exits with status 0; see the module docstring."""
    global _installed, _main_frame
    with _LOCK:
        if not any(s is server for s in _chief_servers):
            _chief_servers.append(server)
        if _installed:
            return
        _installed = True
    _main_frame = _outermost_main_frame()
    _install_crash_hooks()
    atexit.register(_at_exit)
    _install_exit_notes()   # again, should a script have replaced them since this module's import


def process_crashed() -> bool:
    """True once an uncaught exception (any thread) was seen in this process."""
    return _crashed


def note_chief_session_error(exc_type, exc) -> None:
    """A chief session closed while `exc` was in flight (MonitoredSession, Supervisor): a SystemExit's code is the
    exit the process is on its way to; any other error but the end of input makes its exit status unknown, so it
    does not release at exit (see `exit_status`)."""
    global _session_error
    if exc_type is None or issubclass(exc_type, (errors.OutOfRangeError, StopIteration)):
        return
    if issubclass(exc_type, SystemExit):
        _note_exit(getattr(exc, "code", None))
    else:
        _session_error = exc_type.__name__


def _note_exit(code) -> None:
    if threading.current_thread() is threading.main_thread():   # elsewhere SystemExit only ends that thread
        _exit_codes[:] = [code]


def _status_of(code) -> int:
    """The exit status of `SystemExit(code)`, as Python's own exit computes it."""
    if code is None:
        return 0
    return code if isinstance(code, int) else 1


def _outermost_main_frame():
    """The main thread's frame of the `__main__` module's code (under `python -m`, runpy's frames are below it),
    else its outermost frame."""
    frame = sys._current_frames().get(threading.main_thread().ident)
    main_globals = getattr(sys.modules.get("__main__"), "__dict__", None)
    outermost = in_main = None
    while frame is not None:
        outermost = frame
        if frame.f_globals is main_globals:
            in_main = frame
        frame = frame.f_back
    return in_main or outermost


def _last_op(frame) -> str:
    """The name of the last instruction `frame` ran (its return, or where an exception left it)."""
    try:
        return dis.opname[frame.f_code.co_code[frame.f_lasti]]
    except (AttributeError, IndexError, TypeError):
        return ""


def exit_status() -> tuple:
    """(status, why) of this process's exit, as far as it can tell at exit (atexit), status None when it cannot:
    an uncaught exception is 1; a main thread that returned is 0; one that ended through SystemExit has the
    status of the last exit asked for (sys.exit, builtin exit/quit, a SystemExit through a chief session's close),
    except for a `raise SystemExit(...)` at the top level (Python shows no hook its code): unknown. An error that
    went through a chief session's close makes a status 0 unknown too."""
    if _crashed:
        return 1, "an uncaught exception"
    op = _last_op(_main_frame) if _main_frame is not None else ""
    if op == "RAISE_VARARGS":
        return None, "a `raise SystemExit(...)` at the top level of the script"
    if op in _RETURN_OPS or (_main_frame is None and not _exit_codes):
        status = 0
    elif _exit_codes:
        status = _status_of(_exit_codes[-1])
    else:
        return None, "a SystemExit raised where this process cannot see its code"
    if status == 0 and _session_error:
        return None, f"a {_session_error} went through the chief's session"
    return status, f"exit status {status}"


def _install_crash_hooks() -> None:
    previous_hook = sys.excepthook
    previous_thread_hook = threading.excepthook

    def excepthook(exc_type, exc, tb):
        _mark_crashed()
        previous_hook(exc_type, exc, tb)

    def thread_excepthook(args):
        if args.exc_type is not SystemExit:
            _mark_crashed()
        previous_thread_hook(args)

    sys.excepthook = excepthook
    threading.excepthook = thread_excepthook


class _Noting:
    """`sys.exit` or the builtin `exit`/`quit`, noting the code it exits with (`repr` as the original's)."""

    def __init__(self, exit_fn):
        self._exit = exit_fn

    def __repr__(self) -> str:
        return repr(self._exit)

    def __call__(self, status=None):
        _note_exit(status)
        return self._exit(status)


def _install_exit_notes() -> None:
    """Wraps `sys.exit` and the builtins `exit`/`quit` (the site module's; absent under python -S) so that the
    exit status is known at exit. Done at import: `sys.exit(main())` looks `sys.exit` up before `main()` creates
    any session."""
    import builtins

    if not isinstance(sys.exit, _Noting):
        sys.exit = _Noting(sys.exit)
    for name in ("exit", "quit"):
        quitter = getattr(builtins, name, None)
        if quitter is not None and not isinstance(quitter, _Noting):
            setattr(builtins, name, _Noting(quitter))


_install_exit_notes()


def _mark_crashed() -> None:
    global _crashed
    _crashed = True


def _at_exit() -> None:
    servers = [s for s in list(_chief_servers) if not (s.is_stopped or s.released_cluster)]
    if not servers:
        return
    status, why = exit_status()
    if status is None:
        _defer_release(why)
        return
    if status != 0:
        logger.warning("The chief is exiting after an error (%s): the ps tasks keep their variables for its "
                       "restart", why)
        return
    for server in servers:
        try:
            release_cluster(server, "the chief process exited")
        except Exception as e:  # noqa: BLE001 - at exit: log, never raise
            logger.warning("Could not release the cluster at exit: %s", e)


def _defer_release(why: str) -> None:
    """The exit status is unknown here: not released; under the launcher, it releases if the status is 0."""
    path = os.environ.get(CHIEF_EXIT_FILE_ENV, "")
    if path:
        try:
            with open(path, "w") as f:
                f.write(why + "\n")
            logger.info("The chief is exiting (%s): the launcher releases the ps tasks if its exit status is 0", why)
            return
        except OSError as e:
            why = f"{why}; could not write {path}: {e}"
    logger.warning("The chief is exiting with an exit status it cannot tell (%s): the ps tasks are not released "
                   "(they stop after %s without calls)", why, PS_IDLE_TIMEOUT_ENV)
