"""`Dataset.cache(filename="")`: in memory, or in files as TF 1.15's CacheDatasetOp does.

A transformation like those in `transformations.py` (an `_Unary` over its input). Without a filename the first
complete pass of an iterator is kept in memory and later passes (under `repeat`) replay it. With a filename:

- When an iterator starts a pass and `<filename>.index` exists, the pass reads the cache
  (`<filename>.data-00000-of-00001`) and the input is never run.
- Otherwise the pass reads the input and writes each element to `<filename>_0.data-00000-of-00001`, holding
  `<filename>_0.lockfile` (a second writer finds it and fails with AlreadyExistsError, as TF). Only when the
  input is exhausted is the data file renamed into place and the index written (atomically, last); a pass
  abandoned early (iterator closed, re-initialized, an error upstream) deletes its partial file and the
  lockfile, so a partially written cache is never used and the next iterator writes it again.

File format (ours, not TF's tensor bundle): the data file holds one TFRecord-framed record (`io.tfrecord`,
CRC-checked on read) per element; a record is, per component, a kind byte (`n` numeric, `s` tf.string), a
uint64 length and the body: a numeric component is an `.npy` array, a string component an `.npy` int64 array
of the strings' byte lengths (the component's shape) followed by the bytes. The index is JSON: format,
version, element count, and each component's dtype. Nothing is unpickled (`np.load(allow_pickle=False)`).
"""
from __future__ import annotations

import io
import json
import os
import struct
import time

import numpy as np

from .. import dtypes as _dtypes
from .. import errors
from ..graph import Tensor
from . import structure as nest
from .dataset_ops import element_arrays
from .transformations import _Unary

__all__ = ["CacheDataset"]

_FORMAT, _VERSION = "tensorfleet-dataset-cache", 1
_PART = struct.Struct("<cQ")


def cache_paths(prefix: str) -> dict:
    return {"index": prefix + ".index", "data": prefix + ".data-00000-of-00001",
            "partial": prefix + "_0.data-00000-of-00001", "lock": prefix + "_0.lockfile"}


def encode_element(arrays: list) -> bytes:
    out = io.BytesIO()
    for a in arrays:
        body = io.BytesIO()
        if a.dtype == object:
            raw = [bytes(s) for s in a.reshape(-1)]
            np.save(body, np.array([len(s) for s in raw], dtype=np.int64).reshape(a.shape), allow_pickle=False)
            body.write(b"".join(raw))
            kind = b"s"
        else:
            np.save(body, a, allow_pickle=False)  # (np.ascontiguousarray would make a scalar 1-d)
            kind = b"n"
        data = body.getvalue()
        out.write(_PART.pack(kind, len(data)))
        out.write(data)
    return out.getvalue()


def decode_element(record: bytes, count: int, path: str) -> list:
    stream, arrays = io.BytesIO(record), []
    try:
        for _ in range(count):
            kind, size = _PART.unpack(stream.read(_PART.size))
            body = io.BytesIO(stream.read(size))
            if kind == b"n":
                arrays.append(np.load(body, allow_pickle=False))
            elif kind == b"s":
                lengths = np.load(body, allow_pickle=False)
                flat = [body.read(int(n)) for n in lengths.reshape(-1)]
                arr = np.empty(len(flat), dtype=object)
                arr[:] = flat
                arrays.append(arr.reshape(lengths.shape))
            else:
                raise ValueError(f"unknown component kind {kind!r}")
    except (ValueError, struct.error) as e:
        raise errors.DataLossError(None, None, f"cache file {path}: a malformed element ({e})") from None
    if stream.read(1):
        raise errors.DataLossError(None, None, f"cache file {path}: an element has more components than the "
                                               f"dataset")
    return arrays


