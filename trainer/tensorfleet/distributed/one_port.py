"""One TCP port per server: gRPC and the bulk frames share the cluster spec's port.

Used by `server.Server` (single-port mode, the default without TLS): the server binds one TCP
listener on its task's address; each accepted connection is sniffed by its first bytes.
The HTTP/2 client preface (`PRI * HTTP/2.0...`, what every gRPC client sends first) means a
gRPC connection: its bytes are pumped both ways to the server's internal grpcio server, which
listens on a private Unix socket (`InternalGrpcSocket`). Anything else is the bulk
protocol (`wire` frames start with `TFB1`; garbage is answered INVALID_ARGUMENT there), served
as on the old separate bulk port. So a pod needs only its declared port (2222).

Under TLS both kinds open with a ClientHello, so the server terminates TLS here (`accept_tls`) and
tells them apart by the ALPN protocol the client offered (`tls.GRPC_ALPN` or `tls.BULK_ALPN`); a gRPC
connection's decrypted bytes are pumped to the internal grpcio server by one thread that alone owns
the TLS object (`proxy_tls`). `TENSORFLEET_SINGLE_PORT=0` restores the two-port mode (gRPC on the spec
port, bulk on an ephemeral port).
"""
from __future__ import annotations

import os
import selectors
import shutil
import socket
import ssl
import sys
import tempfile
import threading
import time

SINGLE_PORT_ENV = "TENSORFLEET_SINGLE_PORT"
HTTP2_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
_SNIFF = HTTP2_PREFACE[:4]
#: how long a new connection may take to send its first bytes before it is dropped
SNIFF_SECONDS = 10.0
#: how long a started HTTP/2 preface may take to reach 4 bytes (clients send it in one write; a peer that
#: sends "PR" and stops, or closes, is dropped after this rather than after SNIFF_SECONDS)
PARTIAL_PREFACE_SECONDS = 1.0
_PUMP_BYTES = 256 << 10


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


def sniff(conn: socket.socket) -> bytes:
    """Up to 4 first bytes of `conn`, left unread (MSG_PEEK); fewer when the peer closed or stayed silent
    for `SNIFF_SECONDS` (or `PARTIAL_PREFACE_SECONDS` once it began the preface). Stops early once they
    cannot start the HTTP/2 preface."""
    deadline = time.monotonic() + SNIFF_SECONDS
    seen = b""
    try:
        while len(seen) < 4:
            left = deadline - time.monotonic()
            if left <= 0:
                break
            conn.settimeout(left)
            seen = conn.recv(4, socket.MSG_PEEK)
            if not seen or not _SNIFF.startswith(seen):
                break
            if len(seen) < 4:  # a partial preface: wait (briefly) for the rest
                deadline = min(deadline, time.monotonic() + PARTIAL_PREFACE_SECONDS)
                time.sleep(0.001)
    except (OSError, ValueError):
        pass
    finally:
        try:
            conn.settimeout(None)
        except OSError:
            pass
    return seen


def is_grpc(first: bytes) -> bool:
    return first == _SNIFF


def proxy(conn: socket.socket, unix_path: str, connect_seconds: float = 5.0) -> None:
    """Pumps `conn` <-> the internal grpc server's Unix socket until either side closes (runs in the
    connection's thread; the other direction gets its own thread)."""
    upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        upstream.settimeout(connect_seconds)
        upstream.connect(unix_path)
        upstream.settimeout(None)
    except OSError:
        upstream.close()
        return
    back = threading.Thread(target=_pump, args=(upstream, conn), name="tf-grpc-pump", daemon=True)
    back.start()
    _pump(conn, upstream)
    back.join(timeout=5.0)
    upstream.close()


def _pump(src: socket.socket, dst: socket.socket) -> None:
    buf = bytearray(_PUMP_BYTES)
    view = memoryview(buf)
    try:
        while True:
            n = src.recv_into(buf)
            if not n:
                break
            dst.sendall(view[:n])
    except OSError:
        pass
    for s in (dst, src):  # either side gone: end both directions
        try:
            s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


