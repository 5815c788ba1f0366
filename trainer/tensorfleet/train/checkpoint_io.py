"""Checkpoint files: atomic writing of TensorFlow's checkpoint format (V2 tensor bundle) and verified reading of it
and of tensorfleet's earlier v1 format (used by `train/saver.py`, `checkpoint_utils`, `checkpoint_management`).

A checkpoint with prefix P is `P.index` (TF's table of BundleEntryProtos, `tensor_bundle`) and its data files
`P.data-<i>-of-<N>`, the names TF derives from P and the header's shard count N (spec:
docs/checkpoint-format.md). No pickle anywhere.

Writes are atomic, renaming the index over P.index being the only commit point: the data goes to a temp file
renamed to a name no index refers to, then the index to a temp file renamed over P.index; the superseded data
file is removed after. Since TF derives the data file's name from P, a save to a prefix whose index refers to
`P.data-00000-of-00001` writes its tensors as shard 0 of 2 (`P.data-00000-of-00002`, the header saying 2
shards; TF's reader opens only the shards its entries name), and the next save goes back to 1 shard: the old
checkpoint's data is never touched, so at every instant P restores the old or the new checkpoint whole.
Temp files are `<final name>.tempstate<digits>`, created 0666 less the umask; `remove_stale_files` removes
those a killed save left, and data files no index refers to.

Reading detects the format by content (TF's table ends with its magic number; a v1 index is JSON,
`checkpoint_v1`), opens the data files, then checks that P.index did not change meanwhile (a save may have
replaced it and removed the data it named: then it reads the new one, up to 3 tries). Every size and
checksum is verified before a value is returned; any malformed byte is a `DataLossError` naming the file.
"""
from __future__ import annotations

import errno
import os
import re

from .. import errors
from ..platform.atomic_file import create_new, fsync_dir
from .bundle_entries import MAX_SHARDS
from .checkpoint_v1 import DATA_NAME, V1Index
from .table_format import MAGIC
from .tensor_bundle import BundleIndex, BundleWriter, SlicedTensor, bundle_header_shards, data_filename

__all__: list = []

INDEX_SUFFIX = ".index"
_MAGIC_BYTES = MAGIC.to_bytes(8, "little")
_TEMP_NAME = r"\.tempstate\d+"


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


# -- reading ------------------------------------------------------------------
def _index_bytes(prefix: str) -> bytes:
    index_path = prefix + INDEX_SUFFIX
    try:
        with open(index_path, "rb") as f:
            return f.read()
    except FileNotFoundError:
        raise CheckpointNotFoundError(None, None, f"The passed save_path is not a valid checkpoint: {prefix} "
                                                   f"({index_path} not found)") from None
    except IsADirectoryError:
        raise errors.DataLossError(None, None, f"Checkpoint index {index_path} is a directory, not a checkpoint "
                                               f"index") from None
    except (OSError, ValueError) as e:  # ValueError: a NUL in the path
        raise os_error(e if isinstance(e, OSError) else OSError(errno.EINVAL, str(e)),
                       f"Checkpoint index {index_path}") from None


def parse_index(prefix: str, raw: bytes):
    """A BundleIndex or (for checkpoints written before the bundle format) a V1Index of index bytes `raw`."""
    if raw.endswith(_MAGIC_BYTES):
        return BundleIndex(prefix, raw)
    if raw.lstrip()[:1] == b"{":
        return V1Index(prefix, raw)
    what = "empty (truncated or not a checkpoint)" if not raw else \
        "not a checkpoint index (neither TensorFlow's table format nor a tensorfleet v1 JSON index)"
    raise errors.DataLossError(None, None, f"Checkpoint index {prefix + INDEX_SUFFIX} is {what}")


def read_index(prefix: str):
    """The parsed, verified index of checkpoint `prefix`: NotFoundError if absent, DataLossError if malformed.
    It has `shapes` (listed tensor -> shape) and `dtype(name)`."""
    return parse_index(prefix, _index_bytes(prefix))


def _changed(prefix: str, raw: bytes) -> bool:
    try:
        return _index_bytes(prefix) != raw
    except errors.OpError:
        return True


def read_checkpoint(prefix: str, keys=None, index=None) -> dict:
    """Reads and verifies tensors (all listed ones, or `keys`) of checkpoint `prefix`; key -> numpy array.

    Partitioned tensors come whole. Everything is checked before anything is returned. `index`: the checkpoint's
    index as `read_index` returned it (used while P.index still holds the same bytes)."""
    for attempt in range(3):
        if index is None or attempt:
            index = read_index(prefix)
        names = list(index.shapes) if keys is None else list(keys)
        for key in names:
            if key not in index.shapes:
                raise errors.NotFoundError(None, None, f"Key {key} not found in checkpoint {prefix}")
        files: dict = {}
        try:
            for shard, path in index.data_files(names).items():
                try:
                    files[shard] = open(path, "rb")
                except FileNotFoundError:
                    if attempt < 2 and _changed(prefix, index.raw):
                        break  # a save committed meanwhile and removed the data file it superseded
                    raise errors.NotFoundError(None, None, f"Checkpoint data file {path} not found (the index "
                                                           f"{prefix + INDEX_SUFFIX} refers to it)") from None
                except OSError as e:
                    raise os_error(e, f"Checkpoint data file {path}") from None
            else:
                if attempt == 2 or not _changed(prefix, index.raw):
                    return {key: index.read(key, files) for key in names}
        finally:
            for f in files.values():
                f.close()
    raise errors.AbortedError(None, None, f"Checkpoint {prefix} changed while it was read, three times")


