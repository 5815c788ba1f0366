"""Partitioned variables: `tf.get_variable(..., partitioner=...)` and TF 1.15's partitioners.

Sits in `ops/` beside `variable_scope` (whose `_VariableStore.get_variable` calls `get_partitioned_variable`
when a partitioner is given or set on the scope). A partitioned variable is one Variable per slice along one
axis, named `<name>/part_<i>`, so that `tf.train.replica_device_setter` spreads the parts over the ps tasks
like any other variables; `PartitionedVariable` groups them and converts to the whole tensor (a concat) where
a Tensor is needed. Each part carries `_save_slice_info`; `train/saver.py` saves the parts as slices of the
full tensor `<name>` (as TF) and restores each part's slice of it, so a checkpoint restores into any number of
partitions.

Slices follow TF: along the one partitioned axis, `dim // n` rows each, the first `dim % n` parts one more.
Initializers are called with each part's shape and a `PartitionInfo` (full shape, offset), as TF calls them
(variance-scaling initializers scale by the full shape); a constant initial value is sliced.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .. import dtypes as _dtypes
from ..default_graph import register_tensor_conversion_function
from ..tensor_shape import as_shape
from . import join_ops

__all__ = ["fixed_size_partitioner", "min_max_variable_partitioner", "variable_axis_size_partitioner",
           "PartitionedVariable"]


@dataclass(frozen=True)
class PartitionInfo:
    """What an initializer of one part receives (TF's `_PartitionInfo`)."""
    full_shape: tuple
    var_offset: tuple


@dataclass(frozen=True)
class SaveSliceInfo:
    """Where a part sits in the whole variable (TF's `Variable.SaveSliceInfo`)."""
    full_name: str
    full_shape: tuple
    var_offset: tuple
    var_shape: tuple


def fixed_size_partitioner(num_shards, axis=0):
    """`tf.fixed_size_partitioner`: `num_shards` parts along `axis`."""
    def _partitioner(shape, dtype=None, **unused):
        shape = as_shape(shape)
        if not shape.is_fully_defined():
            raise ValueError(f"fixed_size_partitioner needs a fully defined shape, got {shape}")
        parts = [1] * shape.ndims
        parts[axis] = min(num_shards, shape.as_list()[axis])
        return parts
    return _partitioner


def variable_axis_size_partitioner(max_shard_bytes, axis=0, bytes_per_string_element=16, max_shards=None):
    """`tf.variable_axis_size_partitioner`: as few parts along `axis` as keep each under `max_shard_bytes`."""
    if max_shard_bytes < 1 or bytes_per_string_element < 1:
        raise ValueError("Both max_shard_bytes and bytes_per_string_element must be positive.")
    if max_shards and max_shards < 1:
        raise ValueError("max_shards must be positive.")

    def _partitioner(shape, dtype, **unused):
        shape = as_shape(shape)
        dims = shape.as_list()
        dtype = _dtypes.as_dtype(dtype)
        element = bytes_per_string_element if dtype == _dtypes.string else dtype.size
        slice_bytes = max(1, int(np.prod([d for i, d in enumerate(dims) if i != axis]))) * element
        slices_per_shard = max(1, max_shard_bytes // slice_bytes)
        shards = int(math.ceil(dims[axis] / slices_per_shard))
        if max_shards:
            shards = min(shards, max_shards)
        parts = [1] * len(dims)
        parts[axis] = max(1, min(shards, dims[axis]))
        return parts
    return _partitioner


def min_max_variable_partitioner(max_partitions=1, axis=0, min_slice_size=256 << 10, bytes_per_string_element=16):
    """`tf.min_max_variable_partitioner`: parts of at least `min_slice_size` bytes, at most `max_partitions`."""
    def _partitioner(shape, dtype, **unused):
        dims = as_shape(shape).as_list()
        dtype = _dtypes.as_dtype(dtype)
        element = bytes_per_string_element if dtype == _dtypes.string else dtype.size
        total = int(np.prod(dims)) * element
        parts_wanted = max(1, int(math.ceil(total / min_slice_size)))
        parts = [1] * len(dims)
        parts[axis] = max(1, min(max_partitions, parts_wanted, dims[axis]))
        return parts
    return _partitioner


def slices(full_shape: list, partitions: list, name: str) -> list:
    """[(offset, shape)] of each part (TF's `_compute_slice_dim_and_shape`); ValueError naming the variable."""
    if len(partitions) != len(full_shape):
        raise ValueError(f"Partitioner of variable {name} returned {len(partitions)} partitions for a shape of rank "
                         f"{len(full_shape)}")
    if any(not isinstance(p, (int, np.integer)) or p < 1 for p in partitions):
        raise ValueError(f"Partitioner of variable {name} returned invalid partitions {partitions}: all must be >= 1")
    axes = [i for i, p in enumerate(partitions) if p > 1]
    if len(axes) > 1:
        raise ValueError(f"Can only slice a variable along one dimension: variable {name}, partitions {partitions}")
    if not axes:
        return [((0,) * len(full_shape), tuple(full_shape))]
    axis, n = axes[0], int(partitions[axes[0]])
    if n > full_shape[axis]:
        raise ValueError(f"Variable {name}: cannot partition dimension {axis} of size {full_shape[axis]} into {n}")
    out, start = [], 0
    for i in range(n):
        size = full_shape[axis] // n + (1 if i < full_shape[axis] % n else 0)
        offset = [0] * len(full_shape)
        offset[axis] = start
        shape = list(full_shape)
        shape[axis] = size
        out.append((tuple(offset), tuple(shape)))
        start += size
    return out


class PartitionedVariable:
    """`tf.get_variable(..., partitioner=...)`'s result: the parts (iterate it, or `list(pv)`), the whole shape,
    and conversion to the whole tensor (`as_tensor()`, a concat of the parts) wherever a Tensor is needed."""

    def __init__(self, name, shape, dtype, variable_list, partitions):
        self._name, self._shape, self._dtype = name, as_shape(shape), _dtypes.as_dtype(dtype)
        self._variable_list = list(variable_list)
        self._partitions = list(partitions)
        self._axis = next((i for i, p in enumerate(self._partitions) if p > 1), 0)

    def __iter__(self):
        return iter(self._variable_list)

    def __len__(self):
        return len(self._variable_list)

    def _get_variable_list(self):
        return list(self._variable_list)

    def _get_partitions(self):
        return list(self._partitions)

    name = property(lambda self: self._name)
    dtype = property(lambda self: self._dtype)
    shape = property(lambda self: self._shape)

    def get_shape(self):
        return self._shape

    @property
    def graph(self):
        return self._variable_list[0].graph

    def as_tensor(self):
        """The whole value: the parts concatenated along the partitioned axis."""
        if len(self._variable_list) == 1:
            return self._variable_list[0].value()
        g = self.graph
        with g.name_scope(None), g.name_scope(self._name + "/ConcatPartitions"):
            return join_ops.concat([v.value() for v in self._variable_list], self._axis, name="concat")

    def __repr__(self):
        return f"<tf.PartitionedVariable '{self._name}' shape={self._shape} parts={len(self)}>"


register_tensor_conversion_function(PartitionedVariable, lambda v, dtype=None, name=None: v.as_tensor())


def initial_part(initializer, initializing_from_value: bool, offset: tuple, shape: tuple):
    """The initial value of one part: a slice of a constant value, else the initializer itself (called with
    the part's shape and its PartitionInfo by the store)."""
    if not initializing_from_value:
        return initializer
    value = np.asarray(initializer)
    index = tuple(slice(o, o + s) for o, s in zip(offset, shape, strict=True))
    return value[index]
