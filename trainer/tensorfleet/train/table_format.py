"""TensorFlow's table format (LevelDB's SSTable without filter blocks): the layout of a checkpoint's `P.index`.

Bottom of the checkpoint stack (`checkpoint_io` -> `tensor_bundle` -> here): sorted byte keys to byte values,
written and read whole (an index holds one small entry per tensor). The layout, as TensorFlow's
`tensorflow/core/lib/io/table_builder.cc` writes it (so that the bytes are the same as TF's):

    data block*  metaindex block  index block  footer(48 bytes)

- A block is its entries, then its restart array (uint32 little-endian offsets of the entries whose key is
  stored whole) and the array's length (uint32), then a 5-byte trailer: the compression type (0 = none, the
  only kind TF's bundle writer uses) and the masked crc32c of the block and that type byte.
- An entry is varint32 `shared` (bytes of the previous key it reuses), varint32 `non_shared`, varint32
  `value_len`, the key's new bytes, the value. Every 16th entry of a data block restarts (`shared` = 0);
  every entry of the index block does.
- A data block is closed once its size estimate (bytes + 4 per restart + 4) reaches 256 KiB. The index block
  maps a key >= the block's last key and < the next block's first (TF's shortest separator; after the last
  block, the short successor of its last key) to the block's handle (varint64 offset, varint64 size).
- The metaindex block is empty. The footer is the metaindex and index handles, zero-padded to 40 bytes, then
  the magic number 0xdb4775248b80fb57 as two little-endian uint32 (low word first).

crc32c masking is LevelDB's: ((crc >> 15) | (crc << 17)) + 0xa282ead8, modulo 2**32.
Reading checks everything (footer, handles inside the file, every block's checksum, entry bounds, restart
points, keys strictly increasing, index keys bounding their blocks); any violation is a `FormatError`, which
`tensor_bundle` reports as a `DataLossError` naming the file. Nothing here allocates more than the file's size.
"""
from __future__ import annotations

import struct

import google_crc32c

__all__: list = []

MAGIC = 0xDB4775248B80FB57
FOOTER_SIZE = 48
_HANDLES_SIZE = 40
_TRAILER_SIZE = 5
BLOCK_SIZE = 262144
RESTART_INTERVAL = 16
_MASK_DELTA = 0xA282EAD8
_U32 = 0xFFFFFFFF


def crc32c(data: bytes, crc: int = 0) -> int:
    """crc32c of `data` (bytes), continuing `crc`."""
    return google_crc32c.extend(crc, data)


def mask(crc: int) -> int:
    return (((crc >> 15) | (crc << 17)) + _MASK_DELTA) & _U32


def unmask(masked: int) -> int:
    rot = (masked - _MASK_DELTA) & _U32
    return ((rot >> 17) | (rot << 15)) & _U32


def put_varint(out: bytearray, value: int) -> None:
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)


def varint(value: int) -> bytes:
    out = bytearray()
    put_varint(out, value)
    return bytes(out)


class FormatError(ValueError):
    """A malformed byte sequence (the caller names the file)."""


def get_varint(buf, pos: int, limit: int, max_bytes: int = 10) -> tuple:
    """(value, next position) of the varint at `pos`; FormatError past `limit` or longer than `max_bytes`."""
    value = shift = 0
    for i in range(max_bytes):
        if pos + i >= limit:
            raise FormatError(f"a varint at offset {pos} runs past its end ({limit})")
        byte = buf[pos + i]
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            if value >> (32 if max_bytes <= 5 else 64):
                raise FormatError(f"a varint at offset {pos} overflows")
            return value, pos + i + 1
        shift += 7
    raise FormatError(f"a varint at offset {pos} is longer than {max_bytes} bytes")


