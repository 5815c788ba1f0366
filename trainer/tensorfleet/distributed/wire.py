"""Tensor payloads and frames: how a call's tensors travel as raw bytes with dtype and shape.

Used by both transports of `client`/`server`: a call is a `CallHeader` (the typed
request or response, serialized) plus a payload, the tensors' raw little-endian
bytes, each at a 64-byte-aligned offset described by a `TensorMeta`. Nothing is
pickled: a receiver checks every dtype, shape, offset and size against the limits
and the payload before it makes (zero-copy) numpy views of the received buffer.

- gRPC: `chunks()` / `join_chunks()` split the payload into `Chunk` messages of at
  most `chunk_bytes` (default 1 MiB, the sweet spot measured on these machines), so
  a tensor of any size (1 GiB included) streams under a bounded message size.
- bulk (raw TCP / Unix socket): one frame = 16-byte prefix (magic, header length,
  payload length) + header + payload, written with `sendmsg` from the arrays'
  own memory and read with `recv_into` into one preallocated buffer. A request's
  header starts with the job token's field (`request_header`), so a server checks
  the token from the frame's first bytes (`RequestHeads`) before it reads, or
  allocates, anything the frame announces.

Limits (`Limits`, configurable per server and client, defaults documented there):
the header size, the payload size of one call and the number of tensors.
"""
from __future__ import annotations

import hmac
import math
import os
import socket
import ssl
import struct
import sys
import threading
import time
from dataclasses import dataclass, field
from typing import Iterable, Iterator, Optional, Sequence

import numpy as np

from .. import errors
from ..graph_def import dtype_to_enum, enum_to_dtype, shape_to_proto
from ..protos import types_pb2
from .protos import service_pb2

ALIGN = 64
_LITTLE = sys.byteorder == "little"  # the wire is little-endian
_ENUM_BY_NP: dict = {}  # numpy dtype -> DataType number (filled on first use)
_NP_BY_ENUM: dict = {}  # DataType number -> numpy dtype (filled on first use; unknown numbers raise)
MAGIC = b"TFB1"
PREFIX = struct.Struct("<4sIQ")  # magic, header bytes, payload bytes


def _env_int(name: str, default: int) -> int:
    text = os.environ.get(name, "")
    return int(text) if text.strip().isdigit() else default


@dataclass(frozen=True)
class Limits:
    """Bounds on what one call may carry. Defaults (env overrides):

    - header_bytes: 256 MiB (TENSORFLEET_MAX_HEADER_BYTES): a typed request, e.g. a GraphDef
      with its constants; also gRPC's max message size (plus one chunk).
    - payload_bytes: 4 GiB (TENSORFLEET_MAX_PAYLOAD_BYTES): all tensors of one call.
    - chunk_bytes: 1 MiB (TENSORFLEET_CHUNK_BYTES): gRPC data chunk size.
    - tensors: 65536 tensors per call.
    """

    header_bytes: int = field(default_factory=lambda: _env_int("TENSORFLEET_MAX_HEADER_BYTES", 256 << 20))
    payload_bytes: int = field(default_factory=lambda: _env_int("TENSORFLEET_MAX_PAYLOAD_BYTES", 4 << 30))
    chunk_bytes: int = field(default_factory=lambda: _env_int("TENSORFLEET_CHUNK_BYTES", 1 << 20))
    tensors: int = 65536

    @property
    def grpc_message_bytes(self) -> int:
        return self.header_bytes + self.chunk_bytes + 4096


DEFAULT_LIMITS = Limits()


def _aligned(n: int) -> int:
    return (n + ALIGN - 1) // ALIGN * ALIGN


_PAD = bytes(ALIGN)


def pack(named: Iterable[tuple]) -> tuple[list, list, int]:
    """[(name, array)] -> (TensorMetas, buffers to send in order, payload bytes)."""
    metas, parts, offset = [], [], 0
    for name, value in named:
        arr = np.asarray(value)
        if arr.dtype.kind in "OSU":
            meta, blob = _pack_strings(name, arr, offset)
            metas.append(meta)
            parts.append(blob)
            end = offset + len(blob)
            offset = _aligned(end)
            if offset > end:
                parts.append(_PAD[: offset - end])
            continue
        if arr.dtype.byteorder == ">":
            arr = arr.astype(arr.dtype.newbyteorder("<"))
        if not arr.flags.c_contiguous:
            arr = np.ascontiguousarray(arr)
        enum = _ENUM_BY_NP.get(arr.dtype)
        if enum is None:
            enum = _ENUM_BY_NP[arr.dtype] = dtype_to_enum(arr.dtype)
        meta = service_pb2.TensorMeta(name=name, dtype=enum, offset=offset, nbytes=arr.nbytes)  # type: ignore
        dims = meta.shape.dim
        for d in arr.shape:
            dims.add(size=d)
        metas.append(meta)
        if arr.nbytes:
            parts.append(memoryview(arr.reshape(-1).view(np.uint8)))  # type: ignore[arg-type]
        end = offset + arr.nbytes
        offset = _aligned(end)
        if offset > end:
            parts.append(_PAD[: offset - end])
    return metas, parts, offset


