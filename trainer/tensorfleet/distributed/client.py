"""Client side of the wire: calls a task's master or worker service over gRPC or the bulk path.

Used by `master` (to reach other tasks' worker services) and `remote_session`
(to reach a remote master). One `RpcClient` per (address, service), shared by
sessions. Every call carries the job's token. A call is `call(method, request,
tensors)` -> `(response, [(name, ndarray)])`:

- bulk path (default when the server advertises one): a pooled raw TCP socket per
  concurrent call, one frame each way (`wire.send_frame` / `recv_frame`);
- gRPC: unary methods as they are; tensor-carrying methods as a stream of chunks.

Failures become tf.errors naming the task: a refused, reset or silent peer is
`UnavailableError` within `Timeouts.dead_peer_seconds` (TCP keepalive on the bulk
socket, gRPC keepalive on the channel); a status from the server keeps its class.
"""
from __future__ import annotations

import ipaddress
import logging
import os
import socket
import threading
import time
from dataclasses import dataclass, field
from functools import partial
from typing import Callable, NoReturn, Optional

import grpc

from .. import errors
from . import rpc_accounting, rpc_errors, wire
from .protos import service_pb2
from .tls import tls_from_env

logger = logging.getLogger("tensorfleet.distributed")
TOKEN_ENV = "TENSORFLEET_RPC_TOKEN"
TOKEN_METADATA = "tensorfleet-token"


def _env_float(name: str, default: float) -> float:
    try:
        return float(os.environ.get(name, default))
    except ValueError:
        return default


@dataclass(frozen=True)
class Timeouts:
    """How long a client waits. Defaults (env overrides):

    - dead_peer_seconds: 5 (TENSORFLEET_DEAD_PEER_SECONDS): a peer that stops answering (no
      TCP keepalive replies, or a refused reconnect) fails the call with UnavailableError.
    - connect_seconds: 5 (TENSORFLEET_CONNECT_SECONDS): one connection attempt.
    - startup_seconds: 300 (TENSORFLEET_STARTUP_SECONDS): how long a new session waits for its
      master and every task it uses to come up (TF waits forever; pods start in any order; the
      session's `operation_timeout_in_ms`, when set, bounds it instead: startup_wait.py).
    """

    dead_peer_seconds: float = field(default_factory=lambda: _env_float("TENSORFLEET_DEAD_PEER_SECONDS", 5.0))
    connect_seconds: float = field(default_factory=lambda: _env_float("TENSORFLEET_CONNECT_SECONDS", 5.0))
    startup_seconds: float = field(default_factory=lambda: _env_float("TENSORFLEET_STARTUP_SECONDS", 300.0))


def job_token() -> str:
    return os.environ.get(TOKEN_ENV, "")


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def split_address(address: str) -> tuple:
    host, sep, port = address.rpartition(":")
    if not sep or not port.isdigit():
        raise ValueError(f"Bad task address {address!r}: expected host:port")
    return host.strip("[]"), int(port)