def accept_tls(conn: socket.socket, context: ssl.SSLContext) -> ssl.SSLSocket:
    """The server side of the TLS handshake on an accepted connection, bounded by `SNIFF_SECONDS`
    (a silent or plaintext peer fails with OSError/ValueError instead of holding a thread)."""
    conn.settimeout(SNIFF_SECONDS)
    tls_conn = context.wrap_socket(conn, server_side=True)
    tls_conn.settimeout(None)
    return tls_conn


def proxy_tls(conn: ssl.SSLSocket, unix_path: str, connect_seconds: float = 5.0) -> None:
    """`proxy` for a TLS connection: decrypted bytes <-> the internal grpc server's Unix socket until
    either side closes. One thread does both directions (OpenSSL objects must not be used by two
    threads at once), with non-blocking sockets and a selector."""
    upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        upstream.settimeout(connect_seconds)
        upstream.connect(unix_path)
        _TlsPump(conn, upstream).run()
    except OSError:
        pass
    finally:
        upstream.close()


class _TlsPump:
    """Moves bytes TLS -> `down` -> plain and plain -> `up` -> TLS, each buffer at most `_PUMP_BYTES`;
    sleeps in select() only on the sockets whose last try would block, for the event that unblocks it."""

    def __init__(self, tls: ssl.SSLSocket, plain: socket.socket):
        self.tls, self.plain = tls, plain
        self.down, self.up = bytearray(), bytearray()
        self.tls_wait = 0    # what the TLS socket must become for a blocked TLS read or write to go on
        self.plain_wait = 0

    def run(self) -> None:
        self.tls.setblocking(False)
        self.plain.setblocking(False)
        with selectors.DefaultSelector() as sel:
            while self._move_until_blocked():
                for sock, events in ((self.tls, self.tls_wait), (self.plain, self.plain_wait)):
                    _want(sel, sock, events)
                sel.select()

    def _move_until_blocked(self) -> bool:
        """False once either side closed (what is buffered for the other side is sent first)."""
        moved = True
        while moved:
            self.tls_wait = self.plain_wait = 0
            moved = False
            if len(self.down) < _PUMP_BYTES:
                data = self._tls_io(self.tls.recv, _PUMP_BYTES)
                if data == b"":
                    return self._flush(self.plain, self.down)
                if data:
                    self.down += data
                    moved = True
            if self.down:
                moved |= self._plain_send()
            if len(self.up) < _PUMP_BYTES:
                try:
                    data = self.plain.recv(_PUMP_BYTES)
                except BlockingIOError:
                    self.plain_wait |= selectors.EVENT_READ
                else:
                    if not data:
                        return self._flush(self.tls, self.up)
                    self.up += data
                    moved = True
            if self.up:
                sent = self._tls_io(self.tls.send, self.up)
                if sent:
                    del self.up[:sent]
                    moved = True
        return True

    def _tls_io(self, op, arg):
        """op(arg), or None when TLS needs the socket readable/writable first (recorded in `tls_wait`)."""
        try:
            return op(arg)
        except ssl.SSLWantReadError:
            self.tls_wait |= selectors.EVENT_READ
        except ssl.SSLWantWriteError:
            self.tls_wait |= selectors.EVENT_WRITE
        return None

    def _plain_send(self) -> bool:
        try:
            sent = self.plain.send(self.down)
        except BlockingIOError:
            sent = 0
        if not sent:
            self.plain_wait |= selectors.EVENT_WRITE
            return False
        del self.down[:sent]
        return True

    @staticmethod
    def _flush(sock: socket.socket, pending: bytearray) -> bool:
        if pending:
            try:
                sock.settimeout(1.0)
                sock.sendall(pending)
            except (OSError, ValueError):
                pass
        return False


def _want(sel: selectors.BaseSelector, sock: socket.socket, events: int) -> None:
    registered = sock in sel.get_map()
    if events and registered:
        sel.modify(sock, events)
    elif events:
        sel.register(sock, events)
    elif registered:
        sel.unregister(sock)
