"""`tf.dynamic_partition`, `tf.dynamic_stitch`, `tf.parallel_dynamic_stitch` and the sharded
`tf.nn.embedding_lookup` (a list of params tensors, partition_strategy "mod" / "div") built on them.

Sits in `ops/` beside `slicing_ops.py` (gather); kernels in `kernels/partition_stitch_kernels.py`.
Gradients as TF registers them (data_flow_grad.py): DynamicPartition's is a ParallelDynamicStitch
of the partitioned flat positions of `partitions`; (Parallel)DynamicStitch's is a gather of the
output gradient at each `indices[m]` (so a position written twice gets gradient in both places,
as in TF). `nn_impl.embedding_lookup` calls `sharded_embedding_lookup` for more than one shard.
"""
from __future__ import annotations

import numpy as np

from .. import dtypes as _dtypes
from ..default_graph import colocate_with, name_scope
from ..graph import Tensor
from . import math_ops
from .array_ops import concat, ones_like, reshape, shape as _shape, stack
from .common import TensorShape, convert_to_tensor, make_op, make_tensor, register_gradient, register_op
from .comparison_ops import where
from .scan_sort_ops import cumsum
from .shape_util import constant_value
from .slicing_ops import gather

__all__ = ["dynamic_partition", "dynamic_stitch", "parallel_dynamic_stitch"]


def _positions(t: Tensor) -> Tensor:
    """0, 1, ..., size(t) - 1 (int32) in t's shape: TF's reshape(range(reduce_prod(shape(t))), shape(t)), built
    from a cumsum because this runtime's tf.range needs a static limit."""
    return reshape(cumsum(reshape(ones_like(t, dtype=_dtypes.int32), [-1]), exclusive=True), _shape(t))


def _int32(value, what: str, op_name: str) -> Tensor:
    t = convert_to_tensor(value, dtype=_dtypes.int32) if not isinstance(value, Tensor) else value
    if t.dtype is not _dtypes.int32:
        raise TypeError(f"Value passed to parameter '{what}' of '{op_name}' has DataType {t.dtype.name} not in list "
                        f"of allowed values: int32")
    return t


# -- DynamicPartition -----------------------------------------------------------------------------------------------
def _partition_shape(op):
    data, parts = op.inputs
    n = op.get_attr("num_partitions")
    ds, ps = data.shape, parts.shape
    if ps.ndims is None or ds.ndims is None:
        return [(data.dtype, TensorShape(None))] * n
    if ds.ndims < ps.ndims or not ds[:ps.ndims].is_compatible_with(ps):
        raise ValueError(f"DynamicPartition: data.shape must start with partitions.shape, got data.shape = {ds}, "
                         f"partitions.shape = {ps} (op '{op.name}')")
    return [(data.dtype, TensorShape([None]).concatenate(ds[ps.ndims:]))] * n


register_op("DynamicPartition", _partition_shape)


def dynamic_partition(data, partitions, num_partitions, name=None):
    """`tf.dynamic_partition`: outputs[i] = the slices data[js...] with partitions[js...] == i, in row-major order.

    `partitions` (int32) has a prefix of data's shape; outputs[i].shape = [count of i] + data.shape[partitions.ndim:].
    """
    num_partitions = int(num_partitions)
    if num_partitions < 1:
        raise ValueError(f"Value for attr 'num_partitions' of {num_partitions} must be at least minimum 1")
    data = convert_to_tensor(data)
    partitions = _int32(partitions, "partitions", "DynamicPartition")
    op = make_op("DynamicPartition", [data, partitions], {"num_partitions": num_partitions}, name=name,
                 default_name="DynamicPartition")
    return list(op.outputs)


@register_gradient("DynamicPartition")
def _dynamic_partition_grad(op, *grads):
    data, parts = op.inputs
    partitioned_indices = dynamic_partition(_positions(parts), parts, op.get_attr("num_partitions"))
    reconstructed = parallel_dynamic_stitch(partitioned_indices, list(grads))
    return [reshape(reconstructed, _shape(data)), None]


# -- DynamicStitch / ParallelDynamicStitch --------------------------------------------------------------------------
def _stitch_shape(op):
    n = op.get_attr("N")
    indices, data = op.inputs[:n], op.inputs[n:]
    extra = None
    known = True
    max_index = -1
    for m, (idx, d) in enumerate(zip(indices, data)):
        if d.dtype is not data[0].dtype:
            raise TypeError(f"{op.type}: data[{m}] has dtype {d.dtype.name}, data[0] {data[0].dtype.name} "
                            f"(op '{op.name}')")
        value = constant_value(idx)
        if value is None:
            known = False
        elif np.size(value):
            max_index = max(max_index, int(np.max(value)))
        if idx.shape.ndims is None or d.shape.ndims is None:
            continue
        k = idx.shape.ndims
        if d.shape.ndims < k or not d.shape[:k].is_compatible_with(idx.shape):
            raise ValueError(f"{op.type}: data[{m}].shape = {d.shape} does not start with indices[{m}].shape = "
                             f"{idx.shape} (op '{op.name}')")
        rest = d.shape[k:]
        if extra is not None and not extra.is_compatible_with(rest):
            raise ValueError(f"{op.type}: data[{m}].shape[{k}:] = {rest} does not match the other inputs' "
                             f"element shape {extra} (op '{op.name}')")
        extra = rest if extra is None else extra.merge_with(rest)
    first = TensorShape([max_index + 1 if known else None])
    return [(data[0].dtype, first.concatenate(extra) if extra is not None else TensorShape(None))]