def _pack_strings(name: str, arr: np.ndarray, offset: int) -> tuple:
    """A string tensor: u64 little-endian lengths, then the bytes (str items are UTF-8 encoded)."""
    items = [x if isinstance(x, bytes) else str(x).encode() for x in arr.reshape(-1).tolist()]
    lengths = np.array([len(x) for x in items], dtype="<u8")
    blob = lengths.tobytes() + b"".join(items)
    meta = service_pb2.TensorMeta(name=name, dtype=types_pb2.DT_STRING, offset=offset, nbytes=len(blob))
    meta.shape.CopyFrom(shape_to_proto(arr.shape))
    return meta, blob


def _unpack_strings(buf: np.ndarray, meta, dims: tuple, count: int, where: str) -> np.ndarray:
    if meta.offset < 0 or meta.offset % ALIGN or meta.nbytes < 8 * count or meta.offset + meta.nbytes > buf.size:
        raise errors.InvalidArgumentError(None, None, f"{where}: {meta.nbytes} bytes at offset {meta.offset} do "
                                                      f"not fit {count} strings in a payload of {buf.size} bytes")
    region = buf[meta.offset: meta.offset + meta.nbytes]
    lengths = region[: 8 * count].view("<u8").tolist()   # Python ints: their sum cannot wrap around
    if sum(lengths) != meta.nbytes - 8 * count:
        raise errors.InvalidArgumentError(None, None, f"{where}: string lengths do not add up to the payload")
    data = region[8 * count:].tobytes()
    out = np.empty(count, dtype=object)
    pos = 0
    for i, n in enumerate(lengths):
        out[i] = data[pos: pos + n]
        pos += n
    out = out.reshape(dims)
    out.flags.writeable = False
    return out


def unpack(metas: Sequence, payload, limits: Limits = DEFAULT_LIMITS, what: str = "call") -> list:
    """TensorMetas + received payload (bytes-like or uint8 array) -> [(name, read-only ndarray view)]."""
    if len(metas) > limits.tensors:
        raise errors.InvalidArgumentError(None, None, f"{what}: {len(metas)} tensors exceed the limit "
                                                      f"{limits.tensors}")
    buf = payload if isinstance(payload, np.ndarray) else np.frombuffer(payload, np.uint8)
    size = buf.size
    out = []
    for meta in metas:
        dims = tuple(d.size for d in meta.shape.dim)
        if meta.shape.unknown_rank or any(d < 0 for d in dims):
            raise errors.InvalidArgumentError(None, None, f"{what}: tensor '{meta.name}': shape must be fully "
                                                          f"defined, got {list(dims)}")
        count = math.prod(dims)
        if meta.dtype == types_pb2.DT_STRING:
            out.append((meta.name, _unpack_strings(buf, meta, dims, count, f"{what}: tensor '{meta.name}'")))
            continue
        dt = _NP_BY_ENUM.get(meta.dtype)
        if dt is None:
            where = f"{what}: tensor '{meta.name}'"
            dt = _NP_BY_ENUM[meta.dtype] = enum_to_dtype(meta.dtype, where).np_dtype
        if meta.nbytes != count * dt.itemsize or meta.offset < 0 or meta.offset % ALIGN \
                or meta.offset + meta.nbytes > size:
            raise errors.InvalidArgumentError(
                None, None, f"{what}: tensor '{meta.name}': {meta.nbytes} bytes at offset {meta.offset} do not "
                            f"fit a {dt.name}{list(dims)} in a payload of {size} bytes")
        region = buf[meta.offset: meta.offset + meta.nbytes]
        arr = region.view(dt if _LITTLE else dt.newbyteorder("<")).reshape(dims)
        if not _LITTLE:
            arr = arr.astype(dt)
        arr.flags.writeable = False
        out.append((meta.name, arr))
    return out


