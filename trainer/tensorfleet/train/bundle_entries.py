"""A tensor bundle's index entries: the keys of slices (TF's OrderedCode) and the validation of every entry
(used by `tensor_bundle`), before any data is read.

Every value of `P.index` is checked against what TF 1.15's BundleReader requires, and more: the header's
shard count, endianness and version; each entry parses, names a known dtype, a valid shape (known rank,
non-negative dimensions, at most 64 of them), a shard that exists, a byte range that can hold its elements
(`size` = elements x itemsize for fixed-size types, at least one byte per element + 4 for strings); a
partitioned tensor's slices lie inside its shape, tile it exactly (no overlap, no gap), and each is an entry
of the same dtype and the slice's shape. A violation is a `DataLossError` naming the index file; a version
this reader does not support is an `InvalidArgumentError`, a big-endian bundle or a type tensorfleet has no
kernels for (bfloat16, quantized, resource, variant) an `UnimplementedError`, as in TF 1.15.
"""
from __future__ import annotations

import numpy as np
from google.protobuf.message import DecodeError

from .. import dtypes as _dtypes
from .. import errors
from ..protos import tensor_bundle_pb2, types_pb2

__all__: list = []

BUNDLE_VERSION = 1  # TF's kTensorBundleVersion: the producer version written, and this reader's consumer version
MIN_PRODUCER = 0
MAX_SHARDS = 99999
MAX_RANK = 64  # numpy's limit (TF allows 254)
MAX_SLICES = 65536
SAVEABLE = (_dtypes.float16, _dtypes.float32, _dtypes.float64, _dtypes.int8, _dtypes.int16, _dtypes.int32,
            _dtypes.int64, _dtypes.uint8, _dtypes.uint16, _dtypes.uint32, _dtypes.uint64, _dtypes.bool_,
            _dtypes.complex64, _dtypes.complex128, _dtypes.string)
_BY_ENUM = {d.as_datatype_enum: d for d in SAVEABLE}
_TF_ONLY = {e for e in range(1, 24) if e not in _BY_ENUM}  # bfloat16, quantized, resource, variant


