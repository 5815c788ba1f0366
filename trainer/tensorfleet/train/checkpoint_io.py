"""Checkpoint files: writing and verified reading of tensorfleet checkpoints (used by `train/saver.py`).

On-disk format (tensorfleet checkpoint v1, full spec in docs/checkpoint-format.md).
A checkpoint with prefix P is two files:
  P.data-00000-of-00001  the tensors' raw little-endian bytes (C order), concatenated,
                         each starting at an 8-byte aligned offset (zero padding between);
  P.index                UTF-8 JSON: {"format": "tensorfleet-checkpoint", "version": 1,
                         "data_file": "<basename of the data file>", "data_size": <bytes>,
                         "tensors": {key: {"dtype": "float32", "shape": [..], "offset": o,
                         "length": n, "crc32": c}}, "header_crc32": h}
                         where c = zlib.crc32 of the tensor's bytes and h = zlib.crc32 of the
                         UTF-8 JSON of the document without "header_crc32"
                         (json.dumps(..., sort_keys=True, separators=(",", ":"))).
No pickle anywhere. Writes are atomic, the index rename being the only commit point:
the data goes to a temp file renamed to a name no index refers to (TF's name, or
when the prefix's index already refers to that, TF's name + "." + 16 hex digits),
the index to a temp file renamed over P.index last; the superseded data file is
removed after. So at every instant P restores the old or the new checkpoint whole.
Temp files are `<final name>.tempstate<digits>`, created 0666 less the umask;
`remove_stale_files` removes those a killed save left. The `checkpoint` state
file (TF's text format: `model_checkpoint_path: "..."` and
`all_model_checkpoint_paths: "..."` lines) is also replaced via temp file + rename.
Restore reads and verifies everything (index checksum, data size, every tensor's
crc32, dtype and shape against the graph's variables) before assigning any
variable: a failed restore leaves all variables untouched.
"""
from __future__ import annotations

import errno
import json
import os
import re
import secrets
import zlib

import numpy as np

from .. import dtypes as _dtypes
from .. import errors
from ..platform.atomic_file import create_new, fsync_dir

__all__: list = []

FORMAT_NAME = "tensorfleet-checkpoint"
FORMAT_VERSION = 1
DATA_SUFFIX = ".data-00000-of-00001"
INDEX_SUFFIX = ".index"
_ALIGN = 8
SAVEABLE_DTYPES = (_dtypes.float16, _dtypes.float32, _dtypes.float64, _dtypes.int8, _dtypes.int16, _dtypes.int32,
                   _dtypes.int64, _dtypes.uint8, _dtypes.bool_, _dtypes.string)


class CheckpointNotFoundError(errors.NotFoundError, ValueError):
    """A missing checkpoint: tf.errors.NotFoundError, and a ValueError like TF 1.15's Saver.restore raises."""


# -- low-level file helpers ---------------------------------------------------
def write_temp(directory: str, final_name: str, chunks) -> str:
    """Writes `chunks` (bytes-likes) to a new temp file next to `final_name`, fsynced; returns its path."""
    fd, tmp = create_new(os.path.join(directory, os.path.basename(final_name)))
    try:
        with os.fdopen(fd, "wb") as f:
            for c in chunks:
                f.write(c)
            f.flush()
            os.fsync(f.fileno())
    except BaseException:
        remove_quietly(tmp)
        raise
    return tmp


def os_error(e: OSError, what: str) -> errors.OpError:
    """TF's error class for a failed file operation on `what` (a checkpoint prefix or file)."""
    detail = f"{e.strerror or e}" + (f" ({e.filename})" if e.filename else "")
    if isinstance(e, PermissionError):
        return errors.PermissionDeniedError(None, None, f"{what}: Permission denied: {detail}")
    if e.errno in (errno.ENOSPC, errno.EDQUOT):
        return errors.ResourceExhaustedError(None, None, f"{what}: {detail}")
    if isinstance(e, FileNotFoundError):
        return errors.NotFoundError(None, None, f"{what}: {detail}")
    return errors.UnknownError(None, None, f"{what}: {detail}")


def remove_quietly(path: str) -> None:
    try:
        os.remove(path)
    except OSError:
        pass


def _header_crc(doc: dict) -> int:
    body = {k: v for k, v in doc.items() if k != "header_crc32"}
    return zlib.crc32(json.dumps(body, sort_keys=True, separators=(",", ":")).encode("utf-8"))


