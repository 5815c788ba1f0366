"""`tf.train.Saver` and the checkpoint-state helpers (`latest_checkpoint`, `get_checkpoint_state`, ...).

Top layer: reads variables through `sess.run` and restores them through Assign
ops built once per Saver (one placeholder + Assign per variable, grouped as
`save/restore_all`) and fed in ONE `sess.run`, so restores go through the
session's normal execution path and land in the session's variables.

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
No pickle anywhere. Writes are atomic: both files are written to temporary names
in the target directory and fsynced, then the data file is renamed into place and
the index last — the index rename is the commit point. The `checkpoint` state
file (TF's text format: `model_checkpoint_path: "..."` and
`all_model_checkpoint_paths: "..."` lines) is also replaced via temp file + rename.
Restore reads and verifies everything (index checksum, data size, every tensor's
crc32, dtype and shape against the graph's variables) before assigning any
variable: a failed restore leaves all variables untouched.
"""
from __future__ import annotations

import json
import os
import tempfile
import time
import zlib

import numpy as np

from .. import dtypes as _dtypes
from .. import errors
from ..graph import GraphKeys, Operation, Tensor, get_default_graph
from ..ops import array_ops, control_flow_ops, state_ops
from . import training_util

__all__ = ["Saver", "latest_checkpoint", "get_checkpoint_state", "checkpoint_exists", "CheckpointState",
           "update_checkpoint_state"]

FORMAT_NAME = "tensorfleet-checkpoint"
FORMAT_VERSION = 1
DATA_SUFFIX = ".data-00000-of-00001"
INDEX_SUFFIX = ".index"
_ALIGN = 8
_SAVEABLE_DTYPES = (_dtypes.float16, _dtypes.float32, _dtypes.float64, _dtypes.int8, _dtypes.int16, _dtypes.int32,
                    _dtypes.int64, _dtypes.uint8, _dtypes.bool_)


class _CheckpointNotFoundError(errors.NotFoundError, ValueError):
    """A missing checkpoint: tf.errors.NotFoundError, and a ValueError like TF 1.15's Saver.restore raises."""


