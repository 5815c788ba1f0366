"""The plan: the graph a run needs, pruned, ordered, placed, wired and kernel-bound, then frozen.

`build_plan` runs five named stages, each a plain function over the previous
stage's output:

1. `prune`: the ops the fetches and targets need (fed tensors cut the walk);
2. `order`: a topological order for the sequential run (`ordering.py`);
3. `place`: each op's device (the session's `placement.Placer`, or the host);
4. `insert_transfers`: value slots, one node per op, a TF1 variable-read node
   per consumer of a same-device variable, and a transfer node on every edge
   whose producer is on another device (or in another process);
5. `bind_kernels`: each node's kernel for its device type and its
   `KernelContext`, with the device wrappers of `device_kernels`.

The result is a `Plan`: a tuple of typed `Node` records in topological order
plus consumer lists and initial pending counts. Nothing changes it after it is
built; what a run strategy learns (compiled code, measured sizes, constants)
lives in that strategy's own per-plan object. `plan_for_ops` runs stages 3-5
on an op list chosen by the caller (a partition of a distributed graph).
"""
from __future__ import annotations

import enum
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Callable, Mapping, Optional, Sequence

import numpy as np

from .. import errors
from ..graph import Operation, Tensor
from ..kernels import KernelContext, ResourceStore, lookup
from ..kernels.transfer_kernels import CopyNode, copy_kernel, copy_node_name
from .device_kernels import checked_outputs, gpu_host_memory, on_cuda_device
from .ordering import order, prune

KernelFn = Callable[..., Any]
#: an op whose (static) output has at least this many elements counts as expensive ("large elementwise")
LARGE_ELEMENTWISE = 1 << 20


class HostDevice:
    """The device of a plan built without placement: CPU:0 with numpy."""

    name = "/job:localhost/replica:0/task:0/device:CPU:0"
    device_type = "CPU"
    short_name = "CPU:0"
    cuda_id = None
    is_real_gpu = False
    memory = None
    xp = np
    spec = None


HOST = HostDevice()


class NodeKind(enum.Enum):
    """What a plan node is: a graph op, a transfer between devices, or a TF1 read of a variable."""

    OP = "op"
    TRANSFER = "transfer"
    VARIABLE_READ = "variable_read"  # `op` is the VariableV2 op; runs right before the consumer that reads it


class NodeFailed(Exception):
    """Raised by a run strategy: `node` (a `Node`) failed with `error`; `nodes_done` nodes had finished."""

    def __init__(self, node: "Node", error: BaseException, nodes_done: Optional[int] = None):
        super().__init__(node, error)
        self.node, self.error, self.nodes_done = node, error, nodes_done


# -- stage 4's output: nodes with value slots and predecessors, no kernels yet ------------------
@dataclass(frozen=True)
class Transfer:
    """What `insert_transfers` puts on an edge between devices: one node on the destination device.

    `reads_source=False` makes a node with no input and no predecessor: its value
    comes from elsewhere (a Recv fed by another process).
    """

    op: Any           # the node's identity in errors and traces: .name, .type, .device, .attrs
    kernel: KernelFn  # fn(ctx, value) -> value, or fn(ctx) -> value when reads_source is False
    reads_source: bool = True


#: (tensor, source device, destination device, fed) -> Transfer; called once per (tensor, fed, destination)
TransferFactory = Callable[[Tensor, Any, Any, bool], Transfer]


def copy_transfers(on_copy: Optional[Callable[[CopyNode], None]] = None) -> TransferFactory:
    """The in-process transfer: a `CopyNode` on the destination running `copy_kernel(src, dst)`."""

    def make(tensor: Tensor, src: Any, dst: Any, fed: bool) -> Transfer:
        node = CopyNode(copy_node_name(tensor, dst, fed=fed), tensor, src, dst, fed=fed)
        if on_copy is not None:
            on_copy(node)
        return Transfer(node, copy_kernel(src, dst))

    return make


@dataclass(frozen=True, eq=False)
class WiredNode:
    """A node after `insert_transfers`: where its inputs come from and where its outputs go."""

    op: Any
    device: Any
    kind: NodeKind
    inputs: tuple[int, ...]   # value slots read, in input order
    outputs: tuple[int, ...]  # value slots written
    preds: frozenset[int]     # indices of the nodes that must finish first (data and control)
    kernel: Optional[KernelFn] = None  # a transfer's own kernel
    reads: int = -1           # VARIABLE_READ: index of the variable's OP node (its kernel and context)


