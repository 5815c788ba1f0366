"""Runs a user command (`tensorfleet-train -- python my_script.py ...` or `--script my_script.py`) as a child.

Last step of the flow for user scripts (cli.py -> task.py -> startup.py -> here). The child gets the
launcher's environment (TF_CONFIG, CUDA_VISIBLE_DEVICES, TENSORFLEET_RPC_TOKEN, TENSORFLEET_METRICS_PORT
as the operator set them) plus `PYTHONUNBUFFERED=1`, in its own process group. Signals the launcher
receives (TERM, INT, HUP, QUIT, USR1, USR2) are forwarded to that group; after SIGTERM or SIGINT a child
still alive after the grace period is killed and the launcher exits 128+n. The child's exit status is
passed through (killed by signal n: 128+n). On Linux the child is also killed if the launcher itself
dies (PR_SET_PDEATHSIG), and whatever is left in its process group is killed when it ends: nothing is
orphaned. When a chief/worker script has ended, however it ended, the launcher tells the ps tasks that this
task needs them no more (`report_script_end`; a script the library let end normally told them already), so a
released ps does not wait its grace period for a script that was killed. A chief script whose process could not
tell its own exit status at exit (a top-level `raise SystemExit(...)`, an error through its session: the library
then writes the file named by TENSORFLEET_CHIEF_EXIT_FILE instead of releasing) is released by the launcher if
its real exit status is 0; never otherwise.
"""
from __future__ import annotations

import ctypes
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from typing import Optional, Sequence

from . import runlog
from .exit_codes import ExitCode, LauncherExit, for_signal, from_returncode

FORWARDED_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1, signal.SIGUSR2)
STOPPING_SIGNALS = (signal.SIGTERM, signal.SIGINT)
_PR_SET_PDEATHSIG = 1
#: = tensorfleet.distributed.shutdown.CHIEF_EXIT_FILE_ENV (not imported: tensorfleet takes a second to import,
#: and the script starts first; a test pins the two)
CHIEF_EXIT_FILE_ENV = "TENSORFLEET_CHIEF_EXIT_FILE"


def _die_with_parent() -> None:   # runs in the child between fork and exec
    try:
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):
        pass


def resolve_command(command: Sequence[str], script: Optional[str], script_args: Sequence[str]) -> list:
    """The argv to run: `command` as given, or this Python on `script`; a clear exit when it cannot run."""
    if script:
        if not os.path.isfile(script):
            raise LauncherExit(ExitCode.SCRIPT_NOT_FOUND, f"--script {script}: no such file")
        return [sys.executable, script, *script_args]
    if not command:
        raise LauncherExit(ExitCode.BAD_ARGUMENTS, "nothing to run: give --model, --script FILE or -- COMMAND ...")
    program = command[0]
    if os.sep in program:
        if not os.path.exists(program):
            raise LauncherExit(ExitCode.SCRIPT_NOT_FOUND, f"{program}: no such file")
        if os.path.isdir(program) or not os.access(program, os.X_OK):
            raise LauncherExit(ExitCode.SCRIPT_NOT_EXECUTABLE, f"{program}: not executable")
    elif shutil.which(program) is None:
        raise LauncherExit(ExitCode.SCRIPT_NOT_FOUND, f"{program}: command not found on PATH")
    return list(command)


def _kill_group(pgid: int, signum: int) -> None:
    try:
        os.killpg(pgid, signum)
    except (ProcessLookupError, PermissionError):
        pass


def chief_exit_file() -> str:
    """The file a chief script's library writes when it leaves the release to the launcher (one per launcher)."""
    return os.path.join(tempfile.gettempdir(), f"tensorfleet-chief-exit-{os.getpid()}")


def _take_chief_exit_file() -> Optional[str]:
    """Why the script left the release to the launcher (None: it did not), removing the file."""
    try:
        with open(chief_exit_file()) as f:
            why = f.read().strip() or "unknown exit status"
        os.unlink(chief_exit_file())
        return why
    except OSError:
        return None


