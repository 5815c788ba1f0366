"""Kernels for the readers of `ops/reader_ops.py` (TFRecord, text line, fixed length, whole file, identity) and
for ReadFile, WriteFile and MatchingFiles. CPU only.

Beside the queue kernels, below the executor. A reader's state (current work unit, open record iterator,
counters) lives in the session's resources next to its queues (`queue_kernels.lookup_object`, so
`Session.reset` forgets it and a closing session wakes it); a read takes the reader's lock, then dequeues the
next file name from its input queue with the queue's own blocking rules (deadline, session close) when the
current file is exhausted, as TF's `ReaderBase::Read` / `ReadUpTo` (reader_base.cc) do. Records are bytes read
from the file; nothing in a file is ever evaluated.
"""
from __future__ import annotations

import glob
import os
import threading
from typing import Iterator, Optional

import numpy as np

from .. import errors
from ..io import tfrecord
from .queue_kernels import dequeue_from, find_queue, lookup_object
from .registry import register_kernel

_CPU = ("CPU",)
_BUFSIZE = 1 << 16


class ReaderState:
    """One reader: its work unit in progress, the iterator over that unit's records and TF's counters."""

    def __init__(self, name: str, attrs: dict, state: dict):
        self.name = name
        self.state = state
        self.attrs = dict(attrs)
        self.kind = attrs["reader_kind"]
        self.cond = threading.Condition()  # (woken by queue_kernels.wake_all / discard_all; reads use `lock`)
        self.discarded = False
        self.lock = threading.Lock()
        self.work: bytes = b""
        self.records: Optional[Iterator] = None
        self.work_started = 0
        self.work_finished = 0
        self.num_records_produced = 0

    @property
    def in_progress(self) -> bool:
        return self.work_finished < self.work_started

    def finish_work(self) -> None:
        self.work_finished = self.work_started
        self.records = None

    def reset(self) -> None:
        self.work, self.records = b"", None
        self.work_started = self.work_finished = self.num_records_produced = 0


def _path(work: bytes) -> str:
    return tfrecord._local_path(work.decode("utf-8", errors="surrogateescape"))


def _open(path: str):
    try:
        return open(path, "rb")
    except OSError as e:
        raise tfrecord._open_error(e, path) from e


def _key(work: bytes, n) -> bytes:
    return work + b":" + str(n).encode()


def _tfrecord_records(r: ReaderState, work: bytes):
    records = tfrecord.read_records(_path(work), r.attrs.get("compression_type") or None)
    offset = 0
    for data in records:
        yield _key(work, offset), data, False
        offset += 16 + len(data)


def _text_lines(r: ReaderState, work: bytes):
    f = _open(_path(work))
    with f:
        line_number = 0
        for _ in range(r.attrs.get("skip_header_lines", 0)):
            if not f.readline():
                return
            line_number += 1
        while True:
            line = f.readline()
            if not line:
                return
            line_number += 1
            ended = line.endswith(b"\n")  # TF's InputBuffer::ReadLine: strip "\n", then one "\r" (also at EOF)
            line = line[:-1] if ended else line
            line = line[:-1] if line.endswith(b"\r") else line
            if not ended and not line:
                return
            yield _key(work, line_number), line, False


def _fixed_records(r: ReaderState, work: bytes):
    a = r.attrs
    header, record, footer, hop = a["header_bytes"], a["record_bytes"], a["footer_bytes"], a["hop_bytes"]
    f = _open(_path(work))
    with f:
        size = os.fstat(f.fileno()).st_size
        stride = hop or record
        i = 0
        while header + i * stride + record + footer <= size:
            f.seek(header + i * stride)
            data = f.read(record)
            if len(data) < record:  # the file shrank under us
                return
            yield _key(work, i), data, False
            i += 1


def _whole_file(r: ReaderState, work: bytes):
    path = _path(work)
    f = _open(path)
    with f:
        data = f.read()
    yield work, data, True


def _identity(r: ReaderState, work: bytes):
    yield work, work, True


_RECORDS = {"tfrecord": _tfrecord_records, "textline": _text_lines, "fixed": _fixed_records,
            "wholefile": _whole_file, "identity": _identity}


def _start_work(ctx, r: ReaderState) -> None:
    """TF's GetNextWorkLocked + OnWorkStartedLocked: dequeues a file name and opens it."""
    q = find_queue(ctx, ctx.attrs["queue_name"])
    if len(q.dtypes) != 1:
        raise errors.InvalidArgumentError(None, ctx.op, f"Expected single component queue\n\t [[node "
                                                        f"{ctx.op.name}]]")
    if not q.dtypes[0].is_string:
        raise errors.InvalidArgumentError(None, ctx.op, f"Expected queue with single string component\n\t "
                                                        f"[[node {ctx.op.name}]]")
    (el,) = dequeue_from(q, ctx, 1, False)
    comp = np.asarray(el[0], dtype=object)
    if comp.size != 1:
        raise errors.InvalidArgumentError(None, ctx.op, f"Expected to dequeue a one-element string tensor\n\t "
                                                        f"[[node {ctx.op.name}]]")
    work = comp.reshape(-1)[0]
    r.work = work.encode() if isinstance(work, str) else bytes(work)
    it = _RECORDS[r.kind](r, r.work)
    first = next(it, None)  # opens the file now (NotFoundError here, as TF's OnWorkStartedLocked)
    r.work_started += 1

    def records():
        if first is not None:
            yield first
            yield from it
    r.records = records()