# -- slice keys (TF's OrderedCode) --------------------------------------------
def _ordered_unsigned(value: int) -> bytes:
    body = value.to_bytes((value.bit_length() + 7) // 8, "big")
    return bytes([len(body)]) + body


def _ordered_signed(value: int) -> bytes:
    x = ~value if value < 0 else value
    if x < 64:
        return bytes([(0x80 ^ value) & 0xFF])
    length = x.bit_length() // 7 + 1
    buf = bytearray(value.to_bytes(10, "big", signed=True)[10 - length:])
    if length <= 8:
        buf[0] ^= (0xFF << (8 - length)) & 0xFF
    else:  # 9 or 10 bytes: the length's bits spill into the second byte
        buf[0] ^= 0xFF
        buf[1] ^= 0x80 if length == 9 else 0xC0
    return bytes(buf)


def slice_key(name: str, extents) -> bytes:
    """TF's EncodeTensorNameSlice: the table key of a slice ((start, length) per dimension; -1 = whole)."""
    escaped = name.encode("utf-8").replace(b"\xff", b"\xff\x00").replace(b"\x00", b"\x00\xff")
    out = bytearray(_ordered_unsigned(0) + escaped + b"\x00\x01" + _ordered_unsigned(len(extents)))
    for start, length in extents:
        out += _ordered_signed(start) + _ordered_signed(length)
    return bytes(out)


def corrupt(path: str, detail: str) -> errors.DataLossError:
    return errors.DataLossError(None, None, f"Checkpoint index {path} is corrupt: {detail}")


def _parse(message, value: bytes, path: str, what: str):
    try:
        message.ParseFromString(value)
    except (DecodeError, ValueError, RecursionError) as e:
        raise corrupt(path, f"{what} is not parseable ({e})") from None
    return message


def header_shards(value: bytes, path: str) -> int:
    """The shard count of a valid header; the errors TF's BundleReader gives otherwise."""
    header = _parse(tensor_bundle_pb2.BundleHeaderProto(), value, path, "the header entry")
    if header.endianness == tensor_bundle_pb2.BundleHeaderProto.BIG:
        raise errors.UnimplementedError(None, None, f"Checkpoint {path} is big-endian: reading a bundle with a "
                                                    f"different endianness from the reader is unsupported")
    if header.endianness != tensor_bundle_pb2.BundleHeaderProto.LITTLE:
        raise corrupt(path, f"unknown endianness {header.endianness}")
    v = header.version
    if v.producer < MIN_PRODUCER or v.min_consumer > BUNDLE_VERSION or BUNDLE_VERSION in v.bad_consumers:
        raise errors.InvalidArgumentError(None, None, f"Checkpoint {path} has version (producer {v.producer}, "
                                                      f"min_consumer {v.min_consumer}, bad_consumers "
                                                      f"{list(v.bad_consumers)}), which this reader (version "
                                                      f"{BUNDLE_VERSION}) does not support")
    if not 1 <= header.num_shards <= MAX_SHARDS:
        raise corrupt(path, f"num_shards {header.num_shards} is not in [1, {MAX_SHARDS}]")
    return header.num_shards


def _numel(shape) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


def parse_entry(key: bytes, value: bytes, path: str, num_shards: int):
    """The BundleEntryProto of `key`, checked on its own (slices are checked against the others later)."""
    what = f"the entry for key {key[:64]!r}"
    entry = _parse(tensor_bundle_pb2.BundleEntryProto(), value, path, what)
    if entry.dtype not in _BY_ENUM and entry.dtype not in _TF_ONLY:
        raise corrupt(path, f"{what} has an invalid dtype ({entry.dtype})")
    dims = [d.size for d in entry.shape.dim]
    if entry.shape.unknown_rank or len(dims) > MAX_RANK or any(d < 0 for d in dims) or _numel(dims) > 2 ** 62:
        rank = " (unknown rank)" if entry.shape.unknown_rank else ""
        raise corrupt(path, f"{what} has an invalid shape {dims}{rank}")
    if entry.slices:
        return entry
    if not 0 <= entry.shard_id < num_shards or entry.offset < 0 or entry.size < 0:
        raise corrupt(path, f"{what} points outside the data files (shard {entry.shard_id} of {num_shards}, "
                            f"offset {entry.offset}, size {entry.size})")
    dt = _BY_ENUM.get(entry.dtype)
    count = _numel(dims)
    if dt is _dtypes.string:
        if entry.size < count + 4:
            raise corrupt(path, f"{what}: {entry.size} bytes cannot hold {count} strings")
    elif dt is not None and entry.size != count * dt.size:
        raise corrupt(path, f"{what}: size {entry.size} is not {count} elements of {dt.name} "
                            f"({count * dt.size} bytes)")
    return entry


def dtype_of(enum: int, name: str, path: str) -> _dtypes.DType:
    dt = _BY_ENUM.get(enum)
    if dt is None:
        raise errors.UnimplementedError(None, None, f"Checkpoint {path}: tensor {name!r} has dtype "
                                                    f"{types_pb2.DataType.Name(enum)}, which tensorfleet cannot hold")
    return dt


def key_extents(proto) -> list:
    """(start, length) per dimension as TF's slice key encodes them (-1: the whole dimension)."""
    return [(e.start, e.length if e.HasField("length") else -1) for e in proto.extent]


def slice_box(proto, shape) -> tuple:
    """The numpy index of a TensorSliceProto inside a tensor of `shape`; ValueError if it does not fit."""
    if len(proto.extent) != len(shape):
        raise ValueError(f"a slice has {len(proto.extent)} extents for a rank-{len(shape)} tensor")
    box = []
    for (start, length), dim in zip(key_extents(proto), shape, strict=True):
        if length == -1 and start == 0:
            length = dim
        if start < 0 or length < 0 or start + length > dim:
            raise ValueError(f"a slice extent (start {start}, length {length}) does not fit dimension {dim}")
        box.append(slice(start, start + length))
    return tuple(box)


def check_slices(name: str, entry, shape: tuple, entries: dict, path: str) -> None:
    """A partitioned tensor's slices: inside its shape, stored under their keys with its dtype and their
    shapes, tiling it exactly."""
    if len(entry.slices) > MAX_SLICES:
        raise corrupt(path, f"tensor {name!r} has {len(entry.slices)} slices (at most {MAX_SLICES} are read)")
    boxes = []
    for proto in entry.slices:
        try:
            box = slice_box(proto, shape)
        except ValueError as e:
            raise corrupt(path, f"tensor {name!r}: {e}") from None
        part = entries.get(slice_key(name, key_extents(proto)))
        want = [s.stop - s.start for s in box]
        if part is None or part.slices or part.dtype != entry.dtype or [d.size for d in part.shape.dim] != want:
            raise corrupt(path, f"tensor {name!r}: its slice {[(s.start, s.stop) for s in box]} is "
                                f"{'missing' if part is None else 'stored with another dtype or shape'}")
        boxes.append(box)
    starts = np.array([[s.start for s in b] for b in boxes], dtype=np.int64).reshape(len(boxes), len(shape))
    stops = np.array([[s.stop for s in b] for b in boxes], dtype=np.int64).reshape(len(boxes), len(shape))
    volumes = [_numel(int(x) for x in row) for row in stops - starts]
    if sum(volumes) != _numel(shape):
        raise corrupt(path, f"tensor {name!r}: its slices hold {sum(volumes)} elements, its shape "
                            f"{list(shape)} has {_numel(shape)}")
    for i in range(len(boxes) - 1):
        if volumes[i] and np.any(np.all((starts[i] < stops[i + 1:]) & (starts[i + 1:] < stops[i]), axis=1)):
            raise corrupt(path, f"tensor {name!r}: its slices overlap")
