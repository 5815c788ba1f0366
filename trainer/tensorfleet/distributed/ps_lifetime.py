"""When a ps task stops serving: the ps side of the end of training (`shutdown.py` is the chief's and workers' side).

A `Server` of a ps task owns one `PsLifetime`. TF's ps never stops (`server.join()` never returns);
a finished TFJob must not leave ps pods running, yet no worker still in its last steps or its
final evaluation may lose its ps. So a ps stops when

- the chief has released the cluster (`release`: its training ended normally), **and**
- every chief/worker task of the cluster has reported that its process ended (`task_ended`:
  sent at process exit, normally or not, by the library, and by the launcher for a script it ran),
  **or** `TENSORFLEET_PS_RELEASE_GRACE_SECONDS` (default 120) have passed since the release (a worker
  killed by SIGKILL never reports).

Reports that arrive before the release count. A chief that crashes never releases, so the ps keep
their variables for its restart; the idle timeout (`shutdown.ps_idle_timeout`, in `Server.join`)
bounds a ps whose chief never comes back.
"""
from __future__ import annotations

import logging
import threading
import time
from typing import Callable, Iterable, Optional

from .shutdown import env_seconds

logger = logging.getLogger("tensorfleet.distributed")

RELEASE_GRACE_ENV = "TENSORFLEET_PS_RELEASE_GRACE_SECONDS"
DEFAULT_RELEASE_GRACE_SECONDS = 120.0


def release_grace_seconds() -> float:
    """Seconds a released ps keeps serving tasks that have not reported their end."""
    return env_seconds(RELEASE_GRACE_ENV, DEFAULT_RELEASE_GRACE_SECONDS)


class PsLifetime:
    """Decides when a released ps stops (see the module docstring); `stop(reason, exit_code)` does it, once."""

    def __init__(self, task: str, training_tasks: Iterable[str], stop: Callable[[str, int], None]):
        self._task = task
        self._expected = frozenset(training_tasks)
        self._ended: set = set()
        self._release: Optional[tuple] = None   # (reason, exit_code)
        self._cond = threading.Condition()
        self._stop = stop

    @property
    def waiting_for(self) -> list:
        """The training tasks that have not reported their end yet."""
        with self._cond:
            return sorted(self._expected - self._ended)

    def task_ended(self, task: str) -> None:
        with self._cond:
            if task not in self._expected:
                logger.debug("Task %s: end report from %s, which is not a training task of this cluster",
                             self._task, task)
                return
            if task in self._ended:
                return
            self._ended.add(task)
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
        grace = release_grace_seconds()
        deadline = time.monotonic() + grace
        with self._cond:
            waiting = self._expected - self._ended
            if waiting:
                logger.info("Task %s released (%s): serving until %s end (at most %g s, %s)", self._task,
                            self._release[0], ", ".join(sorted(waiting)), grace, RELEASE_GRACE_ENV)
            while self._expected - self._ended:
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                self._cond.wait(left)
            waiting = self._expected - self._ended
            reason, code = self._release
        if waiting:
            logger.warning("Task %s stops serving after the %g s grace period; no end report from %s", self._task,
                           grace, ", ".join(sorted(waiting)))
        self._stop(reason, code)
