"""When a ps task stops serving: the ps side of the end of training (`shutdown.py` is the chief's and workers' side).

A `Server` of a ps task owns one `PsLifetime`. TF's ps never stops (`server.join()` never returns);
a finished TFJob must not leave ps pods running, yet no worker still in its last steps or its
final evaluation may lose its ps. So a ps stops when

- the chief has released the cluster (`release`: its training ended normally), **and**
- every chief/worker task of the cluster has reported that its process ended (`task_ended`:
  sent at process exit, normally or not, by the library, and by the launcher for a script it ran),
  **or** `TENSORFLEET_PS_RELEASE_GRACE_SECONDS` (default 120) have passed since the release (a worker
  killed by SIGKILL never reports).

Reports that arrive before the release count, but a report is about one process: it carries the
reporting process's incarnation, and a task counts as ended only while the latest incarnation of it
this ps knows has reported. Every incarnation a ps sees (the owner of a registered graph, a GetStatus
caller, a report) becomes the task's latest, unless that incarnation was seen before and another one
since (a late report from the old process): so a worker that crashed (its atexit report) and was
restarted is waited for again as soon as its new process calls the ps. A report without incarnation
(0: the launcher reporting for its script child) ends the latest known one.

A chief that crashes never releases, so the ps keep
their variables for its restart; the idle timeout (`shutdown.ps_idle_timeout`, in `Server.join`)
bounds a ps whose chief never comes back.
"""
from __future__ import annotations

import atexit
import ctypes
import logging
import os
import sys
import threading
import time
from typing import Callable, Iterable, Optional

from .shutdown import env_seconds

logger = logging.getLogger("tensorfleet.distributed")

RELEASE_GRACE_ENV = "TENSORFLEET_PS_RELEASE_GRACE_SECONDS"
DEFAULT_RELEASE_GRACE_SECONDS = 120.0
#: seconds a released ps process that does not join (the "done queue" idiom) has to end by itself
RELEASED_EXIT_SECONDS = 5.0


def release_grace_seconds() -> float:
    """Seconds a released ps keeps serving tasks that have not reported their end."""
    return env_seconds(RELEASE_GRACE_ENV, DEFAULT_RELEASE_GRACE_SECONDS)