class RpcClient:
    """Calls one service of one task."""

    def __init__(self, address: str, service: str, task: str, token: Optional[str] = None,
                 limits: Optional[wire.Limits] = None, timeouts: Optional[Timeouts] = None, use_bulk: bool = True):
        limits = limits or wire.Limits()
        timeouts = timeouts or Timeouts()
        self.address, self.service, self.task = address, service, task
        self.token = job_token() if token is None else token
        self.limits, self.timeouts = limits, timeouts
        self._use_bulk = use_bulk and os.environ.get("TENSORFLEET_BULK", "1") != "0"
        self._bulk_port: Optional[int] = None
        self._local_socket = ""
        self._pool: list = []  # idle (socket, FrameReader)
        self._pool_lock = threading.Lock()
        self._buffers = wire.BufferPool()
        self._metadata = ((TOKEN_METADATA, self.token),)
        keepalive_ms = max(1000, int(timeouts.dead_peer_seconds * 1000 / 2))
        self._tls = tls_from_env()
        channel = grpc.insecure_channel if self._tls is None else partial(
            grpc.secure_channel, credentials=self._tls.grpc_channel_credentials())
        self._channel = channel(address, options=[
            ("grpc.max_send_message_length", limits.grpc_message_bytes),
            ("grpc.max_receive_message_length", limits.grpc_message_bytes),
            ("grpc.keepalive_time_ms", keepalive_ms),
            ("grpc.keepalive_timeout_ms", keepalive_ms),
            ("grpc.keepalive_permit_without_calls", 1),
            ("grpc.http2.max_pings_without_data", 0),
            # as TF's channels: gRPC's own reconnect backoff grows to 120 s, so a task that came up late
            # (pods start in any order) would be found only minutes after it was up
            ("grpc.max_reconnect_backoff_ms", 1000),
        ])
        self._closed = False

    # -- bulk path ------------------------------------------------------------------------------
    def enable_bulk(self, port: int, local_socket: str = "") -> None:
        """Use the bulk path (and, for a loopback address, the same-host Unix socket if it answers)."""
        if not (self._use_bulk and port):
            return
        self._bulk_port = port
        host, _ = split_address(self.address)
        if local_socket and _is_loopback(host) and os.environ.get("TENSORFLEET_LOCAL_SOCKET", "1") != "0" \
                and self._tls is None:
            self._local_socket = local_socket

    def drop_connections(self) -> None:
        """Forgets the bulk endpoints and closes the pooled sockets (the task restarted: they were the old
        process's); calls use gRPC until `enable_bulk` is given the new endpoints (GetStatus)."""
        with self._pool_lock:
            socks, self._pool = self._pool, []
            self._bulk_port, self._local_socket = None, ""
        for s, _ in socks:
            s.close()

    def _connect(self) -> tuple:
        if self._local_socket:
            try:
                sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                wire.widen_unix_send_buffer(sock)
                sock.settimeout(self.timeouts.connect_seconds)
                sock.connect("\0" + self._local_socket)
                sock.settimeout(None)
                return sock, wire.FrameReader(sock, self.limits, self._buffers)
            except OSError:
                sock.close()
                self._local_socket = ""  # another host or network namespace after all: TCP from now on
        host, _ = split_address(self.address)
        try:
            sock = socket.create_connection((host, self._bulk_port), timeout=self.timeouts.connect_seconds)
        except OSError as e:
            raise _ConnectFailed(str(e)) from None
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        _keepalive(sock, self.timeouts.dead_peer_seconds)
        if self._tls is not None:
            try:
                sock = self._tls.client_context().wrap_socket(sock, server_hostname=host)
            except (OSError, ValueError) as e:
                sock.close()
                raise rpc_errors.unavailable(self.task, self.address, f"TLS handshake failed: {e}") from None
        sock.settimeout(None)
        return sock, wire.FrameReader(sock, self.limits, self._buffers)

    def _bulk_send(self, method: str, request, parts: list, payload_bytes: int, timeout: Optional[float] = None,
                   cancel=None) -> tuple:
        """Sends the request frame; -> what `_bulk_reply` needs to read the reply (the connection stays this
        call's until then). _ConnectFailed when no connection could be made (nothing was sent)."""
        header = wire.request_header(f"{self.service}/{method}", request.SerializeToString(), payload_bytes,
                                     self.token)   # the token first: the server checks it before reading more
        with self._pool_lock:
            conn = self._pool.pop() if self._pool else None
        if conn is None:
            conn = self._connect()
        sock = conn[0]
        # a cancelled call drops its connection: the task sees it close and cancels the call there (caller_watch)
        forget = cancel.on_cancel(partial(_shut, sock)) if cancel is not None else None
        # the deadline is the call's, not each read's: one thread reads several sent calls' replies in turn
        deadline = None if timeout is None else time.monotonic() + timeout
        sent = (conn, method, timeout, cancel, forget, deadline)
        try:
            sock.settimeout(timeout)
            wire.send_frame(sock, header, parts, payload_bytes)
        except BaseException as e:
            self._bulk_failed(sent, e)
        return sent

    def _bulk_reply(self, sent: tuple) -> tuple:
        """Reads the reply of a `_bulk_send`; -> (CallHeader, payload)."""
        conn, _, _, cancel, forget, deadline = sent
        sock, reader = conn
        try:
            if deadline is not None:
                sock.settimeout(max(0.001, deadline - time.monotonic()))
            reply, payload = reader.read()
            if reply is None:
                raise ConnectionResetError("the task closed the connection")
            sock.settimeout(None)
        except BaseException as e:
            self._bulk_failed(sent, e)
        if forget is not None:
            forget()
        with self._pool_lock:
            if self._closed or (cancel is not None and cancel.cancelled):   # cancelled as the reply came: shut
                sock.close()
            else:
                self._pool.append(conn)
        return service_pb2.CallHeader.FromString(reply), payload

    def _bulk_failed(self, sent: tuple, e: BaseException) -> NoReturn:
        """A bulk call broke mid-way: its connection is out of step and closed; raises the call's error."""
        conn, method, timeout, cancel, forget, _ = sent
        if forget is not None:
            forget()
        conn[0].close()
        # the call's own timeout (errno None; ETIMEDOUT from keepalive or TCP_USER_TIMEOUT is a dead peer, below);
        # the reply may still come on that connection: dropped with it
        if isinstance(e, socket.timeout) and e.errno is None and timeout is not None:
            raise errors.DeadlineExceededError(None, None, f"{method} on task {self.task} at {self.address} did "
                                                           f"not finish within {timeout:.3f} s") from None
        if not isinstance(e, (OSError, wire.FrameError)):
            raise e
        if cancel is not None and cancel.cancelled:
            raise self._cancelled(method, cancel) from None
        with self._pool_lock:   # the other pooled sockets went to the same (gone) process
            socks, self._pool = self._pool, []
        for s, _ in socks:
            s.close()
        raise rpc_errors.unavailable(self.task, self.address, f"{type(e).__name__}: {e}") from None

    # -- calls -------------------------------------------------------------------------------------
    def call(self, method: str, request, response_type, tensors=(), timeout: Optional[float] = None,
             cancel=None) -> tuple:
        """-> (response message, [(name, ndarray)]). `cancel` (`caller_watch.CallCancel`, for the streamed
        methods): once cancelled, the call is aborted (its connection dropped, its gRPC call cancelled) and
        raises CancelledError; the task notices its caller gone and cancels the call there."""
        return self._start(method, request, response_type, tensors, timeout, cancel)()

    def start_call(self, method: str, request, response_type, tensors=(), timeout: Optional[float] = None,
                   cancel=None) -> Optional[Callable[[], tuple]]:
        """`call` in two halves, for one thread with calls to several tasks in flight: the request is sent
        now and the returned function reads the reply (-> what `call` returns). None when this client has
        no bulk path (gRPC calls block: use `call` in a thread of its own)."""
        if not self._bulk_port:
            return None
        return self._start(method, request, response_type, tensors, timeout, cancel)

    def _start(self, method: str, request, response_type, tensors, timeout, cancel) -> Callable[[], tuple]:
        started = time.perf_counter() if rpc_accounting.observing() else None
        metas, parts, size = wire.pack(tensors)
        if metas:
            _attach(request, metas)
        if self._bulk_port:
            try:
                sent = self._bulk_send(method, request, parts, size, timeout, cancel)
                return lambda: self._reply(method, request, response_type, size, started, *self._bulk_reply(sent))
            except _ConnectFailed as e:  # nothing was sent: the gRPC port may still answer (a firewall, a proxy)
                logger.warning("Bulk path to %s at %s unreachable (%s): using gRPC", self.task, self.address, e)
                self._bulk_port = None
        if _streams(self.service, method):
            header, payload = self._stream_call(method, request, parts, size, timeout, cancel)
            result = self._reply(method, request, response_type, size, started, header, payload)
            return lambda: result
        response = self._unary_call(method, request, response_type, timeout)
        if started is not None:
            self._account(method, request.ByteSize(), response.ByteSize(), started)
        return lambda: (response, [])

    def _reply(self, method: str, request, response_type, size: int, started, header, payload) -> tuple:
        if header.HasField("status") and header.status.code != errors.OK:
            raise rpc_errors.error_from_status(header.status.code, header.status.message, self.task)
        response = response_type.FromString(header.message)
        if started is not None:
            self._account(method, request.ByteSize() + size, len(header.message) + payload_nbytes(payload), started)
        return response, wire.unpack(_metas_of(response), payload, self.limits, f"{method} reply from {self.task}")

    def _account(self, method: str, sent: int, received: int, started: float) -> None:
        """Bytes as on the wire: the message (tensor metadata included) plus the tensor payload."""
        rpc_accounting.observe(self.task, method, "client", sent, received, time.perf_counter() - started)

    def _unary_call(self, method: str, request, response_type, timeout):
        fn = self._channel.unary_unary(f"/tensorfleet.rpc.{self.service}/{method}",
                                       request_serializer=lambda m: m.SerializeToString(),
                                       response_deserializer=response_type.FromString)
        try:
            return fn(request, metadata=self._metadata, timeout=timeout)
        except grpc.RpcError as e:
            raise rpc_errors.error_from_rpc(e, self.task, self.address) from None

    def _cancelled(self, method: str, cancel) -> errors.CancelledError:
        return errors.CancelledError(None, None, f"{method} on task {self.task} at {self.address} was cancelled: "
                                                 f"{cancel.reason}")

    def _stream_call(self, method: str, request, parts, size, timeout, cancel=None) -> tuple:
        fn = self._channel.stream_stream(f"/tensorfleet.rpc.{self.service}/{method}",
                                         request_serializer=lambda m: m.SerializeToString(),
                                         response_deserializer=service_pb2.Chunk.FromString)
        header = service_pb2.CallHeader(message=request.SerializeToString(), payload_bytes=size)
        forget = None
        try:
            replies = fn(wire.chunks(header, parts, self.limits.chunk_bytes), metadata=self._metadata,
                         timeout=timeout)
            if cancel is not None:
                forget = cancel.on_cancel(replies.cancel)
            return wire.join_chunks(iter(replies), self.limits, f"{method} reply from {self.task}")
        except grpc.RpcError as e:
            if cancel is not None and cancel.cancelled:
                raise self._cancelled(method, cancel) from None
            raise rpc_errors.error_from_rpc(e, self.task, self.address) from None
        finally:
            if forget is not None:
                forget()

    def close(self) -> None:
        with self._pool_lock:
            self._closed = True
            socks, self._pool = self._pool, []
        for s, _ in socks:
            s.close()
        self._channel.close()