# -- low-level file helpers ---------------------------------------------------
def _fsync_dir(path: str) -> None:
    try:
        fd = os.open(path or ".", os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _write_temp(directory: str, final_name: str, chunks) -> str:
    """Writes `chunks` (bytes-likes) to a new temp file next to `final_name`, fsynced; returns its path."""
    fd, tmp = tempfile.mkstemp(prefix=os.path.basename(final_name) + ".tempstate", dir=directory or ".")
    try:
        with os.fdopen(fd, "wb") as f:
            for c in chunks:
                f.write(c)
            f.flush()
            os.fsync(f.fileno())
    except BaseException:
        _remove_quietly(tmp)
        raise
    return tmp


def _remove_quietly(path: str) -> None:
    try:
        os.remove(path)
    except OSError:
        pass


def _header_crc(doc: dict) -> int:
    body = {k: v for k, v in doc.items() if k != "header_crc32"}
    return zlib.crc32(json.dumps(body, sort_keys=True, separators=(",", ":")).encode("utf-8"))


def write_checkpoint(prefix: str, tensors: dict) -> None:
    """Writes `tensors` (key -> numpy array) as checkpoint `prefix`, atomically (index renamed last)."""
    directory = os.path.dirname(prefix)
    data_path, index_path = prefix + DATA_SUFFIX, prefix + INDEX_SUFFIX
    entries, chunks, offset = {}, [], 0
    for key in sorted(tensors):
        arr = np.asarray(tensors[key])
        dt = _dtypes.as_dtype(arr.dtype)
        if dt not in _SAVEABLE_DTYPES:
            raise TypeError(f"Cannot save tensor {key!r} of dtype {arr.dtype}")
        raw = np.ascontiguousarray(arr, dtype=arr.dtype.newbyteorder("<")).tobytes()
        pad = (-offset) % _ALIGN
        if pad:
            chunks.append(b"\0" * pad)
            offset += pad
        entries[key] = {"dtype": dt.name, "shape": list(arr.shape), "offset": offset, "length": len(raw),
                        "crc32": zlib.crc32(raw)}
        chunks.append(raw)
        offset += len(raw)
    doc = {"format": FORMAT_NAME, "version": FORMAT_VERSION, "data_file": os.path.basename(data_path),
           "data_size": offset, "tensors": entries}
    doc["header_crc32"] = _header_crc(doc)
    index_bytes = (json.dumps(doc, sort_keys=True, indent=1) + "\n").encode("utf-8")
    had_index = os.path.exists(index_path)
    tmp_data = _write_temp(directory, data_path, chunks)
    try:
        tmp_index = _write_temp(directory, index_path, [index_bytes])
    except BaseException:
        _remove_quietly(tmp_data)
        raise
    try:
        os.replace(tmp_data, data_path)
    except BaseException:
        _remove_quietly(tmp_data)
        _remove_quietly(tmp_index)
        raise
    try:
        os.replace(tmp_index, index_path)  # the commit point
    except BaseException:
        _remove_quietly(tmp_index)
        if not had_index:  # nothing refers to the new data file: do not leave it behind
            _remove_quietly(data_path)
        raise
    _fsync_dir(directory)


def _data_loss(msg: str):
    return errors.DataLossError(None, None, msg)


def read_index(prefix: str) -> dict:
    """Parses and verifies `prefix.index`: NotFoundError if absent, DataLossError if not a valid index."""
    index_path = prefix + INDEX_SUFFIX
    try:
        with open(index_path, "rb") as f:
            raw = f.read()
    except FileNotFoundError:
        raise _CheckpointNotFoundError(None, None, f"The passed save_path is not a valid checkpoint: {prefix} "
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
    tensors = doc.get("tensors")
    size = doc.get("data_size")
    if not isinstance(tensors, dict) or not isinstance(size, int) or size < 0:
        raise _data_loss(f"Checkpoint index {index_path} is corrupt: missing 'tensors' or 'data_size'")
    for key, e in tensors.items():
        try:
            dt = _dtypes.as_dtype(e["dtype"])
            shape = tuple(int(d) for d in e["shape"])
            ok = (dt in _SAVEABLE_DTYPES and all(d >= 0 for d in shape) and isinstance(e["offset"], int)
                  and isinstance(e["length"], int) and isinstance(e["crc32"], int) and e["offset"] >= 0
                  and e["length"] == int(np.prod(shape, dtype=np.int64)) * dt.np_dtype.itemsize
                  and e["offset"] + e["length"] <= size)
        except (KeyError, TypeError, ValueError):
            ok = False
        if not ok:
            raise _data_loss(f"Checkpoint index {index_path} is corrupt: bad entry for tensor {key!r}: {e!r}")
    return doc


def read_checkpoint(prefix: str, keys=None) -> dict:
    """Reads and verifies tensors (all, or `keys`) of checkpoint `prefix`; returns key -> numpy array.

    Everything is checked before anything is returned: index checksum, data-file size, per-tensor crc32.
    """
    doc = read_index(prefix)
    data_path = os.path.join(os.path.dirname(prefix), doc.get("data_file") or os.path.basename(prefix + DATA_SUFFIX))
    try:
        with open(data_path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        raise errors.NotFoundError(None, None, f"Checkpoint data file {data_path} not found (the index "
                                               f"{prefix + INDEX_SUFFIX} refers to it)") from None
    if len(data) != doc["data_size"]:
        raise _data_loss(f"Checkpoint data file {data_path} is {'truncated' if len(data) < doc['data_size'] else 'corrupt'}: "
                         f"expected {doc['data_size']} bytes, found {len(data)}")
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
        np_dt = _dtypes.as_dtype(e["dtype"]).np_dtype
        arr = np.frombuffer(raw, dtype=np_dt.newbyteorder("<")).astype(np_dt).reshape(e["shape"])
        out[key] = arr
    return out


# -- the checkpoint state file ------------------------------------------------
class CheckpointState:
    """TF's CheckpointState proto: the latest checkpoint and the ones still kept."""

    def __init__(self, model_checkpoint_path="", all_model_checkpoint_paths=None):
        self.model_checkpoint_path = model_checkpoint_path
        self.all_model_checkpoint_paths = list(all_model_checkpoint_paths or [])

    def __repr__(self):
        return _state_text(self)

    def __eq__(self, other):
        return (isinstance(other, CheckpointState) and self.model_checkpoint_path == other.model_checkpoint_path
                and self.all_model_checkpoint_paths == other.all_model_checkpoint_paths)


def _quote(s: str) -> str:
    out = []
    for ch in s:
        if ch in '"\\':
            out.append("\\" + ch)
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif ch == "\r":
            out.append("\\r")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


_ESC = {"n": "\n", "t": "\t", "r": "\r", '"': '"', "'": "'", "\\": "\\"}


def _unquote(s: str) -> str:
    s = s.strip()
    if len(s) < 2 or s[0] != s[-1] or s[0] not in "\"'":
        raise ValueError(f"expected a quoted string, got {s!r}")
    body, out, i = s[1:-1], [], 0
    while i < len(body):
        ch = body[i]
        if ch == "\\" and i + 1 < len(body):
            nxt = body[i + 1]
            if nxt in _ESC:
                out.append(_ESC[nxt])
                i += 2
                continue
            if nxt.isdigit():  # octal escape (TF's CEscape of non-ASCII bytes)
                j = i + 1
                while j < len(body) and j < i + 4 and body[j] in "01234567":
                    j += 1
                out.append(chr(int(body[i + 1:j], 8)))
                i = j
                continue
        out.append(ch)
        i += 1
    return "".join(out)


def _state_text(state: CheckpointState) -> str:
    lines = [f"model_checkpoint_path: {_quote(state.model_checkpoint_path)}"]
    lines += [f"all_model_checkpoint_paths: {_quote(p)}" for p in state.all_model_checkpoint_paths]
    return "\n".join(lines) + "\n"


def _parse_state(text: str) -> CheckpointState:
    state = CheckpointState()
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        field, sep, value = line.partition(":")
        if not sep:
            raise ValueError(f"cannot parse line {line!r}")
        field = field.strip()
        if field == "model_checkpoint_path":
            state.model_checkpoint_path = _unquote(value)
        elif field == "all_model_checkpoint_paths":
            state.all_model_checkpoint_paths.append(_unquote(value))
        # other fields (timestamps written by newer TF versions) are ignored
    return state


def _state_path(checkpoint_dir: str, latest_filename=None) -> str:
    return os.path.join(checkpoint_dir, latest_filename or "checkpoint")


def update_checkpoint_state(save_dir, model_checkpoint_path, all_model_checkpoint_paths=None, latest_filename=None,
                            save_relative_paths=False) -> None:
    """Writes the `checkpoint` state file atomically (temp file + rename), TF's path rules included."""
    paths = list(all_model_checkpoint_paths or [])
    if not paths or paths[-1] != model_checkpoint_path:
        paths.append(model_checkpoint_path)
    if save_relative_paths:
        rel = lambda p: os.path.relpath(p, save_dir) if os.path.isabs(p) else p  # noqa: E731
        model_checkpoint_path, paths = rel(model_checkpoint_path), [rel(p) for p in paths]
    elif not os.path.isabs(save_dir):  # TF: relative paths are rewritten relative to save_dir
        rel = lambda p: p if os.path.isabs(p) else os.path.relpath(p, save_dir)  # noqa: E731
        model_checkpoint_path, paths = rel(model_checkpoint_path), [rel(p) for p in paths]
    state = CheckpointState(model_checkpoint_path, paths)
    target = _state_path(save_dir, latest_filename)
    if os.path.isdir(target):
        raise errors.InvalidArgumentError(None, None, f"{target} is a directory, cannot write the checkpoint state")
    tmp = _write_temp(save_dir, target, [_state_text(state).encode("utf-8")])
    try:
        os.replace(tmp, target)
    except BaseException:
        _remove_quietly(tmp)
        raise
    _fsync_dir(save_dir)


def get_checkpoint_state(checkpoint_dir, latest_filename=None):
    """The CheckpointState of `checkpoint_dir` (relative paths joined to the dir), or None if absent/unreadable."""
    path = _state_path(checkpoint_dir, latest_filename)
    try:
        with open(path, "r", encoding="utf-8") as f:
            state = _parse_state(f.read())
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    if not state.model_checkpoint_path:
        return None
    join = lambda p: p if os.path.isabs(p) else os.path.join(checkpoint_dir, p)  # noqa: E731
    state.model_checkpoint_path = join(state.model_checkpoint_path)
    state.all_model_checkpoint_paths = [join(p) for p in state.all_model_checkpoint_paths]
    return state


def checkpoint_exists(checkpoint_prefix) -> bool:
    """True if a checkpoint with this prefix was committed (its index file exists)."""
    return os.path.isfile(str(checkpoint_prefix) + INDEX_SUFFIX)


def latest_checkpoint(checkpoint_dir, latest_filename=None):
    """The prefix of the newest checkpoint recorded in `checkpoint_dir`'s state file, or None."""
    state = get_checkpoint_state(checkpoint_dir, latest_filename)
    if state and state.model_checkpoint_path and checkpoint_exists(state.model_checkpoint_path):
        return state.model_checkpoint_path
    return None


# -- Saver --------------------------------------------------------------------
def _saveable_name(v) -> str:
    return v.op.name


def _as_variable_tensor(v):
    """The VariableV2 output of a Variable or variable tensor."""
    op = getattr(v, "op", None)
    if not isinstance(op, Operation) or op.type != "VariableV2":
        raise TypeError(f"Variable to save is not a Variable: {v!r}")
    return op.outputs[0]


def _var_map(var_list) -> dict:
    if var_list is None:
        var_list = get_default_graph().get_collection(GraphKeys.GLOBAL_VARIABLES) + \
                   get_default_graph().get_collection("saveable_objects")
    if isinstance(var_list, dict):
        items = list(var_list.items())
    else:
        items = []
        for v in var_list:
            if isinstance(v, (list, tuple)):
                raise TypeError(f"Variable to save is not a Variable: {v!r}")
            items.append((_saveable_name(_as_variable_tensor(v)), v))
    out = {}
    for key, v in items:
        t = _as_variable_tensor(v)
        if key in out:
            if out[key] is t:
                continue
            raise ValueError(f"At least two variables have the same name: {key}")
        out[key] = t
    return out


class Saver:
    """`tf.train.Saver`: saves/restores variables to/from checkpoints (format: module docstring)."""

    def __init__(self, var_list=None, reshape=False, sharded=False, max_to_keep=5,
                 keep_checkpoint_every_n_hours=10000.0, name=None, restore_sequentially=False, saver_def=None,
                 builder=None, defer_build=False, allow_empty=False, write_version=None, pad_step_number=False,
                 save_relative_paths=False, filename=None):
        if saver_def is not None or builder is not None:
            raise NotImplementedError("Saver(saver_def=...) and custom builders are not supported")
        self._var_list = var_list
        self._max_to_keep = max_to_keep
        self._keep_every_n_hours = keep_checkpoint_every_n_hours
        self._next_checkpoint_time = time.time() + keep_checkpoint_every_n_hours * 3600
        self._name = name
        self._allow_empty = allow_empty
        self._pad_step_number = pad_step_number
        self._save_relative_paths = save_relative_paths
        self._filename = filename
        self._last_checkpoints: list = []  # [(prefix, time)]
        self._checkpoints_to_be_deleted: list = []
        self._built = False
        self._is_empty = False
        if not defer_build:
            self.build()

    def build(self):
        """Resolves the variables and creates the restore ops (placeholders + Assigns) once."""
        if self._built:
            return
        self._vars = _var_map(self._var_list)
        if not self._vars:
            if self._allow_empty:
                self._is_empty = True
                self._built = True
                return
            raise ValueError("No variables to save")
        g = next(iter(self._vars.values())).graph
        self._graph = g
        self._restore_feeds = {}
        assigns = []
        with g.as_default(), g.control_dependencies(None), g.name_scope(None), \
                g.name_scope(self._name or "save"):
            for key, t in self._vars.items():
                ph = array_ops.placeholder(t.dtype, t.shape, name="restore_value")
                self._restore_feeds[key] = ph
                assigns.append(state_ops.assign(t, ph, validate_shape=t.shape.is_fully_defined(), name="Assign"))
            self._restore_op = control_flow_ops.group(*assigns, name="restore_all")
        self._save_fetches = dict(self._vars)
        self._built = True

    # -- bookkeeping of kept checkpoints --------------------------------------
    @property
    def last_checkpoints(self) -> list:
        return [p for p, _ in self._last_checkpoints]

    def set_last_checkpoints(self, last_checkpoints):
        self._last_checkpoints = [(p, None) for p in last_checkpoints]

    def set_last_checkpoints_with_time(self, last_checkpoints_with_time):
        self._last_checkpoints = list(last_checkpoints_with_time)

    def recover_last_checkpoints(self, checkpoint_paths):
        """Adopts the existing ones of `checkpoint_paths` (e.g. from get_checkpoint_state) as last_checkpoints."""
        kept = [p for p in checkpoint_paths if checkpoint_exists(p)]
        self._last_checkpoints = [(p, os.path.getmtime(p + INDEX_SUFFIX)) for p in kept]

    def _record_last_checkpoint(self, latest):
        if not self._max_to_keep:
            return
        self._last_checkpoints = [(p, t) for p, t in self._last_checkpoints if p != latest]
        self._last_checkpoints.append((latest, time.time()))
        if len(self._last_checkpoints) > self._max_to_keep:
            self._checkpoints_to_be_deleted.append(self._last_checkpoints.pop(0))

    def _maybe_delete_old_checkpoints(self):
        while self._checkpoints_to_be_deleted:
            prefix, t = self._checkpoints_to_be_deleted.pop(0)
            if t is not None and t > self._next_checkpoint_time:
                self._next_checkpoint_time += self._keep_every_n_hours * 3600
                continue
            # index first: once it is gone the checkpoint no longer exists
            for suffix in (INDEX_SUFFIX, DATA_SUFFIX, ".meta"):
                _remove_quietly(prefix + suffix)

    # -- save / restore -------------------------------------------------------
    def save(self, sess, save_path, global_step=None, latest_filename=None, meta_graph_suffix="meta",
             write_meta_graph=True, write_state=True, strip_default_attrs=False, save_debug_info=False):
        """Writes a checkpoint `save_path[-global_step]`; returns its prefix (None for an empty Saver)."""
        if self._is_empty:
            return None
        if latest_filename is None:
            latest_filename = "checkpoint"
        elif os.path.split(latest_filename)[0]:
            raise ValueError("'latest_filename' must not contain path components")
        save_path = os.fspath(save_path)
        if global_step is not None:
            if not isinstance(global_step, (int, np.integer)):
                global_step = training_util.global_step(sess, global_step)
            prefix = f"{save_path}-{int(global_step):08d}" if self._pad_step_number else \
                f"{save_path}-{int(global_step)}"
        else:
            prefix = save_path
        save_dir = os.path.dirname(save_path)
        if save_dir and not os.path.isdir(save_dir):
            raise ValueError(f"Parent directory of {save_path} doesn't exist, can't save.")
        if sess.graph is not self._graph:
            raise RuntimeError("The Session graph is not the same graph the Saver was built in.")
        values = sess.run(self._save_fetches)
        write_checkpoint(prefix, {k: np.asarray(v) for k, v in values.items()})
        if write_state:
            self._record_last_checkpoint(prefix)
            update_checkpoint_state(save_dir, prefix, self.last_checkpoints, latest_filename,
                                    self._save_relative_paths)
            self._maybe_delete_old_checkpoints()
        return prefix

    def restore(self, sess, save_path):
        """Loads every saved variable from checkpoint `save_path`, all or nothing."""
        if self._is_empty:
            return
        if save_path is None:
            raise ValueError("Can't load save_path when it is None.")
        save_path = os.fspath(save_path)
        if not checkpoint_exists(save_path):
            raise _CheckpointNotFoundError(None, None,
                                           f"The passed save_path is not a valid checkpoint: {save_path}")
        if sess.graph is not self._graph:
            raise RuntimeError("The Session graph is not the same graph the Saver was built in.")
        doc = read_index(save_path)
        entries = doc["tensors"]
        for key, t in self._vars.items():  # metadata first: names, dtypes, shapes
            e = entries.get(key)
            if e is None:
                raise errors.NotFoundError(
                    None, None, "Restoring from checkpoint failed. This is most likely due to a Variable name or "
                                "other graph key that is missing from the checkpoint. Please ensure that you have "
                                "not altered the graph expected based on the checkpoint. Original error:\n\n"
                                f"Key {key} not found in checkpoint")
            if _dtypes.as_dtype(e["dtype"]) is not t.dtype:
                raise errors.InvalidArgumentError(
                    None, None, f"Restoring from checkpoint failed: tensor_name = {key}; expected dtype "
                                f"{t.dtype.name} (variable {t.op.name}) does not equal original dtype {e['dtype']} "
                                f"in checkpoint {save_path}")
            if not t.shape.is_compatible_with(tuple(e["shape"])):
                raise errors.InvalidArgumentError(
                    None, None, "Restoring from checkpoint failed. This is most likely due to a mismatch between "
                                "the current graph and the graph from the checkpoint. Please ensure that you have "
                                "not altered the graph expected based on the checkpoint. Original error:\n\n"
                                f"Assign requires shapes of both tensors to match. lhs shape= "
                                f"{t.shape.as_list() if t.shape.ndims is not None else '?'} rhs shape= "
                                f"{list(e['shape'])} (variable {t.op.name}, checkpoint key {key})")
        values = read_checkpoint(save_path, list(self._vars))  # verifies sizes and checksums
        feed = {self._restore_feeds[k]: v for k, v in values.items()}
        sess.run(self._restore_op, feed_dict=feed)

    # -- TF API odds and ends -------------------------------------------------
    def as_saver_def(self):
        raise NotImplementedError("SaverDef protos are not supported by this runtime")

    def to_proto(self, export_scope=None):
        raise NotImplementedError("SaverDef protos are not supported by this runtime")
