"""File sources of tf.data besides TFRecords: `TextLineDataset` (lines without their newline),
`FixedLengthRecordDataset` (fixed-size binary records, e.g. CIFAR-10's files, decoded with tf.decode_raw) and
`Dataset.list_files` (a glob's matches, shuffled by default), plus tf.data.experimental's TF1 helpers
(`shuffle_and_repeat`, `map_and_batch`, `unbatch`).

Local files only (as tensorfleet's gfile). A missing file is NotFoundError at get_next; a file whose size does
not fit the record layout is DataLossError, as TF reports a truncated record.
"""
from __future__ import annotations

import glob as _glob
import gzip
import os
import zlib

import numpy as np

from .. import dtypes as _dtypes
from .. import errors
from ..graph import Tensor
from ..tensor_shape import TensorShape
from . import structure as nest
from .dataset_ops import Dataset, TensorSliceDataset, to_component
from .transformations import _Unary


def _file_names(env, files) -> list:
    return [f.decode("utf-8") if isinstance(f, bytes) else str(f)
            for f in np.asarray(env.value(files), dtype=object).reshape(-1)]


def _read_bytes(path: str, compression: str) -> bytes:
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except FileNotFoundError:
        raise errors.NotFoundError(None, None, f"{path}; No such file or directory") from None
    except IsADirectoryError:
        raise errors.FailedPreconditionError(None, None, f"{path}; Is a directory") from None
    try:
        if compression == "GZIP":
            return gzip.decompress(raw)
        if compression == "ZLIB":
            return zlib.decompress(raw)
    except (OSError, zlib.error) as e:
        raise errors.DataLossError(None, None, f"{path}: corrupted {compression} stream: {e}") from None
    return raw


class _FileDataset(Dataset):
    def __init__(self, filenames, compression_type):
        self._files = to_component(filenames, _dtypes.string)
        if compression_type not in (None, "", "ZLIB", "GZIP"):
            raise ValueError(f"compression_type must be None, '', 'ZLIB' or 'GZIP', got {compression_type!r}")
        self._compression = compression_type or ""
        self._spec = nest.ComponentSpec(_dtypes.string, TensorShape([]))

    def _captures(self):
        return [self._files] if isinstance(self._files, Tensor) else []


class TextLineDataset(_FileDataset):
    """`tf.data.TextLineDataset(filenames, compression_type=None, buffer_size=None)`: one element per line,
    without its line ending ('\\n' or '\\r\\n'), file after file."""

    def __init__(self, filenames, compression_type=None, buffer_size=None, num_parallel_reads=None):
        super().__init__(filenames, compression_type)

    def _iter(self, env):
        for path in _file_names(env, self._files):
            data = _read_bytes(path, self._compression)
            lines = data.split(b"\n")
            if lines and lines[-1] == b"":
                lines.pop()
            for line in lines:
                yield np.array(line[:-1] if line.endswith(b"\r") else line, dtype=object)


class FixedLengthRecordDataset(_FileDataset):
    """`tf.data.FixedLengthRecordDataset(filenames, record_bytes, header_bytes=0, footer_bytes=0)`."""

    def __init__(self, filenames, record_bytes, header_bytes=None, footer_bytes=None, buffer_size=None,
                 compression_type=None, num_parallel_reads=None):
        super().__init__(filenames, compression_type)
        self._record, self._header, self._footer = int(record_bytes), int(header_bytes or 0), int(footer_bytes or 0)
        if self._record <= 0 or self._header < 0 or self._footer < 0:
            raise ValueError("record_bytes must be positive, header_bytes and footer_bytes non-negative")

    def _iter(self, env):
        for path in _file_names(env, self._files):
            data = _read_bytes(path, self._compression)
            body = len(data) - self._header - self._footer
            if body < 0 or body % self._record:
                raise errors.DataLossError(None, None, f"{path}: {len(data)} bytes do not hold whole records of "
                                                       f"{self._record} bytes (header {self._header}, footer "
                                                       f"{self._footer})")
            for start in range(self._header, self._header + body, self._record):
                yield np.array(data[start:start + self._record], dtype=object)


def list_files(file_pattern, shuffle=None, seed=None):
    """`Dataset.list_files(pattern)`: the matching file names (sorted, then shuffled unless shuffle=False).

    The pattern is expanded when the dataset is built (a Python string or list of them); no match is an
    InvalidArgumentError, as TF's "No files matched pattern".
    """
    if isinstance(file_pattern, Tensor):
        raise TypeError("Dataset.list_files: pass the pattern as a Python string here (it is expanded at build time)")
    patterns = [file_pattern] if isinstance(file_pattern, (str, bytes)) else list(file_pattern)
    names = sorted({os.fspath(m) for p in patterns
                    for m in _glob.glob(p.decode() if isinstance(p, bytes) else p)})
    if not names:
        raise errors.InvalidArgumentError(None, None, f"Expect a non-empty files list; No files matched pattern: "
                                                      f"{', '.join(map(str, patterns))}")
    ds = TensorSliceDataset(np.array([n.encode() for n in names], dtype=object))
    if shuffle is None or shuffle:
        ds = ds.shuffle(len(names), seed=seed)
    return ds


class UnbatchDataset(_Unary):
    """`tf.data.experimental.unbatch()`: splits each element's first dimension into elements."""

    def __init__(self, input_dataset):
        super().__init__(input_dataset)
        self._spec = nest.map_structure(_unbatched_spec, input_dataset._spec)

    def _iter(self, env):
        for e in self._input._iter(env):
            flat = [np.asarray(v) for v in nest.flatten(e)]
            for i in range(flat[0].shape[0] if flat else 0):
                yield nest.pack_as(self._spec, [a[i, ...] for a in flat])


def _unbatched_spec(s):
    shape = TensorShape(None) if s.shape.ndims is None else TensorShape(s.shape.as_list()[1:])
    return nest.ComponentSpec(s.dtype, shape)


def shuffle_and_repeat(buffer_size, count=None, seed=None):
    """`tf.data.experimental.shuffle_and_repeat`: for `dataset.apply(...)`; shuffle then repeat (reshuffled
    every pass)."""
    return lambda ds: ds.shuffle(buffer_size, seed=seed).repeat(count)


def map_and_batch(map_func, batch_size, num_parallel_batches=None, drop_remainder=False, num_parallel_calls=None):
    """`tf.data.experimental.map_and_batch`: map (in parallel if asked) then batch."""
    calls = num_parallel_calls if num_parallel_calls is not None else num_parallel_batches
    return lambda ds: ds.map(map_func, num_parallel_calls=calls).batch(batch_size, drop_remainder=drop_remainder)


def unbatch():
    return UnbatchDataset