class CacheDataset(_Unary):
    """`cache(filename="")`: replay the first complete pass, from memory or from `filename`'s cache files."""

    def __init__(self, input_dataset, filename=""):
        super().__init__(input_dataset)
        if isinstance(filename, Tensor):
            if filename.dtype is not _dtypes.string or not filename.shape.is_compatible_with([]):
                raise TypeError(f"cache: filename must be a tf.string scalar, got {filename.dtype.name} "
                                f"{filename.shape}")
        elif isinstance(filename, bytes):
            filename = filename.decode()
        elif not isinstance(filename, str):
            raise TypeError(f"cache: filename must be a string, got {type(filename).__name__}")
        self._filename = filename
        self._args = (filename,)

    def _prefix(self, env) -> str:
        value = env.value(self._filename)
        if isinstance(value, np.ndarray):
            value = value.item()
        return value.decode() if isinstance(value, bytes) else str(value)

    def _iter(self, env):
        prefix = self._prefix(env)
        if prefix:
            yield from self._file_pass(env, prefix)
            return
        cached = env.caches.get(id(self))
        if cached is not None:
            yield from cached
            return
        seen = []
        for e in self._input._iter(env):
            seen.append(e)
            yield e
        env.caches[id(self)] = seen

    def _dtypes(self) -> list:
        return [dt.name for dt, _ in nest.flatten(self._spec)]

    def _file_pass(self, env, prefix: str):
        paths = cache_paths(prefix)
        if os.path.exists(paths["index"]):
            yield from self._read(paths)
        else:
            yield from self._write(env, paths)

    def _read(self, paths: dict):
        try:
            with open(paths["index"], encoding="utf-8") as f:
                meta = json.load(f)
        except (OSError, ValueError) as e:
            raise errors.DataLossError(None, None, f"cache index {paths['index']} is unreadable: {e}") from None
        if not isinstance(meta, dict) or meta.get("format") != _FORMAT or meta.get("version") != _VERSION:
            raise errors.DataLossError(None, None, f"{paths['index']} is not a tensorfleet dataset cache index")
        if meta.get("dtypes") != self._dtypes():
            raise errors.InvalidArgumentError(
                None, None, f"cache {paths['index']} holds elements of dtypes {meta.get('dtypes')}, but the "
                            f"dataset produces {self._dtypes()}; delete the cache files or use another filename")
        from ..io.tfrecord import read_records

        n, count = 0, len(self._dtypes())
        for record in read_records(paths["data"]):
            n += 1
            yield nest.pack_as(self._spec, decode_element(record, count, paths["data"]))
        if n != meta.get("elements"):
            raise errors.DataLossError(None, None, f"cache file {paths['data']} holds {n} elements, its index "
                                                   f"says {meta.get('elements')}")

    def _write(self, env, paths: dict):
        from ..io.tfrecord import TFRecordWriter

        try:
            fd = os.open(paths["lock"], os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        except FileExistsError:
            raise errors.AlreadyExistsError(
                None, None, f"There appears to be a concurrent caching iterator running - cache lockfile already "
                            f"exists ('{paths['lock']}'). If you are sure no other running TF computations are "
                            f"using this cache prefix, delete the lockfile and re-initialize the iterator.") from None
        except OSError as e:
            raise errors.NotFoundError(None, None, f"cache: cannot create {paths['lock']}: {e}") from None
        with os.fdopen(fd, "w") as f:
            f.write(f"Created at: {int(time.time())}\n")
        state = {"writer": None, "finished": False}

        def abandon():
            if state["finished"]:
                return
            state["finished"] = True
            if state["writer"] is not None:
                state["writer"].close()
            for p in (paths["partial"], paths["lock"]):
                try:
                    os.remove(p)
                except OSError:
                    pass

        env.closers.append(abandon)
        try:
            state["writer"] = TFRecordWriter(paths["partial"])
            n = 0
            for e in self._input._iter(env):
                state["writer"].write(encode_element(nest.flatten(element_arrays(e, self._spec))))
                n += 1
                yield e
            state["writer"].close()
            os.replace(paths["partial"], paths["data"])
            tmp = paths["index"] + ".tmp"
            with open(tmp, "w", encoding="utf-8") as f:
                json.dump({"format": _FORMAT, "version": _VERSION, "elements": n, "dtypes": self._dtypes()}, f)
            os.replace(tmp, paths["index"])
            os.remove(paths["lock"])
            state["finished"] = True
        finally:
            abandon()