# -- gRPC chunking -----------------------------------------------------------------------------
def chunks(header: service_pb2.CallHeader, parts: list, chunk_bytes: int) -> Iterator:
    """Header chunk, then the payload in data chunks of at most `chunk_bytes`."""
    yield service_pb2.Chunk(header=header)
    pending: list = []
    pending_bytes = 0
    for part in parts:
        mv = memoryview(part).cast("B")
        while len(mv):
            take = min(len(mv), chunk_bytes - pending_bytes)
            pending.append(mv[:take])
            pending_bytes += take
            mv = mv[take:]
            if pending_bytes == chunk_bytes:
                yield service_pb2.Chunk(data=b"".join(pending))
                pending, pending_bytes = [], 0
    if pending:
        yield service_pb2.Chunk(data=b"".join(pending))


def join_chunks(stream: Iterator, limits: Limits, what: str) -> tuple:
    """Chunk stream -> (CallHeader, payload uint8 array); sizes are checked before anything is allocated."""
    first = next(stream, None)
    if first is None or not first.HasField("header"):
        raise errors.InvalidArgumentError(None, None, f"{what}: the first chunk must carry the call header")
    header = first.header
    total = header.payload_bytes
    if total < 0 or total > limits.payload_bytes:
        raise errors.ResourceExhaustedError(None, None, f"{what}: payload of {total} bytes exceeds the limit "
                                                        f"{limits.payload_bytes}")
    payload = np.empty(total, np.uint8)
    got = 0
    for chunk in stream:
        n = len(chunk.data)
        if chunk.HasField("header") or got + n > total:
            raise errors.InvalidArgumentError(None, None, f"{what}: more payload than the header announced "
                                                          f"({total} bytes)")
        payload[got: got + n] = np.frombuffer(chunk.data, np.uint8)
        got += n
    if got != total:
        raise errors.InvalidArgumentError(None, None, f"{what}: truncated payload ({got} of {total} bytes)")
    return header, payload


# -- bulk frames ---------------------------------------------------------------------------------
class FrameError(Exception):
    """A bulk frame that cannot be read: the connection is closed after reporting `code`."""

    def __init__(self, code: int, message: str):
        super().__init__(message)
        self.code = code


class Idle(Exception):
    """No frame began within the socket's receive timeout (SO_RCVTIMEO; see `FrameReader`)."""


class Stalled(ConnectionError):
    """Server side (`FrameReader` with `bounds`): a frame's head not complete in time, or a frame stalled."""


#: what a blocking recv raises once a socket's SO_RCVTIMEO passed (plain: EAGAIN; TLS: OpenSSL's want-read)
_RECV_TIMEOUT = (BlockingIOError, ssl.SSLWantReadError)
#: server side: also a Python-level timeout (a TLS socket's; a client's stays its call's deadline)
_SERVER_RECV_TIMEOUT = _RECV_TIMEOUT + (socket.timeout,)


#: SO_SNDBUF asked for a same-host (Unix socket) bulk connection, either end. Linux's default (208 KiB, and
#: no autotuning as TCP has) splits a 300 KiB gradient into writes that each wait for the reader to be
#: scheduled: wake-ups inside the window between a step's variable read and its update, which on a busy
#: machine make every async gradient staler (bench/dist_mnist_adam.py). The kernel doubles the value, capped
#: at twice net.core.wmem_max (208 KiB unless raised: 416 KiB then).
UNIX_SEND_BUFFER_BYTES = 1 << 20


def widen_unix_send_buffer(sock: socket.socket) -> None:
    """A same-host bulk socket's send buffer, at either end (see UNIX_SEND_BUFFER_BYTES)."""
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, UNIX_SEND_BUFFER_BYTES)
    except OSError:  # pragma: no cover  (a kernel refusing it keeps its default)
        pass


def send_frame(sock: socket.socket, header: bytes, parts: list, payload_bytes: int) -> None:
    buffers = [PREFIX.pack(MAGIC, len(header), payload_bytes), header] + parts
    total = sum(len(b) if not isinstance(b, memoryview) else b.nbytes for b in buffers)
    gather = len(buffers) <= 512 and not isinstance(sock, ssl.SSLSocket)  # TLS sockets have no sendmsg
    sent = sock.sendmsg(buffers) if gather else 0
    if sent == total:
        return
    skip = sent  # rare: a partial sendmsg (large payloads) or many buffers: finish with sendall
    for b in buffers:
        mv = memoryview(b).cast("B")
        if skip >= len(mv):
            skip -= len(mv)
            continue
        sock.sendall(mv[skip:])
        skip = 0


def token_field(token: str) -> bytes:
    """The CallHeader `token` field alone, serialized (b"" without a token)."""
    return service_pb2.CallHeader(token=token).SerializeToString() if token else b""