def write_checkpoint(prefix: str, tensors: dict) -> None:
    """Writes `tensors` (key -> numpy array) as checkpoint `prefix`, atomically: the data goes to a file no
    index refers to yet, and renaming the index over `prefix.index` is the only commit point."""
    directory = os.path.dirname(prefix)
    data_name = _new_data_name(prefix)
    data_path, index_path = os.path.join(directory, data_name), prefix + INDEX_SUFFIX
    entries, chunks, offset = {}, [], 0
    for key in sorted(tensors):
        arr = np.asarray(tensors[key])
        dt = _dtypes.as_dtype(arr.dtype)
        if dt not in SAVEABLE_DTYPES:
            raise TypeError(f"Cannot save tensor {key!r} of dtype {arr.dtype}")
        raw = encode_strings(arr) if dt is _dtypes.string else \
            np.ascontiguousarray(arr, dtype=arr.dtype.newbyteorder("<")).tobytes()
        pad = (-offset) % _ALIGN
        if pad:
            chunks.append(b"\0" * pad)
            offset += pad
        entries[key] = {"dtype": dt.name, "shape": list(arr.shape), "offset": offset, "length": len(raw),
                        "crc32": zlib.crc32(raw)}
        chunks.append(raw)
        offset += len(raw)
    doc = {"format": FORMAT_NAME, "version": FORMAT_VERSION, "data_file": data_name,
           "data_size": offset, "tensors": entries}
    doc["header_crc32"] = _header_crc(doc)
    index_bytes = (json.dumps(doc, sort_keys=True, indent=1) + "\n").encode("utf-8")
    tmp_data = write_temp(directory, data_path, chunks)
    try:
        tmp_index = write_temp(directory, index_path, [index_bytes])
    except BaseException:
        remove_quietly(tmp_data)
        raise
    try:
        os.replace(tmp_data, data_path)  # a name no index refers to yet: the old checkpoint stays whole
    except BaseException:
        remove_quietly(tmp_data)
        remove_quietly(tmp_index)
        raise
    try:
        os.replace(tmp_index, index_path)  # the commit point
    except BaseException:
        remove_quietly(tmp_index)
        remove_quietly(data_path)  # nothing refers to the new data file
        raise
    fsync_dir(directory)
    _remove_unreferenced_data(prefix, keep=data_name)  # the superseded data file


# -- data file names and stale files ------------------------------------------
_UNREADABLE = object()  # an index exists but is not ours / not readable: keep every file it might refer to
_DATA_NAME = r"\.data-\d{5}-of-\d{5}(?:\.[0-9a-f]+)?"
_TEMP_NAME = r"\.tempstate\d+"


def _referenced_data_file(prefix: str):
    """The data file name `prefix.index` refers to; None without an index; _UNREADABLE if unparseable."""
    try:
        with open(prefix + INDEX_SUFFIX, "rb") as f:
            doc = json.loads(f.read().decode("utf-8"))
        return doc.get("data_file") or os.path.basename(prefix + DATA_SUFFIX)
    except FileNotFoundError:
        return None
    except (OSError, ValueError, AttributeError):
        return _UNREADABLE


def _new_data_name(prefix: str) -> str:
    """TF's name when no index refers to it, else the same with a unique suffix (the old one stays whole)."""
    canonical = os.path.basename(prefix + DATA_SUFFIX)
    ref = _referenced_data_file(prefix)
    if ref is None or (ref is not _UNREADABLE and ref != canonical):
        return canonical
    return f"{canonical}.{secrets.token_hex(8)}"


def _remove_unreferenced_data(prefix: str, keep: str) -> None:
    directory = os.path.dirname(prefix) or "."
    pattern = re.compile(re.escape(os.path.basename(prefix)) + _DATA_NAME + f"(?:{_TEMP_NAME})?$")
    try:
        names = os.listdir(directory)
    except OSError:
        return
    for name in names:
        if name != keep and pattern.match(name):
            remove_quietly(os.path.join(directory, name))


