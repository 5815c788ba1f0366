"""One TCP port per server: gRPC and the bulk frames share the cluster spec's port.

Used by `conn_loop.ConnectionLoop` (single-port mode, the default): the server binds one TCP listener
on its task's address; each accepted connection is told apart by its first bytes (`classify`). The
HTTP/2 client preface (`PRI * HTTP/2.0...`, what every gRPC client sends first) means a gRPC
connection: its bytes are pumped both ways to the server's internal grpcio server, which listens on a
private Unix socket (`InternalGrpcSocket`), by a `GrpcPump` that the connection loop drives (no thread
per connection). Anything else is the bulk protocol (`wire` frames start with `TFB1`; other bytes are
answered INVALID_ARGUMENT). So a pod needs only its declared port (2222).

Under TLS both kinds open with a ClientHello, so the loop terminates TLS itself and tells them apart by
the ALPN protocol the client offered (`tls.GRPC_ALPN` or `tls.BULK_ALPN`); the pump then moves the
decrypted bytes (the loop's thread is the only one using that TLS object). `TENSORFLEET_SINGLE_PORT=0`
restores the two-port mode (gRPC on the spec port, bulk on an ephemeral port).

A pumped connection counts as unauthenticated until grpcio served a call with the job token on it:
`PumpPeers` names each pump's upstream socket, which grpcio reports as the call's peer.
"""
from __future__ import annotations

import itertools
import os
import selectors
import shutil
import socket
import ssl
import sys
import tempfile
import threading
import time
from typing import Optional

SINGLE_PORT_ENV = "TENSORFLEET_SINGLE_PORT"
HTTP2_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
#: bytes enough to tell the HTTP/2 preface from a bulk frame (whose magic is 4 bytes too)
SNIFF_BYTES = 4
_GRPC_START = HTTP2_PREFACE[:SNIFF_BYTES]
#: the most bytes a pump holds for one direction of one connection (the other side is slow to take them)
PUMP_BUFFER_BYTES = 256 << 10


def single_port_enabled() -> bool:
    return os.environ.get(SINGLE_PORT_ENV, "1") != "0"


def bind_listener(bind: str, port: int) -> socket.socket:
    """A listening TCP socket on (bind, port); `::` is dual-stack (falls back to 0.0.0.0 without IPv6)."""
    family = socket.AF_INET6 if ":" in bind else socket.AF_INET
    try:
        sock = socket.socket(family, socket.SOCK_STREAM)
    except OSError:
        if bind != "::":
            raise
        family, bind = socket.AF_INET, "0.0.0.0"
        sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if family == socket.AF_INET6 and bind == "::":
            sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
        sock.bind((bind, port))
        sock.listen(128)
    except OSError:
        sock.close()
        raise
    return sock


class InternalGrpcSocket:
    """Where the internal grpcio server listens. On Linux an abstract Unix socket (per network namespace,
    gone with the process even when it is killed; reachable by no one who could not reach the TCP port
    itself, and grpcio still checks the token); elsewhere a socket file in a 0700 temporary directory."""

    def __init__(self, name: str):
        self.directory = ""
        if sys.platform.startswith("linux"):
            self.grpc_address, self.path = "unix-abstract:" + name, "\0" + name
        else:
            self.directory = tempfile.mkdtemp(prefix="tensorfleet-grpc-")
            os.chmod(self.directory, 0o700)
            self.path = os.path.join(self.directory, "grpc.sock")
            self.grpc_address = "unix:" + self.path

    def remove(self) -> None:
        if self.directory:
            shutil.rmtree(self.directory, ignore_errors=True)


class PumpPeers:
    """Which pumped gRPC connections had a call with the job token served. Each pump's upstream Unix socket
    is bound to an abstract name of its own (`connect`), which the internal grpcio server reports as its
    calls' peer (`context.peer()` is "unix-abstract:<name>"); `GrpcHandler` reports each authenticated call's
    peer (`authenticated`, any thread) and the connection loop takes those connections (`take`, its thread),
    which then leave its unauthenticated budget and deadline. Names are unique per network namespace: the
    internal socket's name (pid, spec port, incarnation) plus a counter. Off (`enabled` False) where the
    internal socket is a file (not Linux): a pumped connection then counts as authenticated at its preface."""

    _PEER = "unix-abstract:"

    def __init__(self, grpc_path: str):
        self.enabled = grpc_path.startswith("\0")
        self._prefix = f"{grpc_path[1:]}-pump-"
        self._count = itertools.count()
        self._waiting: dict = {}   # name -> connection not yet authenticated (the loop's thread writes it)
        self._done: set = set()    # names reported authenticated, not yet taken
        self._lock = threading.Lock()

    def connect(self, grpc_path: str, conn) -> tuple:
        """A non-blocking upstream socket connected to the internal grpcio server -> (socket, its name: "" when
        not `enabled`); `conn` waits for its authenticated call. OSError when it cannot connect."""
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        name = f"{self._prefix}{next(self._count)}" if self.enabled else ""
        try:
            if name:
                sock.bind("\0" + name)
            sock.setblocking(False)
            sock.connect(grpc_path)
        except OSError:
            sock.close()
            raise
        if name:
            self._waiting[name] = conn
        return sock, name

    def authenticated(self, peer: str) -> None:
        """(any thread) A call with the job token from `peer` is being served."""
        name = peer[len(self._PEER):] if peer.startswith(self._PEER) else ""
        if name in self._waiting:   # (a dict lookup: safe beside the loop's writes)
            with self._lock:
                self._done.add(name)

    def take(self) -> list:
        """(the loop's thread) The waiting connections reported authenticated since the last take."""
        if not self._done:
            return []
        with self._lock:
            done, self._done = self._done, set()
        taken = (self._waiting.pop(name, None) for name in done)   # a closed one's name is gone already
        return [conn for conn in taken if conn is not None]

    def forget(self, conn) -> None:
        """(the loop's thread) `conn` closed."""
        if conn.pump is not None and conn.pump.name:
            self._waiting.pop(conn.pump.name, None)