# -- writing ------------------------------------------------------------------
class _BlockBuilder:
    def __init__(self, restart_interval: int):
        self.interval = restart_interval
        self.buf = bytearray()
        self.restarts = [0]
        self.counter = 0
        self.last_key = b""

    def add(self, key: bytes, value: bytes) -> None:
        shared = 0
        if self.counter < self.interval:
            limit = min(len(self.last_key), len(key))
            while shared < limit and self.last_key[shared] == key[shared]:
                shared += 1
        else:
            self.restarts.append(len(self.buf))
            self.counter = 0
        put_varint(self.buf, shared)
        put_varint(self.buf, len(key) - shared)
        put_varint(self.buf, len(value))
        self.buf += key[shared:]
        self.buf += value
        self.last_key = key
        self.counter += 1

    def size_estimate(self) -> int:
        return len(self.buf) + 4 * len(self.restarts) + 4

    def finish(self) -> bytes:
        return bytes(self.buf) + struct.pack(f"<{len(self.restarts)}I", *self.restarts) + \
            struct.pack("<I", len(self.restarts))


def _shortest_separator(start: bytes, limit: bytes) -> bytes:
    """TF's: a short key >= start and < limit (start itself when one is a prefix of the other)."""
    n = min(len(start), len(limit))
    i = 0
    while i < n and start[i] == limit[i]:
        i += 1
    if i < n and start[i] < 0xFF and start[i] + 1 < limit[i]:
        return start[:i] + bytes([start[i] + 1])
    return start


def _short_successor(key: bytes) -> bytes:
    """TF's: a short key >= key (the first byte that can be incremented, incremented; the rest dropped)."""
    for i, byte in enumerate(key):
        if byte != 0xFF:
            return key[:i] + bytes([byte + 1])
    return key


def build_table(items) -> bytes:
    """The table file holding `items` ((key bytes, value bytes), keys strictly increasing), as TF writes it."""
    out = bytearray()

    def write_block(block: _BlockBuilder) -> bytes:
        raw = block.finish()
        handle = varint(len(out)) + varint(len(raw))
        out.extend(raw)
        out.extend(b"\0" + struct.pack("<I", mask(crc32c(b"\0", crc32c(raw)))))
        return handle

    data, index = _BlockBuilder(RESTART_INTERVAL), _BlockBuilder(1)
    pending, last_key, count = None, b"", 0
    for key, value in items:
        if count and key <= last_key:
            raise ValueError(f"table keys must be strictly increasing: {key!r} after {last_key!r}")
        if count and len(key) + len(value) >= 2 * BLOCK_SIZE and data.buf:
            pending, data = write_block(data), _BlockBuilder(RESTART_INTERVAL)
        if pending is not None:
            index.add(_shortest_separator(last_key, key), pending)
            pending = None
        last_key, count = key, count + 1
        data.add(key, value)
        if data.size_estimate() >= BLOCK_SIZE:
            pending, data = write_block(data), _BlockBuilder(RESTART_INTERVAL)
    if data.buf:
        pending = write_block(data)
    metaindex = write_block(_BlockBuilder(RESTART_INTERVAL))
    if pending is not None:
        index.add(_short_successor(last_key), pending)
    handles = metaindex + write_block(index)
    out.extend(handles + b"\0" * (_HANDLES_SIZE - len(handles)) + struct.pack("<Q", MAGIC))
    return bytes(out)


# -- reading ------------------------------------------------------------------
def _handle(buf, pos: int, limit: int) -> tuple:
    offset, pos = get_varint(buf, pos, limit)
    size, pos = get_varint(buf, pos, limit)
    return offset, size, pos


def _block(raw: bytes, offset: int, size: int, end: int, what: str) -> bytes:
    if offset + size + _TRAILER_SIZE > end:
        raise FormatError(f"the {what} block ({size} bytes at offset {offset}) runs past the blocks' end ({end})")
    contents = raw[offset:offset + size]
    kind = raw[offset + size]
    (stored,) = struct.unpack_from("<I", raw, offset + size + 1)
    if unmask(stored) != crc32c(bytes([kind]), crc32c(contents)):
        raise FormatError(f"the {what} block at offset {offset} fails its checksum")
    if kind != 0:
        raise FormatError(f"the {what} block at offset {offset} has compression type {kind} (only uncompressed "
                          f"blocks, as TensorFlow writes checkpoint indexes, are read)")
    return contents