class _ConnectFailed(Exception):
    """The bulk port did not accept a connection (nothing of the call was sent)."""


_STREAMING = {("WorkerService", "RunGraph"), ("MasterService", "RunStep")}


def payload_nbytes(payload) -> int:
    """Bytes of a received tensor payload (bytes-like or a uint8 array; None: none)."""
    if payload is None:
        return 0
    return int(payload.nbytes) if hasattr(payload, "nbytes") else len(payload)


def _streams(service: str, method: str) -> bool:
    return (service, method) in _STREAMING


def _attach(request, metas) -> None:
    field = {"RunGraphRequest": "send", "RunStepRequest": "feed", "RunGraphResponse": "recv",
             "RunStepResponse": "tensor"}[type(request).__name__]
    getattr(request, field).extend(metas)


def _metas_of(message) -> list:
    name = type(message).__name__
    field = {"RunGraphRequest": "send", "RunStepRequest": "feed", "RunGraphResponse": "recv",
             "RunStepResponse": "tensor"}.get(name)
    return list(getattr(message, field)) if field else []


def _shut(sock: socket.socket) -> None:
    """Ends a connection in use by another thread (its blocked read returns at once). The plain socket's
    shutdown, also for TLS (SSLSocket.shutdown would drop the TLS object under the reading thread)."""
    try:
        socket.socket.shutdown(sock, socket.SHUT_RDWR)
    except OSError:
        pass


def _keepalive(sock: socket.socket, dead_peer_seconds: float) -> None:
    """TCP keepalive so a silently vanished peer is noticed in about `dead_peer_seconds`."""
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
    idle = max(1, int(dead_peer_seconds / 3))
    for opt, value in (("TCP_KEEPIDLE", idle), ("TCP_KEEPINTVL", 1), ("TCP_KEEPCNT", 2)):
        if hasattr(socket, opt):
            sock.setsockopt(socket.IPPROTO_TCP, getattr(socket, opt), value)
    if hasattr(socket, "TCP_USER_TIMEOUT"):
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_USER_TIMEOUT, int(dead_peer_seconds * 1000))