def _reader(ctx) -> ReaderState:
    return lookup_object(ctx, ReaderState)


def _next(r: ReaderState):
    try:
        return next(r.records, None) if r.records is not None else None
    except errors.OpError:
        r.records = None  # TF: the status fails the op; the unit stays in progress, yielding nothing more
        raise


@register_kernel("ReaderHandle", devices=_CPU)
def reader_handle(ctx):
    _reader(ctx)
    return np.int32(0)


@register_kernel("ReaderRead", devices=_CPU)
def reader_read(ctx, handle, queue_handle):
    r = _reader(ctx)
    with r.lock:
        while True:
            if not r.in_progress:
                _start_work(ctx, r)
            item = _next(r)
            if item is None:
                r.finish_work()
                continue
            key, value, at_end = item
            if at_end:
                r.finish_work()
            r.num_records_produced += 1
            return np.array(key, dtype=object), np.array(value, dtype=object)


@register_kernel("ReaderReadUpTo", devices=_CPU)
def reader_read_up_to(ctx, handle, queue_handle, num_records):
    n = int(num_records)
    if n <= 0:
        raise errors.InvalidArgumentError(None, ctx.op, f"num_records must be greater than 0, got {n}\n\t [[node "
                                                        f"{ctx.op.name}]]")
    r = _reader(ctx)
    keys: list = []
    values: list = []
    with r.lock:
        while len(keys) < n:
            if not r.in_progress:
                _start_work(ctx, r)  # only with nothing read yet: a finished unit returns what it gave
            item = _next(r)
            if item is None:
                r.finish_work()
                if keys:
                    break
                continue
            keys.append(item[0])
            values.append(item[1])
            r.num_records_produced += 1
            if item[2]:
                r.finish_work()
                break
    out_k, out_v = np.empty(len(keys), dtype=object), np.empty(len(values), dtype=object)
    out_k[:], out_v[:] = keys, values
    return out_k, out_v


@register_kernel("ReaderNumRecordsProduced", devices=_CPU)
def reader_num_records_produced(ctx, handle):
    r = _reader(ctx)
    with r.lock:
        return np.int64(r.num_records_produced)


@register_kernel("ReaderNumWorkUnitsCompleted", devices=_CPU)
def reader_num_work_units_completed(ctx, handle):
    r = _reader(ctx)
    with r.lock:
        return np.int64(r.work_finished)


@register_kernel("ReaderReset", devices=_CPU)
def reader_reset(ctx, handle):
    r = _reader(ctx)
    with r.lock:
        r.reset()
    return None


def _scalar_str(ctx, x, what: str) -> str:
    a = np.asarray(x, dtype=object)
    if a.shape != ():
        raise errors.InvalidArgumentError(None, ctx.op, f"{what} must be a scalar, got shape {list(a.shape)}\n\t "
                                                        f"[[node {ctx.op.name}]]")
    v = a.item()
    return v.decode("utf-8", errors="surrogateescape") if isinstance(v, bytes) else str(v)


@register_kernel("ReadFile", devices=_CPU)
def read_file(ctx, filename):
    path = tfrecord._local_path(_scalar_str(ctx, filename, "Input filename tensor"))
    with _open(path) as f:
        return np.array(f.read(), dtype=object)


@register_kernel("WriteFile", devices=_CPU)
def write_file(ctx, filename, contents):
    path = tfrecord._local_path(_scalar_str(ctx, filename, "Input filename tensor"))
    data = np.asarray(contents, dtype=object)
    if data.shape != ():
        raise errors.InvalidArgumentError(None, ctx.op, f"Contents tensor must be scalar, but had shape: "
                                                        f"{list(data.shape)}\n\t [[node {ctx.op.name}]]")
    v = data.item()
    try:
        parent = os.path.dirname(path)
        if parent:
            os.makedirs(parent, exist_ok=True)
        with open(path, "wb") as f:
            f.write(v.encode() if isinstance(v, str) else bytes(v))
    except OSError as e:
        raise tfrecord._open_error(e, path) from e
    return None


@register_kernel("MatchingFiles", devices=_CPU)
def matching_files(ctx, pattern):
    pats = np.asarray(pattern, dtype=object)
    if pats.ndim > 1:
        raise errors.InvalidArgumentError(None, ctx.op, f"Input patterns tensor must be scalar or vector, but had "
                                                        f"shape: {list(pats.shape)}\n\t [[node {ctx.op.name}]]")
    found: list = []
    for p in pats.reshape(-1):
        s = p.decode("utf-8", errors="surrogateescape") if isinstance(p, bytes) else str(p)
        found.extend(glob.glob(tfrecord._local_path(s), include_hidden=True))
    names = sorted(f.encode("utf-8", errors="surrogateescape") for f in found)
    out = np.empty(len(names), dtype=object)
    out[:] = names
    return out
