"""What a server keeps for its clients, and how long after a client's connections are gone.

Sits beside `conn_loop` (which reports each connection's close) and `service_methods` (which names, per
call, whose state the call keeps: its *owner*). Owners:
- ("master", task, incarnation): the graph partitions a master process registered on this task's worker
  service (RegisterGraph carries the master's task and incarnation; RunGraph and DeregisterGraph name a
  handle whose owner the worker service knows);
- ("session", handle): a master session that a remote client (`Session("grpc://...")`) created on this
  task's master (CreateSession's reply; RunStep, ExtendSession and ListDevices name it).

An owner whose calls came over bulk connections is bound to them. When the last one closes (the client
process died, or the kernel's keepalive probes gave up on its host), the owner has `gc_seconds`
(`TENSORFLEET_CLIENT_GC_SECONDS`, default 60) to come back: a call on a new connection keeps everything.
After that its state is released: the master's partitions deregistered (their blocked runs end with
CancelledError), the session closed. A client that merely reconnects loses nothing; one that comes back
later finds its handles gone (AbortedError, which `MonitoredSession` recovers from by recreating its
session). A restarted master is caught sooner: its first registration drops its older incarnation's
graphs (`worker.WorkerService.register_graph`). gRPC does not say which connection carried a call, so an
owner seen over gRPC is *pinned*: only its session's close or its task's next incarnation frees it.
"""
from __future__ import annotations

import logging
import os
import threading
from typing import Optional

logger = logging.getLogger("tensorfleet.distributed")
GC_SECONDS_ENV = "TENSORFLEET_CLIENT_GC_SECONDS"


def gc_seconds() -> float:
    try:
        value = float(os.environ.get(GC_SECONDS_ENV, 60.0))
    except ValueError:
        return 60.0
    return max(0.0, value)


class ClientLeases:
    """Owners bound to connections, released `gc_seconds` after their last connection closed."""

    def __init__(self, name: str, worker, master, gc_after: Optional[float] = None):
        self._name = name
        self._worker, self._master = worker, master
        self.gc_after = gc_seconds() if gc_after is None else gc_after
        self._lock = threading.Lock()
        self._conns: dict = {}    # owner -> {Conn}
        self._timers: dict = {}   # owner -> threading.Timer (its last connection closed)
        self._pinned: set = set()
        self._closed = False
        worker.on_owner_replaced = lambda owner: self.forget(("master",) + tuple(owner))

    def bind(self, conn, owner: tuple) -> None:
        """A call of `owner` was served on bulk connection `conn`."""
        if owner in conn.owners:   # the common case, no lock: only the thread holding `conn` changes it
            return
        with self._lock:
            if owner in self._pinned or self._closed:
                return
            timer = self._timers.pop(owner, None)
            self._conns.setdefault(owner, set()).add(conn)
            conn.owners.add(owner)
            closed = conn.closed
        if timer is not None:
            timer.cancel()
        if closed:   # closed while the call was served
            self.connection_closed(conn)

    def touch(self, owner: tuple) -> None:
        """A call of `owner` came over gRPC: it is pinned (its connections cannot be told)."""
        if owner in self._pinned:
            return
        with self._lock:
            self._pinned.add(owner)
            timer = self._timers.pop(owner, None)
            for conn in self._conns.pop(owner, ()):
                conn.owners.discard(owner)
        if timer is not None:
            timer.cancel()

    def forget(self, owner: tuple) -> None:
        """`owner`'s state is gone already (its session closed, its task re-registered)."""
        with self._lock:
            self._pinned.discard(owner)
            timer = self._timers.pop(owner, None)
            self._conns.pop(owner, None)
        if timer is not None:
            timer.cancel()

    def connection_closed(self, conn) -> None:
        expiring = []
        with self._lock:
            for owner in list(conn.owners):
                conns = self._conns.get(owner)
                if conns is None:
                    continue
                conns.discard(conn)
                if not conns and not self._closed:
                    del self._conns[owner]
                    timer = threading.Timer(self.gc_after, self._expire, args=(owner,))
                    timer.daemon = True
                    self._timers[owner] = timer
                    expiring.append(timer)
            conn.owners.clear()
        for timer in expiring:
            timer.start()

    def _expire(self, owner: tuple) -> None:
        with self._lock:
            timer = self._timers.get(owner)
            if timer is None or owner in self._conns or self._closed:
                return
            del self._timers[owner]
        try:
            if owner[0] == "master":
                dropped = self._worker.release_owner(owner[1:])
                what = f"{dropped} registered graph(s) of the master {owner[1]} (incarnation {owner[2]:x})"
            else:
                self._master.close_session(owner[1])
                what = f"session {owner[1]}"
        except Exception:  # noqa: BLE001 - a release must not kill the timer thread silently
            logger.exception("%s: releasing %s failed", self._name, owner)
            return
        logger.info("%s: released %s: its connections closed %g s ago (%s)", self._name, what, self.gc_after,
                    GC_SECONDS_ENV)

    def close(self) -> None:
        with self._lock:
            self._closed = True
            timers, self._timers = list(self._timers.values()), {}
        for timer in timers:
            timer.cancel()
