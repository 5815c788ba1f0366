"""Reading checkpoints outside a Saver: `tf.train.NewCheckpointReader`, `load_checkpoint`, `load_variable`,
`list_variables`, `checkpoints_iterator` and `init_from_checkpoint` (warm-starting variables).

Train layer, over `checkpoint_io` (the verified reader: index checksum, data size, per-tensor crc32) and
`checkpoint_management` (the state file). What fine-tuning and evaluation scripts use: look into a
checkpoint, pick single tensors, wait for new checkpoints of a training job, and initialize some
variables of a new model from an old checkpoint by TF 1.15's `assignment_map` rules.

`init_from_checkpoint` replaces each mapped variable's initializer with an assignment from the value read
now (a constant in the graph), so `tf.global_variables_initializer()` built afterwards loads it. TF reads
at run time instead, on the variable's task: here only the process that calls it needs the file.
"""
from __future__ import annotations

import os
import time

import numpy as np

from .. import errors
from ..default_graph import get_default_graph
from ..graph import GraphKeys
from ..ops import array_ops, state_ops
from ..protos import types_pb2
from .checkpoint_io import read_checkpoint, read_index
from .checkpoint_management import checkpoint_exists, latest_checkpoint

__all__ = ["NewCheckpointReader", "load_checkpoint", "load_variable", "list_variables", "checkpoints_iterator",
           "init_from_checkpoint"]


class CheckpointReader:
    """What `tf.train.NewCheckpointReader(prefix)` returns: names, shapes, dtypes and values of a checkpoint
    (a partitioned variable is one tensor, its slices are not listed, as TF)."""

    def __init__(self, prefix: str):
        self._prefix = prefix
        self._index = read_index(prefix)

    def has_tensor(self, name: str) -> bool:
        return name in self._index.shapes

    def get_tensor(self, name: str) -> np.ndarray:
        """The tensor's value, verified against its checksum; NotFoundError naming a missing key."""
        return read_checkpoint(self._prefix, [name], self._index)[name]

    def get_variable_to_shape_map(self) -> dict:
        return {k: list(shape) for k, shape in self._index.shapes.items()}

    def get_variable_to_dtype_map(self) -> dict:
        return {k: self._index.dtype(k) for k in self._index.shapes}

    def debug_string(self) -> bytes:
        """TF's: a line `name (DT_FLOAT) [3,2]` per tensor, sorted by name."""
        lines = [f"{k} ({types_pb2.DataType.Name(self._index.dtype(k).as_datatype_enum)}) "
                 f"[{','.join(str(d) for d in shape)}]\n" for k, shape in sorted(self._index.shapes.items())]
        return "".join(lines).encode()


def NewCheckpointReader(filepattern) -> CheckpointReader:  # noqa: N802  (TF's name)
    prefix = os.fspath(filepattern)
    if not checkpoint_exists(prefix):
        raise errors.NotFoundError(None, None, f"Unsuccessful TensorSliceReader constructor: Failed to find any "
                                               f"matching files for {prefix}")
    return CheckpointReader(prefix)


def checkpoint_prefix(ckpt_dir_or_file) -> str:
    """A checkpoint prefix from a directory (its latest checkpoint) or a prefix."""
    path = os.fspath(ckpt_dir_or_file)
    if os.path.isdir(path):
        prefix = latest_checkpoint(path)
        if prefix is None:
            raise ValueError(f"Couldn't find 'checkpoint' file or checkpoints in given directory {path}")
        return prefix
    return path


def load_checkpoint(ckpt_dir_or_file) -> CheckpointReader:
    """A reader for the checkpoint, or for the latest one of a directory."""
    return NewCheckpointReader(checkpoint_prefix(ckpt_dir_or_file))


def load_variable(ckpt_dir_or_file, name: str) -> np.ndarray:
    """One tensor's value (a trailing ':0' is dropped, as TF does)."""
    if name.endswith(":0"):
        name = name[:-2]
    return load_checkpoint(ckpt_dir_or_file).get_tensor(name)


def list_variables(ckpt_dir_or_file) -> list:
    """[(name, shape)] of every tensor in the checkpoint, sorted by name."""
    return sorted(load_checkpoint(ckpt_dir_or_file).get_variable_to_shape_map().items())


def checkpoints_iterator(checkpoint_dir, min_interval_secs=0, timeout=None, timeout_fn=None):
    """Yields each new latest checkpoint of `checkpoint_dir` as it appears, at most one per
    `min_interval_secs`. After `timeout` seconds without a new one, stops, unless `timeout_fn()` returns
    False (then it waits again)."""
    last = None
    while True:
        start = time.monotonic()
        prefix = _wait_for_new_checkpoint(checkpoint_dir, last, timeout)
        if prefix is None:
            if timeout_fn is None or timeout_fn():
                return
            continue
        last = prefix
        yield prefix
        left = min_interval_secs - (time.monotonic() - start)
        if left > 0:
            time.sleep(left)


def _wait_for_new_checkpoint(checkpoint_dir, last, timeout, poll_secs: float = 1.0):
    deadline = None if timeout is None else time.monotonic() + timeout
    while True:
        prefix = latest_checkpoint(checkpoint_dir)
        if prefix is not None and prefix != last:
            return prefix
        if deadline is not None and time.monotonic() >= deadline:
            return None
        time.sleep(poll_secs if deadline is None else max(0.0, min(poll_secs, deadline - time.monotonic())))


