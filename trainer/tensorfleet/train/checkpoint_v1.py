"""Reading tensorfleet's own checkpoint format v1 (a JSON `P.index`), which earlier versions wrote.

Read-only: `checkpoint_io` detects it by content (a JSON object, where TF's table format ends with its magic
number) so that checkpoints already on disk keep restoring; nothing writes it any more. Its layout
(docs/checkpoint-format.md, "Reading the v1 format"):

    {"format": "tensorfleet-checkpoint", "version": 1, "data_file": "<data file's base name>",
     "data_size": <bytes>, "tensors": {key: {"dtype": "float32", "shape": [..], "offset": o,
     "length": n, "crc32": c}}, "header_crc32": h}

c is zlib.crc32 of the tensor's bytes (little-endian, C order; a string tensor is each element's uint64
little-endian length then its bytes); h is zlib.crc32 of the UTF-8 JSON of the document without
"header_crc32" (sorted keys, separators "," and ":"). Every malformed document, entry or data range is a
`DataLossError` naming the file (deep nesting and non-integer numbers included).
"""
from __future__ import annotations

import json
import os
import re
import zlib

import numpy as np

from .. import dtypes as _dtypes
from .. import errors

__all__: list = []

FORMAT_NAME = "tensorfleet-checkpoint"
FORMAT_VERSION = 1
DATA_NAME = r"\.data-\d{5}-of-\d{5}(?:\.[0-9a-f]+)?"
_DTYPES = {d.name: d for d in (_dtypes.float16, _dtypes.float32, _dtypes.float64, _dtypes.int8, _dtypes.int16,
                               _dtypes.int32, _dtypes.int64, _dtypes.uint8, _dtypes.bool_, _dtypes.string)}


def _loss(msg: str) -> errors.DataLossError:
    return errors.DataLossError(None, None, msg)


def _is_int(x) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def header_crc(doc: dict) -> int:
    body = {k: v for k, v in doc.items() if k != "header_crc32"}
    return zlib.crc32(json.dumps(body, sort_keys=True, separators=(",", ":")).encode("utf-8"))


def _entry_ok(e, size: int) -> bool:
    if not isinstance(e, dict) or not isinstance(e.get("dtype"), str) or e["dtype"] not in _DTYPES \
            or not isinstance(e.get("shape"), list):
        return False
    shape, offset, length = e["shape"], e.get("offset"), e.get("length")
    if len(shape) > 64 or not all(_is_int(d) and d >= 0 for d in shape) or not _is_int(e.get("crc32")) \
            or not _is_int(offset) or not _is_int(length) or offset < 0 or offset + length > size:
        return False
    count = int(np.prod(shape, dtype=object))
    dt = _DTYPES[e["dtype"]]
    return length >= 8 * count if dt is _dtypes.string else length == count * dt.size


class V1Index:
    """A parsed, verified v1 index: the same reading interface as `tensor_bundle.BundleIndex`."""

    def __init__(self, prefix: str, raw: bytes):
        self.prefix, self.path, self.raw = prefix, prefix + ".index", raw
        try:
            doc = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError, RecursionError) as e:
            raise _loss(f"Checkpoint index {self.path} is not a checkpoint index (not valid JSON: "
                        f"{type(e).__name__})") from None
        if not isinstance(doc, dict) or doc.get("format") != FORMAT_NAME:
            raise _loss(f"Checkpoint index {self.path} is not a tensorfleet checkpoint index (missing format "
                        f"marker {FORMAT_NAME!r})")
        if doc.get("version") != FORMAT_VERSION or isinstance(doc.get("version"), bool):
            raise _loss(f"Checkpoint index {self.path} has unsupported format version {doc.get('version')!r} "
                        f"(this reader supports {FORMAT_VERSION})")
        try:
            crc = header_crc(doc)
        except (ValueError, TypeError, RecursionError):
            crc = None
        if doc.get("header_crc32") != crc or crc is None:
            raise _loss(f"Checkpoint index {self.path} is corrupt: header checksum mismatch")
        data_file, tensors, size = doc.get("data_file"), doc.get("tensors"), doc.get("data_size")
        if data_file is not None and (not isinstance(data_file, str) or os.path.basename(data_file) != data_file
                                      or data_file in ("", ".", "..") or "\0" in data_file):
            raise _loss(f"Checkpoint index {self.path} is corrupt: data_file {data_file!r} is not a file name in "
                        f"the checkpoint's directory")
        if not isinstance(tensors, dict) or not _is_int(size) or size < 0:
            raise _loss(f"Checkpoint index {self.path} is corrupt: missing 'tensors' or 'data_size'")
        for key, e in tensors.items():
            if not _entry_ok(e, size):
                raise _loss(f"Checkpoint index {self.path} is corrupt: bad entry for tensor {key!r}: {e!r:.200}")
        self.data_file = data_file or os.path.basename(prefix + ".data-00000-of-00001")
        self.data_size = size
        self._tensors = tensors
        self.shapes = {k: tuple(e["shape"]) for k, e in tensors.items()}

    def dtype(self, name: str) -> _dtypes.DType:
        return _DTYPES[self._tensors[name]["dtype"]]

    def data_files(self, names) -> dict:
        """{0: the data file}: its `data_file` next to the index, or, if the files were renamed to a new prefix
        (mv old.* new.*), the same data suffix on this prefix."""
        path = os.path.join(os.path.dirname(self.prefix), self.data_file)
        suffix = re.search(DATA_NAME + "$", self.data_file)
        if not os.path.exists(path) and suffix and os.path.exists(self.prefix + suffix.group(0)):
            path = self.prefix + suffix.group(0)
        return {0: path}

    def read(self, name: str, files: dict) -> np.ndarray:
        e = self._tensors[name]
        path = self.data_files([name])[0]
        found = os.fstat(files[0].fileno()).st_size
        if found != self.data_size:
            what = "truncated" if found < self.data_size else "corrupt (too long)"
            raise _loss(f"Checkpoint data file {path} is {what}: expected {self.data_size} bytes, found {found}")
        raw = os.pread(files[0].fileno(), e["length"], e["offset"])
        crc = zlib.crc32(raw)
        if crc != e["crc32"]:
            raise _loss(f"Checkpoint data file {path} is corrupt: checksum mismatch for tensor {name!r} (expected "
                        f"crc32 {e['crc32']}, got {crc})")
        dt = self.dtype(name)
        if dt is _dtypes.string:
            return _decode_strings(raw, e["shape"], f"tensor {name!r} in {path}")
        return np.frombuffer(raw, dtype=dt.np_dtype.newbyteorder("<")).astype(dt.np_dtype).reshape(e["shape"])


def _decode_strings(raw: bytes, shape, what: str) -> np.ndarray:
    count = int(np.prod(shape, dtype=np.int64))
    out, pos = np.empty(count, dtype=object), 0
    for i in range(count):
        n = int.from_bytes(raw[pos:pos + 8], "little") if pos + 8 <= len(raw) else -1
        if n < 0 or pos + 8 + n > len(raw):
            raise _loss(f"Checkpoint {what} is corrupt: string element {i} runs past the tensor's bytes")
        out[i] = raw[pos + 8:pos + 8 + n]
        pos += 8 + n
    if pos != len(raw):
        raise _loss(f"Checkpoint {what} is corrupt: {len(raw) - pos} bytes after the last string element")
    return out.reshape(shape)
