"""The simple placer: assigns every node of a plan to one of the session's devices (TF's rules).

Sits between the graph and the executor: `Session` builds one `Placer` over
its device list (`devices.local_devices`) and asks it to place each pruned plan
before the executor binds kernels (`kernels.lookup(op, device_type)`).

Rules, in TF's order:
1. a node placed in an earlier run of this session keeps its device;
2. otherwise a node pinned by the user (`tf.device`) goes to that device; a
   partial spec is completed (no job -> this process's job, no replica/task -> 0,
   no type -> the task's default device);
3. otherwise the default device: GPU:0 if the process sees a GPU (and the node has
   a GPU kernel), else CPU:0.
Colocation groups (`op.colocation_groups()`, e.g. a variable with its read,
assign and initializer ops) land on one device: the intersection of the
members' constraints and of the device types every member has a kernel for.
A pinned device without a kernel, an unknown device, or a job/task that is not
this process fails with TF's InvalidArgumentError unless
`ConfigProto(allow_soft_placement=True)`, which falls back to a device of the
same task (else this task) that has the kernels.
`log_device_placement` prints `name: (Type): /job:localhost/replica:0/task:0/device:CPU:0`
to stderr and logs it at DEBUG (logger `tensorfleet.placement`) when a node is placed.
"""
from __future__ import annotations

import logging
import sys
import threading
from typing import Sequence

from . import errors
from .device_spec import DeviceSpec
from .devices import LOCAL_JOB, Device, priority_key
from .kernels import has_kernel
from .kernels.registry import kernel_dtype

__all__: list = []

logger = logging.getLogger("tensorfleet.placement")
_FIELDS = ("job", "replica", "task", "device_type", "device_index")
_FIELD_WORDS = {"job": "jobs", "replica": "replicas", "task": "tasks", "device_type": "types",
                "device_index": "ids"}


def log_placement(name: str, op_type: str, device: str) -> None:
    """One placement line, TF's shape, to stderr and to the `tensorfleet.placement` logger."""
    line = f"{name}: ({op_type}): {device}"
    print(line, file=sys.stderr)
    logger.debug(line)  # DEBUG: an INFO-level logging set-up would print the line twice


class _ColocationIndex:
    """Union-find over colocation group names, kept up to date as the graph grows (ops are append-only)."""

    def __init__(self, graph):
        self._graph = graph
        self._seen = 0
        self._parent: dict = {}
        self._members: dict = {}  # root group name -> [ops] in creation order

    def _find(self, g: str) -> str:
        parent = self._parent
        root = g
        while parent.setdefault(root, root) != root:
            root = parent[root]
        while parent[g] != root:
            parent[g], g = root, parent[g]
        return root

    def update(self) -> None:
        ops = self._graph._ops
        for op in ops[self._seen:]:
            roots = []
            for g in op._colocation_names():
                r = self._find(g)
                if r not in roots:
                    roots.append(r)
            root = roots[0]
            members = self._members.setdefault(root, [])
            for r in roots[1:]:
                self._parent[r] = root
                members.extend(self._members.pop(r, ()))
            members.append(op)
            if len(roots) > 1:
                members.sort(key=lambda o: o._id)
        self._seen = len(ops)

    def members(self, op) -> list:
        return self._members[self._find(op._colocation_names()[0])]


