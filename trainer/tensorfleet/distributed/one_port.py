"""One TCP port per server: gRPC and the bulk frames share the cluster spec's port.

Used by `server.Server` (single-port mode, the default without TLS): the server binds one TCP
listener on its task's address; each accepted connection is sniffed by its first bytes.
The HTTP/2 client preface (`PRI * HTTP/2.0...`, what every gRPC client sends first) means a
gRPC connection: its bytes are pumped both ways to the server's internal grpcio server, which
listens on a private Unix socket (`InternalGrpcSocket`). Anything else is the bulk
protocol (`wire` frames start with `TFB1`; garbage is answered INVALID_ARGUMENT there), served
as on the old separate bulk port. So a pod needs only its declared port (2222).

Under TLS both kinds of connection open with a TLS ClientHello and cannot be told apart
without terminating TLS here, so a TLS server keeps the two-port mode (gRPC on the spec port,
bulk on an ephemeral port); `TENSORFLEET_SINGLE_PORT=0` selects that mode without TLS too.
"""
from __future__ import annotations

import os
import shutil
import socket
import sys
import tempfile
import threading
import time

SINGLE_PORT_ENV = "TENSORFLEET_SINGLE_PORT"
HTTP2_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
_SNIFF = HTTP2_PREFACE[:4]
#: how long a new connection may take to send its first 4 bytes before it is dropped
SNIFF_SECONDS = 10.0
_PUMP_BYTES = 256 << 10


def single_port_enabled(tls) -> bool:
    return tls is None and os.environ.get(SINGLE_PORT_ENV, "1") != "0"


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
    for `SNIFF_SECONDS`. Stops early once they cannot start the HTTP/2 preface."""
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
            if len(seen) < 4:
                time.sleep(0.001)  # a partial preface: wait for the rest
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