register_op("DynamicStitch", _stitch_shape)
register_op("ParallelDynamicStitch", _stitch_shape)


def _stitch(op_type, indices, data, name):
    indices, data = list(indices), list(data)
    if len(indices) != len(data):
        raise ValueError(f"{op_type}: List argument 'data' must have the same length as 'indices' "
                         f"({len(data)} vs {len(indices)})")
    if not indices:
        raise ValueError(f"{op_type}: List argument 'indices' must have at least 1 element")
    indices = [_int32(i, "indices", op_type) for i in indices]
    data = [convert_to_tensor(d) for d in data]
    return make_tensor(op_type, indices + data, {"N": len(indices)}, name=name, default_name=op_type)


def dynamic_stitch(indices, data, name=None):
    """`tf.dynamic_stitch`: merged[indices[m][i, ..., j], ...] = data[m][i, ..., j, ...]; a later write wins.

    merged.shape = [max(indices) + 1] + data[0].shape[indices[0].ndim:].
    """
    return _stitch("DynamicStitch", indices, data, name)


def parallel_dynamic_stitch(indices, data, name=None):
    """`tf.parallel_dynamic_stitch`: dynamic_stitch where, for an index written twice, either write may win
    (here: the later one, as dynamic_stitch)."""
    return _stitch("ParallelDynamicStitch", indices, data, name)


@register_gradient("DynamicStitch")
@register_gradient("ParallelDynamicStitch")
def _dynamic_stitch_grad(op, grad):
    n = op.get_attr("N")
    return [None] * n + [gather(grad, idx) for idx in op.inputs[:n]]


# -- embedding_lookup over shards -----------------------------------------------------------------------------------
def sharded_embedding_lookup(params, ids, partition_strategy, name):
    """TF's `embedding_lookup` over np > 1 shards: ids assigned to shards by `partition_strategy`, looked up per
    shard (colocated with it) and stitched back in the order of `ids`.

    "mod": shard id % np, row id // np. "div": contiguous ranges, the first (total % np) shards one row longer:
    shard max(id // (per + 1), (id - extras) // per), row id % (per + 1) or (id - extras) % per.
    """
    if partition_strategy not in ("mod", "div"):
        raise ValueError(f"Unrecognized partition strategy: {partition_strategy}")
    n = len(params)
    with name_scope(name, "embedding_lookup", list(params) + [ids]) as scope:
        params = [convert_to_tensor(p, name="params") for p in params]
        ids = convert_to_tensor(ids, name="ids")
        if ids.dtype not in (_dtypes.int32, _dtypes.int64):
            raise TypeError(f"Value passed to parameter 'indices' has DataType {ids.dtype.name} not in list of "
                            f"allowed values: int32, int64")
        flat_ids = reshape(ids, [-1])
        original_indices = _positions(flat_ids)
        if partition_strategy == "mod":
            p_assignments = math_ops.floormod(flat_ids, n)
            new_ids = math_ops.floordiv(flat_ids, n)
        else:
            dims = [p.shape[0] if p.shape.ndims else None for p in params]
            if all(d is not None for d in dims):
                num_total_ids = convert_to_tensor(sum(dims), dtype=flat_ids.dtype)
            else:
                sizes = []
                for p, d in zip(params, dims):
                    if d is not None:
                        sizes.append(convert_to_tensor(d, dtype=flat_ids.dtype))
                    else:
                        with colocate_with(p):
                            sizes.append(math_ops.cast(_shape(p)[0], flat_ids.dtype))
                num_total_ids = math_ops.reduce_sum(stack(sizes))
            ids_per_partition = math_ops.floordiv(num_total_ids, n)
            extras = math_ops.floormod(num_total_ids, n)
            p_assignments = math_ops.maximum(math_ops.floordiv(flat_ids, ids_per_partition + 1),
                                             math_ops.floordiv(flat_ids - extras, ids_per_partition))
            new_ids = where(math_ops.less(p_assignments, extras), math_ops.floormod(flat_ids, ids_per_partition + 1),
                            math_ops.floormod(flat_ids - extras, ids_per_partition))
        p_assignments = math_ops.cast(p_assignments, _dtypes.int32)
        gather_ids = dynamic_partition(new_ids, p_assignments, n)
        pindices = dynamic_partition(original_indices, p_assignments, n)
        partitioned = []
        for p, pids in zip(params, gather_ids):
            with colocate_with(p):
                partitioned.append(gather(p, pids))
        ret = parallel_dynamic_stitch(pindices, partitioned)
        element_shape = params[0].shape[1:]
        for p in params[1:]:
            element_shape = element_shape.merge_with(p.shape[1:])
        if element_shape.is_fully_defined():
            element_dims = convert_to_tensor(np.array(element_shape.as_list(), dtype=np.int32))
        else:
            with colocate_with(params[0]):
                element_dims = _shape(params[0])[1:]
        ret = reshape(ret, concat([_shape(ids), element_dims], 0), name=scope)
        ret.set_shape(ids.shape.concatenate(element_shape))
        return ret