def remove_checkpoint_files(prefix: str, meta_graph_suffix: str = "meta") -> None:
    """Deletes checkpoint `prefix`: its index first (from then on it no longer exists), then the data file the
    index referred to (TF's name or a unique one) and the meta graph file, if any."""
    ref = _referenced_data_file(prefix)
    remove_quietly(prefix + INDEX_SUFFIX)
    remove_quietly(prefix + DATA_SUFFIX)
    if isinstance(ref, str) and os.path.basename(ref) == ref:
        remove_quietly(os.path.join(os.path.dirname(prefix), ref))
    remove_quietly(f"{prefix}.{meta_graph_suffix}")


def remove_stale_files(save_path: str) -> None:
    """Removes what killed saves of `save_path` or `save_path-<step>` left behind: temporaries (of the index,
    data and `.meta` files), and data files that no index refers to. Files of a checkpoint whose index is
    not ours (unreadable) are kept."""
    directory = os.path.dirname(save_path) or "."
    pattern = re.compile(re.escape(os.path.basename(save_path)) + r"(-\d+)?(\.index|\.meta|" + _DATA_NAME + ")("
                         + _TEMP_NAME + ")?$")
    try:
        names = os.listdir(directory)
    except OSError:
        return
    refs: dict = {}
    for name in names:
        m = pattern.match(name)
        if m is None or (m.group(2) in (INDEX_SUFFIX, ".meta") and not m.group(3)):
            continue
        path = os.path.join(directory, name)
        if m.group(3):
            remove_quietly(path)  # a temporary: never part of a committed checkpoint
            continue
        prefix = os.path.join(directory, os.path.basename(save_path) + (m.group(1) or ""))
        if prefix not in refs:
            refs[prefix] = _referenced_data_file(prefix)
        ref = refs[prefix]
        if ref is None or (ref is not _UNREADABLE and ref != name):
            remove_quietly(path)


def encode_strings(arr: np.ndarray) -> bytes:
    """A tf.string tensor's bytes: for each element in C order, its length as uint64 little-endian, then it."""
    return b"".join(len(b).to_bytes(8, "little") + b for b in _dtypes.string_array(arr).reshape(-1))


def decode_strings(raw: bytes, shape, what: str) -> np.ndarray:
    """The inverse of `encode_strings`; DataLossError if the lengths do not account for exactly `raw`."""
    count = int(np.prod(shape, dtype=np.int64))
    out, pos = np.empty(count, dtype=object), 0
    for i in range(count):
        n = int.from_bytes(raw[pos:pos + 8], "little") if pos + 8 <= len(raw) else -1
        if n < 0 or pos + 8 + n > len(raw):
            raise _data_loss(f"Checkpoint {what} is corrupt: string element {i} runs past the tensor's bytes")
        out[i] = raw[pos + 8:pos + 8 + n]
        pos += 8 + n
    if pos != len(raw):
        raise _data_loss(f"Checkpoint {what} is corrupt: {len(raw) - pos} bytes after the last string element")
    return out.reshape(shape)


def _length_fits(dt, shape, length: int) -> bool:
    count = int(np.prod(shape, dtype=np.int64))
    if dt is _dtypes.string:  # variable-length: at least the 8-byte length of every element
        return length >= 8 * count
    return length == count * dt.np_dtype.itemsize


def _data_loss(msg: str):
    return errors.DataLossError(None, None, msg)


def _check_data_file(data_file, index_path: str) -> None:
    if data_file is not None and (not isinstance(data_file, str) or os.path.basename(data_file) != data_file
                                  or data_file in ("", ".", "..") or "/" in data_file):
        raise _data_loss(f"Checkpoint index {index_path} is corrupt: data_file {data_file!r} is not a file name "
                         f"in the checkpoint's directory")


