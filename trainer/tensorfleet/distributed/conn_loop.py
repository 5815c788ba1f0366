"""The connection loop of a `server.Server`: one thread holds every connection that is not running a call.

Sits between the server's listening sockets (the spec port; in two-port mode the bulk port; the same-host
Unix socket) and the work. The loop accepts, terminates TLS (a non-blocking handshake; ALPN tells gRPC from
bulk), reads each connection's first bytes (`one_port.classify`) and each bulk request's head (the frame's
prefix and the token field that starts its header: `wire.RequestHeads`). Then:
- an authenticated bulk request goes to `bulk_calls.BulkCalls`: a worker thread reads the rest and serves
  it, and gives the connection back once it stays idle;
- a gRPC connection is pumped to the internal grpcio server by the loop itself (`one_port.GrpcPump`); it
  counts as unauthenticated until grpcio served a call with the token on it (`one_port.PumpPeers`: the
  handler reports it, `grpc_authenticated`);
- a head that fails its checks is answered with its status (INVALID_ARGUMENT, RESOURCE_EXHAUSTED,
  UNAUTHENTICATED), the connection's write side shut, at most `DISCARD_BYTES` more read, then it is closed.

Bounds (`ConnectionLimits`, env overrides; docs/distributed.md lists them):
- at most `max_connections` open connections (another is closed at accept), and at most half of them not
  yet authenticated (a new one closes the oldest of those);
- a connection must complete an authenticated request head (a gRPC one: have a call with the token served;
  under TLS its handshake too) within `auth_seconds` of its accept, whatever else it sends (pings), and a
  later bulk frame its head within `auth_seconds` of its first byte; then a gRPC connection that moves no byte
  either way for `grpc_idle_seconds` is closed (clients ping every `TENSORFLEET_DEAD_PEER_SECONDS / 2`);
- an authenticated bulk connection may stay idle here (clients pool them; the kernel's keepalive probes
  end it if its host vanishes).
So a peer without the token costs a file descriptor and a few hundred bytes for a few seconds, never a
thread, and never a buffer sized by what it announces. A connection that closes or breaks is a debug line.
"""
from __future__ import annotations

import collections
import logging
import selectors
import socket
import ssl
import threading
import time
from typing import Callable, Optional

from .. import errors
from . import wire
from .caller_watch import probe_idle_peer
from .conn_limits import ConnectionLimits
from .one_port import PUMP_BUFFER_BYTES, SNIFF_BYTES, GrpcPump, PumpPeers, classify, close_socket
from .tls import GRPC_ALPN

logger = logging.getLogger("tensorfleet.distributed")
#: after a refused head: how much more the loop reads (and drops) before closing, so the status reaches
#: the peer before the kernel resets the connection for unread data
DISCARD_BYTES = 64 << 10
_TICK_S = 0.1   # how often deadlines are checked while some connection has one
_READ, _WRITE = selectors.EVENT_READ, selectors.EVENT_WRITE
_SNIFF, _TLS, _HEAD, _PUMP, _CLOSING, _BUSY = "sniff", "tls", "head", "pump", "closing", "busy"


class Conn:
    """One accepted connection. Only the thread that holds it (the loop, or one worker) uses its socket."""

    __slots__ = ("sock", "fd", "peer", "state", "buf", "sizes", "deadline", "drained", "pump", "events", "reader",
                 "closed", "owners", "_loop")

    def __init__(self, sock: socket.socket, peer: str, loop: "ConnectionLoop"):
        self.sock = sock
        self.fd = sock.fileno()
        self.peer = peer
        self.state = _HEAD
        self.buf = bytearray()          # the head (or first bytes) read so far
        self.sizes: Optional[tuple] = None   # (header bytes, payload bytes) once the prefix is checked
        self.deadline = 0.0             # time.monotonic() by which the head must be complete (0: none)
        self.drained = 0                # bytes dropped while closing after a refusal
        self.pump: Optional[GrpcPump] = None
        self.events = [0, 0]            # registered selector events: the socket, the pump's upstream
        self.reader = None              # the worker side's wire.FrameReader (kept while idle)
        self.closed = False
        self.owners: set = set()        # client_leases: whose state this connection keeps alive
        self._loop = loop

    def close(self, reason: str) -> None:
        self._loop.close_conn(self, reason)


