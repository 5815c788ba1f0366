"""`tf.train.Saver`: saves and restores variables as checkpoints (format: docs/checkpoint-format.md).

Top layer: reads variables through `sess.run` and restores them through Assign
ops built once per Saver (one placeholder + Assign per variable, grouped as
`save/restore_all`) and fed in ONE `sess.run`, so restores go through the
session's normal execution path and land in the session's variables. Files are
written/verified by `checkpoint_io` (atomic writes, CRCs, no pickle); the
`checkpoint` state file by `checkpoint_management`. Restore verifies names,
dtypes, shapes, sizes and checksums before assigning anything: a failed restore
leaves every variable untouched.
"""
from __future__ import annotations

import os
import re
import time

import numpy as np

from .. import errors
from .. import tf_logging as logging
from ..graph import GraphKeys, Operation
from ..default_graph import get_default_graph
from ..ops import array_ops, control_flow_ops, state_ops
from . import meta_graph, training_util
from .checkpoint_io import (INDEX_SUFFIX, CheckpointNotFoundError, os_error, read_checkpoint, read_index,
                            remove_checkpoint_files, remove_stale_files, write_checkpoint)
from .tensor_bundle import SlicedTensor
from .checkpoint_management import (CheckpointState, checkpoint_exists, get_checkpoint_mtimes, get_checkpoint_state,
                                    latest_checkpoint, remove_checkpoint, update_checkpoint_state)

__all__ = ["Saver", "latest_checkpoint", "get_checkpoint_state", "checkpoint_exists", "CheckpointState",
           "update_checkpoint_state", "remove_checkpoint", "get_checkpoint_mtimes"]


# -- Saver --------------------------------------------------------------------
_CHECKPOINT_FILE = re.compile(r"(.*)(\.index|\.data-\d{5}-of-\d{5}(\.[0-9a-f]+)?|\.meta)$")


def _saveable_name(v) -> str:
    return v.op.name


def _as_variable_tensor(v):
    """The VariableV2 output of a Variable or variable tensor."""
    op = getattr(v, "op", None)
    if not isinstance(op, Operation) or op.type != "VariableV2":
        raise TypeError(f"Variable to save is not a Variable: {v!r}")
    return op.outputs[0]


def _var_map(var_list) -> tuple:
    """(key -> variable tensor, key -> (full shape, [(part tensor, offset, shape)])): the parts of a partitioned
    variable (ops/partitioned_variables.py) are saved as slices of one full tensor under its name, as TF saves them."""
    if var_list is None:
        var_list = get_default_graph().get_collection(GraphKeys.GLOBAL_VARIABLES) + \
                   get_default_graph().get_collection("saveable_objects")
    sliced: dict = {}
    if isinstance(var_list, dict):
        items = list(var_list.items())
    else:
        items = []
        for v in var_list:
            if isinstance(v, (list, tuple)):
                raise TypeError(f"Variable to save is not a Variable: {v!r}")
            for part in (v._get_variable_list() if hasattr(v, "_get_variable_list") else [v]):
                info = getattr(part, "_save_slice_info", None)
                if info is None:
                    items.append((_saveable_name(_as_variable_tensor(part)), part))
                    continue
                entry = sliced.setdefault(info.full_name, (info.full_shape, []))
                t = _as_variable_tensor(part)
                if all(t is not other for other, _, _ in entry[1]):
                    entry[1].append((t, info.var_offset, info.var_shape))
    out = {}
    for key, v in items:
        t = _as_variable_tensor(v)
        if key in out or key in sliced:
            if out.get(key) is t:
                continue
            raise ValueError(f"At least two variables have the same name: {key}")
        out[key] = t
    return out, sliced