def read_index(prefix: str) -> dict:
    """Parses and verifies `prefix.index`: NotFoundError if absent, DataLossError if not a valid index."""
    index_path = prefix + INDEX_SUFFIX
    try:
        with open(index_path, "rb") as f:
            raw = f.read()
    except FileNotFoundError:
        raise CheckpointNotFoundError(None, None, f"The passed save_path is not a valid checkpoint: {prefix} "
                                                   f"({index_path} not found)") from None
    except IsADirectoryError:
        raise _data_loss(f"Checkpoint index {index_path} is a directory, not a checkpoint index") from None
    if not raw:
        raise _data_loss(f"Checkpoint index {index_path} is empty (truncated or not a checkpoint)")
    try:
        doc = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as e:
        raise _data_loss(f"Checkpoint index {index_path} is not a tensorfleet checkpoint index "
                         f"(not valid JSON: {e})") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT_NAME:
        raise _data_loss(f"Checkpoint index {index_path} is not a tensorfleet checkpoint index "
                         f"(missing format marker {FORMAT_NAME!r})")
    if doc.get("version") != FORMAT_VERSION:
        raise _data_loss(f"Checkpoint index {index_path} has unsupported format version {doc.get('version')!r} "
                         f"(this reader supports {FORMAT_VERSION})")
    if doc.get("header_crc32") != _header_crc(doc):
        raise _data_loss(f"Checkpoint index {index_path} is corrupt: header checksum mismatch "
                         f"(stored {doc.get('header_crc32')!r}, computed {_header_crc(doc)})")
    _check_data_file(doc.get("data_file"), index_path)
    tensors = doc.get("tensors")
    size = doc.get("data_size")
    if not isinstance(tensors, dict) or not isinstance(size, int) or size < 0:
        raise _data_loss(f"Checkpoint index {index_path} is corrupt: missing 'tensors' or 'data_size'")
    for key, e in tensors.items():
        try:
            dt = _dtypes.as_dtype(e["dtype"])
            shape = tuple(int(d) for d in e["shape"])
            ok = (dt in SAVEABLE_DTYPES and all(d >= 0 for d in shape) and isinstance(e["offset"], int)
                  and isinstance(e["length"], int) and isinstance(e["crc32"], int) and e["offset"] >= 0
                  and _length_fits(dt, shape, e["length"])
                  and e["offset"] + e["length"] <= size)
        except (KeyError, TypeError, ValueError):
            ok = False
        if not ok:
            raise _data_loss(f"Checkpoint index {index_path} is corrupt: bad entry for tensor {key!r}: {e!r}")
    return doc


def _data_path(prefix: str, doc: dict) -> str:
    """The data file of an index: its `data_file` next to the index; if the files were renamed to a new
    prefix (mv old.* new.*), the same data suffix on this prefix."""
    name = doc.get("data_file") or os.path.basename(prefix + DATA_SUFFIX)
    path = os.path.join(os.path.dirname(prefix), name)
    suffix = re.search(_DATA_NAME + "$", name)
    if not os.path.exists(path) and suffix and os.path.exists(prefix + suffix.group(0)):
        return prefix + suffix.group(0)
    return path


def read_checkpoint(prefix: str, keys=None) -> dict:
    """Reads and verifies tensors (all, or `keys`) of checkpoint `prefix`; returns key -> numpy array.

    Everything is checked before anything is returned: index checksum, data-file size, per-tensor crc32.
    """
    for attempt in range(3):
        doc = read_index(prefix)
        data_path = _data_path(prefix, doc)
        try:
            with open(data_path, "rb") as f:
                data = f.read()
            break
        except FileNotFoundError:
            if attempt < 2 and read_index(prefix).get("data_file") != doc.get("data_file"):
                continue  # a save committed meanwhile and removed the data file it superseded: read the new one
            raise errors.NotFoundError(None, None, f"Checkpoint data file {data_path} not found (the index "
                                                   f"{prefix + INDEX_SUFFIX} refers to it)") from None
    if len(data) != doc["data_size"]:
        what = "truncated" if len(data) < doc["data_size"] else "corrupt (too long)"
        raise _data_loss(f"Checkpoint data file {data_path} is {what}: expected {doc['data_size']} bytes, "
                         f"found {len(data)}")
    out = {}
    entries = doc["tensors"]
    for key in (entries if keys is None else keys):
        e = entries.get(key)
        if e is None:
            raise errors.NotFoundError(None, None, f"Key {key} not found in checkpoint")
        raw = memoryview(data)[e["offset"]:e["offset"] + e["length"]]
        crc = zlib.crc32(raw)
        if crc != e["crc32"]:
            raise _data_loss(f"Checkpoint data file {data_path} is corrupt: checksum mismatch for tensor "
                             f"{key!r} (expected crc32 {e['crc32']}, got {crc})")
        dt = _dtypes.as_dtype(e["dtype"])
        if dt is _dtypes.string:
            arr = decode_strings(bytes(raw), e["shape"], f"tensor {key!r} in {data_path}")
        else:
            arr = np.frombuffer(raw, dtype=dt.np_dtype.newbyteorder("<")).astype(dt.np_dtype).reshape(e["shape"])
        out[key] = arr
    return out
