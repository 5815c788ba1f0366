"""Event files: a TFRecord file of serialized `Event` protos that TensorBoard reads.

Below `writer.FileWriter` (which turns summaries, graphs and session logs into Events), above `io/tfrecord`.
As TF 1.15's EventFileWriter + C++ EventsWriter:
* the file is `<logdir>/events.out.tfevents.<10-digit seconds>.<hostname><suffix>` and its first record is an
  Event with `file_version = "brain.Event:2"` (TensorBoard's loader requires `tfevents` in the name), written
  and flushed at once so TensorBoard sees the run;
* `add_event` writes the Event into the file's buffer; every `max_queue` events, and every `flush_secs` from
  a background thread, the buffer goes to the file; `flush()` does it now;
* `close()` flushes and closes the file; `reopen()` starts a new file (events added after `close()` and
  before `reopen()` are dropped, as TF's).

Unlike TF's Python writer, the caller's thread serializes and frames the Event itself: handing each event to
a writer thread cost about 20% of a 7 ms training step on a busy 2-core machine (a thread wake-up and two GIL
hand-offs per event, bench/summary_overhead.py), writing it into a buffer costs ~10 us. The background
thread only wakes every `flush_secs`. A write error is raised to the caller that adds the event (a failed
timed flush: by the next call) rather than lost. Writers still open when the interpreter exits are closed
then, so a script that forgets `close()` loses nothing.
"""
from __future__ import annotations

import atexit
import os
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
    """Writes Events to a new event file in `logdir`, flushed every `max_queue` events and `flush_secs`."""

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
        if not flush_secs > 0:
            raise ValueError(f"flush_secs must be > 0, got {flush_secs}")
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
        self._pending = 0
        self._error: Optional[BaseException] = None
        self._stop = threading.Event()
        self._flusher = threading.Thread(target=self._flush_periodically, args=(self._stop,),
                                         name=f"EventFileWriter:{os.path.basename(path)}", daemon=True)
        self._closed = False
        self._flusher.start()
        _OPEN_WRITERS.add(self)

    def _flush_periodically(self, stop: threading.Event) -> None:
        while not stop.wait(self._flush_secs):
            with self._lock:
                if self._closed or not self._pending or self._error is not None:
                    continue
                try:
                    self._records.flush()
                    self._pending = 0
                except Exception as e:  # kept for the next caller
                    self._error = e

    def _failed(self, e: BaseException) -> errors.OpError:
        return errors.UnknownError(None, None, f"Writing event file {self._path} failed: {e}")

    def _raise_error(self) -> None:
        if self._error is not None:
            e, self._error = self._error, None
            raise self._failed(e) from e

    def get_logdir(self) -> str:
        return self._logdir

    @property
    def path(self) -> str:
        """The event file being written."""
        return self._path

    def add_event(self, event) -> None:
        """Writes `event` into the file's buffer (flushed every `max_queue` events); a no-op after `close()`."""
        if self._closed:
            return
        data = event.SerializeToString()
        with self._lock:
            if self._closed:
                return
            self._raise_error()
            try:
                self._records.write(data)
                self._pending += 1
                if self._pending >= self._max_queue:
                    self._records.flush()
                    self._pending = 0
            except OSError as e:
                raise self._failed(e) from e

    def flush(self) -> None:
        """Returns when every event added so far is in the file."""
        with self._lock:
            if self._closed:
                return
            self._raise_error()
            try:
                self._records.flush()
                self._pending = 0
            except OSError as e:
                raise self._failed(e) from e

    def close(self) -> None:
        """Flushes and closes the file and stops the flush thread; closing twice is a no-op."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            _OPEN_WRITERS.discard(self)
            self._stop.set()
            error = self._error
            try:
                self._records.close()  # flushes what is buffered
            except OSError as e:
                error = error or e
        self._flusher.join(timeout=60)
        if error is not None:
            self._error = None
            raise self._failed(error) from error

    def reopen(self) -> None:
        """After `close()`: starts a new event file in the same directory (a no-op while open)."""
        with self._lock:
            if self._closed:
                self._open()


@atexit.register
def _close_open_writers() -> None:
    for writer in list(_OPEN_WRITERS):
        try:
            writer.close()
        except Exception:  # (at exit: nothing left to report an error to)
            pass
