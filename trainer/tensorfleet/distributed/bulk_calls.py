"""Bulk calls: serving the authenticated bulk requests that the connection loop hands over.

Sits between `conn_loop.ConnectionLoop` (which has checked each request's head: its sizes against
`wire.Limits` and the job token that starts its header) and `service_methods.Methods`. A worker thread
reads the rest of the request (header and payload, into the connection's `wire.FrameReader`), serves it
(a step is cancelled if its caller goes away meanwhile: `caller_watch`), replies, then waits up to
`linger_seconds` for the connection's next request and serves that too: a busy client keeps its thread,
so the fast path has no hand-off between threads. The wait is the socket's receive timeout (SO_RCVTIMEO:
the same one blocking recv as before, `wire.Idle` when it passes); a TLS socket, whose reads OpenSSL
retries through such a timeout, gets a Python-level timeout instead while it reads (none while it sends:
a slow but live reader still gets a large reply). A connection idle for longer goes back to the loop, which
holds it without a thread. Inside a frame a connection may not stall: a request head must be complete
within `auth_seconds` of its first byte, and a frame that brings no byte for `stall_seconds` closes the
connection (`wire.Stalled`, a debug line), so a stalled peer never holds a thread for long.
Worker threads start on demand and end after `IDLE_THREAD_S` without work.
"""
from __future__ import annotations

import logging
import queue
import socket
import ssl
import struct
import threading
from typing import Callable, Optional

from google.protobuf.message import DecodeError

from .. import errors
from . import rpc_errors, wire
from .caller_watch import ConnectionWatch
from .client import _attach
from .conn_limits import ConnectionLimits
from .protos import service_pb2
from .service_methods import Methods

logger = logging.getLogger("tensorfleet.distributed")
#: a worker thread without work for this long ends
IDLE_THREAD_S = 30.0


class Workers:
    """Threads for calls: one starts when none is idle, each ends after `IDLE_THREAD_S` idle; any number may
    run at once (a call may block for long, e.g. a dequeue waiting for another call's enqueue)."""

    def __init__(self, name: str):
        self._name = name
        self._tasks: queue.SimpleQueue = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._idle = 0   # threads waiting for a task and not yet claimed by a submitted one
        self.threads = 0

    def submit(self, fn: Callable, *args) -> None:
        with self._lock:
            self._tasks.put((fn, args))
            if self._idle:
                self._idle -= 1
                return
            self.threads += 1
        threading.Thread(target=self._work, name=f"tf-bulk-{self._name}", daemon=True).start()

    def _work(self) -> None:
        while True:
            try:
                fn, args = self._tasks.get(timeout=IDLE_THREAD_S)
            except queue.Empty:
                with self._lock:
                    if self._idle:   # unclaimed: this thread may end
                        self._idle -= 1
                        self.threads -= 1
                        return
                continue   # claimed by a submit whose task is on its way
            try:
                fn(*args)
            except Exception:  # noqa: BLE001 - a task's own bug must not end the thread silently
                logger.exception("A bulk call task failed")
            with self._lock:
                self._idle += 1


class BulkCalls:
    """Serves authenticated bulk requests (see the module docstring)."""

    def __init__(self, name: str, methods: Methods, limits: wire.Limits, heads: wire.RequestHeads,
                 caller_watch: ConnectionWatch, conn_limits: ConnectionLimits, bind: Optional[Callable] = None):
        self._methods, self._limits, self._heads = methods, limits, heads
        self._watch = caller_watch
        linger_ms = max(1, int(conn_limits.linger_seconds * 1000))
        self._linger_s = linger_ms / 1000
        seconds, ms = divmod(linger_ms, 1000)
        self._linger_timeval = struct.pack("@ll", seconds, ms * 1000)   # (0, 0) would mean no timeout
        self._bounds = (conn_limits.auth_seconds, conn_limits.stall_seconds)   # wire.FrameReader's
        self._bind = bind   # bind(conn, owner): client_leases; None: not tracked
        self.workers = Workers(name)

    def submit(self, conn, head: bytes, header_bytes: int, payload_bytes: int, give_back: Callable) -> None:
        """From the loop: `head` (prefix + token field) was checked; serve it in a worker thread."""
        self.workers.submit(self._serve, conn, head, header_bytes, payload_bytes, give_back)

    def _serve(self, conn, head: bytes, header_bytes: int, payload_bytes: int, give_back: Callable) -> None:
        """`head` (prefix + token field) was checked by the loop; its token field is `heads.field`."""
        heads, field = self._heads, self._heads.field
        bind = None if self._bind is None else (lambda owner: self._bind(conn, owner))
        try:
            sock = conn.sock
            sock.setblocking(True)
            tls = isinstance(sock, ssl.SSLSocket)
            if tls:   # reads time out (socket.timeout); OpenSSL would retry through SO_RCVTIMEO
                sock.settimeout(self._linger_s)
            else:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVTIMEO, self._linger_timeval)
            reader = conn.reader
            if reader is None:
                reader = conn.reader = wire.FrameReader(sock, self._limits, bounds=self._bounds)
            while True:
                header = field + reader.read_exact(header_bytes - len(field))
                payload = reader.read_payload(payload_bytes)
                if tls:   # no timeout while the call runs and replies: a slow reader's large reply is not cut
                    sock.settimeout(None)
                if not self._answer(conn, header, payload, bind):
                    return conn.close("malformed request")
                if tls:
                    sock.settimeout(self._linger_s)
                try:
                    header_bytes, payload_bytes = reader.read_request_head(heads)
                except wire.Idle:
                    return give_back(conn)
                except wire.FrameError as e:
                    _send_status(sock, e.code, str(e))
                    return give_back(conn, True)
        except EOFError:
            conn.close("closed by the peer")
        except (OSError, ValueError, wire.FrameError) as e:
            conn.close(f"{type(e).__name__}: {e}")
        except Exception:  # noqa: BLE001 - a bug: logged with its traceback; the server keeps serving
            logger.exception("Serving a bulk connection from %s failed", conn.peer)
            conn.close("internal error")

    def _answer(self, conn, raw: bytes, payload, bind) -> bool:
        """Serves one request; False closes the connection."""
        self._methods.answer_started()
        try:
            return self._answer_counted(conn, raw, payload, bind)
        finally:
            self._methods.answer_ended()

    def _answer_counted(self, conn, raw: bytes, payload, bind) -> bool:
        try:
            header = service_pb2.CallHeader.FromString(raw)
        except DecodeError:
            _send_status(conn.sock, errors.INVALID_ARGUMENT, "malformed CallHeader")
            return False
        methods = self._methods
        try:
            if header.method in methods.streaming:   # a step: cancelled if the caller goes away meanwhile
                with self._watch.watching(conn.sock) as cancel:
                    response, tensors = methods.dispatch(header.method, header.message, payload, self._limits,
                                                         cancel, bind)
            else:
                response, tensors = methods.dispatch(header.method, header.message, payload, self._limits,
                                                     None, bind)
            metas, parts, size = wire.pack(tensors)
            if metas:
                _attach(response, metas)
            methods.account(header.method, header.message, payload, response, size)
        except Exception as e:  # noqa: BLE001 - every failure is reported to the caller as a status
            st = rpc_errors.status_of(e)
            _send_status(conn.sock, st.code, st.message)
            return True
        reply = service_pb2.CallHeader(message=response.SerializeToString(), payload_bytes=size)
        wire.send_frame(conn.sock, reply.SerializeToString(), parts, size)
        return True


def _send_status(sock, code: int, message: str) -> None:
    try:
        sock.sendall(wire.status_frame(code, message))
    except OSError:
        pass