def request_header(method: str, message: bytes, payload_bytes: int, token: str) -> bytes:
    """A bulk request's CallHeader, serialized with the token field first (protobuf merges concatenated
    messages, so it parses as one CallHeader): the server authenticates the frame from its first bytes."""
    rest = service_pb2.CallHeader(method=method, message=message, payload_bytes=payload_bytes)
    return token_field(token) + rest.SerializeToString()


class RequestHeads:
    """How a server checks a bulk request before reading it: the frame's head is the 16-byte prefix plus
    the header's first `len(token_field(token))` bytes, which must be exactly the job token's field. The
    prefix's sizes are checked against the limits first, so nothing the frame announces is read or allocated
    for a peer without the token."""

    def __init__(self, token: str, limits: Limits):
        self.field = token_field(token)
        self.size = PREFIX.size + len(self.field)
        self.limits = limits

    def sizes(self, prefix) -> tuple:
        """The prefix (its first 16 bytes) -> (header bytes, payload bytes); FrameError when it is not a frame,
        announces more than the limits, or a header too short to hold the token."""
        magic, header_len, payload_len = PREFIX.unpack_from(prefix, 0)
        _check_prefix(magic, header_len, payload_len, self.limits)
        if header_len < len(self.field):
            raise FrameError(errors.UNAUTHENTICATED, "missing or wrong job token")
        return header_len, payload_len

    def check_token(self, head) -> None:
        """FrameError(UNAUTHENTICATED) unless the head's header bytes are the token's field."""
        if not hmac.compare_digest(head[PREFIX.size:self.size], self.field):
            raise FrameError(errors.UNAUTHENTICATED, "missing or wrong job token")


def _check_prefix(magic: bytes, header_len: int, payload_len: int, limits: Limits) -> None:
    if magic != MAGIC:
        raise FrameError(errors.INVALID_ARGUMENT, "not a Tensorfleet bulk frame (bad magic)")
    if header_len > limits.header_bytes:
        raise FrameError(errors.RESOURCE_EXHAUSTED, f"header of {header_len} bytes exceeds the limit "
                                                    f"{limits.header_bytes}")
    if payload_len > limits.payload_bytes:
        raise FrameError(errors.RESOURCE_EXHAUSTED, f"payload of {payload_len} bytes exceeds the limit "
                                                    f"{limits.payload_bytes}")


def status_frame(code: int, message: str) -> bytes:
    """A whole reply frame carrying only a status."""
    header = service_pb2.CallHeader(status=service_pb2.Status(code=code, message=message)).SerializeToString()
    return PREFIX.pack(MAGIC, len(header), 0) + header


class BufferPool:
    """Reuses large receive buffers once nothing refers to them any more.

    A received tensor is a view of its call's payload buffer and may be kept by the
    caller (a fetched value, a fed placeholder), so a buffer is reused only when the
    pool holds the last reference (the refcount check). Fresh 64 MiB buffers cost
    ~16k page faults each, about as much as the transfer itself.
    """

    MIN_BYTES = 1 << 20

    def __init__(self, keep: int = 4):
        self._free: list = []
        self._keep = keep
        self._lock = threading.Lock()

    def get(self, nbytes: int) -> np.ndarray:
        if nbytes < self.MIN_BYTES:
            return np.empty(nbytes, np.uint8)
        with self._lock:
            for i in range(len(self._free)):  # (not enumerate: its reused tuple would hold a reference)
                buf = self._free[i]
                # refs: the list, getrefcount's argument, `buf`
                if buf.size >= nbytes and sys.getrefcount(buf) <= 3:
                    del self._free[i]
                    self._free.append(buf)
                    return buf[:nbytes]
            buf = np.empty(nbytes, np.uint8)
            self._free.append(buf)
            if len(self._free) > self._keep:
                self._free.pop(0)
            return buf[:nbytes]