def report_script_end(task, code: int) -> None:
    """Tells every ps of the task's cluster that this chief/worker task ended (tensorfleet.distributed.shutdown);
    first releases the cluster for a chief script that left that to the launcher and exited 0."""
    deferred = _take_chief_exit_file()
    if task.type not in ("chief", "master", "worker") or not task.cluster.get("ps"):
        return
    from tensorfleet.distributed import shutdown

    if deferred is not None and code == 0 and task.is_chief:
        failed = shutdown.release_for(task.training_cluster(), task.type, task.index,
                                      f"the chief script {task.name} exited with 0")
        runlog.log("released", f"released the cluster: the chief script exited with 0 ({deferred})",
                   unreachable=",".join(failed))
    failed = shutdown.report_ended_for(task.training_cluster(), task.type, task.index,
                                       f"the script of {task.name} exited with {code}")
    runlog.log("reported_end", f"told the ps tasks that {task.name} ended", unreachable=",".join(failed))


def run_command(argv: Sequence[str], grace_seconds: float) -> int:
    """Runs `argv` to completion, forwarding signals; returns the exit code for the launcher."""
    _take_chief_exit_file()   # none left from an earlier script of this launcher
    env = dict(os.environ, PYTHONUNBUFFERED="1", **{CHIEF_EXIT_FILE_ENV: chief_exit_file()})
    stopping: dict = {}

    group: dict = {}   # the script's process group once it exists
    pending: list = []   # signals that came while the script was starting: sent to it once it exists

    def forward(signum, frame):
        if "pgid" in group:
            _kill_group(group["pgid"], signum)
        else:
            pending.append(signum)
        if signum in STOPPING_SIGNALS and "signum" not in stopping:
            stopping["signum"] = signum
            stopping["deadline"] = time.monotonic() + grace_seconds
            runlog.log("signal", f"forwarded {signal.Signals(signum).name} to the script; "
                                 f"killing it after {grace_seconds:g} s", signal=signal.Signals(signum).name)

    # installed before the script starts: a signal while it starts is forwarded too, not the launcher's death
    previous = {s: signal.signal(s, forward) for s in FORWARDED_SIGNALS}
    # what the launcher was started ignoring (nohup: SIGHUP) the script ignores too, as it would have inherited
    ignored = [s for s, handler in previous.items() if handler == signal.SIG_IGN]

    def start_child() -> None:   # in the child, between fork and exec
        _die_with_parent()
        for s in ignored:
            signal.signal(s, signal.SIG_IGN)

    try:
        try:
            child = subprocess.Popen(list(argv), env=env, start_new_session=True, preexec_fn=start_child)
        except FileNotFoundError as e:
            raise LauncherExit(ExitCode.SCRIPT_NOT_FOUND, f"{argv[0]}: {e.strerror}") from None
        except PermissionError as e:
            raise LauncherExit(ExitCode.SCRIPT_NOT_EXECUTABLE, f"{argv[0]}: {e.strerror}") from None
        except OSError as e:
            raise LauncherExit(ExitCode.SCRIPT_NOT_EXECUTABLE, f"{argv[0]}: cannot execute ({e})") from None
        group["pgid"] = child.pid   # from here the handler forwards itself: `pending` no longer grows
        for signum in pending:
            _kill_group(child.pid, signum)
        runlog.log("script_started", " ".join(argv), pid=child.pid)
        while True:   # wait() retries after a signal handler ran, so poll to notice the grace deadline
            try:
                returncode = child.wait(timeout=0.2)
                break
            except subprocess.TimeoutExpired:
                pass
            if "deadline" in stopping and time.monotonic() >= stopping["deadline"]:
                runlog.log("grace_expired", f"the script outlived the {grace_seconds:g} s grace period: killed")
                _kill_group(child.pid, signal.SIGKILL)
                child.wait()
                return for_signal(stopping["signum"])
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        if "pgid" in group:
            _kill_group(group["pgid"], signal.SIGKILL)   # leftovers of the script's process group
    code = from_returncode(returncode)
    runlog.log("script_exited", f"the script exited with {code}", exit_code=code)
    return code