@dataclass(frozen=True)
class Wiring:
    nodes: tuple[WiredNode, ...]
    num_slots: int
    feed_slots: tuple[int, ...]
    fetch_slots: tuple[int, ...]


# -- the frozen plan ----------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class Node:
    """One thing a run executes: `kernel(ctx, *values[inputs])` stored into `values[outputs]`."""

    index: int
    op: Any                   # graph Operation, or the transfer's node (CopyNode)
    device: Any
    kind: NodeKind
    kernel: KernelFn
    ctx: KernelContext
    inputs: tuple[int, ...]
    outputs: tuple[int, ...]
    preds: frozenset[int]
    expensive: bool           # worth a thread hand-off if another expensive node is ready (static guess)

    @property
    def name(self) -> str:
        return self.op.name


@dataclass(frozen=True, eq=False)
class Plan:
    """A pruned, placed, kernel-bound schedule for one (fetches, feeds, targets) signature; immutable."""

    ops: tuple[Operation, ...]         # graph ops, in run order
    devices: Mapping[Operation, Any]   # op -> device
    nodes: tuple[Node, ...]            # ops, transfers and variable reads, in topological order
    consumers: tuple[tuple[int, ...], ...]
    pending: tuple[int, ...]           # per node: predecessors not yet done when a run starts
    initial_ready: tuple[int, ...]     # nodes with no predecessor
    num_slots: int
    feed_slots: tuple[int, ...]
    fetch_slots: tuple[int, ...]
    resources: ResourceStore

    @property
    def transfers(self) -> list:
        return [n.op for n in self.nodes if n.kind is NodeKind.TRANSFER]

    @property
    def cuda_id(self) -> Optional[int]:
        """The CUDA device every GPU node runs on, or None (no real GPU, or several)."""
        ids = {n.device.cuda_id for n in self.nodes if n.device.cuda_id is not None}
        return next(iter(ids)) if len(ids) == 1 else None


# -- the stages -----------------------------------------------------------------------------------
def place(ops: Sequence[Operation], placer: Optional[Callable[[list], dict]], host: Any) -> Mapping:
    """Stage 3: op -> device (all on `host` without a placer)."""
    devices = placer(list(ops)) if placer is not None else {op: host for op in ops}
    return MappingProxyType(dict(devices))


def insert_transfers(ops: Sequence[Operation], devices: Mapping, feeds: Sequence[Tensor],
                     fetches: Sequence[Tensor], host: Any, make_transfer: TransferFactory) -> Wiring:
    """Stage 4: value slots and predecessors per node; a transfer wherever a value changes device.

    Feeds live on `host`. An input whose producer is on another device, or is
    not in `ops` at all (a partition reading another task's tensor), goes
    through one transfer node per (tensor, fed, destination device), shared by
    every consumer there: `make_transfer(tensor, src_device, dst_device, fed)`
    says what that node is. A consumer's same-device VariableV2 input gets its
    own read node right before the consumer (TF1 ref semantics: the read sees
    the consumer's control inputs, e.g. an update it waits for). Control inputs
    from ops outside `ops` are not seen: a partitioner must turn those into data
    edges (TF sends a dummy tensor).
    """
    w = _Wirer(ops, devices, feeds, host, make_transfer)
    for op in ops:
        w.add_op(op)
    slot, fed = w.slot, w.fed
    return Wiring(tuple(w.nodes), len(slot), tuple(slot[("feed", t)] for t in feeds),
                  tuple(slot[("feed", t)] if t in fed else slot[("out", t)] for t in fetches))