class FrameReader:
    """Reads frames from one socket: small frames with one recv, large payloads into pooled buffers.
    A peer that closes between frames is EOFError; one that closes inside a frame ConnectionResetError.
    On a blocking socket with a receive timeout (SO_RCVTIMEO, or a TLS socket's Python-level timeout, set by
    the server's `bulk_calls`), a frame that does not begin within it is `Idle`. Inside a frame a client's
    reads go on through SO_RCVTIMEO (its Python-level timeout, its call's deadline, raises); a server's
    (`bounds` = (head seconds, stall seconds)) are `Stalled` once a request's head is not complete within
    head seconds of its first byte, or no byte came for stall seconds (checked at each receive timeout)."""

    def __init__(self, sock: socket.socket, limits: Limits, pool: Optional[BufferPool] = None,
                 bounds: Optional[tuple] = None):
        self.sock, self.limits = sock, limits
        self.pool = pool or BufferPool()
        self._buf = bytearray(1 << 16)
        self._start = self._end = 0
        self._bounds: tuple = bounds or ()
        self._timeouts = _RECV_TIMEOUT if bounds is None else _SERVER_RECV_TIMEOUT
        self._head_by = 0.0   # server side: when the request head being read must be complete (0: none begun)
        self._heard = 0.0     # server side: when this read last got a byte (or began)

    def buffered(self) -> int:
        """Bytes received but not consumed yet."""
        return self._end - self._start

    def _fill(self, need: int, boundary: bool = False) -> None:
        """Ensures `need` buffered bytes from _start (need <= buffer size); `boundary`: at a frame's start."""
        if self._end - self._start >= need:
            return
        if self._start:
            rest = self._end - self._start
            self._buf[:rest] = self._buf[self._start:self._end]
            self._start, self._end = 0, rest
        view = memoryview(self._buf)
        self._heard = time.monotonic() if self._bounds else 0.0
        while self._end - self._start < need:
            try:
                n = self.sock.recv_into(view[self._end:])
            except self._timeouts:
                if boundary and self._end == self._start:
                    raise Idle() from None
                n = -1
            if n == 0:
                if boundary and self._end == self._start:
                    raise EOFError("connection closed")
                raise ConnectionResetError("connection closed mid-frame")
            self._end += max(n, 0)
            if self._bounds:
                self._within_bounds(n > 0, boundary)

    def _within_bounds(self, got: bool, head: bool) -> None:
        """Server side, after each receive (`got`: bytes came; `head`: a request head is being read)."""
        head_seconds, stall_seconds = self._bounds
        now = time.monotonic()
        if head and not self._head_by:   # its first byte came
            self._head_by = now + head_seconds
        if got:
            self._heard = now
        elif now - self._heard > stall_seconds:
            raise Stalled(f"no byte for {stall_seconds:g} s inside a frame")
        if self._head_by and now > self._head_by:
            raise Stalled(f"a request head not complete within {head_seconds:g} s of its first byte")

    def _take_into(self, target: memoryview) -> None:
        have = min(self._end - self._start, len(target))
        target[:have] = self._buf[self._start:self._start + have]
        self._start += have
        view = target[have:]
        self._heard = time.monotonic() if self._bounds else 0.0
        while len(view):
            try:
                n = self.sock.recv_into(view)
            except self._timeouts:   # a receive timeout inside a frame: read on (a server: within its bounds)
                n = -1
            if n == 0:
                raise ConnectionResetError("connection closed mid-frame")
            if n > 0:
                view = view[n:]
            if self._bounds:
                self._within_bounds(n > 0, False)

    def read_exact(self, n: int, boundary: bool = False) -> bytes:
        """The next `n` bytes (`boundary`: they start a frame, so a close before them is EOFError)."""
        if n <= len(self._buf):
            self._fill(n, boundary)
            out = bytes(self._buf[self._start:self._start + n])
            self._start += n
            return out
        big = bytearray(n)
        self._take_into(memoryview(big))
        return bytes(big)

    def read_request_head(self, heads: "RequestHeads") -> tuple:
        """The next request's head, checked (`RequestHeads`) -> (header bytes, payload bytes); the header's
        token field is consumed (it is `heads.field`). EOFError/Idle before the frame began; FrameError."""
        self._head_by = 0.0
        self._fill(PREFIX.size, boundary=True)
        sizes = heads.sizes(memoryview(self._buf)[self._start:self._start + PREFIX.size])
        self._fill(heads.size, boundary=True)
        heads.check_token(memoryview(self._buf)[self._start:self._start + heads.size])
        self._start += heads.size
        self._head_by = 0.0
        return sizes

    def read_payload(self, n: int) -> np.ndarray:
        payload = self.pool.get(n)
        if n:
            self._take_into(memoryview(payload))  # type: ignore[arg-type]
        return payload

    def read(self) -> tuple:
        """One frame -> (header bytes, payload uint8 array). EOF before a frame -> (None, None)."""
        try:
            self._fill(PREFIX.size, boundary=True)
        except EOFError:
            return None, None
        magic, header_len, payload_len = PREFIX.unpack_from(self._buf, self._start)
        _check_prefix(magic, header_len, payload_len, self.limits)
        self._start += PREFIX.size
        header = self.read_exact(header_len)
        return header, self.read_payload(payload_len)


def recv_frame(sock: socket.socket, limits: Limits) -> tuple:
    """One frame from an unbuffered socket (tests and one-off reads)."""
    return FrameReader(sock, limits).read()