class Placer:
    """Places ops on a fixed device list and remembers the result for the life of a session (rule 1)."""

    def __init__(self, graph, devices: Sequence[Device], allow_soft_placement: bool = False,
                 log_device_placement: bool = False, job: str = LOCAL_JOB, task: int = 0):
        self.graph = graph
        self.devices = list(devices)
        self.soft = allow_soft_placement
        self.log = log_device_placement
        self.job, self.task = job, task
        self.assigned: dict = {}  # Operation -> Device
        self._index = _ColocationIndex(graph)
        self._lock = threading.Lock()
        self._types = {d.device_type for d in self.devices}

    def place(self, ops: Sequence) -> dict:
        """Assigns every op in `ops` (and its colocation group); returns {op: Device} for `ops`."""
        with self._lock:
            self._index.update()
            for op in ops:
                if op not in self.assigned:
                    self._place_group(op)
            return {op: self.assigned[op] for op in ops}

    # -- one colocation group -------------------------------------------------
    def _place_group(self, op) -> None:
        members = self._index.members(op)
        placed = [m for m in members if m in self.assigned]
        if placed:  # rule 1 for the group: join the members placed earlier
            dev = self.assigned[placed[0]]
            new = [m for m in members if m not in self.assigned]
            for m in new:
                self._join(m, placed[0], dev)
            return
        dev = self._choose(members)
        for m in members:
            self._record(m, dev)

    def _join(self, op, anchor, dev: Device) -> None:
        spec = DeviceSpec.from_string(op.device)
        if spec.matches(dev.spec) and has_kernel(op, dev.device_type):
            self._record(op, dev)
            return
        if not self.soft:
            why = (f"no supported kernel for {dev.device_type} devices is available" if spec.matches(dev.spec)
                   else f"it is pinned to '{op.device}'")
            raise errors.InvalidArgumentError(
                None, op, f"Cannot colocate nodes '{op.name}' and '{anchor.name}': '{anchor.name}' was placed on "
                          f"{dev.name} in an earlier run and {why}")
        self._record(op, self._choose([op]))

    def _record(self, op, dev: Device) -> None:
        self.assigned[op] = dev
        if self.log:
            log_placement(op.name, op.type, dev.name)

    def _merged_constraints(self, members) -> tuple:
        """(merged DeviceSpec, first pinned member) of a group; conflicting fields fail unless soft."""
        merged: dict = {}
        source: dict = {}
        first_pinned = None
        for m in members:
            if not m.device:
                continue
            spec = DeviceSpec.from_string(m.device)
            first_pinned = first_pinned or m
            for f in _FIELDS:
                v = getattr(spec, f)
                if v is None:
                    continue
                if f in merged and merged[f] != v:
                    if self.soft:
                        merged[f] = None
                        continue
                    a = source[f]
                    raise errors.InvalidArgumentError(
                        None, m, f"Cannot colocate nodes '{a.name}' and '{m.name}': Cannot merge devices with "
                                 f"incompatible {_FIELD_WORDS[f]}: '{a.device}' and '{m.device}'")
                if f not in merged:
                    merged[f], source[f] = v, m
        return DeviceSpec(**{f: v for f, v in merged.items() if v is not None}), first_pinned

    def _choose(self, members) -> Device:
        spec, pinned = self._merged_constraints(members)
        supported = [t for t in self._types if all(has_kernel(m, t) for m in members)]
        if not supported:
            m = next((m for m in members if not any(has_kernel(m, t) for t in self._types)), members[0])
            dt = kernel_dtype(m)
            raise errors.InvalidArgumentError(
                None, m, f"No OpKernel was registered to support Op '{m.type}' used by node {m.name} with dtype "
                         f"{dt.name if dt is not None else 'n/a'}. Registered devices: "
                         f"[{', '.join(sorted(self._types))}]")
        task_spec = DeviceSpec(spec.job if spec.job is not None else self.job,
                               spec.replica if spec.replica is not None else 0,
                               spec.task if spec.task is not None else (self.task if spec.job is None else 0))
        in_task = [d for d in self.devices if task_spec.matches(d.spec)]
        here = DeviceSpec(self.job, 0, self.task)
        if not in_task:
            if not self.soft:
                raise errors.InvalidArgumentError(
                    None, pinned, f"Cannot assign a device for operation '{pinned.name}': Operation was explicitly "
                                  f"assigned to {pinned.device} but available devices are "
                                  f"[ {', '.join(d.name for d in self.devices)} ]. Make sure the device "
                                  f"specification refers to a valid device. (Devices of other jobs and tasks "
                                  f"are reached through the distributed runtime, which this session does not "
                                  f"use.)")
            return self._best([d for d in self.devices if here.matches(d.spec)], supported, members)
        full = task_spec.make_merged_spec(DeviceSpec(device_type=spec.device_type, device_index=spec.device_index))
        matching = [d for d in in_task if full.matches(d.spec)]
        if not matching:
            if not self.soft:
                raise errors.InvalidArgumentError(
                    None, pinned, f"Cannot assign a device for operation '{pinned.name}': Could not satisfy explicit "
                                  f"device specification '{pinned.device}' because no devices matching that "
                                  f"specification are registered in this process; available devices: "
                                  f"{', '.join(d.name for d in self.devices)}")
            return self._best(in_task, supported, members)
        ok = [d for d in matching if d.device_type in supported]
        if not ok:
            if not self.soft:
                dtype = spec.device_type
                raise errors.InvalidArgumentError(
                    None, pinned, f"Cannot assign a device for operation '{pinned.name}': Could not satisfy explicit "
                                  f"device specification '{pinned.device}' because no supported kernel for "
                                  f"{dtype} devices is available.")
            return self._best(in_task, supported, members)
        return min(ok, key=priority_key)

    def _best(self, candidates, supported, members) -> Device:
        ok = [d for d in candidates if d.device_type in supported]
        if not ok:  # soft placement of a task without the kernels: this process's own task
            here = DeviceSpec(self.job, 0, self.task)
            ok = [d for d in self.devices if here.matches(d.spec) and d.device_type in supported]
        if not ok:
            raise errors.InvalidArgumentError(None, members[0], f"Cannot assign a device for operation "
                                                                f"'{members[0].name}': no device has its kernels")
        return min(ok, key=priority_key)
