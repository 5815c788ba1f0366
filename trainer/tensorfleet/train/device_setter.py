"""`tf.train.replica_device_setter`: places variables on ps tasks and everything else on the worker.

Used by between-graph replicated scripts as `with tf.device(replica_device_setter(...))`.
The graph applies device functions innermost scope first, each merging into the op's
device so far (`device_scope.place_new_op`), exactly as TF 1.15 does; so inside the setter an
op under `/gpu:1` lands on `/job:worker/device:GPU:1`, under a further `/task:1` on
`/job:worker/task:1/device:GPU:1`, and a variable under an explicit `/job:ps/task:1`
stays there. TF 1.15's code (python/training/device_setter.py), with
`GreedyLoadBalancingStrategy` and `byte_size_load_fn` from tf.contrib.training.
"""
from __future__ import annotations

import logging

import numpy as np

from ..device_spec import DeviceSpec
from ..tensor_shape import TensorShape

__all__ = ["replica_device_setter", "GreedyLoadBalancingStrategy", "byte_size_load_fn"]

logger = logging.getLogger("tensorfleet.train")

STANDARD_PS_OPS = ("Variable", "VariableV2", "AutoReloadVariable", "MutableHashTable", "MutableHashTableV2",
                   "MutableHashTableOfTensors", "MutableHashTableOfTensorsV2", "MutableDenseHashTable",
                   "MutableDenseHashTableV2", "VarHandleOp", "BoostedTreesEnsembleResourceHandleOp")


class _RoundRobinStrategy:
    """Returns the next ps task index for placement in round-robin order."""

    def __init__(self, num_tasks: int):
        self._num_tasks = num_tasks
        self._next_task = 0

    def __call__(self, unused_op) -> int:
        task = self._next_task
        self._next_task = (self._next_task + 1) % self._num_tasks
        return task


def byte_size_load_fn(op) -> int:
    """The byte size of a single-output op's output (typically a variable), for GreedyLoadBalancingStrategy."""
    if len(op.outputs) != 1:
        raise ValueError(f"Op {op} must have a single output")
    output = op.outputs[0]
    elem_size = output.dtype.size
    shape = output.get_shape()
    if not shape.is_fully_defined():
        shape = TensorShape(op.get_attr("shape"))
    if not shape.is_fully_defined():
        raise ValueError(f"Shape {shape} is not fully defined")
    return shape.num_elements() * elem_size


class GreedyLoadBalancingStrategy:
    """Puts each op on the ps task with the least load so far (load by `load_fn`, e.g. byte_size_load_fn)."""

    def __init__(self, num_tasks: int, load_fn):
        self._num_tasks = num_tasks
        self._load_fn = load_fn
        self._ps_loads = np.zeros(num_tasks)

    def __call__(self, op) -> int:
        task = int(np.argmin(self._ps_loads))
        self._ps_loads[task] += self._load_fn(op)
        return task


class _ReplicaDeviceChooser:
    def __init__(self, ps_tasks, ps_device, worker_device, merge_devices, ps_ops, ps_strategy):
        self._ps_tasks = ps_tasks
        self._ps_device = ps_device
        self._worker_device = worker_device
        self._merge_devices = merge_devices
        self._ps_ops = ps_ops
        self._ps_strategy = ps_strategy

    def device_function(self, op) -> str:
        if not self._merge_devices and op.device:
            return op.device
        current_device = DeviceSpec.from_string(op.device or "")
        op_type = op.type if hasattr(op, "type") else op.op
        if self._ps_tasks and self._ps_device and op_type in self._ps_ops:
            ps_device = DeviceSpec.from_string(self._ps_device)
            current_job, ps_job = current_device.job, ps_device.job
            if ps_job and (not current_job or current_job == ps_job):
                ps_device = ps_device.replace(task=self._ps_strategy(op))
            return ps_device.make_merged_spec(current_device).to_string()
        worker_device = DeviceSpec.from_string(self._worker_device or "")
        return worker_device.make_merged_spec(current_device).to_string()


def replica_device_setter(ps_tasks=0, ps_device="/job:ps", worker_device="/job:worker", merge_devices=True,
                          cluster=None, ps_ops=None, ps_strategy=None):
    """A device function for `tf.device`; None when there are no ps tasks (TF 1.15 semantics)."""
    if cluster is not None:
        from ..distributed.cluster import ClusterSpec  # train sits above distributed

        cluster_spec = (cluster if isinstance(cluster, ClusterSpec) else ClusterSpec(cluster)).as_dict()
        ps_job_name = DeviceSpec.from_string(ps_device).job
        if ps_job_name not in cluster_spec or cluster_spec[ps_job_name] is None:
            return None
        ps_tasks = len(cluster_spec[ps_job_name])
    if ps_tasks == 0:
        return None
    if ps_ops is None:
        ps_ops = list(STANDARD_PS_OPS)
    if not merge_devices:
        logger.warning("DEPRECATION: It is recommended to set merge_devices=true in replica_device_setter")
    if ps_strategy is None:
        ps_strategy = _RoundRobinStrategy(ps_tasks)
    if not callable(ps_strategy):
        raise TypeError("ps_strategy must be callable")
    chooser = _ReplicaDeviceChooser(ps_tasks, ps_device, worker_device, merge_devices, ps_ops, ps_strategy)
    return chooser.device_function
