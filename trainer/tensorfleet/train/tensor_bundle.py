"""TensorFlow's checkpoint format V2 (the tensor bundle): what `P.index` holds and how tensors lie in the data files.

Between `checkpoint_io` (files, atomicity, retries) and `table_format` (the index's table layout). As TF 1.15's
`tensorflow/core/util/tensor_bundle/tensor_bundle.cc` writes and reads it:

- `P.index` is a table whose "" key holds a `BundleHeaderProto` (num_shards, endianness LITTLE, version
  {producer: 1}) and every other key a `BundleEntryProto` (dtype, shape, shard_id, offset, size, masked crc32c),
  keys in byte order. Tensors lie in `P.data-<shard:05d>-of-<num_shards:05d>`, back to back (no alignment).
- A fixed-size tensor is its little-endian bytes in C order; its crc32c is that of those bytes.
- A string tensor is the varint64 length of every element, then the masked crc32c of those lengths (each
  taken as a little-endian uint32, or uint64 if longer than 2**32 - 1), then the elements' bytes. Its entry's
  crc32c is that of the lengths (as uint32/uint64), the 4 masked-checksum bytes and the elements' bytes.
- A partitioned variable is saved as slices of one full tensor: the full name's entry holds dtype, shape and
  one `TensorSliceProto` per slice (each extent's start and length); each slice is an ordinary entry under
  the key TF's `EncodeTensorNameSlice` makes: OrderedCode(0), OrderedCode(name), OrderedCode(rank), then the
  signed OrderedCode of every extent's start and length (-1: the whole dimension). A slice covering the whole
  tensor is saved as the tensor itself. Slice keys start with a 0 byte and are not listed.

`BundleWriter` streams tensors into a data file and returns the index's bytes (byte-identical to TF's for the
same tensors added in the same order). `BundleIndex` parses an index (each entry validated by `bundle_entries`)
and reads tensors from open data files, checking every size and checksum; anything malformed is a
`DataLossError` naming the file.
"""
from __future__ import annotations

import os
from typing import NamedTuple

import numpy as np

from .. import dtypes as _dtypes
from .. import errors
from ..protos import tensor_bundle_pb2
from . import bundle_entries
from .bundle_entries import corrupt, slice_key
from .table_format import (FormatError, build_table, crc32c, first_entry, get_varint, mask, put_varint, read_table,
                           unmask)

__all__: list = []

HEADER_KEY = b""
_CHUNK = 8 << 20


def data_filename(prefix: str, shard: int, num_shards: int) -> str:
    return f"{prefix}.data-{shard:05d}-of-{num_shards:05d}"


# -- string tensors -----------------------------------------------------------
def _length_crc_bytes(n: int) -> bytes:
    return n.to_bytes(4 if n <= 0xFFFFFFFF else 8, "little")


def encode_strings(elements) -> tuple:
    """(bytes, unmasked crc32c) of a string tensor's elements (bytes) in TF's layout."""
    lengths, crc = bytearray(), 0
    for e in elements:
        put_varint(lengths, len(e))
        crc = crc32c(_length_crc_bytes(len(e)), crc)
    checksum = mask(crc).to_bytes(4, "little")
    crc = crc32c(checksum, crc)
    body = b"".join(elements)
    return bytes(lengths) + checksum + body, crc32c(body, crc)


def decode_strings(raw: bytes, count: int) -> tuple:
    """(list of bytes, unmasked crc32c) of a string tensor's `raw` bytes; FormatError if they do not add up."""
    pos, crc, lengths = 0, 0, []
    for _ in range(count):
        n, pos = get_varint(raw, pos, len(raw))
        lengths.append(n)
        crc = crc32c(_length_crc_bytes(n), crc)
    if pos + 4 > len(raw):
        raise FormatError("the string lengths run past the tensor's bytes")
    stored = int.from_bytes(raw[pos:pos + 4], "little")
    if unmask(stored) != crc:
        raise FormatError(f"the string lengths' checksum does not match (stored {unmask(stored)}, computed {crc})")
    crc = crc32c(raw[pos:pos + 4], crc)
    pos += 4
    if pos + sum(lengths) != len(raw):
        raise FormatError(f"the string lengths add up to {sum(lengths)} bytes, the tensor has {len(raw) - pos}")
    out = []
    for n in lengths:
        out.append(raw[pos:pos + n])
        pos += n
    return out, crc32c(raw[len(raw) - sum(lengths):], crc)


