"""An independent reader of TensorFlow's checkpoint format (tensor bundle V2), for tests only.

Written from the formats' documentation, not from tensorfleet's reader or writer (it imports nothing of
tensorfleet): LevelDB's table format (doc/table_format.txt: blocks with prefix-compressed entries and restart
points, a 5-byte block trailer of type + masked crc32c, the 48-byte footer ending in the magic number
0xdb4775248b80fb57), the protobuf wire format, TensorFlow's tensor_bundle.proto / tensor_shape.proto /
tensor_slice.proto field numbers, and tensor_bundle.h's data layout (fixed-size tensors as little-endian bytes;
strings as varint64 lengths, a masked crc32c of the lengths, then the bytes). crc32c is computed bit by bit
from its definition (the Castagnoli polynomial, reflected 0x82F63B78), so not even the checksum library is
shared. Partitioned tensors are assembled by decoding the slice keys (OrderedCode), not by encoding them.

`read_bundle(prefix)` returns (header fields, {name: numpy array}) and asserts every checksum and structural
rule on the way (an AssertionError is a test failure).
"""
from __future__ import annotations

import struct

import numpy as np

_TABLE = []
for _i in range(256):
    _c = _i
    for _ in range(8):
        _c = (_c >> 1) ^ 0x82F63B78 if _c & 1 else _c >> 1
    _TABLE.append(_c)


