"""Kernels for the queue and accumulator ops of `ops/data_flow_ops.py` (FIFOQueue & co, ConditionalAccumulator).

Beside the other kernels, below the executor. The queues live in the session's
`ResourceStore` (one per queue op, created by the queue op's kernel on first
run), so two `Session.run` calls of one session, in two threads, share them:
an enqueue run by one thread wakes a dequeue blocked in another. Blocking
kernels wait on a condition in the caller's thread (queue ops are cheap, so
the executor runs them in the sequential path, in the thread of `Session.run`)
and wake every `POLL_S` to check:

- the run's deadline (`RunOptions(timeout_in_ms=...)`, set by the session with
  `run_deadline`): `DeadlineExceededError`;
- the session closing (`cancel_blocked(resources)`): `CancelledError`;
- the run's own cancellation token (`run_scope(token=...)`: a worker service
  cancels the runs of one registered partition when its master session closes,
  without touching the queues other sessions share on that task): `CancelledError`.

The accumulator kernels (`accumulator_kernels.py`) wait the same way.
"""
from __future__ import annotations

import contextlib
import threading
import time
from typing import Optional

import numpy as np

from .. import errors
from .registry import register_kernel

POLL_S = 0.05
_deadline = threading.local()


class CancelToken:
    """Cancels the blocking kernels of the runs made under it (`run_scope`); once set, it stays set.
    A token with a `parent` is also cancelled when the parent is (one call's token under its partition's)."""

    __slots__ = ("_set", "parent")

    def __init__(self, parent: Optional["CancelToken"] = None):
        self._set = False
        self.parent = parent

    @property
    def cancelled(self) -> bool:
        return self._set or (self.parent is not None and self.parent.cancelled)

    @cancelled.setter
    def cancelled(self, value: bool) -> None:
        self._set = bool(value)


@contextlib.contextmanager
def run_deadline(timeout_in_ms: int):
    """Sets the deadline of blocking kernels run in this thread (0 or less: none) for the `with` body."""
    prev = getattr(_deadline, "at", None)
    _deadline.at = time.monotonic() + timeout_in_ms / 1000.0 if timeout_in_ms and timeout_in_ms > 0 else None
    try:
        yield
    finally:
        _deadline.at = prev


@contextlib.contextmanager
def run_scope(timeout_in_ms: int = 0, token: Optional[CancelToken] = None):
    """`run_deadline` plus a cancellation token for the blocking kernels run in this thread."""
    prev = getattr(_deadline, "token", None)
    _deadline.token = token
    try:
        with run_deadline(timeout_in_ms):
            yield
    finally:
        _deadline.token = prev


def cancel_token(token: CancelToken, resources) -> None:
    """Sets `token` and wakes the blocked kernels of `resources` so the ones run under it fail promptly."""
    token.cancelled = True
    wake_all(resources)


def discard_all(resources) -> None:
    """Forgets every queue and accumulator of these resources (`tf.Session.reset`); the next use creates it
    afresh, and kernels still blocked on a forgotten one fail with CancelledError."""
    st = _state(resources)
    with resources.lock:
        objects, st["objects"] = list(st["objects"].values()), {}
    for obj in objects:
        with obj.cond:
            obj.discarded = True
            obj.cond.notify_all()


def wake_all(resources) -> None:
    """Wakes every blocked queue/accumulator kernel of these resources (each re-checks why it waits)."""
    for obj in list(_state(resources)["objects"].values()):
        with obj.cond:
            obj.cond.notify_all()


def _state(resources) -> dict:
    with resources.lock:
        st = resources.__dict__.get("_blocking")
        if st is None:
            st = resources.__dict__["_blocking"] = {"cancelled": False, "objects": {}}
        return st


def cancel_blocked(resources) -> None:
    """The session closes: every blocked (and later) queue op of these resources fails with CancelledError."""
    _state(resources)["cancelled"] = True
    wake_all(resources)