# -- writing ------------------------------------------------------------------
_UNREADABLE = object()  # an index exists but cannot be parsed: keep every file it might refer to


def referenced_data_files(prefix: str):
    """Base names of the data files `prefix.index` refers to; None without an index; _UNREADABLE if unparseable.
    (A bundle's header alone says which: only it is parsed.)"""
    try:
        raw = _index_bytes(prefix)
        if raw.endswith(_MAGIC_BYTES):
            shards = bundle_header_shards(prefix, raw)
            return {os.path.basename(data_filename(prefix, i, shards)) for i in range(shards)}
        return {parse_index(prefix, raw).data_file}
    except CheckpointNotFoundError:
        return None
    except errors.OpError:
        return _UNREADABLE


def _prefix_data_names(prefix: str) -> list:
    directory = os.path.dirname(prefix) or "."
    pattern = re.compile(re.escape(os.path.basename(prefix)) + DATA_NAME + f"(?:{_TEMP_NAME})?$")
    try:
        return [n for n in os.listdir(directory) if pattern.match(n)]
    except OSError:
        return []


def _new_shard_count(prefix: str) -> int:
    """1, unless the current index refers to `P.data-00000-of-00001` (then the smallest count whose shard-0 name
    it does not refer to); an unparseable index: a count whose shard-0 file does not exist at all."""
    ref = referenced_data_files(prefix)
    if ref is None:
        return 1
    avoid = set(_prefix_data_names(prefix)) if ref is _UNREADABLE else ref
    for n in range(1, MAX_SHARDS + 1):
        if os.path.basename(data_filename(prefix, 0, n)) not in avoid:
            return n
    raise errors.ResourceExhaustedError(None, None, f"No free data file name for checkpoint {prefix}")


def write_checkpoint(prefix: str, tensors: dict) -> None:
    """Writes `tensors` (key -> numpy array, or a `SlicedTensor` for a partitioned variable) as checkpoint
    `prefix`, atomically: the data goes to a file no index refers to yet, and renaming the index over
    `prefix.index` is the only commit point."""
    directory = os.path.dirname(prefix)
    num_shards = _new_shard_count(prefix)
    data_path, index_path = data_filename(prefix, 0, num_shards), prefix + INDEX_SUFFIX
    fd, tmp_data = create_new(data_path)
    try:
        with os.fdopen(fd, "wb") as f:
            writer = BundleWriter(f)
            for key in sorted(tensors):  # TF's Saver adds its tensors sorted by name
                value = tensors[key]
                if isinstance(value, SlicedTensor):
                    writer.add_sliced(key, value)
                else:
                    writer.add(key, value)
            f.flush()
            os.fsync(f.fileno())
        tmp_index = write_temp(directory, index_path, [writer.index_bytes(num_shards)])
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
    keep = os.path.basename(data_path)
    for name in _prefix_data_names(prefix):  # the superseded data file, and leftovers of killed saves
        if name != keep:
            remove_quietly(os.path.join(directory, name))


# -- removing -----------------------------------------------------------------
def remove_checkpoint_files(prefix: str, meta_graph_suffix: str = "meta") -> None:
    """Deletes checkpoint `prefix`: its index first (from then on it no longer exists), then the data files the
    index referred to (TF's canonical one if it was unreadable) and the meta graph file, if any."""
    ref = referenced_data_files(prefix)
    remove_quietly(prefix + INDEX_SUFFIX)
    names = ref if isinstance(ref, set) else set()
    for name in names | {os.path.basename(data_filename(prefix, 0, 1))}:
        remove_quietly(os.path.join(os.path.dirname(prefix), name))
    remove_quietly(f"{prefix}.{meta_graph_suffix}")


def remove_stale_files(save_path: str) -> None:
    """Removes what killed saves of `save_path` or `save_path-<step>` left behind: temporaries (of the index,
    data and `.meta` files), and data files that no index refers to. Files of a checkpoint whose index cannot
    be read are kept."""
    directory = os.path.dirname(save_path) or "."
    pattern = re.compile(re.escape(os.path.basename(save_path)) + r"(-\d+)?(\.index|\.meta|" + DATA_NAME + ")("
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
            refs[prefix] = referenced_data_files(prefix)
        ref = refs[prefix]
        if ref is None or (ref is not _UNREADABLE and name not in ref):
            remove_quietly(path)
