"""`tf.train.QueueRunner`, `add_queue_runner`, `start_queue_runners`: threads that keep queues filled.

Part of the training-loop layer (train/). Each thread runs one enqueue op in a
loop through the public `Session.run` (so it works on a remote session too);
when the input runs out (OutOfRangeError) the queue is closed, and when the
coordinator stops, the queue is closed with its pending enqueues cancelled.
"""
from __future__ import annotations

import threading
import weakref

from .. import errors
from ..default_graph import get_default_graph, get_default_session
from ..graph import GraphKeys

__all__ = ["QueueRunner", "add_queue_runner", "start_queue_runners"]


class QueueRunner:
    """`tf.train.QueueRunner(queue, enqueue_ops, close_op, cancel_op, queue_closed_exception_types)`."""

    def __init__(self, queue=None, enqueue_ops=None, close_op=None, cancel_op=None,
                 queue_closed_exception_types=None, queue_runner_def=None, import_scope=None):
        if queue_runner_def is not None:
            raise NotImplementedError("QueueRunner(queue_runner_def=...) is not supported")
        if not queue or not enqueue_ops:
            raise ValueError("Must provide queue and enqueue_ops.")
        self._queue = queue
        self._enqueue_ops = list(enqueue_ops)
        self._close_op = close_op if close_op is not None else queue.close()
        self._cancel_op = cancel_op if cancel_op is not None else queue.close(cancel_pending_enqueues=True)
        self._queue_closed_exception_types = tuple(queue_closed_exception_types or (errors.OutOfRangeError,))
        self._lock = threading.Lock()
        self._runs_per_session: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()
        self._exceptions_raised: list = []

    @property
    def queue(self):
        return self._queue

    @property
    def enqueue_ops(self):
        return self._enqueue_ops

    @property
    def close_op(self):
        return self._close_op

    @property
    def cancel_op(self):
        return self._cancel_op

    @property
    def queue_closed_exception_types(self):
        return self._queue_closed_exception_types

    @property
    def exceptions_raised(self) -> list:
        return self._exceptions_raised

    @property
    def name(self) -> str:
        return self._queue.name

    def _run(self, sess, enqueue_op, coord=None):
        decremented = False
        try:
            enqueue_callable = sess.make_callable(enqueue_op) if hasattr(sess, "make_callable") else \
                (lambda: sess.run(enqueue_op))
            while True:
                if coord and coord.should_stop():
                    break
                try:
                    enqueue_callable()
                except self._queue_closed_exception_types:
                    with self._lock:
                        self._runs_per_session[sess] -= 1
                        decremented = True
                        if self._runs_per_session[sess] == 0:
                            try:
                                sess.run(self._close_op)
                            except Exception:  # noqa: BLE001  (TF: closing may fail once the session is gone)
                                pass
                        return
        except Exception as e:  # noqa: BLE001
            if coord:
                coord.request_stop(e)
            else:
                with self._lock:
                    self._exceptions_raised.append(e)
                raise
        finally:
            if not decremented:
                with self._lock:
                    self._runs_per_session[sess] -= 1

    def _close_on_stop(self, sess, cancel_op, coord):
        coord.wait_for_stop()
        try:
            sess.run(cancel_op)
        except Exception:  # noqa: BLE001  (TF ignores a failed cancel: the session may be closed)
            pass

    def create_threads(self, sess, coord=None, daemon=False, start=False) -> list:
        """Threads running the enqueue ops (plus one closing the queue on a coordinator stop)."""
        with self._lock:
            try:
                if self._runs_per_session[sess] > 0:
                    return []  # already running in this session
            except KeyError:
                pass
            self._runs_per_session[sess] = len(self._enqueue_ops)
            self._exceptions_raised = []
        ret = [threading.Thread(target=self._run, args=(sess, op, coord), name=f"QueueRunnerThread-{self.name}")
               for op in self._enqueue_ops]
        if coord:
            ret.append(threading.Thread(target=self._close_on_stop, args=(sess, self._cancel_op, coord),
                                        name=f"QueueRunnerThread-{self.name}-close_on_stop"))
        for t in ret:
            if coord:
                coord.register_thread(t)
            if daemon:
                t.daemon = True
            if start:
                t.start()
        return ret


def add_queue_runner(qr, collection=GraphKeys.QUEUE_RUNNERS) -> None:
    """Adds a QueueRunner to a graph collection (default: tf.GraphKeys.QUEUE_RUNNERS)."""
    get_default_graph().add_to_collection(collection, qr)


def start_queue_runners(sess=None, coord=None, daemon=True, start=True, collection=GraphKeys.QUEUE_RUNNERS) -> list:
    """Starts the threads of every QueueRunner in `collection` of the session's graph; returns them."""
    if sess is None:
        sess = get_default_session()
        if not sess:
            raise ValueError("Cannot start queue runners: No default session is registered. Use `with "
                             "sess.as_default()` or pass an explicit session to tf.start_queue_runners(sess=sess)")
    with sess.graph.as_default():
        threads = []
        for qr in sess.graph.get_collection(collection):
            threads.extend(qr.create_threads(sess, coord=coord, daemon=daemon, start=start))
    return threads
