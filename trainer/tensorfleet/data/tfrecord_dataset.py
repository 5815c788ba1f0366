"""`tf.data.TFRecordDataset`: the records of TFRecord files as scalar tf.string elements.

Reads through `tensorfleet.io.tfrecord` (the TFRecord framing with masked CRC32C that TensorBoard event files
share): a bad checksum or a cut-off record is DataLossError, a missing file NotFoundError, both raised by
get_next. `filenames` may be a string, a list, or a tf.string tensor (a placeholder fed at the iterator's
initialization, as TF1 scripts do). With num_parallel_reads > 1 the files are read round-robin, one record from
each of up to that many open files in turn (TF's parallel interleave with block_length 1, deterministic).
"""
from __future__ import annotations

import numpy as np

from .. import dtypes as _dtypes
from ..graph import Tensor
from ..tensor_shape import TensorShape
from . import structure as nest
from .dataset_ops import Dataset, to_component


class TFRecordDataset(Dataset):
    def __init__(self, filenames, compression_type=None, buffer_size=None, num_parallel_reads=None):
        self._files = to_component(filenames, _dtypes.string)
        if isinstance(self._files, Tensor):
            if self._files.dtype is not _dtypes.string or self._files.shape.ndims not in (None, 0, 1):
                raise TypeError(f"`filenames` must be a scalar or vector tf.string tensor, got "
                                f"{self._files.dtype.name} {self._files.shape}")
        elif self._files.ndim > 1:
            raise TypeError(f"`filenames` must be a string or a list of strings, got shape {self._files.shape}")
        if compression_type not in (None, "", "ZLIB", "GZIP"):
            raise ValueError(f"compression_type must be None, '', 'ZLIB' or 'GZIP', got {compression_type!r}")
        self._compression = compression_type or ""
        self._parallel = max(1, int(num_parallel_reads or 1))
        self._spec = nest.ComponentSpec(_dtypes.string, TensorShape([]))

    def _captures(self):
        return [self._files] if isinstance(self._files, Tensor) else []

    def _iter(self, env):
        from ..io.tfrecord import TFRecordOptions, read_records
        options = TFRecordOptions(self._compression)
        names = [f.decode("utf-8") if isinstance(f, bytes) else str(f)
                 for f in np.asarray(env.value(self._files), dtype=object).reshape(-1)]
        pending = iter(names)
        open_files: list = []
        while True:
            while len(open_files) < self._parallel:
                name = next(pending, None)
                if name is None:
                    break
                open_files.append(read_records(name, options))
            if not open_files:
                return
            for reader in list(open_files):
                record = next(reader, None)
                if record is None:
                    open_files.remove(reader)
                    continue
                yield np.array(record, dtype=object)