def classify(first: bytes, bulk_magic: bytes) -> str:
    """A connection's first bytes (at most SNIFF_BYTES) -> "grpc", "bulk", "more" (a prefix of either:
    wait for more) or "bad"."""
    if first == _GRPC_START:
        return "grpc"
    if len(first) >= SNIFF_BYTES:
        return "bulk" if first[:SNIFF_BYTES] == bulk_magic[:SNIFF_BYTES] else "bad"
    if _GRPC_START.startswith(first) or bulk_magic.startswith(first):
        return "more"
    return "bad"


class _End:
    """One side of a pump: a non-blocking plain or TLS socket; `wait` collects the selector events a
    blocked recv or send needs (TLS may need the socket writable to read, and readable to write)."""

    def __init__(self, sock: socket.socket):
        self.sock = sock
        self.wait = 0

    def recv_into(self, view: memoryview) -> Optional[int]:
        """Bytes read (0: the peer closed), or None when it would block."""
        try:
            return self.sock.recv_into(view)
        except (BlockingIOError, ssl.SSLWantReadError):
            self.wait |= selectors.EVENT_READ
        except ssl.SSLWantWriteError:
            self.wait |= selectors.EVENT_WRITE
        return None

    def send(self, data) -> int:
        """Bytes sent (0 when it would block)."""
        try:
            sent = self.sock.send(data)
        except (BlockingIOError, ssl.SSLWantWriteError):
            sent = 0
        except ssl.SSLWantReadError:
            self.wait |= selectors.EVENT_READ
            return 0
        if not sent:
            self.wait |= selectors.EVENT_WRITE
        return sent


class GrpcPump:
    """Moves one gRPC connection's bytes client -> internal grpcio server (`upstream`) and back, non-blocking,
    each direction holding at most PUMP_BUFFER_BYTES. `move()` runs until both directions would block and says
    whether the pump goes on; then `events()` are what each socket must become for it to go on. `first` are
    bytes already read from the client (its sniffed preface)."""

    def __init__(self, client: socket.socket, upstream: socket.socket, first: bytes, scratch: memoryview,
                 name: str = ""):
        self.client, self.upstream = _End(client), _End(upstream)
        self.name = name               # its upstream's name (`PumpPeers`)
        self.down = bytearray(first)   # client -> upstream
        self.up = bytearray()          # upstream -> client
        self._scratch = scratch        # the loop's read buffer, shared by its pumps (one thread)
        self.last_active = time.monotonic()

    def move(self) -> bool:
        """False once either side closed or failed (what was pending for the other side is dropped: gRPC
        cannot use half a connection)."""
        moved = True
        while moved:
            self.client.wait = self.upstream.wait = 0
            moved = False
            for src, dst, pending in ((self.client, self.upstream, self.down), (self.upstream, self.client, self.up)):
                if pending:
                    sent = dst.send(pending)
                    if sent:
                        del pending[:sent]
                        moved = True
                if len(pending) >= PUMP_BUFFER_BYTES:
                    continue
                view = self._scratch[:PUMP_BUFFER_BYTES - len(pending)]
                n = src.recv_into(view)
                if n is None:
                    continue
                if n == 0:
                    return False
                moved = True
                data = view[:n]
                if not pending:   # the common case: straight through, no copy kept
                    sent = dst.send(data)
                    data = data[sent:]
                pending += data
        self.last_active = time.monotonic()
        return True

    def events(self) -> tuple:
        """(client events, upstream events) to wait for."""
        return self.client.wait, self.upstream.wait


def close_socket(sock: socket.socket) -> None:
    """Shuts both directions, then closes; a socket already closed or broken is no error."""
    try:
        socket.socket.shutdown(sock, socket.SHUT_RDWR)
    except (OSError, ValueError):
        pass
    try:
        sock.close()
    except OSError:
        pass
