"""`Dataset.prefetch(n)`: the upstream pipeline runs ahead on its own thread, up to `n` elements, so the input
work (reading, decoding, map functions) overlaps the training step that consumes them.

The producer thread is bounded in every wait: it puts with a short timeout and stops as soon as the consumer
is closed (iterator re-initialized, session closed) or dropped; errors raised upstream are handed to the
consumer and re-raised by get_next in order, after the elements produced before them.
"""
from __future__ import annotations

import queue
import threading
import weakref

from .dataset_ops import AUTOTUNE
from .transformations import _count, _Unary

_DONE = object()
_POLL_S = 0.05


class _Failure:
    def __init__(self, error: BaseException):
        self.error = error


class PrefetchDataset(_Unary):
    def __init__(self, input_dataset, buffer_size):
        super().__init__(input_dataset)
        n = _count(buffer_size, "buffer_size")
        if n == AUTOTUNE:
            n = 2
        if n < 0:
            raise ValueError(f"prefetch: buffer_size must be non-negative or AUTOTUNE, got {buffer_size}")
        self._n = n

    def _iter(self, env):
        if self._n == 0:
            yield from self._input._iter(env)
            return
        consumer = _Consumer(self._n)
        env.closers.append(consumer.close)
        thread = threading.Thread(target=_produce, args=(self._input._iter(env), consumer.queue, consumer.stop,
                                                         weakref.ref(consumer)),
                                  name="tf.data.prefetch", daemon=True)
        thread.start()
        consumer.thread = thread
        try:
            while True:
                item = consumer.get()
                if item is _DONE:
                    return
                if isinstance(item, _Failure):
                    raise item.error
                yield item
        finally:
            consumer.close()


class _Consumer:
    def __init__(self, n: int):
        self.queue: queue.Queue = queue.Queue(maxsize=n)
        self.stop = threading.Event()
        self.thread = None

    def get(self):
        while True:
            try:
                return self.queue.get(timeout=_POLL_S)
            except queue.Empty:
                if self.thread is not None and not self.thread.is_alive() and self.queue.empty():
                    return _DONE

    def close(self) -> None:
        self.stop.set()

    def __del__(self):
        self.stop.set()


def _produce(upstream, q: queue.Queue, stop: threading.Event, consumer_ref) -> None:
    def put(item) -> bool:
        while not stop.is_set() and consumer_ref() is not None:
            try:
                q.put(item, timeout=_POLL_S)
                return True
            except queue.Full:
                continue
        return False

    try:
        for item in upstream:
            if not put(item):
                return
        put(_DONE)
    except BaseException as e:  # noqa: BLE001 - handed to the consumer, raised by its get_next
        put(_Failure(e))
    finally:
        close = getattr(upstream, "close", None)
        if close is not None:
            try:
                close()
            except Exception:  # noqa: BLE001 - a generator already running elsewhere cannot be closed
                pass
