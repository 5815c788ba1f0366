"""`tf.train.Coordinator`: lets a set of threads (queue runners, user loops) stop together.

Part of the training-loop layer (train/): `QueueRunner` threads and
`MonitoredSession` report exceptions here; `join` waits for the threads and
re-raises the first exception that asked for the stop (TF 1.15 semantics).
"""
from __future__ import annotations

import contextlib
import sys
import threading
import time

from .. import errors

__all__ = ["Coordinator", "LooperThread"]


class Coordinator:
    """`tf.train.Coordinator`."""

    def __init__(self, clean_stop_exception_types=None):
        if clean_stop_exception_types is None:
            clean_stop_exception_types = (errors.OutOfRangeError,)
        self._clean_stop_exception_types = tuple(clean_stop_exception_types)
        self._lock = threading.Lock()
        self._stop_event = threading.Event()
        self._exc_info_to_raise = None
        self._joined = False
        self._registered_threads: set = set()

    def _filter_exception(self, ex):
        if isinstance(ex, tuple):
            ex2 = ex[1]
        else:
            ex2 = ex
        if isinstance(ex2, self._clean_stop_exception_types):
            return None
        return ex

    def request_stop(self, ex=None) -> None:
        """Asks the threads to stop; an exception (or exc_info) given is re-raised by `join`."""
        with self._lock:
            ex = self._filter_exception(ex)
            if self._joined:
                if isinstance(ex, tuple):
                    _, ex_instance, _ = ex
                else:
                    ex_instance = ex
                if ex_instance is not None:
                    raise ex_instance if not isinstance(ex_instance, type) else ex_instance()
                return
            if not self._stop_event.is_set():
                if ex and self._exc_info_to_raise is None:
                    if isinstance(ex, tuple):
                        self._exc_info_to_raise = ex
                    else:
                        self._exc_info_to_raise = (type(ex), ex, ex.__traceback__)
                    if not isinstance(self._exc_info_to_raise[1], BaseException):
                        raise ValueError(f"exc_info must be an exception or exc_info tuple, got {ex!r}")
                self._stop_event.set()

    def clear_stop(self) -> None:
        with self._lock:
            self._joined = False
            self._exc_info_to_raise = None
            self._stop_event.clear()

    def should_stop(self) -> bool:
        return self._stop_event.is_set()

    @contextlib.contextmanager
    def stop_on_exception(self):
        """Context manager: an exception in the body requests a stop (OutOfRangeError is a clean stop)."""
        try:
            yield
        except BaseException:  # noqa: B036  (TF's semantics: any exception stops the threads)
            self.request_stop(ex=sys.exc_info())

    def wait_for_stop(self, timeout=None) -> bool:
        """Waits until a stop was requested or `timeout` seconds passed; True if stopped."""
        return self._stop_event.wait(timeout)

    def register_thread(self, thread) -> None:
        with self._lock:
            self._registered_threads.add(thread)

    def join(self, threads=None, stop_grace_period_secs=120, ignore_live_threads=False) -> None:
        """Waits for the threads to stop; re-raises the exception passed to request_stop.

        After a stop request the threads get `stop_grace_period_secs` to finish; if some are still alive
        then, RuntimeError names them (unless ignore_live_threads).
        """
        with self._lock:
            if threads is None:
                threads = self._registered_threads
            else:
                threads = self._registered_threads.union(set(threads))
            threads = list(threads)
        while any(t.is_alive() for t in threads) and not self.wait_for_stop(1.0):
            pass
        stop_wait_secs = 0.001
        deadline = time.monotonic() + stop_grace_period_secs
        while any(t.is_alive() for t in threads) and time.monotonic() < deadline:
            time.sleep(stop_wait_secs)
            stop_wait_secs = min(2 * stop_wait_secs, 0.1)
        stragglers = [t.name for t in threads if t.is_alive()]
        with self._lock:
            self._joined = True
            self._registered_threads = set()
            if self._exc_info_to_raise:
                _, ex_instance, tb = self._exc_info_to_raise
                raise ex_instance.with_traceback(tb)
            if stragglers:
                if ignore_live_threads:
                    return
                raise RuntimeError(f"Coordinator stopped with threads still running: {' '.join(stragglers)}")

    @property
    def joined(self) -> bool:
        return self._joined

    def raise_requested_exception(self) -> None:
        """Re-raises the exception passed to request_stop, if any."""
        with self._lock:
            if self._exc_info_to_raise:
                _, ex_instance, tb = self._exc_info_to_raise
                raise ex_instance.with_traceback(tb)


class LooperThread(threading.Thread):
    """`tf.train.LooperThread`: runs `target(*args)` every `timer_interval_secs` until the coordinator stops."""

    def __init__(self, coord, timer_interval_secs, target=None, args=None, kwargs=None):
        if not isinstance(coord, Coordinator):
            raise ValueError(f"'coord' argument must be a Coordinator: {coord}")
        super().__init__()
        self.daemon = True
        self._coord = coord
        self._timer_interval_secs = timer_interval_secs
        self._target = target
        self._args = args or ()
        self._kwargs = kwargs or {}
        self._coord.register_thread(self)

    @staticmethod
    def loop(coord, timer_interval_secs, target, args=None, kwargs=None):
        looper = LooperThread(coord, timer_interval_secs, target=target, args=args, kwargs=kwargs)
        looper.start()
        return looper

    def run(self):
        with self._coord.stop_on_exception():
            self.start_loop()
            if self._timer_interval_secs is None:
                while not self._coord.should_stop():
                    self.run_loop()
            else:
                next_timer_time = time.time()
                while not self._coord.wait_for_stop(max(0.0, next_timer_time - time.time())):
                    next_timer_time += self._timer_interval_secs
                    self.run_loop()
            self.stop_loop()

    def start_loop(self):
        pass

    def stop_loop(self):
        pass

    def run_loop(self):
        if self._target:
            self._target(*self._args, **self._kwargs)