def block_entries(block: bytes, what: str) -> list:
    """The (key, value) pairs of a block, in order; FormatError if anything does not add up."""
    if len(block) < 4:
        raise FormatError(f"the {what} block is {len(block)} bytes, shorter than its restart count")
    (num_restarts,) = struct.unpack_from("<I", block, len(block) - 4)
    if num_restarts == 0 or 4 * (num_restarts + 1) > len(block):
        raise FormatError(f"the {what} block's restart count {num_restarts} does not fit its {len(block)} bytes")
    end = len(block) - 4 * (num_restarts + 1)
    restarts = struct.unpack_from(f"<{num_restarts}I", block, end)
    entries, key, pos, starts = [], b"", 0, set()
    while pos < end:
        start = pos
        shared, pos = get_varint(block, pos, end, 5)
        non_shared, pos = get_varint(block, pos, end, 5)
        value_len, pos = get_varint(block, pos, end, 5)
        if shared > len(key) or pos + non_shared + value_len > end:
            raise FormatError(f"the {what} block's entry at offset {start} runs past the entries' end ({end})")
        if shared == 0:
            starts.add(start)
        key = key[:shared] + block[pos:pos + non_shared]
        pos += non_shared
        entries.append((key, block[pos:pos + value_len]))
        pos += value_len
    valid = (list(restarts) == [0]) if not entries else \
        (restarts[0] == 0 and all(r in starts for r in restarts) and list(restarts) == sorted(set(restarts)))
    if not valid:
        raise FormatError(f"the {what} block's restart points {list(restarts[:8])} are not entry boundaries")
    return entries


def _index(raw: bytes) -> tuple:
    """(the index block's entries, where the blocks end) of a table file's bytes, its footer checked."""
    if len(raw) < FOOTER_SIZE:
        raise FormatError(f"{len(raw)} bytes, shorter than the table footer ({FOOTER_SIZE} bytes)")
    footer = len(raw) - FOOTER_SIZE
    (magic,) = struct.unpack_from("<Q", raw, len(raw) - 8)
    if magic != MAGIC:
        raise FormatError(f"not a TensorFlow table (bad magic number {magic:#018x})")
    meta_offset, meta_size, pos = _handle(raw, footer, footer + _HANDLES_SIZE)
    index_offset, index_size, pos = _handle(raw, pos, footer + _HANDLES_SIZE)
    _block(raw, meta_offset, meta_size, footer, "metaindex")
    return block_entries(_block(raw, index_offset, index_size, footer, "index"), "index"), footer


def _data_block(raw: bytes, i: int, handle: bytes, end: int) -> list:
    offset, size, used = _handle(handle, 0, len(handle))
    if used != len(handle):
        raise FormatError(f"index entry {i} has {len(handle) - used} bytes after its block handle")
    entries = block_entries(_block(raw, offset, size, end, f"data #{i}"), f"data #{i}")
    if not entries:
        raise FormatError(f"data block #{i} is empty")
    return entries


def first_entry(raw: bytes) -> tuple:
    """The first (key, value) of a table file's bytes (reading only its footer, index and first data block)."""
    index, end = _index(raw)
    if not index:
        raise FormatError("the table has no data block")
    return _data_block(raw, 0, index[0][1], end)[0]


def read_table(raw: bytes) -> list:
    """Every (key, value) of a table file's bytes, in key order; FormatError if it is not a valid table."""
    index, footer = _index(raw)
    out: list = []
    for i, (bound, handle) in enumerate(index):
        entries = _data_block(raw, i, handle, footer)
        for key, value in entries:
            if out and key <= out[-1][0]:
                raise FormatError(f"keys out of order: {key[:64]!r} after {out[-1][0][:64]!r}")
            out.append((key, value))
        if entries[-1][0] > bound or (i and index[i - 1][0] >= entries[0][0]):
            raise FormatError(f"index entry {i} does not bound its data block's keys")
    return out
