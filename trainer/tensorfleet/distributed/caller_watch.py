"""A served call is cancelled when its caller goes away (the client process died, or it gave up on the call).

Sits between the two transports of `server.Server` and the work they start: `service_methods.Methods`
hands a `CallCancel` to RunGraph (`worker.WorkerService.run_graph`: the run's blocking kernels get a
`queue_kernels.CancelToken` under their partition's token) and to RunStep (`master.MasterSession.run`:
its local partitions get the same, and its RunGraph calls to other tasks are aborted through
`client.RpcClient`, which those tasks notice the same way). A cancelled call's blocked ops end with
`CancelledError` on the task and take nothing from their queue or accumulator.

How the caller's disappearance is noticed:
- gRPC: grpcio runs the call's `context.add_callback` callbacks when the call is cancelled (the
  client's connection closed or reset, or its deadline passed).
- bulk frames (TCP or Unix socket): the connection's thread runs the call itself, so a `ConnectionWatch`
  (one thread per server, started on first use) waits in `epoll` for `EPOLLRDHUP`/`EPOLLHUP`/`EPOLLERR` on
  the connections whose call is being served. A client never half-closes a pooled connection, so the end of
  its stream means its process died or it dropped the connection (its own RPC timeout). The kernel reports
  it at once; the bound is the watcher's wake-up, well under a second. Without epoll (not Linux) bulk
  calls are not watched and end at their own deadline.
"""
from __future__ import annotations

import itertools
import logging
import select
import socket
import threading
from contextlib import contextmanager
from typing import Callable, Iterator, Optional

from .. import errors
from .client import Timeouts

logger = logging.getLogger("tensorfleet.distributed")
#: how often an idle watcher thread checks whether its server stopped (it sleeps in epoll otherwise)
WATCH_POLL_S = 1.0
_EPOLLRDHUP = getattr(select, "EPOLLRDHUP", 0x2000)
_POLLRDHUP = getattr(select, "POLLRDHUP", 0x2000)


class CallCancel:
    """The cancellation of one served call: `cancel(reason)` once, then every hook registered with
    `on_cancel` runs (in the cancelling thread); a hook registered after that runs at once."""

    def __init__(self):
        self._lock = threading.Lock()
        self._hooks: dict = {}
        self._ids = itertools.count()
        self.reason = ""

    @property
    def cancelled(self) -> bool:
        return bool(self.reason)

    def on_cancel(self, fn: Callable[[], None]) -> Callable[[], None]:
        """Registers `fn`; returns what unregisters it (call it when the work `fn` would stop is done)."""
        with self._lock:
            if not self.reason:
                key = next(self._ids)
                self._hooks[key] = fn
                return lambda: self._hooks.pop(key, None)
        _run_hook(fn)
        return _nothing

    def cancel(self, reason: str) -> None:
        with self._lock:
            if self.reason:
                return
            self.reason = reason or "cancelled"
            hooks, self._hooks = list(self._hooks.values()), {}
        for fn in hooks:
            _run_hook(fn)

    def check(self, what: str) -> None:
        """Raises CancelledError naming `what` once cancelled (before starting more work)."""
        if self.reason:
            raise errors.CancelledError(None, None, f"{what} was cancelled: {self.reason}")


def _nothing() -> None:
    return None


def _run_hook(fn) -> None:
    try:
        fn()
    except Exception:  # noqa: BLE001 - a failing hook must not stop the others
        logger.exception("A cancellation hook failed")


def grpc_call_cancel(context) -> CallCancel:
    """A CallCancel cancelled when grpcio ends the call under `context` before the handler has answered
    (the client went away or its deadline passed); callbacks after a normal end find no hooks left."""
    cancel = CallCancel()
    if not context.add_callback(lambda: cancel.cancel("the caller went away (gRPC call cancelled)")):
        cancel.cancel("the caller went away (gRPC call already ended)")
    return cancel


class ConnectionWatch:
    """Cancels a bulk connection's call in progress when the connection's peer closes or resets it."""

    def __init__(self, name: str):
        self._name = name
        self._lock = threading.Lock()
        self._watched: dict = {}   # fd -> CallCancel
        self._epoll: Optional[select.epoll] = None   # with the watcher thread, on first use
        self._thread: Optional[threading.Thread] = None
        self._closed = False

    @contextmanager
    def watching(self, conn: socket.socket) -> Iterator[CallCancel]:
        """The CallCancel of the call served on `conn` inside the `with` body."""
        cancel = CallCancel()
        fd = self._register(conn, cancel)
        try:
            yield cancel
        finally:
            if fd >= 0:
                self._unregister(fd)

    def _register(self, conn: socket.socket, cancel: CallCancel) -> int:
        if not hasattr(select, "epoll"):
            return -1
        try:
            fd = conn.fileno()
        except (OSError, ValueError):
            return -1
        with self._lock:
            if self._closed or fd < 0:
                return -1
            if self._epoll is None:
                self._epoll = select.epoll()
            try:
                # one-shot: after one event the fd stays quiet until the call's end unregisters it
                self._epoll.register(fd, _EPOLLRDHUP | select.EPOLLONESHOT)
            except OSError:
                return -1
            self._watched[fd] = cancel
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name=f"tf-caller-watch-{self._name}", daemon=True)
                self._thread.start()
        return fd

    def _unregister(self, fd: int) -> None:
        with self._lock:
            self._watched.pop(fd, None)
            if self._closed or self._epoll is None:
                return
            try:
                self._epoll.unregister(fd)
            except (OSError, ValueError):
                pass   # the connection was closed under the call (the server stops)

    def _run(self) -> None:
        epoll = self._epoll
        assert epoll is not None
        try:
            while not self._closed:
                self._serve(epoll.poll(WATCH_POLL_S))
        finally:
            epoll.close()

    def _serve(self, events: list) -> None:
        for fd, _ in events:
            with self._lock:
                cancel = self._watched.get(fd)
            # the event may be stale (that call ended and the fd now serves another one): look again
            if cancel is not None and _peer_gone(fd):
                cancel.cancel("the caller closed its connection")

    def close(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
            watched, self._watched = list(self._watched.values()), {}
        for cancel in watched:
            cancel.cancel("the server stopped")
        if self._epoll is not None and self._thread is None:
            self._epoll.close()   # else the watcher thread closes it when it sees `_closed` (within WATCH_POLL_S)


def probe_idle_peer(conn: socket.socket) -> None:
    """TCP keepalive on an accepted connection: while it waits for a step, a client host that vanished
    without closing it (power loss, network cut) stops answering the probes, and the kernel resets the
    connection after about `Timeouts.dead_peer_seconds` (5 s): `EPOLLERR`, the step is cancelled. Only
    probes of an idle connection (no TCP_USER_TIMEOUT: a slow reader of a large reply is not cut off)."""
    idle = max(1, int(Timeouts().dead_peer_seconds / 3))
    try:
        conn.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
        for opt, value in (("TCP_KEEPIDLE", idle), ("TCP_KEEPINTVL", 1), ("TCP_KEEPCNT", 2)):
            if hasattr(socket, opt):
                conn.setsockopt(socket.IPPROTO_TCP, getattr(socket, opt), value)
    except OSError:
        pass


def _peer_gone(fd: int) -> bool:
    """Whether the socket now at `fd` has its peer's end closed or reset (no data read, TLS or not)."""
    p = select.poll()
    try:
        p.register(fd, _POLLRDHUP)
        return any(ev & (_POLLRDHUP | select.POLLHUP | select.POLLERR) for _, ev in p.poll(0))
    except (OSError, ValueError):
        return False
