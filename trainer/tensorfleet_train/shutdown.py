"""SIGTERM/SIGINT handling for the built-in roles: stop at the next step, and never outlive the grace period.

Installed by cli.py before any role starts. A signal sets `Shutdown.requested` (the training loops
check it between steps: the chief then writes a checkpoint) and starts a watchdog: if the process is
still alive `grace_seconds` later (a step blocked on a dead peer, a slow checkpoint), the watchdog logs
and ends it with `os._exit(128 + signum)`, so every role exits within the pod's grace period with the
retryable signal code (143 for SIGTERM). The default grace (25 s) leaves Kubernetes' default 30 s
`terminationGracePeriodSeconds` some slack before its SIGKILL.
"""
from __future__ import annotations

import os
import signal
import threading
from typing import Optional

from . import runlog
from .exit_codes import for_signal

DEFAULT_GRACE_SECONDS = 25.0
HANDLED_SIGNALS = (signal.SIGTERM, signal.SIGINT)


class Shutdown:
    def __init__(self, grace_seconds: float = DEFAULT_GRACE_SECONDS):
        self.grace_seconds = float(grace_seconds)
        self.signum: Optional[int] = None
        self.event = threading.Event()
        self._watchdog: Optional[threading.Timer] = None

    @property
    def requested(self) -> bool:
        return self.event.is_set()

    @property
    def exit_code(self) -> int:
        return for_signal(self.signum or signal.SIGTERM)

    def install(self) -> "Shutdown":
        for signum in HANDLED_SIGNALS:
            signal.signal(signum, self._handle)
        return self

    def _handle(self, signum, frame) -> None:
        if self.event.is_set():
            return
        self.signum = signum
        runlog.log("signal", f"received {signal.Signals(signum).name}: stopping within {self.grace_seconds:g} s",
                   signal=signal.Signals(signum).name)
        self._watchdog = threading.Timer(self.grace_seconds, self._expire)
        self._watchdog.daemon = True
        self._watchdog.start()
        self.event.set()

    def _expire(self) -> None:
        runlog.log("grace_expired", f"still running {self.grace_seconds:g} s after the signal: exiting now",
                   exit_code=self.exit_code)
        for handler in runlog.get().handlers:
            handler.flush()
        os._exit(self.exit_code)

    def request(self, signum: int = signal.SIGTERM) -> None:
        """As if `signum` had arrived (tests, and roles that decide to stop)."""
        self._handle(signum, None)

    def cancel_watchdog(self) -> None:
        if self._watchdog is not None:
            self._watchdog.cancel()
