"""Event files: a TFRecord file of serialized `Event` protos that TensorBoard reads, written off the caller's
thread.

Below `writer.FileWriter` (which turns summaries, graphs and session logs into Events), above `io/tfrecord`.
As TF 1.15's EventFileWriter + C++ EventsWriter:
* the file is `<logdir>/events.out.tfevents.<10-digit seconds>.<hostname><suffix>` and its first record is an
  Event with `file_version = "brain.Event:2"` (TensorBoard's loader requires `tfevents` in the name);
* `add_event` puts the Event in a queue of `max_queue` entries (it blocks while the queue is full); one
  thread writes them and flushes the file every `flush_secs`; `flush()` waits until the queue is written;
* `close()` writes what is queued, flushes, closes the file and stops the thread; `reopen()` starts a new
  file (events after `close()` and before `reopen()` are dropped, as TF's).
A write error in the thread (disk full, directory removed) is raised by the next `add_event`, `flush` or
`close` rather than lost. Writers still open when the interpreter exits are closed then (their queued
events written), so a script that forgets `close()` loses nothing.
"""
from __future__ import annotations

import atexit
import os
import queue
import socket
import threading
import time
import weakref
from typing import Optional

from .. import errors
from ..io.tfrecord import TFRecordWriter
from ..protos import event_pb2

FILE_VERSION = "brain.Event:2"
_OPEN_WRITERS: "weakref.WeakSet[EventFileWriter]" = weakref.WeakSet()


def event_file_name(logdir: str, when: float, suffix: str = "") -> str:
    """TF's name: events.out.tfevents.%010d.<hostname><suffix> in `logdir`."""
    return os.path.join(logdir, "events.out.tfevents.%010d.%s%s" % (int(when), socket.gethostname(), suffix or ""))


class EventFileWriter:
    """Writes Events to a new event file in `logdir` from a background thread."""

    def __init__(self, logdir, max_queue: int = 10, flush_secs: float = 120, filename_suffix: Optional[str] = None):
        self._logdir = os.fspath(logdir)
        if isinstance(self._logdir, bytes):
            self._logdir = self._logdir.decode()
        if not self._logdir:
            raise ValueError("logdir must be a non-empty path for an event file")
        try:
            os.makedirs(self._logdir, exist_ok=True)
        except OSError as e:
            raise errors.PermissionDeniedError(None, None, f"Could not create log directory {self._logdir}: "
                                                           f"{e}") from e
        if max_queue < 1:
            raise ValueError(f"max_queue must be >= 1, got {max_queue}")
        self._max_queue = int(max_queue)
        self._flush_secs = float(flush_secs)
        self._suffix = filename_suffix or ""
        self._lock = threading.Lock()
        self._closed = True
        self._open()

    def _open(self) -> None:
        when = time.time()
        path = event_file_name(self._logdir, when, self._suffix)
        while os.path.exists(path):  # a file reopened within the same second: never overwrite one
            when += 1
            path = event_file_name(self._logdir, when, self._suffix)
        self._path = path
        self._records = TFRecordWriter(path)
        first = event_pb2.Event(wall_time=time.time(), file_version=FILE_VERSION)
        self._records.write(first.SerializeToString())
        self._records.flush()
        self._queue: queue.Queue = queue.Queue(self._max_queue)
        self._error: Optional[BaseException] = None
        self._worker = threading.Thread(target=self._run, name=f"EventFileWriter:{os.path.basename(path)}",
                                        daemon=True)
        self._closed = False
        self._worker.start()
        _OPEN_WRITERS.add(self)

    def _run(self) -> None:
        next_flush = time.monotonic() + self._flush_secs
        while True:
            try:
                item = self._queue.get(timeout=max(0.0, next_flush - time.monotonic()))
            except queue.Empty:
                item = None
            try:
                if item is _STOP:
                    self._records.flush()
                    return
                if item is not None and self._error is None:
                    self._records.write(item.SerializeToString())
                if time.monotonic() >= next_flush:
                    if self._error is None:
                        self._records.flush()
                    next_flush = time.monotonic() + self._flush_secs
            except BaseException as e:  # kept for the caller; the queue keeps draining so no one blocks
                self._error = self._error or e
            finally:
                if item is not None:
                    self._queue.task_done()

    def _raise_error(self) -> None:
        if self._error is not None:
            e, self._error = self._error, None
            raise errors.UnknownError(None, None, f"Writing event file {self._path} failed: {e}") from e

    def get_logdir(self) -> str:
        return self._logdir

    @property
    def path(self) -> str:
        """The event file being written."""
        return self._path

    def add_event(self, event) -> None:
        """Queues `event` for writing; a no-op after `close()` (until `reopen()`)."""
        if self._closed:
            return
        self._raise_error()
        self._queue.put(event)

    def flush(self) -> None:
        """Returns when every queued event is in the file (and the file flushed)."""
        with self._lock:
            if self._closed:
                return
            self._queue.join()
            self._raise_error()
            self._records.flush()

    def close(self) -> None:
        """Writes what is queued, closes the file and stops the thread; closing twice is a no-op."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            _OPEN_WRITERS.discard(self)
            self._queue.put(_STOP)
            self._worker.join()
            try:
                self._raise_error()
            finally:
                self._records.close()

    def reopen(self) -> None:
        """After `close()`: starts a new event file in the same directory (a no-op while open)."""
        with self._lock:
            if self._closed:
                self._open()


_STOP = object()


@atexit.register
def _close_open_writers() -> None:
    for writer in list(_OPEN_WRITERS):
        try:
            writer.close()
        except Exception:  # (at exit: nothing left to report an error to)
            pass
