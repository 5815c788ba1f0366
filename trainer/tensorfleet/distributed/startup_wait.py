"""Waiting for tasks that have not come up yet: how session creation treats UNAVAILABLE, as TF does.

Used by `master.Master.wait_for_status` (a new MasterSession waits for every task its
`device_filters` admit) and by `remote_session` (a client whose `grpc://` master is not serving
yet). TF's gRPC master client makes its calls wait for the channel to become ready (gRPC's
wait-for-ready) and retries UNAVAILABLE with backoff, bounded only by the session's
`operation_timeout_in_ms`; its master logs "CreateSession still waiting for response from
worker: ..." every 10 s while a task is missing. Here the same, under a deadline: the session's
`operation_timeout_in_ms` when set, else `TENSORFLEET_STARTUP_SECONDS` (default 300), after which
the last `UnavailableError` is raised (naming the task and address). Pods start in any order and a
Service's DNS name appears late, so this is the everyday start of a TFJob.

Only session creation waits. A task that goes away after that is an error at the next call,
within `TENSORFLEET_DEAD_PEER_SECONDS` (the step's RPCs do not wait for it to come back).
"""
from __future__ import annotations

import logging
import time
from typing import Callable, Optional, TypeVar

from .. import errors

logger = logging.getLogger("tensorfleet.distributed")
T = TypeVar("T")

LOG_EVERY_SECONDS = 10.0
FIRST_DELAY_SECONDS = 0.05
MAX_DELAY_SECONDS = 1.0


def creation_deadline(startup_seconds: float, operation_timeout_ms: int = 0) -> float:
    """The time.monotonic() by which session creation gives up: the session's operation timeout, else startup."""
    seconds = operation_timeout_ms / 1000.0 if operation_timeout_ms and operation_timeout_ms > 0 else startup_seconds
    return time.monotonic() + seconds


def call_until_up(call: Callable[[], T], deadline: float, waiting: str,
                  on_unavailable: Optional[Callable[[errors.UnavailableError], None]] = None) -> T:
    """`call()` until it does not raise UnavailableError, with exponential backoff (50 ms to 1 s), logging
    `waiting` at the first failure and every 10 s; re-raises the last error at `deadline`. `on_unavailable(e)` may
    raise instead (e.g. when the task is known never to come back)."""
    delay = FIRST_DELAY_SECONDS
    next_log = time.monotonic()
    while True:
        try:
            return call()
        except errors.UnavailableError as e:
            if on_unavailable is not None:
                on_unavailable(e)
            now = time.monotonic()
            if now >= deadline:
                raise
            if now >= next_log:
                logger.warning("%s (%s)", waiting, e.message)
                next_log = now + LOG_EVERY_SECONDS
            time.sleep(min(delay, max(0.0, deadline - now)))
            delay = min(delay * 2, MAX_DELAY_SECONDS)