class PsLifetime:
    """Decides when a released ps stops (see the module docstring); `stop(reason, exit_code)` does it, once.
    `grace`: the grace period in seconds, else `release_grace_seconds()` read now, when the ps's server is made
    (a bad value is a ValueError naming the variable there, not a ps that never stops after its release)."""

    def __init__(self, task: str, training_tasks: Iterable[str], stop: Callable[[str, int], None],
                 grace: Optional[float] = None):
        self._task = task
        self._grace = release_grace_seconds() if grace is None else float(grace)
        self._expected = frozenset(training_tasks)
        self._latest: dict = {}    # task -> its latest incarnation seen here (absent: none seen)
        self._older: dict = {}     # task -> {incarnations seen before the latest}
        self._ended: dict = {}     # task -> the incarnation whose end was reported (0: unknown)
        self._release: Optional[tuple] = None   # (reason, exit_code)
        self._cond = threading.Condition()
        self._stop = stop

    @property
    def waiting_for(self) -> list:
        """The training tasks that have not reported their end yet."""
        with self._cond:
            return sorted(self._waiting_locked())

    def _waiting_locked(self) -> set:
        return {t for t in self._expected if t not in self._ended}

    def _see_locked(self, task: str, incarnation: int) -> bool:
        """Records `incarnation` of `task` as its latest unless it is an older one; False for an older one."""
        latest = self._latest.get(task)
        if latest == incarnation:
            return True
        if incarnation in self._older.get(task, ()):
            return False
        if latest is not None:
            self._older.setdefault(task, set()).add(latest)
        self._latest[task] = incarnation
        return True

    def task_seen(self, task: str, incarnation: int) -> None:
        """A call from `incarnation` of `task` (it registered a graph, asked for the status): a new incarnation of a
        task that had ended (it was restarted) is waited for again."""
        if not incarnation or task not in self._expected:
            return
        with self._cond:
            if not self._see_locked(task, incarnation):
                return   # a late call from an earlier process of the task
            ended = self._ended.get(task)
            if ended is None or ended == incarnation:
                return
            del self._ended[task]
        logger.info("Task %s: %s restarted (a new incarnation): waits for its end again", self._task, task)

    def task_ended(self, task: str, incarnation: int = 0) -> None:
        """`incarnation` (0: unknown, the latest known) of `task` reported its end."""
        with self._cond:
            if task not in self._expected:
                logger.debug("Task %s: end report from %s, which is not a training task of this cluster",
                             self._task, task)
                return
            if incarnation:
                if not self._see_locked(task, incarnation):
                    logger.info("Task %s: ignored a late end report from an earlier process of %s", self._task, task)
                    return
            else:
                incarnation = self._latest.get(task, 0)
            if self._ended.get(task) == incarnation:
                return
            self._ended[task] = incarnation
            self._cond.notify_all()
        logger.info("Task %s: %s has ended", self._task, task)

    def release(self, reason: str, exit_code: int) -> None:
        """The chief's release: stop once every training task has ended, or after the grace period."""
        with self._cond:
            if self._release is not None:
                return
            self._release = (reason, exit_code)
        threading.Thread(target=self._wait_then_stop, name=f"tf-ps-release-{self._task}", daemon=True).start()

    def _wait_then_stop(self) -> None:
        grace = self._grace
        deadline = time.monotonic() + grace
        with self._cond:
            waiting = self._waiting_locked()
            if waiting:
                logger.info("Task %s released (%s): serving until %s end (at most %g s, %s)", self._task,
                            self._release[0], ", ".join(sorted(waiting)), grace, RELEASE_GRACE_ENV)
            while self._waiting_locked():
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                self._cond.wait(left)
            waiting = self._waiting_locked()
            reason, code = self._release
        if waiting:
            logger.warning("Task %s stops serving after the %g s grace period; no end report from %s", self._task,
                           grace, ", ".join(sorted(waiting)))
        self._stop(reason, code)


def end_released_process(task: str, code: int, after: float = RELEASED_EXIT_SECONDS) -> None:
    """The release stopped this ps, and no thread of its process is in `join()` (the TF1 "done queue" idiom: its
    main thread dequeues one token per worker instead). The main thread gets `SystemExit(code)` wherever it is
    (a step on the stopped server raises it itself: master.py; elsewhere it is raised asynchronously once the thread
    runs Python code again), so its `finally` blocks and atexit handlers run and the process exits `code`; a process
    still running `after` seconds later (its main thread blocked elsewhere) runs its atexit handlers and ends with
    `code` (`os._exit`)."""
    exiting = threading.Event()
    atexit.register(exiting.set)   # runs first at exit (last registered): the process is on its way out
    _raise_in_main_thread(code)

    def end() -> None:
        if exiting.wait(after):
            return
        logger.warning("Task %s was released and stopped, but its process is still running %g s later: ending it "
                       "with exit status %d", task, after, code)
        try:
            atexit._run_exitfuncs()
        finally:
            for stream in (sys.stdout, sys.stderr):
                try:
                    stream.flush()
                except Exception:   # noqa: BLE001 - closed or broken: nothing left to do
                    pass
            os._exit(code)

    threading.Thread(target=end, name=f"tf-released-exit-{task}", daemon=True).start()


def _raise_in_main_thread(code: int) -> None:
    main = threading.main_thread()
    if not main.is_alive() or main.ident is None or threading.current_thread() is main:
        return
    exit_type = SystemExit if code == 0 else type("ReleasedExit", (SystemExit,), {"__init__": lambda self: (
        SystemExit.__init__(self, code))})
    ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(main.ident), ctypes.py_object(exit_type))
