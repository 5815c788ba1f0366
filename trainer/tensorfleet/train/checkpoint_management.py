"""The `checkpoint` state file (TF's CheckpointState text format) and checkpoint lookup helpers.

Used by `Saver.save` to record the latest and kept checkpoints, and by users via
`tf.train.latest_checkpoint`, `get_checkpoint_state`, `checkpoint_exists`. The
file is replaced atomically (temp file + fsync + rename); see docs/checkpoint-format.md.
"""
from __future__ import annotations

import os
import re

from .. import errors
from .. import tf_logging as logging
from .checkpoint_io import INDEX_SUFFIX, fsync_dir, remove_checkpoint_files, remove_quietly, write_temp

__all__ = ["latest_checkpoint", "get_checkpoint_state", "checkpoint_exists", "CheckpointState",
           "update_checkpoint_state", "remove_checkpoint", "get_checkpoint_mtimes"]


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


def _relpath(path: str, start: str) -> str:
    """os.path.relpath, keeping a trailing separator (prefix "dir/" names the files "dir/.index", as TF)."""
    rel = os.path.relpath(path, start or ".")
    return rel + os.sep if path.endswith(os.sep) and not rel.endswith(os.sep) else rel


def generate_checkpoint_state_proto(save_dir, model_checkpoint_path, all_model_checkpoint_paths=None,
                                    all_model_checkpoint_timestamps=None, last_preserved_timestamp=None,
                                    save_relative_paths=False) -> CheckpointState:
    """`tf.train.generate_checkpoint_state_proto`: the CheckpointState with TF's path rules (the latest last in
    the list; relative paths made relative to a relative `save_dir`, or all relative with save_relative_paths)."""
    paths = list(all_model_checkpoint_paths or [])
    if not paths or paths[-1] != model_checkpoint_path:
        paths.append(model_checkpoint_path)
    if save_relative_paths:   # TF's update_checkpoint_state_internal: absolute paths made relative first ...
        rel = lambda p: _relpath(p, save_dir) if os.path.isabs(p) else p  # noqa: E731
        model_checkpoint_path, paths = rel(model_checkpoint_path), [rel(p) for p in paths]
    if not os.path.isabs(save_dir):  # ... then, as always, relative paths are rewritten relative to save_dir
        rel = lambda p: p if os.path.isabs(p) else _relpath(p, save_dir)  # noqa: E731
        model_checkpoint_path, paths = rel(model_checkpoint_path), [rel(p) for p in paths]
    return CheckpointState(model_checkpoint_path, paths)


def update_checkpoint_state(save_dir, model_checkpoint_path, all_model_checkpoint_paths=None, latest_filename=None,
                            save_relative_paths=False, all_model_checkpoint_timestamps=None,
                            last_preserved_timestamp=None) -> None:
    """`tf.train.update_checkpoint_state`: writes the `checkpoint` state file atomically (temp file + rename)."""
    state = generate_checkpoint_state_proto(save_dir, model_checkpoint_path, all_model_checkpoint_paths,
                                            save_relative_paths=save_relative_paths)
    target = _state_path(save_dir, latest_filename)
    if os.path.isdir(target):
        raise errors.InvalidArgumentError(None, None, f"{target} is a directory, cannot write the checkpoint state")
    stale = re.compile(re.escape(os.path.basename(target)) + r"\.tempstate\d+$")
    for name in os.listdir(save_dir or "."):  # left by a killed save
        if stale.match(name):
            remove_quietly(os.path.join(save_dir, name))
    tmp = write_temp(save_dir, target, [_state_text(state).encode("utf-8")])
    try:
        os.replace(tmp, target)
    except BaseException:
        remove_quietly(tmp)
        raise
    fsync_dir(save_dir)


def get_checkpoint_state(checkpoint_dir, latest_filename=None):
    """The CheckpointState of `checkpoint_dir` (relative paths joined to the dir), or None if absent/unreadable."""
    path = _state_path(checkpoint_dir, latest_filename)
    try:
        with open(path, "r", encoding="utf-8") as f:
            state = _parse_state(f.read())
        if not state.model_checkpoint_path:
            raise ValueError(f"Invalid checkpoint state loaded from {checkpoint_dir}")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError, ValueError) as e:  # TF's two warnings, then no state
        logging.warning("%s: %s", type(e).__name__, e)
        logging.warning("%s: Checkpoint ignored", path)
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
    if state and state.model_checkpoint_path:
        if checkpoint_exists(state.model_checkpoint_path):
            return state.model_checkpoint_path
        logging.error("Couldn't match files for checkpoint %s", state.model_checkpoint_path)
    return None


def remove_checkpoint(checkpoint_prefix, checkpoint_format_version=None, meta_graph_suffix="meta") -> None:
    """`tf.train.remove_checkpoint`: deletes the checkpoint's files (index first, so it stops existing first)."""
    remove_checkpoint_files(str(checkpoint_prefix), meta_graph_suffix)


def get_checkpoint_mtimes(checkpoint_prefixes) -> list:
    """`tf.train.get_checkpoint_mtimes`: the index files' modification times of the checkpoints that exist."""
    out = []
    for prefix in checkpoint_prefixes:
        try:
            out.append(os.path.getmtime(str(prefix) + INDEX_SUFFIX))
        except OSError:
            continue
    return out