class _Listener:
    __slots__ = ("sock", "shared", "paused_until")

    def __init__(self, sock: socket.socket, shared: bool):
        self.sock, self.shared, self.paused_until = sock, shared, 0.0


class ConnectionLoop:
    """See the module docstring. `serve_bulk(conn, head, header_bytes, payload_bytes, give_back)` runs an
    authenticated request (it must not block the loop); `give_back(conn, closing)` returns the connection
    to the loop (`closing`: a status was sent, drain and close it). `on_closed(conn)` runs once per
    connection, in the thread that closed it."""

    def __init__(self, name: str, limits: ConnectionLimits, heads: wire.RequestHeads,
                 serve_bulk: Optional[Callable], grpc_path: str = "", tls_context: Optional[ssl.SSLContext] = None,
                 on_closed: Optional[Callable] = None):
        self.name, self.limits, self._heads = name, limits, heads
        self._serve_bulk, self._grpc_path, self._tls = serve_bulk, grpc_path, tls_context
        self._on_closed = on_closed
        self._sel = selectors.DefaultSelector()
        self._wake_r, self._wake_w = socket.socketpair()
        self._wake_r.setblocking(False)
        self._wake_w.setblocking(False)
        self._sel.register(self._wake_r, _READ, None)
        self._listeners: list = []
        self._lock = threading.Lock()
        self._conns: set = set()          # every open connection (any thread)
        self._held: set = set()           # those in the loop (loop thread only)
        self._pending: collections.OrderedDict = collections.OrderedDict()   # not yet authenticated, oldest first
        self._pumps = PumpPeers(grpc_path)   # pumped gRPC connections awaiting a call with the token
        self._adopted: collections.deque = collections.deque()
        self._scratch = memoryview(bytearray(PUMP_BUFFER_BYTES))
        self._closing = False
        self._thread: Optional[threading.Thread] = None
        self._next_warning = 0.0
        self._timed = False               # some held connection has a deadline or an idle bound (loop thread)

    # -- API (any thread) -------------------------------------------------------------------------
    def add_listener(self, sock: socket.socket, shared: bool) -> None:
        """Serve `sock` (a listening socket): `shared` connections are sniffed (gRPC or bulk); others are bulk."""
        sock.setblocking(False)
        listener = _Listener(sock, shared)
        self._listeners.append(listener)
        self._sel.register(sock, _READ, listener)

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name=f"tf-conn-loop-{self.name}", daemon=True)
        self._thread.start()

    @property
    def open_connections(self) -> int:
        return len(self._conns)

    @property
    def held_connections(self) -> int:
        """Connections the loop holds (not running a call), at this moment."""
        return len(self._held)

    def grpc_authenticated(self, peer: str) -> None:
        """From a gRPC handler (any thread): a call with the job token from `peer` (`context.peer()`) runs."""
        self._pumps.authenticated(peer)

    def give_back(self, conn: Conn, closing: bool = False) -> None:
        """From a worker: the connection is idle (or, `closing`, refused after a status) and the loop holds it."""
        if self._closing:
            return conn.close("the server stopped")
        self._adopted.append((conn, closing))
        self._wake()

    def close_conn(self, conn: Conn, reason: str) -> None:
        with self._lock:
            if conn.closed:
                return
            conn.closed = True
            self._conns.discard(conn)
        close_socket(conn.sock)
        if conn.pump is not None:
            close_socket(conn.pump.upstream.sock)
        logger.debug("Connection from %s to %s closed: %s", conn.peer, self.name, reason)
        if self._on_closed is not None:
            self._on_closed(conn)

    def close(self) -> None:
        """Stops accepting and closes every connection (those running a call too)."""
        self._closing = True
        self._wake()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=5.0)
        if self._thread is None or not self._thread.is_alive():
            self._release()
        with self._lock:
            busy = list(self._conns)
        for conn in busy:
            conn.close("the server stopped")

    def _wake(self) -> None:
        try:
            self._wake_w.send(b"\0")
        except OSError:
            pass   # full (the loop will wake anyway) or closed (the loop is gone)

    # -- the loop ---------------------------------------------------------------------------------
    def _run(self) -> None:
        next_sweep = 0.0
        try:
            while not self._closing:
                timeout = _TICK_S if self._timed else 1.0
                for key, _events in self._sel.select(timeout):
                    data = key.data
                    if data is None:
                        self._drain_wake()
                    elif isinstance(data, _Listener):
                        self._accept(data)
                    else:
                        self._ready(data[0])
                now = time.monotonic()
                if now >= next_sweep:
                    self._sweep(now)
                    next_sweep = now + _TICK_S
        except Exception:  # noqa: BLE001 - the loop must not die silently: log it, then close everything
            logger.exception("The connection loop of %s failed", self.name)
        finally:
            self._release()

    def _release(self) -> None:
        for conn in list(self._held):
            self._drop(conn, "the server stopped")
        for listener in self._listeners:
            close_socket(listener.sock)
        self._listeners = []
        try:
            self._sel.close()
        except (OSError, ValueError):
            pass
        self._wake_r.close()
        self._wake_w.close()

    def _drain_wake(self) -> None:
        try:
            while self._wake_r.recv(4096):
                pass
        except (BlockingIOError, OSError):
            pass
        while self._adopted:
            conn, closing = self._adopted.popleft()
            if conn.closed:
                continue
            try:
                conn.sock.setblocking(False)
            except (OSError, ValueError):
                self.close_conn(conn, "closed while idle")
                continue
            self._held.add(conn)
            conn.buf, conn.sizes = bytearray(), None
            if closing:
                self._start_closing(conn)
            else:
                conn.state, conn.deadline = _HEAD, 0.0
                self._want(conn, 0, _READ)

    def _accept(self, listener: _Listener) -> None:
        for _ in range(64):
            try:
                sock, addr = listener.sock.accept()
            except (BlockingIOError, InterruptedError):
                return
            except OSError as e:   # out of file descriptors, ...: stop accepting for a moment
                self._warn(f"accept failed: {e}")
                self._sel.unregister(listener.sock)
                listener.paused_until = time.monotonic() + 0.5
                self._timed = True
                return
            if len(self._conns) >= self.limits.max_connections:
                close_socket(sock)
                self._warn(f"{self.limits.max_connections} connections open (TENSORFLEET_MAX_CONNECTIONS): "
                           f"refusing new ones")
                continue
            self._take_authenticated()   # (those leave the unauthenticated budget before its oldest is closed)
            if len(self._pending) >= self.limits.max_unauthenticated:
                oldest = next(iter(self._pending))
                self._drop(oldest, f"more than {self.limits.max_unauthenticated} connections without a request: "
                                   f"the oldest is closed")
            self._add(sock, addr, listener.shared)

    def _add(self, sock: socket.socket, addr, shared: bool) -> None:
        sock.setblocking(False)
        unix = sock.family == socket.AF_UNIX
        if unix:
            wire.widen_unix_send_buffer(sock)
        else:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            probe_idle_peer(sock)   # a vanished client host ends its step too (caller_watch)
        state = _SNIFF if shared else _HEAD
        if self._tls is not None and not unix:
            try:
                sock = self._tls.wrap_socket(sock, server_side=True, do_handshake_on_connect=False)
            except (OSError, ValueError) as e:
                close_socket(sock)
                logger.debug("Connection to %s closed: %s", self.name, e)
                return
            state = _TLS
        peer = "the same-host socket" if unix else f"{addr[0]}:{addr[1]}"
        conn = Conn(sock, peer, self)
        conn.state, conn.deadline = state, time.monotonic() + self.limits.auth_seconds
        with self._lock:
            self._conns.add(conn)
        self._held.add(conn)
        self._pending[conn] = None
        self._timed = True
        self._want(conn, 0, _READ)

    def _ready(self, conn: Conn) -> None:
        if conn.closed or conn not in self._held:
            return
        try:
            if conn.state == _PUMP:
                self._pump(conn)
            elif conn.state == _TLS:
                self._handshake(conn)
            elif conn.state == _CLOSING:
                self._discard(conn)
            else:
                self._read_head(conn)
        except (OSError, ValueError) as e:   # ssl.SSLError is an OSError
            self._drop(conn, f"{type(e).__name__}: {e}")
        except Exception:  # noqa: BLE001 - a bug: logged with its traceback; the loop goes on with the others
            logger.exception("%s: serving the connection from %s failed", self.name, conn.peer)
            self._drop(conn, "internal error")

    def _handshake(self, conn: Conn) -> None:
        sock = conn.sock
        assert isinstance(sock, ssl.SSLSocket)
        try:
            sock.do_handshake()
        except ssl.SSLWantReadError:
            return self._want(conn, 0, _READ)
        except ssl.SSLWantWriteError:
            return self._want(conn, 0, _WRITE)
        if sock.selected_alpn_protocol() == GRPC_ALPN:
            return self._start_pump(conn, b"")
        if self._serve_bulk is None:
            return self._drop(conn, "a bulk connection, but the bulk path is off")
        conn.state = _HEAD
        self._want(conn, 0, _READ)
        self._read_head(conn)   # the request may have come with the handshake's last flight

    def _read_head(self, conn: Conn) -> None:
        heads = self._heads
        while True:
            want = SNIFF_BYTES if conn.state == _SNIFF else wire.PREFIX.size if conn.sizes is None else heads.size
            missing = want - len(conn.buf)
            if missing > 0:
                data = self._recv(conn, missing)
                if data is None:
                    return
                if not data:
                    return self._drop(conn, "closed mid-frame" if conn.buf else "closed by the peer")
                if not conn.deadline:   # an authenticated connection's next frame begins
                    conn.deadline = time.monotonic() + self.limits.auth_seconds
                    self._timed = True
                conn.buf += data
                continue
            if conn.state == _SNIFF:
                kind = classify(bytes(conn.buf), wire.MAGIC)
                if kind == "grpc":
                    return self._start_pump(conn, bytes(conn.buf))
                if self._serve_bulk is None:
                    return self._drop(conn, "not gRPC, and the bulk path is off")
                if kind != "bulk":
                    return self._refuse(conn, errors.INVALID_ARGUMENT, "not a Tensorfleet bulk frame (bad magic)")
                conn.state = _HEAD
                continue
            try:
                if conn.sizes is None:
                    conn.sizes = heads.sizes(conn.buf)
                    continue
                heads.check_token(conn.buf)
            except wire.FrameError as e:
                return self._refuse(conn, e.code, str(e))
            return self._hand_off(conn)

    def _recv(self, conn: Conn, n: int) -> Optional[bytes]:
        try:
            return conn.sock.recv(n)
        except (BlockingIOError, ssl.SSLWantReadError):
            self._want(conn, 0, _READ)
        except ssl.SSLWantWriteError:
            self._want(conn, 0, _WRITE)
        return None

    def _hand_off(self, conn: Conn) -> None:
        head, (header_bytes, payload_bytes) = bytes(conn.buf), conn.sizes or (0, 0)
        self._want(conn, 0, 0)
        self._held.discard(conn)
        self._pending.pop(conn, None)
        conn.state, conn.buf, conn.sizes, conn.deadline = _BUSY, bytearray(), None, 0.0
        assert self._serve_bulk is not None
        self._serve_bulk(conn, head, header_bytes, payload_bytes, self.give_back)

    def _refuse(self, conn: Conn, code: int, message: str) -> None:
        logger.debug("Refused a request from %s to %s: %s", conn.peer, self.name, message)
        try:
            conn.sock.send(wire.status_frame(code, message))
        except (OSError, ValueError):
            return self._drop(conn, "closed before its status was sent")
        self._start_closing(conn)

    def _start_closing(self, conn: Conn) -> None:
        """Shut the write side (the peer reads the status, then EOF) and drain a little before closing."""
        self._pending.pop(conn, None)
        try:
            socket.socket.shutdown(conn.sock, socket.SHUT_WR)
        except OSError:
            return self._drop(conn, "refused")
        conn.state, conn.drained = _CLOSING, 0
        conn.deadline = time.monotonic() + min(1.0, self.limits.auth_seconds)
        self._timed = True
        self._want(conn, 0, _READ)

    def _discard(self, conn: Conn) -> None:
        while True:
            n = self._recv_into_scratch(conn)
            if n is None:
                return
            conn.drained += n
            if n == 0 or conn.drained >= DISCARD_BYTES:
                return self._drop(conn, "refused")

    def _recv_into_scratch(self, conn: Conn) -> Optional[int]:
        try:
            return conn.sock.recv_into(self._scratch)
        except (BlockingIOError, ssl.SSLWantReadError):
            self._want(conn, 0, _READ)
        except ssl.SSLWantWriteError:
            self._want(conn, 0, _WRITE)
        return None

    def _start_pump(self, conn: Conn, first: bytes) -> None:
        if not self._grpc_path:
            return self._drop(conn, "a gRPC connection, but gRPC is served on another port")
        try:
            upstream, name = self._pumps.connect(self._grpc_path, conn)
        except OSError as e:
            return self._drop(conn, f"the internal gRPC server did not accept it: {e}")
        conn.pump = GrpcPump(conn.sock, upstream, first, self._scratch, name)
        if not name:   # its calls cannot be told apart (not Linux): the preface authenticates it, as before
            self._pending.pop(conn, None)
            conn.deadline = 0.0
        self._timed = True
        conn.state, conn.buf = _PUMP, bytearray()
        self._pump(conn)

    def _pump(self, conn: Conn) -> None:
        pump = conn.pump
        assert pump is not None
        if not pump.move():
            return self._drop(conn, "gRPC connection closed")
        client_events, upstream_events = pump.events()
        self._want(conn, 0, client_events)
        self._want(conn, 1, upstream_events)

    def _want(self, conn: Conn, side: int, events: int) -> None:
        """Registers socket `side` (0: the connection, 1: its pump's upstream) for exactly `events`."""
        current = conn.events[side]
        if events == current:
            return
        sock = conn.sock if side == 0 else conn.pump.upstream.sock   # type: ignore[union-attr]
        if not current:
            self._sel.register(sock, events, (conn, side))
        elif not events:
            self._sel.unregister(sock)
        else:
            self._sel.modify(sock, events, (conn, side))
        conn.events[side] = events

    def _drop(self, conn: Conn, reason: str) -> None:
        for side in (0, 1):
            if conn.events[side]:
                try:
                    self._want(conn, side, 0)
                except (KeyError, OSError, ValueError):
                    conn.events[side] = 0
        self._held.discard(conn)
        self._pending.pop(conn, None)
        self._pumps.forget(conn)
        self.close_conn(conn, reason)

    def _take_authenticated(self) -> None:
        for conn in self._pumps.take():   # a call with the token was served on it: no deadline any more
            self._pending.pop(conn, None)
            conn.deadline = 0.0

    def _sweep(self, now: float) -> None:
        timed = False
        for listener in self._listeners:
            if listener.paused_until and now >= listener.paused_until:
                listener.paused_until = 0.0
                self._sel.register(listener.sock, _READ, listener)
            timed |= bool(listener.paused_until)
        self._take_authenticated()
        for conn in list(self._held):
            if conn.state == _PUMP:
                assert conn.pump is not None
                timed = True
                if conn.deadline and now > conn.deadline:
                    self._drop(conn, f"no gRPC call with the job token within {self.limits.auth_seconds:g} s")
                elif now - conn.pump.last_active > self.limits.grpc_idle_seconds:
                    self._drop(conn, f"gRPC connection idle for {self.limits.grpc_idle_seconds:g} s")
            elif conn.deadline:
                timed = True
                if now > conn.deadline:
                    self._drop(conn, "refused" if conn.state == _CLOSING else
                               f"no complete request within {self.limits.auth_seconds:g} s")
        self._timed = timed

    def _warn(self, message: str) -> None:
        now = time.monotonic()
        if now >= self._next_warning:
            logger.warning("%s: %s", self.name, message)
            self._next_warning = now + 10.0