class _Wirer:
    """The state of `insert_transfers`: slots, nodes so far, the node of each op and of each transfer."""

    def __init__(self, ops, devices: Mapping, feeds, host: Any, make_transfer: TransferFactory):
        self.devices, self.host, self.make_transfer = devices, host, make_transfer
        self.fed = set(feeds)
        self.slot: dict = {}
        for t in feeds:
            self.slot.setdefault(("feed", t), len(self.slot))
        for op in ops:
            for out in op._outputs:
                self.slot[("out", out)] = len(self.slot)
        self.node_of_op: dict = {}
        self.transfer_of: dict = {}  # (tensor, fed, destination name) -> node index
        self.nodes: list[WiredNode] = []

    def add_op(self, op: Operation) -> None:
        dev, node_of_op = self.devices[op], self.node_of_op
        ins: list = []
        preds: set = set()
        var_inputs = []
        for k, t in enumerate(op._inputs):
            if t._op.type == "VariableV2" and t not in self.fed and t._op in node_of_op and self.devices[t._op] is dev:
                var_inputs.append(k)  # read right before this op runs, below
                ins.append(None)
                continue
            s, p = self.source(t, dev)
            ins.append(s)
            if p is not None:
                preds.add(p)
        preds.update(node_of_op[c] for c in op._control_inputs if c in node_of_op)
        for k in var_inputs:
            var_op = op._inputs[k]._op
            rslot = self.new_slot(("read", var_op, op, k))
            self.nodes.append(WiredNode(var_op, dev, NodeKind.VARIABLE_READ, (), (rslot,), frozenset(preds),
                                        reads=node_of_op[var_op]))
            preds.add(len(self.nodes) - 1)
            ins[k] = rslot
        node_of_op[op] = len(self.nodes)
        self.nodes.append(WiredNode(op, dev, NodeKind.OP, tuple(ins),
                                    tuple(self.slot[("out", o)] for o in op._outputs), frozenset(preds)))

    def new_slot(self, key) -> int:
        s = self.slot[key] = len(self.slot)
        return s

    def source(self, t: Tensor, dev) -> tuple:
        """(slot, producing node index or None) to read `t` on `dev`, inserting a transfer if needed."""
        is_fed = t in self.fed
        if is_fed:
            src_dev, src_slot, src_node = self.host, self.slot[("feed", t)], None
        elif t._op in self.node_of_op:
            src_dev, src_slot, src_node = self.devices[t._op], self.slot[("out", t)], self.node_of_op[t._op]
        else:  # produced outside this plan
            src_dev, src_slot, src_node = self.devices.get(t._op), None, None
        if src_dev is dev and src_slot is not None:
            return src_slot, src_node
        key = (t, is_fed, dev.name)
        k = self.transfer_of.get(key)
        if k is None:
            tr = self.make_transfer(t, src_dev, dev, is_fed)
            if tr.reads_source and src_slot is None:
                raise errors.InternalError(None, None, f"Tensor {t.name} has no producer in this plan and its "
                                                       f"transfer to {dev.name} reads one")
            k = self.transfer_of[key] = len(self.nodes)
            reads = tr.reads_source
            self.nodes.append(WiredNode(tr.op, dev, NodeKind.TRANSFER, (src_slot,) if reads else (),
                                        (self.new_slot(("transfer", key)),),
                                        frozenset((src_node,) if reads and src_node is not None else ()),
                                        kernel=tr.kernel))
        return self.nodes[k].outputs[0], k


def is_expensive(op, kind: NodeKind, dev) -> bool:
    """Worth running in a pool thread: an expensive op type, or a large output; never a transfer or GPU launch."""
    if kind is NodeKind.TRANSFER or dev.cuda_id is not None:  # real-GPU work is async launches: cheap
        return False
    if op.op_def.expensive:
        return True
    for o in op._outputs:
        ne = o.shape.num_elements() if o.shape.is_fully_defined() else None
        if ne is not None and ne >= LARGE_ELEMENTWISE:
            return True
    return False


def bind_kernels(wiring: Wiring, resources: ResourceStore, ops: Sequence[Operation]) -> tuple[Node, ...]:
    """Stage 5: each node's kernel for its device type, wrapped for its device, with its `KernelContext`.

    Kernels with a `prepare(ctx, plan_ops)` hook see the whole plan once, here
    (Conv2D keeps its im2col matrix when the same plan computes the filter
    gradient from the same input).
    """
    host_slots: set = set()  # slots of host (numpy) values on real GPUs: see gpu_host_memory
    bound: list = []         # (kernel, ctx) per node
    for w in wiring.nodes:
        if w.kind is NodeKind.TRANSFER:
            bound.append((w.kernel, KernelContext(op=w.op, xp=w.device.xp, resources=resources, device=w.device.name)))
        elif w.kind is NodeKind.VARIABLE_READ:
            bound.append(bound[w.reads])
        else:
            bound.append(_bind_op(w, resources, host_slots))
    in_plan = set(ops)
    for w, (_, ctx) in zip(wiring.nodes, bound, strict=True):
        if w.kind is NodeKind.OP:
            prepare = getattr(lookup(w.op, w.device.device_type), "prepare", None)
            if prepare is not None:
                prepare(ctx, in_plan)
    several_gpus = len({w.device.cuda_id for w in wiring.nodes if w.device.cuda_id is not None}) > 1
    nodes = []
    for i, (w, (fn, ctx)) in enumerate(zip(wiring.nodes, bound, strict=True)):
        if several_gpus and w.device.cuda_id is not None:
            fn = on_cuda_device(fn, w.device.cuda_id)
        nodes.append(Node(i, w.op, w.device, w.kind, fn, ctx, w.inputs, w.outputs, w.preds,
                          is_expensive(w.op, w.kind, w.device)))
    return tuple(nodes)


