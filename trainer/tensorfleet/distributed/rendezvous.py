"""Per-step tensor table of a worker: values one stage of a step leaves for a later stage.

Sits inside `worker`: a partition run with `keep` puts its outputs here under
(step id, tensor name); a later run of the same step on the same task takes them
(`RunGraphRequest.local`), so a tensor is computed once per step and never sent
back and forth through the master. The master runs a step's stages in order, so
a value is always there before it is taken. Entries of a step are dropped at the
step's last run, on `CleanupStep`, on error, and after `ttl_seconds` if a master
vanished mid-step.
"""
from __future__ import annotations

import threading
import time

from .. import errors


class Rendezvous:
    def __init__(self, ttl_seconds: float = 600.0):
        self._steps: dict[int, tuple[float, dict]] = {}  # step id -> (created, {key: value})
        self._lock = threading.Lock()
        self._ttl = ttl_seconds

    def put(self, step_id: int, key: str, value) -> None:
        now = time.monotonic()
        with self._lock:
            entry = self._steps.get(step_id)
            if entry is None:
                self._expire(now)
                entry = self._steps[step_id] = (now, dict())
            entry[1][key] = value

    def take(self, step_id: int, key: str, task_name: str = ""):
        with self._lock:
            entry = self._steps.get(step_id)
            if entry is None or key not in entry[1]:
                raise errors.InternalError(None, None, f"Step {step_id}: tensor '{key}' was not kept on task "
                                                       f"{task_name} by an earlier stage")
            return entry[1][key]

    def cleanup(self, step_id: int) -> None:
        with self._lock:
            self._steps.pop(step_id, None)

    def _expire(self, now: float) -> None:
        old = [s for s, (created, _) in self._steps.items() if now - created > self._ttl]
        for s in old:
            del self._steps[s]

    def __len__(self) -> int:
        return len(self._steps)