def wait_until(obj, ready, ctx, what: str, cancelled=None) -> None:
    """Waits (holding obj.cond) until `ready()`; raises on deadline, cancellation (the session's, the run's
    token, or `cancelled()` returning a reason)."""
    at = getattr(_deadline, "at", None)
    token = getattr(_deadline, "token", None)
    st = obj.state
    while not ready():
        why = "session closed" if st["cancelled"] or (token is not None and token.cancelled) else \
            "the resource was reset" if getattr(obj, "discarded", False) else \
            (cancelled() if cancelled is not None else None)
        if why:
            raise errors.CancelledError(None, ctx.op, f"{what} operation was cancelled ({why})\n"
                                                      f"\t [[node {ctx.op.name}]]")
        wait = POLL_S
        if at is not None:
            left = at - time.monotonic()
            if left <= 0:
                raise errors.DeadlineExceededError(None, ctx.op, f"Timed out waiting for {what} "
                                                                 f"[[node {ctx.op.name}]]")
            wait = min(wait, left)
        obj.cond.wait(wait)


class QueueState:
    """One queue's elements (tuples of component arrays) with its capacity, kind and closed flag."""

    def __init__(self, name: str, attrs: dict, state: dict):
        self.name = name
        self.state = state
        self.cond = threading.Condition()
        self.kind = attrs["kind"]
        self.capacity = attrs["capacity"]
        self.dtypes = attrs["component_types"]
        self.shapes = attrs["shapes"]
        self.min_after_dequeue = attrs.get("min_after_dequeue", 0)
        seed = attrs.get("seed", 0), attrs.get("seed2", 0)
        self.rng = np.random.default_rng(seed if any(seed) else None)
        self.items: list = []
        self.closed = False
        self.cancel_pending = False

    def has_room(self, n: int = 1) -> bool:
        return self.capacity < 0 or len(self.items) + n <= self.capacity

    def check_element(self, comps, ctx, batched: bool) -> list:
        if len(comps) != len(self.dtypes):
            raise errors.InvalidArgumentError(None, ctx.op, f"{ctx.op.name}: expected {len(self.dtypes)} components "
                                                            f"for queue {self.name}, got {len(comps)}")
        out = []
        for i, (c, dt) in enumerate(zip(comps, self.dtypes, strict=True)):
            a = np.asarray(c, dtype=dt.as_numpy_dtype)
            shape = self.shapes[i] if self.shapes else None
            got = a.shape[1:] if batched else a.shape
            if shape is not None and not shape_fits(got, shape, padded=self.kind == "padding"):
                raise errors.InvalidArgumentError(None, ctx.op, f"Shape mismatch in tuple component {i}. "
                                                                f"Expected {list(shape)}, got {list(got)} "
                                                                f"(queue {self.name}, node {ctx.op.name})")
            out.append(a)
        return out

    def take(self, n: int) -> list:
        if self.kind == "shuffle":
            picked = []
            for _ in range(n):
                j = int(self.rng.integers(len(self.items)))
                self.items[j], self.items[-1] = self.items[-1], self.items[j]
                picked.append(self.items.pop())
            return picked
        picked, self.items = self.items[:n], self.items[n:]
        return picked

    def batch(self, elements: list) -> tuple:
        comps = []
        for i, dt in enumerate(self.dtypes):
            parts = [e[i] for e in elements]
            if self.kind == "padding":
                shape = tuple(max(p.shape[d] for p in parts) for d in range(parts[0].ndim)) if parts else ()
                arr = np.zeros((len(parts),) + shape, dtype=dt.as_numpy_dtype)
                for k, p in enumerate(parts):
                    arr[(k,) + tuple(slice(0, s) for s in p.shape)] = p
                comps.append(arr)
            elif parts:
                comps.append(np.stack(parts))
            else:
                shape = tuple(self.shapes[i]) if self.shapes else (0,)
                comps.append(np.zeros((0,) + tuple(d or 0 for d in shape), dtype=dt.as_numpy_dtype))
        return tuple(comps)


def shape_fits(got, shape, padded: bool) -> bool:
    if len(got) != len(shape):
        return False
    return all(d is None or d == -1 or d == g for g, d in zip(got, shape, strict=True))


def lookup_object(ctx, factory):
    st = _state(ctx.resources)
    name = ctx.attrs["resource_name"]
    with ctx.resources.lock:
        obj = st["objects"].get(name)
        if obj is None:
            obj = st["objects"][name] = factory(name, ctx.attrs, st)
    return obj


def _queue(ctx) -> QueueState:
    return lookup_object(ctx, QueueState)


@register_kernel("QueueHandle", devices=("CPU",))
def queue_handle(ctx):
    _queue(ctx)
    return np.int32(0)