# -- writing ------------------------------------------------------------------
class SlicedTensor(NamedTuple):
    """A partitioned variable to save: its full shape and its parts as (offset per dimension, values)."""
    full_shape: tuple
    parts: list


class BundleWriter:
    """Appends tensors to an open data file (shard 0) and makes the index's bytes, as TF's BundleWriter."""

    def __init__(self, out):
        self._out = out
        self._size = 0
        self._entries: dict = {}

    def _entry(self, key: bytes, dt: _dtypes.DType, shape) -> tensor_bundle_pb2.BundleEntryProto:
        if key in self._entries:
            raise ValueError(f"Adding duplicate key: {key!r}")
        entry = self._entries[key] = tensor_bundle_pb2.BundleEntryProto(dtype=dt.as_datatype_enum)
        entry.shape.SetInParent()
        for d in shape:
            entry.shape.dim.add(size=int(d))
        return entry

    def add(self, name, value) -> None:
        """Appends one tensor (`name`: a str, or a slice's key bytes)."""
        key = name if isinstance(name, bytes) else name.encode("utf-8")
        arr = np.asarray(value)
        dt = _dtypes.as_dtype(arr.dtype)
        if dt not in bundle_entries.SAVEABLE:
            raise TypeError(f"Cannot save tensor {name!r} of dtype {arr.dtype}")
        entry = self._entry(key, dt, arr.shape)
        entry.offset = self._size
        if dt is _dtypes.string:
            raw, crc = encode_strings(list(_dtypes.string_array(arr).reshape(-1)))
            self._out.write(raw)
            size = len(raw)
        else:
            flat = np.ascontiguousarray(arr, dtype=dt.np_dtype.newbyteorder("<")).reshape(-1).view(np.uint8)
            crc, size = 0, flat.size
            for start in range(0, size, _CHUNK):
                chunk = flat[start:start + _CHUNK].tobytes()
                crc = crc32c(chunk, crc)
                self._out.write(chunk)
        entry.size = size
        entry.crc32c = mask(crc)
        self._size += size

    def add_sliced(self, name: str, tensor: SlicedTensor) -> None:
        """Appends a partitioned variable's parts, as TF's AddSlice (a single whole part: a plain tensor)."""
        full = tuple(int(d) for d in tensor.full_shape)
        parts = sorted(((tuple(int(o) for o in off), np.asarray(v)) for off, v in tensor.parts),
                       key=lambda p: p[0])
        if len(parts) == 1 and not any(parts[0][0]) and parts[0][1].shape == full:
            self.add(name, parts[0][1])
            return
        dt = _dtypes.as_dtype(parts[0][1].dtype)
        whole = self._entry(name.encode("utf-8"), dt, full)
        for offset, arr in parts:
            proto = whole.slices.add()
            for o, n in zip(offset, arr.shape, strict=True):
                proto.extent.add(start=o, length=n)
            self.add(slice_key(name, list(zip(offset, arr.shape, strict=True))), arr)

    def index_bytes(self, num_shards: int = 1) -> bytes:
        """The `P.index` table: the header, then every entry in key order."""
        header = tensor_bundle_pb2.BundleHeaderProto(num_shards=num_shards)
        header.version.producer = bundle_entries.BUNDLE_VERSION
        items = [(HEADER_KEY, header.SerializeToString())]
        items += [(k, self._entries[k].SerializeToString()) for k in sorted(self._entries)]
        return build_table(items)


# -- reading ------------------------------------------------------------------
def bundle_header_shards(prefix: str, raw: bytes) -> int:
    """The shard count in the header of index bytes `raw` (the other entries are not read)."""
    try:
        key, value = first_entry(raw)
    except FormatError as e:
        raise corrupt(prefix + ".index", str(e)) from None
    if key != HEADER_KEY:
        raise corrupt(prefix + ".index", "no header entry (the \"\" key)")
    return bundle_entries.header_shards(value, prefix + ".index")


class _Info(NamedTuple):
    dtype: int
    shape: tuple
    entry: tensor_bundle_pb2.BundleEntryProto