def _current_variables() -> dict:
    """name -> variable, or -> [parts] for a partitioned variable (named by its full name, as TF's store)."""
    g = get_default_graph()
    found: dict = {}
    for key in (GraphKeys.GLOBAL_VARIABLES, GraphKeys.LOCAL_VARIABLES, GraphKeys.MODEL_VARIABLES):
        for v in g.get_collection(key):
            info = getattr(v, "_save_slice_info", None)
            if info is None:
                found.setdefault(v.op.name, v)
            elif all(v is not p for p in found.setdefault(info.full_name, [])):
                found[info.full_name].append(v)
    return found


def _as_target(target):
    """A variable, or the list of a partitioned variable's parts; None if `target` is neither."""
    if isinstance(target, state_ops.Variable):
        return target
    if hasattr(target, "_get_variable_list"):
        target = target._get_variable_list()
    if isinstance(target, (list, tuple)) and target and all(isinstance(v, state_ops.Variable) for v in target):
        return list(target)
    return None


def init_from_checkpoint(ckpt_dir_or_file, assignment_map) -> None:
    """`tf.train.init_from_checkpoint`: `assignment_map` maps checkpoint names or scopes to current variables,
    their names or scopes: {'/': '/'} loads every current variable from the same name;
    {'old/': 'new/'} loads each current variable under `new/` from `old/<rest>`; {'old/w': 'new/w'} or
    {'old/w': variable} loads one. A partitioned variable (its name, its parts as a list, or the
    PartitionedVariable) loads each part's slice of the checkpoint's full tensor, whatever the checkpoint's
    partitioning. A missing tensor or a shape mismatch is a ValueError naming both."""
    reader = load_checkpoint(ckpt_dir_or_file)
    shapes = reader.get_variable_to_shape_map()
    current = _current_variables()
    for ckpt_name, target in sorted(assignment_map.items(), key=lambda kv: kv[0]):
        var = _as_target(target)
        if var is not None:
            pairs = [(ckpt_name, var)]
        elif isinstance(target, str) and ckpt_name in shapes:
            if target not in current:
                raise ValueError(f"Tensor {ckpt_name} is mapped to {target!r}, which is not a variable of the "
                                 f"default graph")
            pairs = [(ckpt_name, current[target])]
        elif isinstance(target, str):
            pairs = _scope_pairs(ckpt_name, target, current, shapes, ckpt_dir_or_file)
        else:
            raise TypeError(f"assignment_map[{ckpt_name!r}] must be a variable or a name, got {type(target).__name__}")
        for name, var in pairs:
            _set_initializer(var, name, reader, shapes, ckpt_dir_or_file)


def _scope_pairs(ckpt_scope: str, scope: str, current: dict, shapes: dict, where) -> list:
    if not ckpt_scope.endswith("/") and ckpt_scope != "/":
        if ckpt_scope not in shapes:
            raise ValueError(f"Tensor {ckpt_scope} is not found in {where} checkpoint "
                             f"{sorted(shapes)[:10]}")
        raise ValueError(f"Assignment map with scope only name {scope} should map to scope only {ckpt_scope}. "
                         f"Should be 'scope/': 'other_scope/'.")
    prefix = "" if scope == "/" else scope
    pairs = []
    for name, var in sorted(current.items()):
        if not name.startswith(prefix):
            continue
        rest = name[len(prefix):]
        full = rest if ckpt_scope == "/" else ckpt_scope + rest
        if full not in shapes:
            raise ValueError(f"Tensor {full} ({rest} in {ckpt_scope}) is not found in {where} checkpoint")
        pairs.append((full, var))
    return pairs


def _set_initializer(var, name: str, reader: CheckpointReader, shapes: dict, where) -> None:
    if name not in shapes:
        raise ValueError(f"Tensor {name} is not found in {where} checkpoint")
    if isinstance(var, list):  # a partitioned variable: each part from its slice of the full tensor
        infos = [getattr(v, "_save_slice_info", None) for v in var]
        if any(i is None for i in infos) or len({i.full_name for i in infos}) != 1:
            raise ValueError(f"Variables mapped to tensor {name} must all be parts of one partitioned variable")
        if tuple(infos[0].full_shape) != tuple(shapes[name]):
            raise ValueError(f"Shape of partitioned variable {infos[0].full_name} ({list(infos[0].full_shape)}) "
                             f"doesn't match with shape of tensor {name} ({shapes[name]}) from checkpoint reader.")
        value = reader.get_tensor(name)
        for part, info in zip(var, infos, strict=True):
            box = tuple(slice(o, o + n) for o, n in zip(info.var_offset, info.var_shape, strict=True))
            _assign_initial(part, value[box])
        return
    if not var.shape.is_compatible_with(shapes[name]):
        raise ValueError(f"Shape of variable {var.op.name} ({var.shape}) doesn't match with shape of tensor "
                         f"{name} ({shapes[name]}) from checkpoint reader.")
    _assign_initial(var, reader.get_tensor(name))


def _assign_initial(var, value: np.ndarray) -> None:
    g = var.graph
    with g.as_default(), g.name_scope(var.op.name + "/"), g.colocate_with(var.op):
        initial = array_ops.constant(value.astype(var.dtype.as_numpy_dtype, copy=False), name="checkpoint_value")
        var._initial_value = initial
        var._initializer_op = state_ops.assign(var.value(), initial, name="checkpoint_initializer").op