def crc32c(data: bytes, crc: int = 0) -> int:
    crc ^= 0xFFFFFFFF
    for b in data:
        crc = _TABLE[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def masked(crc: int) -> int:
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def _varint(buf: bytes, pos: int):
    result = shift = 0
    while True:
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return result, pos


def proto_fields(buf: bytes) -> dict:
    """Protobuf wire format: field number -> list of values (ints for varint/fixed, bytes for length-delimited)."""
    out: dict = {}
    pos = 0
    while pos < len(buf):
        key, pos = _varint(buf, pos)
        field, wire = key >> 3, key & 7
        if wire == 0:
            value, pos = _varint(buf, pos)
        elif wire == 5:
            value, pos = struct.unpack_from("<I", buf, pos)[0], pos + 4
        elif wire == 1:
            value, pos = struct.unpack_from("<Q", buf, pos)[0], pos + 8
        else:
            assert wire == 2, f"unexpected wire type {wire}"
            n, pos = _varint(buf, pos)
            value, pos = buf[pos:pos + n], pos + n
        out.setdefault(field, []).append(value)
    assert pos == len(buf)
    return out


def _signed64(v: int) -> int:
    return v - (1 << 64) if v >= 1 << 63 else v


def _block(raw: bytes, offset: int, size: int) -> list:
    contents, kind = raw[offset:offset + size], raw[offset + size]
    (stored,) = struct.unpack_from("<I", raw, offset + size + 1)
    assert kind == 0, "TensorFlow writes bundle indexes uncompressed"
    assert stored == masked(crc32c(contents + bytes([kind]))), f"block at {offset}: bad checksum"
    (n_restarts,) = struct.unpack_from("<I", contents, len(contents) - 4)
    restarts = struct.unpack_from(f"<{n_restarts}I", contents, len(contents) - 4 - 4 * n_restarts)
    end = len(contents) - 4 - 4 * n_restarts
    entries, key, pos = [], b"", 0
    while pos < end:
        here = pos
        shared, pos = _varint(contents, pos)
        unshared, pos = _varint(contents, pos)
        vlen, pos = _varint(contents, pos)
        assert here not in restarts or shared == 0, "a restart point must hold a whole key"
        key = key[:shared] + contents[pos:pos + unshared]
        entries.append((key, contents[pos + unshared:pos + unshared + vlen]))
        pos += unshared + vlen
    assert pos == end and restarts[0] == 0
    return entries


def read_table(raw: bytes) -> list:
    """Every (key, value) of a table, in order."""
    return [entry for block in table_blocks(raw) for entry in block]


def table_blocks(raw: bytes) -> list:
    """The table's data blocks, each a list of (key, value)."""
    assert len(raw) >= 48 and struct.unpack_from("<Q", raw, len(raw) - 8)[0] == 0xDB4775248B80FB57
    footer = raw[-48:]
    meta_off, pos = _varint(footer, 0)
    meta_size, pos = _varint(footer, pos)
    index_off, pos = _varint(footer, pos)
    index_size, pos = _varint(footer, pos)
    assert _block(raw, meta_off, meta_size) == [], "the metaindex block is empty"
    blocks, separators = [], []
    for separator, handle in _block(raw, index_off, index_size):
        off, p = _varint(handle, 0)
        size, _ = _varint(handle, p)
        block = _block(raw, off, size)
        assert block and block[-1][0] <= separator, "an index key is >= its block's last key"
        assert not separators or separators[-1] < block[0][0], "and < the next block's first key"
        blocks.append(block)
        separators.append(separator)
    keys = [k for block in blocks for k, _ in block]
    assert keys == sorted(set(keys)), "keys strictly increasing"
    return blocks


_DTYPES = {1: "<f4", 2: "<f8", 3: "<i4", 4: "u1", 5: "<i2", 6: "i1", 8: "<c8", 9: "<i8", 10: "?", 17: "<u2",
           18: "<c16", 19: "<f2", 22: "<u4", 23: "<u8"}


def _entry(value: bytes) -> dict:
    f = proto_fields(value)
    shape_fields = proto_fields(f.get(2, [b""])[0])
    dims = [_signed64(proto_fields(d).get(1, [0])[0]) for d in shape_fields.get(2, [])]
    slices = []
    for s in f.get(7, []):
        extents = []
        for e in proto_fields(s).get(1, []):
            ef = proto_fields(e)
            extents.append((ef.get(1, [0])[0], ef[2][0] if 2 in ef else None))
        slices.append(extents)
    return {"dtype": f.get(1, [0])[0], "shape": dims, "shard": f.get(3, [0])[0], "offset": f.get(4, [0])[0],
            "size": f.get(5, [0])[0], "crc": f.get(6, [0])[0], "slices": slices}


def _strings(raw: bytes, count: int, crc_stored: int) -> np.ndarray:
    pos, lengths, crc = 0, [], 0
    for _ in range(count):
        n, pos = _varint(raw, pos)
        lengths.append(n)
        crc = crc32c(struct.pack("<I", n) if n < 2 ** 32 else struct.pack("<Q", n), crc)
    (length_crc,) = struct.unpack_from("<I", raw, pos)
    assert length_crc == masked(crc), "the string lengths' checksum"
    crc = crc32c(raw[pos:pos + 4], crc)
    pos += 4
    values = []
    for n in lengths:
        values.append(raw[pos:pos + n])
        pos += n
    assert pos == len(raw)
    assert masked(crc32c(raw[len(raw) - sum(lengths):], crc)) == crc_stored, "the string tensor's checksum"
    arr = np.empty(count, dtype=object)
    arr[:] = values
    return arr


def decode_slice_key(key: bytes):
    """(name, [(start, length)]) of an OrderedCode slice key: 0, escaped name + \\x00\\x01, rank, signed pairs."""
    assert key[0] == 0
    pos, name = 1, bytearray()
    while key[pos:pos + 2] != b"\x00\x01":
        if key[pos] in (0, 0xFF):
            name.append({b"\x00\xff": 0, b"\xff\x00": 0xFF}[key[pos:pos + 2]])
            pos += 2
        else:
            name.append(key[pos])
            pos += 1
    pos += 2
    nbytes = key[pos]
    rank = int.from_bytes(key[pos + 1:pos + 1 + nbytes], "big")
    pos += 1 + nbytes
    numbers = []
    while pos < len(key):
        value, pos = decode_signed(key, pos)
        numbers.append(value)
    assert len(numbers) == 2 * rank
    return name.decode(), list(zip(numbers[::2], numbers[1::2], strict=True))


def decode_signed(key: bytes, pos: int):
    """OrderedCode's signed number: sign bit, then as many length bits (equal to the sign) as extra bytes."""
    negative = not key[pos] & 0x80
    bits = "".join(f"{(b ^ 0xFF) if negative else b:08b}" for b in key[pos:pos + 10])
    extra = len(bits[1:]) - len(bits[1:].lstrip("1"))
    length = extra + 1
    payload = bits[length + 1:8 * length]
    value = int(payload, 2) if payload else 0
    return (~value if negative else value), pos + length


def read_bundle(prefix: str):
    """(header dict, {name: numpy array}) of checkpoint `prefix`, every checksum verified."""
    with open(prefix + ".index", "rb") as f:
        table = read_table(f.read())
    assert table[0][0] == b""
    header = proto_fields(table[0][1])
    num_shards = header[1][0]
    assert header.get(2, [0])[0] == 0, "little-endian"
    entries = {k: _entry(v) for k, v in table[1:]}
    data: dict = {}

    def value(e: dict) -> np.ndarray:
        if e["shard"] not in data:
            with open(f"{prefix}.data-{e['shard']:05d}-of-{num_shards:05d}", "rb") as f:
                data[e["shard"]] = f.read()
        raw = data[e["shard"]][e["offset"]:e["offset"] + e["size"]]
        assert len(raw) == e["size"]
        count = int(np.prod(e["shape"], dtype=np.int64))
        if e["dtype"] == 7:
            return _strings(raw, count, e["crc"]).reshape(e["shape"])
        assert masked(crc32c(raw)) == e["crc"], "the tensor's checksum"
        return np.frombuffer(raw, dtype=_DTYPES[e["dtype"]]).reshape(e["shape"]).copy()

    slices: dict = {}
    for key, e in entries.items():
        if key[:1] == b"\x00":
            name, extents = decode_slice_key(key)
            slices.setdefault(name, []).append((extents, value(e)))
    out = {}
    for key, e in entries.items():
        if key[:1] == b"\x00":
            continue
        name = key.decode()
        if not e["slices"]:
            out[name] = value(e)
            continue
        full = np.empty(e["shape"], dtype=object if e["dtype"] == 7 else _DTYPES[e["dtype"]])
        stored = slices[name]
        assert sorted(ex for ex, _ in stored) == sorted(
            [(s, -1 if n is None else n) for s, n in ext] for ext in e["slices"])
        for extents, part in stored:
            full[tuple(slice(s, None if n == -1 else s + n) for s, n in extents)] = part
        out[name] = full
    return {"num_shards": num_shards, "version": proto_fields(header[3][0]) if 3 in header else {}}, out