class BundleIndex:
    """A parsed, validated `P.index`: the listed tensors' dtypes and shapes, and verified reads of their values."""

    def __init__(self, prefix: str, raw: bytes):
        self.prefix, self.path, self.raw = prefix, prefix + ".index", raw
        try:
            table = read_table(raw)
        except FormatError as e:
            raise corrupt(self.path, str(e)) from None
        if not table or table[0][0] != HEADER_KEY:
            raise corrupt(self.path, "no header entry (the \"\" key)")
        self.num_shards = bundle_entries.header_shards(table[0][1], self.path)
        entries = {key: bundle_entries.parse_entry(key, value, self.path, self.num_shards) for key, value in table[1:]}
        self._entries = entries
        self.infos: dict = {}
        for key, entry in entries.items():
            if key.startswith(b"\x00"):
                continue  # a slice of a partitioned tensor (TF lists only the full tensor)
            try:
                name = key.decode("utf-8")
            except UnicodeDecodeError:
                raise corrupt(self.path, f"tensor key {key[:64]!r} is not UTF-8") from None
            shape = tuple(d.size for d in entry.shape.dim)
            if entry.slices:
                bundle_entries.check_slices(name, entry, shape, entries, self.path)
            self.infos[name] = _Info(entry.dtype, shape, entry)
        self.shapes = {name: info.shape for name, info in self.infos.items()}

    def dtype(self, name: str) -> _dtypes.DType:
        return bundle_entries.dtype_of(self.infos[name].dtype, name, self.path)

    def _stored(self, name: str) -> list:
        """[(slice box or None, entry)] holding tensor `name`'s values."""
        info = self.infos[name]
        if not info.entry.slices:
            return [(None, info.entry)]
        out = []
        for proto in info.entry.slices:
            box = bundle_entries.slice_box(proto, info.shape)
            out.append((box, self._entries[slice_key(name, bundle_entries.key_extents(proto))]))
        return out

    def data_files(self, names) -> dict:
        """shard id -> data file path, for the shards that hold `names`."""
        return {e.shard_id: data_filename(self.prefix, e.shard_id, self.num_shards)
                for n in names for _, e in self._stored(n)}

    def read(self, name: str, files: dict) -> np.ndarray:
        """Tensor `name`, read from `files` (shard id -> open binary file) and verified against its checksum."""
        info = self.infos[name]
        dt = self.dtype(name)
        stored = self._stored(name)
        for _, entry in stored:  # every byte range inside its file before anything is allocated
            path = data_filename(self.prefix, entry.shard_id, self.num_shards)
            size = os.fstat(files[entry.shard_id].fileno()).st_size
            if entry.offset + entry.size > size:
                raise errors.DataLossError(None, None, f"Checkpoint data file {path} is truncated: tensor {name!r} "
                                                       f"needs bytes [{entry.offset}, {entry.offset + entry.size}), "
                                                       f"the file has {size}")
        if stored[0][0] is None:
            return self._read_entry(name, stored[0][1], dt, files)
        whole = np.empty(info.shape, dtype=dt.np_dtype)
        for box, entry in stored:
            whole[box] = self._read_entry(name, entry, dt, files)
        return whole

    def _read_entry(self, name: str, entry, dt: _dtypes.DType, files: dict) -> np.ndarray:
        path = data_filename(self.prefix, entry.shard_id, self.num_shards)
        fd = files[entry.shard_id].fileno()
        shape = tuple(d.size for d in entry.shape.dim)
        if dt is _dtypes.string:
            raw = os.pread(fd, entry.size, entry.offset)
            try:
                elements, crc = decode_strings(raw, int(np.prod(shape, dtype=np.int64)))
            except FormatError as e:
                raise errors.DataLossError(None, None, f"Checkpoint data file {path} is corrupt: string tensor "
                                                       f"{name!r}: {e}") from None
            out = np.empty(len(elements), dtype=object)
            out[:] = elements
            out = out.reshape(shape)
        else:
            out = np.empty(shape, dtype=dt.np_dtype)
            flat, crc = out.reshape(-1).view(np.uint8), 0
            for start in range(0, entry.size, _CHUNK):
                chunk = os.pread(fd, min(_CHUNK, entry.size - start), entry.offset + start)
                crc = crc32c(chunk, crc)
                flat[start:start + len(chunk)] = np.frombuffer(chunk, dtype=np.uint8)
        if crc != unmask(entry.crc32c):
            raise errors.DataLossError(None, None, f"Checkpoint data file {path} is corrupt: checksum mismatch for "
                                                   f"tensor {name!r} (stored crc32c {unmask(entry.crc32c):08x}, "
                                                   f"computed {crc:08x})")
        return out