def _closed_error(ctx, q, need, have):
    return errors.OutOfRangeError(None, ctx.op, f"{q.name} is closed and has insufficient elements "
                                                f"(requested {need}, current size {have})\n\t [[node {ctx.op.name}]]")


def _enqueue(ctx, elements: list) -> None:
    q = _queue(ctx)
    with q.cond:
        if q.closed:
            raise errors.CancelledError(None, ctx.op, f"{q.name} is closed.\n\t [[node {ctx.op.name}]]")
        for el in elements:
            wait_until(q, lambda: q.cancel_pending or q.has_room(), ctx, "enqueue")
            if q.cancel_pending:
                raise errors.CancelledError(None, ctx.op, f"Enqueue on {q.name} cancelled: the queue was closed "
                                                          f"with cancel_pending_enqueues\n\t [[node {ctx.op.name}]]")
            q.items.append(el)
            q.cond.notify_all()


@register_kernel("QueueEnqueue", devices=("CPU",))
def queue_enqueue(ctx, handle, *comps):
    q = _queue(ctx)
    _enqueue(ctx, [q.check_element(comps, ctx, batched=False)])


@register_kernel("QueueEnqueueMany", devices=("CPU",))
def queue_enqueue_many(ctx, handle, *comps):
    q = _queue(ctx)
    arrs = q.check_element(comps, ctx, batched=True)
    n = {len(a) for a in arrs}
    if len(n) != 1:
        raise errors.InvalidArgumentError(None, ctx.op, f"{ctx.op.name}: components have different batch sizes {n}")
    _enqueue(ctx, [[a[i] for a in arrs] for i in range(n.pop())])


def find_queue(ctx, name: str) -> QueueState:
    """The queue named `name` in this session's resources (a reader's input queue, `reader_kernels.py`); its
    handle op has run already (it is an input of the caller's op)."""
    obj = _state(ctx.resources)["objects"].get(name)
    if not isinstance(obj, QueueState):
        raise errors.NotFoundError(None, ctx.op, f"Queue {name} is not in the resources of this task (a reader "
                                                 f"and its input queue must be on one task)\n\t [[node "
                                                 f"{ctx.op.name}]]")
    return obj


def _dequeue(ctx, n: int, up_to: bool) -> list:
    return dequeue_from(_queue(ctx), ctx, n, up_to)


def dequeue_from(q: QueueState, ctx, n: int, up_to: bool) -> list:
    """Takes `n` elements (fewer with `up_to` once closed), blocking as a dequeue op does."""
    with q.cond:
        def ready():
            keep = 0 if q.closed or q.kind != "shuffle" else q.min_after_dequeue
            return q.closed or len(q.items) >= n + keep

        wait_until(q, ready, ctx, "dequeue")
        have = len(q.items)
        if q.closed and have < n:
            if not up_to or have == 0:
                raise _closed_error(ctx, q, n, have)
            n = have
        picked = q.take(n)
        q.cond.notify_all()
        return picked


@register_kernel("QueueDequeue", devices=("CPU",))
def queue_dequeue(ctx, handle):
    el = _dequeue(ctx, 1, False)[0]
    return tuple(el) if len(el) > 1 else el[0]


def _many(ctx, handle, n, up_to: bool):
    q = _queue(ctx)
    out = q.batch(_dequeue(ctx, int(n), up_to))
    return out if len(out) > 1 else out[0]


@register_kernel("QueueDequeueMany", devices=("CPU",))
def queue_dequeue_many(ctx, handle, n):
    return _many(ctx, handle, n, False)


@register_kernel("QueueDequeueUpTo", devices=("CPU",))
def queue_dequeue_up_to(ctx, handle, n):
    return _many(ctx, handle, n, True)


@register_kernel("QueueClose", devices=("CPU",))
def queue_close(ctx, handle):
    q = _queue(ctx)
    with q.cond:
        q.closed = True
        q.cancel_pending = q.cancel_pending or bool(ctx.op.attrs.get("cancel_pending_enqueues"))
        q.cond.notify_all()
    return None


@register_kernel("QueueSize", devices=("CPU",))
def queue_size(ctx, handle):
    q = _queue(ctx)
    with q.cond:
        return np.int32(len(q.items))


@register_kernel("QueueIsClosed", devices=("CPU",))
def queue_is_closed(ctx, handle):
    q = _queue(ctx)
    with q.cond:
        return np.bool_(q.closed)