def _bind_op(w: WiredNode, resources: ResourceStore, host_slots: set) -> tuple:
    """(kernel, ctx) of a graph op on its device; adds the slots of host values on a real GPU to `host_slots`."""
    dev, op = w.device, w.op
    fn = lookup(op, dev.device_type)
    if fn is None:
        raise errors.InvalidArgumentError(
            None, op, f"No {dev.device_type} kernel registered for op '{op.name}' of type {op.type} "
                      f"(dtype {op.outputs[0].dtype.name if op.outputs else 'n/a'})")
    mem = dev.memory
    if mem is not None and mem.check_outputs:
        fn = checked_outputs(fn, mem)
    xp = dev.xp
    if dev.cuda_id is not None:
        fn, xp = gpu_host_memory(op, fn, w.inputs, host_slots, xp)
        if xp is np:
            host_slots.update(w.outputs)
    return fn, KernelContext(op=op, xp=xp, resources=resources, device=dev.name, attrs=dict(op.attrs))


# -- building -------------------------------------------------------------------------------------
def build_plan(fetches: Sequence[Tensor], feeds: Sequence[Tensor], targets: Sequence[Operation],
               resources: ResourceStore, placer: Optional[Callable[[list], dict]] = None, *,
               host_device: Any = None, make_transfer: Optional[TransferFactory] = None) -> Plan:
    """The plan computing `fetches` and running `targets` from `feeds`: all five stages.

    Args:
      fetches, feeds, targets: graph tensors and ops of the signature.
      resources: the session's `ResourceStore` (variables, RNG streams) the kernels use.
      placer: `ops -> {op: device}` (a `placement.Placer.place`); None puts every op on `host_device`.
      host_device: where feeds live (default `HOST`, CPU:0 with numpy).
      make_transfer: the `TransferFactory` for cross-device edges (default `copy_transfers()`).
    """
    fed = set(feeds)
    roots = [t.op for t in fetches if t not in fed] + list(targets)
    ops = order(prune(roots, fed), fed)
    return plan_for_ops(ops, feeds, fetches, resources, placer, host_device=host_device, make_transfer=make_transfer)


def plan_for_ops(ops: Sequence[Operation], feeds: Sequence[Tensor], fetches: Sequence[Tensor],
                 resources: ResourceStore, placer: Optional[Callable[[list], dict]] = None, *,
                 host_device: Any = None, make_transfer: Optional[TransferFactory] = None,
                 devices: Optional[Mapping] = None) -> Plan:
    """Stages 3-5 over `ops`, a topological order the caller chose (e.g. one task's partition).

    `devices` (op -> device, covering at least `ops` and the producers of their
    inputs) replaces the `placer` when the placement was made elsewhere; the
    producers outside `ops` are reached through `make_transfer`.
    """
    host = host_device or HOST
    ops = tuple(ops)
    placed = MappingProxyType(dict(devices)) if devices is not None else place(ops, placer, host)
    wiring = insert_transfers(ops, placed, feeds, fetches, host, make_transfer or copy_transfers())
    nodes = bind_kernels(wiring, resources, ops)
    consumers: list = [[] for _ in nodes]
    for n in nodes:
        for j in sorted(n.preds):
            consumers[j].append(n.index)
    return Plan(ops=ops, devices=placed, nodes=nodes, consumers=tuple(tuple(c) for c in consumers),
                pending=tuple(len(n.preds) for n in nodes),
                initial_ready=tuple(n.index for n in nodes if not n.preds), num_slots=wiring.num_slots,
                feed_slots=wiring.feed_slots, fetch_slots=wiring.fetch_slots, resources=resources)
