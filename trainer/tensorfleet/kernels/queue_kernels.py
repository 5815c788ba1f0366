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
- the session closing (`cancel_blocked(resources)`): `CancelledError`.
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


@contextlib.contextmanager
def run_deadline(timeout_in_ms: int):
    """Sets the deadline of blocking kernels run in this thread (0 or less: none) for the `with` body."""
    prev = getattr(_deadline, "at", None)
    _deadline.at = time.monotonic() + timeout_in_ms / 1000.0 if timeout_in_ms and timeout_in_ms > 0 else None
    try:
        yield
    finally:
        _deadline.at = prev


def enter_blocking_scope(timeout_in_ms: int, cancelled: threading.Event) -> tuple:
    """For the run that follows in this thread: blocking kernels fail with DeadlineExceededError after
    `timeout_in_ms` (0: none) and with CancelledError once `cancelled` is set (a remote session's partition
    deregistered on a worker service: distributed/worker.py). Returns what `exit_blocking_scope` restores
    (no contextmanager: this is on every remote step's path)."""
    prev = (getattr(_deadline, "at", None), getattr(_deadline, "cancel", None))
    _deadline.at = time.monotonic() + timeout_in_ms / 1000.0 if timeout_in_ms and timeout_in_ms > 0 else None
    _deadline.cancel = cancelled
    return prev


def exit_blocking_scope(prev: tuple) -> None:
    _deadline.at, _deadline.cancel = prev


def _state(resources) -> dict:
    with resources.lock:
        st = resources.__dict__.get("_blocking")
        if st is None:
            st = resources.__dict__["_blocking"] = {"cancelled": False, "objects": {}}
        return st


def cancel_blocked(resources) -> None:
    """The session closes: every blocked (and later) queue op of these resources fails with CancelledError."""
    st = _state(resources)
    st["cancelled"] = True
    for obj in list(st["objects"].values()):
        with obj.cond:
            obj.cond.notify_all()


def _wait(obj, ready, ctx, what: str) -> None:
    """Waits (holding obj.cond) until `ready()`; raises on deadline, cancellation."""
    at = getattr(_deadline, "at", None)
    cancel = getattr(_deadline, "cancel", None)
    st = obj.state
    while not ready():
        if st["cancelled"] or (cancel is not None and cancel.is_set()):
            raise errors.CancelledError(None, ctx.op, f"{what} operation was cancelled (session closed)\n"
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
            if shape is not None and not _fits(got, shape, padded=self.kind == "padding"):
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


def _fits(got, shape, padded: bool) -> bool:
    if len(got) != len(shape):
        return False
    return all(d is None or d == -1 or d == g for g, d in zip(got, shape, strict=True))


def _lookup(ctx, factory):
    st = _state(ctx.resources)
    name = ctx.attrs["resource_name"]
    with ctx.resources.lock:
        obj = st["objects"].get(name)
        if obj is None:
            obj = st["objects"][name] = factory(name, ctx.attrs, st)
    return obj


def _queue(ctx) -> QueueState:
    return _lookup(ctx, QueueState)


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
            _wait(q, lambda: q.cancel_pending or q.has_room(), ctx, "enqueue")
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


def _dequeue(ctx, n: int, up_to: bool) -> list:
    q = _queue(ctx)
    with q.cond:
        def ready():
            keep = 0 if q.closed or q.kind != "shuffle" else q.min_after_dequeue
            return q.closed or len(q.items) >= n + keep

        _wait(q, ready, ctx, "dequeue")
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


# -- ConditionalAccumulator ---------------------------------------------------
class AccumulatorState:
    """Sums gradients of the current global step; stale ones (local_step < global step) are dropped."""

    def __init__(self, name: str, attrs: dict, state: dict):
        self.name = name
        self.state = state
        self.cond = threading.Condition()
        self.dtype = attrs["dtype"]
        self.shape = attrs["shape"]
        self.global_step = 0
        self.total: Optional[np.ndarray] = None
        self.count = 0
        self.dropped = 0


def _accumulator(ctx) -> AccumulatorState:
    return _lookup(ctx, AccumulatorState)


@register_kernel("AccumulatorHandle", devices=("CPU",))
def accumulator_handle(ctx):
    _accumulator(ctx)
    return np.int32(0)


@register_kernel("AccumulatorApplyGradient", devices=("CPU",))
def accumulator_apply_gradient(ctx, handle, local_step, grad):
    acc = _accumulator(ctx)
    g = np.asarray(grad, dtype=acc.dtype.as_numpy_dtype)
    with acc.cond:
        if int(local_step) < acc.global_step:
            acc.dropped += 1
            return None
        if acc.shape is not None and not _fits(g.shape, acc.shape, False):
            raise errors.InvalidArgumentError(None, ctx.op, f"Shape mismatch: expected {list(acc.shape)}, got "
                                                            f"{list(g.shape)} for accumulator {acc.name}")
        if acc.total is not None and acc.total.shape != g.shape:
            raise errors.InvalidArgumentError(None, ctx.op, f"Shape mismatch: accumulated {list(acc.total.shape)}, "
                                                            f"got {list(g.shape)} for accumulator {acc.name}")
        acc.total = g.copy() if acc.total is None else acc.total + g
        acc.count += 1
        acc.cond.notify_all()
    return None


@register_kernel("AccumulatorTakeGradient", devices=("CPU",))
def accumulator_take_gradient(ctx, handle, num_required):
    acc = _accumulator(ctx)
    need = int(num_required)
    if need < 1:
        raise errors.InvalidArgumentError(None, ctx.op, f"Argument num_required must be positive, got {need} "
                                                        f"(accumulator {acc.name})")
    with acc.cond:
        _wait(acc, lambda: acc.count >= need, ctx, "take_grad")
        avg = (acc.total / acc.count).astype(acc.dtype.as_numpy_dtype)
        acc.total, acc.count = None, 0
        acc.global_step += 1  # TF: a take bumps the accumulator's step, so gradients of the old step are stale
        return avg


@register_kernel("AccumulatorNumAccumulated", devices=("CPU",))
def accumulator_num_accumulated(ctx, handle):
    acc = _accumulator(ctx)
    with acc.cond:
        return np.int32(acc.count)


@register_kernel("AccumulatorSetGlobalStep", devices=("CPU",))
def accumulator_set_global_step(ctx, handle, new_global_step):
    acc = _accumulator(ctx)
    with acc.cond:
        step = int(new_global_step)
        if step < acc.global_step:
            return None  # TF logs a warning and ignores a step that goes back
        acc.global_step = step
    return None