def _index_of(offset, shape) -> tuple:
    return tuple(slice(o, o + n) for o, n in zip(offset, shape, strict=True))


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
        self._sharded = sharded
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
        self._vars, self._sliced = _var_map(self._var_list)
        if not self._vars and not self._sliced:
            if self._allow_empty:
                self._is_empty = True
                self._built = True
                return
            raise ValueError("No variables to save")
        first = next(iter(self._vars.values()), None)
        if first is None:  # only partitioned variables: a part's tensor
            first = next(iter(self._sliced.values()))[1][0][0]
        g = self._graph = first.graph
        self._restore_feeds = {}
        assigns = []
        parts = [((key, i), t) for key, (_, ps) in self._sliced.items() for i, (t, _, _) in enumerate(ps)]
        with g.as_default(), g.control_dependencies(None), g.name_scope(None), \
                g.name_scope(self._name or "save"):
            for key, t in list(self._vars.items()) + parts:
                ph = array_ops.placeholder(t.dtype, t.shape, name="restore_value")
                self._restore_feeds[key] = ph
                assigns.append(state_ops.assign(t, ph, validate_shape=t.shape.is_fully_defined(), name="Assign"))
            self._restore_op = control_flow_ops.group(*assigns, name="restore_all")
        self._save_fetches = dict(self._vars)
        self._save_fetches.update(parts)
        self._built = True

    def _checkpoint_tensors(self, values: dict) -> dict:
        """The fetched values keyed for the checkpoint: each partitioned variable as slices of its full tensor."""
        out = {k: np.asarray(values[k]) for k in self._vars}
        for key, (full_shape, parts) in self._sliced.items():
            out[key] = SlicedTensor(full_shape, [(offset, values[(key, i)]) for i, (_, offset, _) in enumerate(parts)])
        return out

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
            remove_checkpoint_files(prefix)  # index first: once it is gone the checkpoint no longer exists

    # -- save / restore -------------------------------------------------------
    def _prefix(self, sess, save_path: str, global_step, latest_filename: str) -> str:
        if global_step is not None:
            if not isinstance(global_step, (int, np.integer)):
                global_step = training_util.global_step(sess, global_step)
            return f"{save_path}-{int(global_step):08d}" if self._pad_step_number else f"{save_path}-{int(global_step)}"
        if os.path.basename(save_path) == latest_filename:  # TF's guard: the state file would be overwritten
            raise ValueError(f"'latest_filename' collides with 'save_path': '{latest_filename}' and '{save_path}'")
        return save_path

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
        prefix = self._prefix(sess, save_path, global_step, latest_filename)
        if save_path.endswith(os.sep):  # TF writes "dir/.index" then (hidden files); say so
            logging.warning("save_path %r ends with a path separator: the checkpoint files are named %s.index and "
                            "%s.data-*; pass a prefix such as %r", save_path, prefix, prefix,
                            os.path.join(save_path, "model.ckpt"))
        save_dir = os.path.dirname(save_path)
        if save_dir and not os.path.isdir(save_dir):
            # TF's bundle writer creates the prefix's directory, one level, for an unsharded save
            if self._sharded or not os.path.isdir(os.path.dirname(save_dir) or "."):
                raise ValueError(f"Parent directory of {save_path} doesn't exist, can't save.")
            os.makedirs(save_dir, exist_ok=True)
        if sess.graph is not self._graph:
            raise RuntimeError("The Session graph is not the same graph the Saver was built in.")
        values = sess.run(self._save_fetches)
        try:
            remove_stale_files(save_path)
            write_checkpoint(prefix, self._checkpoint_tensors(values))
            if write_state:
                self._record_last_checkpoint(prefix)
                # TF updates the state file, then deletes what fell out of it: a process killed in between leaves
                # a checkpoint that no state file lists, never deleted. With max_to_keep >= 2 the one deleted is
                # not the state's latest, so it goes first (killed in between: the state lists one that is gone,
                # which a restore never picks and recover_last_checkpoints skips); with 1, TF's order
                if (self._max_to_keep or 0) >= 2:
                    self._maybe_delete_old_checkpoints()
                update_checkpoint_state(save_dir, prefix, self.last_checkpoints, latest_filename,
                                        self._save_relative_paths)
                self._maybe_delete_old_checkpoints()
            if write_meta_graph:  # after the checkpoint is whole, as TF; written whole or not at all
                meta_graph.export_meta_graph(f"{prefix}.{meta_graph_suffix}", graph=self._graph,
                                             saver_def=self.saver_def)
        except OSError as e:
            raise os_error(e, f"Failed to save checkpoint {prefix}") from None
        return prefix

    @property
    def saver_def(self):
        """The SaverDef written into `.meta` files: max_to_keep, keep_checkpoint_every_n_hours, format V2."""
        return meta_graph.saver_def_of(self._max_to_keep or 0, self._keep_every_n_hours)

    def as_saver_def(self):
        return self.saver_def

    def restore(self, sess, save_path):
        """Loads every saved variable from checkpoint `save_path`, all or nothing."""
        if self._is_empty:
            return
        if save_path is None:
            raise ValueError("Can't load save_path when it is None.")
        save_path = os.fspath(save_path)
        if not checkpoint_exists(save_path):
            hint = ""
            named = _CHECKPOINT_FILE.match(save_path)
            if named and checkpoint_exists(named.group(1)):
                hint = f" (that is a file of checkpoint {named.group(1)}: pass the prefix {named.group(1)!r})"
            raise CheckpointNotFoundError(None, None,
                                           f"The passed save_path is not a valid checkpoint: {save_path}{hint}")
        if sess.graph is not self._graph:
            raise RuntimeError("The Session graph is not the same graph the Saver was built in.")
        index = read_index(save_path)
        wholes = [(key, ps[0][0], full) for key, (full, ps) in self._sliced.items()]
        for key, t, full in [(k, t, None) for k, t in self._vars.items()] + wholes:  # metadata first
            shape = index.shapes.get(key)
            if shape is None:
                raise errors.NotFoundError(
                    None, None, "Restoring from checkpoint failed. This is most likely due to a Variable name or "
                                "other graph key that is missing from the checkpoint. Please ensure that you have "
                                "not altered the graph expected based on the checkpoint. Original error:\n\n"
                                f"Key {key} not found in checkpoint {save_path}")
            dtype = index.dtype(key)
            if dtype is not t.dtype:
                raise errors.InvalidArgumentError(
                    None, None, f"Restoring from checkpoint failed: tensor_name = {key}; expected dtype "
                                f"{t.dtype.name} (variable {t.op.name}) does not equal original dtype {dtype.name} "
                                f"in checkpoint {save_path}")
            lhs = list(full) if full is not None else t.shape.as_list() if t.shape.ndims is not None else "?"
            if (tuple(full) != shape) if full is not None else not t.shape.is_compatible_with(shape):
                raise errors.InvalidArgumentError(
                    None, None, "Restoring from checkpoint failed. This is most likely due to a mismatch between "
                                "the current graph and the graph from the checkpoint. Please ensure that you have "
                                "not altered the graph expected based on the checkpoint. Original error:\n\n"
                                f"Assign requires shapes of both tensors to match. lhs shape= "
                                f"{lhs} rhs shape= "
                                f"{list(shape)} (variable {t.op.name}, checkpoint key {key} in {save_path})")
        values = read_checkpoint(save_path, list(self._vars) + list(self._sliced), index)  # sizes, checksums
        feed = {self._restore_feeds[k]: values[k] for k in self._vars}
        for key, (_, parts) in self._sliced.items():
            for i, (_, offset, shape) in enumerate(parts):
                feed[self._restore_feeds[(key, i)]] = values[key][_index_of(offset, shape)]
        sess.run(self._restore_op, feed_dict=feed)

    # -- TF API odds and ends -------------------------------------------------
    def to_proto(self, export_scope=None):
        """`Saver.to_proto`: the SaverDef (as `saver_def`)."""
        return self.saver_def
