"""Partitioning: a placed step (fetches, feeds, targets) -> per-task partitions in stages.

A pure function used by `master`. Every node is placed on a task; a step's nodes
are split into sub-partitions keyed by (task, stage), where a node's stage is the
number of task boundaries on its longest input path (data and control edges):

    stage(n) = max over inputs i of stage(i) + (1 if i is on another task else 0)

Nodes only feeding same-task nodes are then moved as late as their consumers
allow, so a task runs as few stages as possible; not variable reads sent to
another task nor variable updates: they run as early as TF's executor would run
them (as soon as their inputs are there). The master runs a step stage by
stage; all sub-partitions of a stage (one per task) run concurrently, and every
cross-task edge becomes a Placeholder in the consumer's partition, fed with the
value the producer's run returned (the Send/Recv pair of this design). Because a
partition only starts when every value it receives exists, a waiting Recv never
blocks ready work and no step can deadlock. For the parameter-server pattern
this is exactly one pull per ps task (stage 0: the variable reads) and one push
(the last stage: gradients in, updates applied), whatever the variable count.

Values a stage produces for a later stage of the same task stay on that task
(`Rendezvous`, keyed by step id): a tensor crosses to a task at most once per step.
Variables (`VariableV2`) are never carried: each partition of the variable's task
that uses one includes the variable node itself (a reference, as in TF).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from .. import errors
from ..device_spec import DeviceSpec
from ..func_graph import attr_operations
from ..graph import Operation, Tensor
from ..graph_def import GraphDef, PRODUCER_VERSION, node_def, shape_to_proto, dtype_to_enum

_REF_TYPES = frozenset({"VariableV2"})


def task_of(device) -> str:
    s = device.spec
    return f"/job:{s.job}/replica:{s.replica}/task:{s.task}"


def prune(fetches, feeds, targets) -> list:
    """The ops needed to compute `fetches` and run `targets`, stopping at fed tensors; in creation order."""
    fed = set(feeds)
    needed: set = set()
    stack = [t.op for t in fetches if t not in fed] + list(targets)
    while stack:
        op = stack.pop()
        if op in needed:
            continue
        needed.add(op)
        stack.extend(t.op for t in op.inputs if t not in fed and t.op not in needed)
        # a fed placeholder's control edges are satisfied by the feed (TF's FeedInputs rewrite; executor.ordering)
        stack.extend(c for c in op.control_inputs if c not in needed and not (
            c.type in ("Placeholder", "PlaceholderV2") and c.outputs and c.outputs[0] in fed))
    return sorted(needed, key=lambda o: o._id)


@dataclass
class SubPartition:
    task: str
    stage: int
    ops: list
    graph_def: GraphDef = field(default_factory=GraphDef)
    sent: list = field(default_factory=list)      # [(placeholder tensor name, source tensor name)] from the master
    local: list = field(default_factory=list)     # [(placeholder tensor name, source tensor name)] from rendezvous
    fetch: list = field(default_factory=list)     # tensor names this run produces (returned or kept)
    keep: list = field(default_factory=list)      # of `fetch`: kept on the task for a later stage
    keep_returned: list = field(default_factory=list)  # of `keep`: returned as well
    targets: list = field(default_factory=list)   # op names run for effect
    end_of_step: bool = False
    handle: object = None                         # set by the master once registered
    deps: list = field(default_factory=list)      # sub-partitions that must finish before this one starts
    reply_bytes: int = -1                         # of the returned values, from static shapes (-1: not known)

    @property
    def returned(self) -> list:
        only_kept = set(self.keep) - set(self.keep_returned)
        return [n for n in self.fetch if n not in only_kept]


@dataclass
class StepPlan:
    stages: list            # [[SubPartition]] in stage order
    fetch_names: list       # client fetch tensor names, in order
    feed_names: list

    @property
    def subs(self) -> list:
        return [s for stage in self.stages for s in stage]


def _recv_name(t: Tensor) -> str:
    return f"_recv/{t.op.name}/{t.value_index}"


def partition(fetches, feeds, targets, placement: dict) -> StepPlan:
    """Splits the step into staged sub-partitions; `placement` maps every needed op to a Device."""
    fed = set(feeds)
    ops = prune(fetches, feeds, targets)
    placement = _relocate_noops(ops, dict(placement))
    task = {op: task_of(placement[op]) for op in ops}
    in_step = set(ops)
    exported = _exported(ops, task, fed, fetches)
    stage = _stages(ops, task, fed, in_step, fetches)
    groups: dict = {}
    for op in ops:
        if op.type in _REF_TYPES and op not in exported:
            continue  # lives only as a reference inside its consumers' partitions
        groups.setdefault((task[op], stage[op]), []).append(op)
    subs = {key: SubPartition(key[0], key[1], members) for key, members in groups.items()}
    where = {op: key for key, members in groups.items() for op in members}
    fetch_set = {t.name for t in fetches if t not in fed}
    for key, sub in subs.items():
        _wire(sub, key, where, task, fed, fetch_set, placement)
    last_stage: dict = {}
    for key in sorted(subs, key=lambda k: k[1]):
        last_stage[key[0]] = key
    for t_name, key in last_stage.items():
        if any(s.keep for k, s in subs.items() if k[0] == t_name):
            subs[key].end_of_step = True
    _dependencies(subs, where, fed)
    stages = [[subs[k] for k in sorted(subs) if k[1] == s] for s in sorted({k[1] for k in subs})]
    return StepPlan(stages, [t.name for t in fetches], [t.name for t in feeds])


def _dependencies(subs: dict, where: dict, fed: set) -> None:
    """Each sub-partition waits for the producers of its inputs and control inputs, and for the previous
    sub-partition of its own task (a task runs its stages in order); nothing else: a task's next stage
    does not wait for unrelated tasks."""
    previous: dict = {}
    for key in sorted(subs, key=lambda k: (k[1], k[0])):
        sub = subs[key]
        deps = set()
        if key[0] in previous:
            deps.add(previous[key[0]])
        for op in sub.ops:
            sources = [t.op for t in op.inputs if t not in fed] + list(op.control_inputs)
            for src in sources:
                src_key = where.get(src)
                if src_key is not None and src_key != key:
                    deps.add(src_key)
        sub.deps = [subs[k] for k in sorted(deps, key=lambda k: (k[1], k[0]))]
        previous[key[0]] = key


def _relocate_noops(ops, placement: dict) -> dict:
    """A NoOp (no effect but ordering) runs on the task of its control inputs when they are all on one task,
    or when those on other tasks all come before one on that task (its ancestors): the order it stands for
    holds there, at no round trip to another task. Optimizers' `update` groups on the worker: Adam's waits for
    every ps's updates and for the beta powers' updates, which wait for those too, so it runs on their ps
    (and the `global_step` increment after it in the same call)."""
    for op in ops:
        if op.type == "NoOp" and not op.inputs and op.control_inputs:
            waits = [c for c in op.control_inputs if c in placement]
            by_task: dict = {}
            for c in waits:
                by_task.setdefault(task_of(placement[c]), []).append(c)
            for here in by_task.values():
                if len(by_task) == 1 or _all_before({c for c in waits if c not in here}, here, placement):
                    placement[op] = placement[here[0]]
                    break
    return placement


def _all_before(others: set, ops: list, in_step) -> bool:
    """Every op of `others` is an ancestor of one of `ops` (through inputs and control inputs, in the step)."""
    left, seen, stack = set(others), set(ops), list(ops)
    while stack and left:
        op = stack.pop()
        for src in [t.op for t in op.inputs] + list(op.control_inputs):
            if src in in_step and src not in seen:
                seen.add(src)
                left.discard(src)
                stack.append(src)
    return not left


def _exported(ops, task, fed, fetches) -> set:
    """Ops with an output or control edge to another task, or fetched by the client."""
    out = {t.op for t in fetches if t not in fed}
    for op in ops:
        for t in op.inputs:
            if t not in fed and task.get(t.op) is not None and task[t.op] != task[op]:
                out.add(t.op)
        for c in op.control_inputs:
            if c in task and task[c] != task[op]:
                out.add(c)
    return out


def _sources(op, task, fed, in_step):
    """(producer, crosses tasks) for every input and control input that orders `op` within the step."""
    for t in op.inputs:
        if t in fed:
            continue
        src = t.op
        if src.type in _REF_TYPES and task[src] == task[op]:
            continue  # a same-task variable is a reference, not a value
        yield src, task[src] != task[op]
    for c in op.control_inputs:
        if c in in_step:
            yield c, task[c] != task[op]


def _writes_state(op) -> bool:
    """An op that updates a variable (Assign*, Scatter*, the optimizers' Apply* ops)."""
    op_def = op.op_def
    return op_def is not None and bool(op_def.updates_variables)


def _stages(ops, task, fed, in_step, fetch_tensors=()) -> dict:
    stage: dict = {}
    consumers: dict = {op: [] for op in ops}
    for op in ops:  # creation order is topological: as early as possible
        stage[op] = max((stage[src] + crosses for src, crosses in _sources(op, task, fed, in_step)), default=0)
        for t in op.inputs:
            if t not in fed and t.op in consumers:
                consumers[t.op].append(op)
        for c in op.control_inputs:
            if c in consumers:
                consumers[c].append(op)
    fetched = {t.op for t in fetch_tensors}
    for op in reversed(ops):  # then as late as the consumers allow (a value for another task: a stage earlier)
        users = consumers[op]
        # A variable's read for another task and a variable's update stay where their inputs put them, as
        # TF's executor runs them as soon as they are ready: moved later, Adam's updates on the ps holding
        # beta1_power would wait for the other ps tasks' updates (its `_finish` does), and every other
        # worker's updates would land in between (staler gradients).
        if not users or op in fetched or op.type in _REF_TYPES or _writes_state(op):
            continue
        stage[op] = max(stage[op], min(stage[u] - (task[u] != task[op]) for u in users))
    return stage


def _local_device(device) -> str:
    s = device.spec
    return DeviceSpec(device_type=s.device_type, device_index=s.device_index).to_string()


class _Wiring:
    """Builds one sub-partition's GraphDef: cross-task inputs become Placeholders, variables stay references."""

    def __init__(self, sub: SubPartition, task: dict, fed: set, placement: dict):
        self.sub, self.task, self.fed, self.placement = sub, task, fed, placement
        self.members = set(sub.ops)
        self.refs: list = []
        self.recvs: dict = {}  # source tensor -> placeholder name
        self.used_inside: set = set()

    def input_name(self, t: Tensor) -> str:
        src = t.op
        if t not in self.fed and src in self.members:
            self.used_inside.add(src)
            return t.name if t.value_index else src.name
        if t not in self.fed and src.type in _REF_TYPES and self.task[src] == self.sub.task:
            self.add_ref(src)
            return src.name
        return self.recvs.setdefault(t, _recv_name(t))

    def add_ref(self, v: Operation) -> None:
        if v not in self.refs:
            self.refs.append(v)

    def check_attr_refs(self, op: Operation) -> None:
        for v in attr_operations(op):  # with the variables inside control-flow bodies
            if v.type not in _REF_TYPES or v in self.members:
                continue
            if v in self.task and self.task[v] != self.sub.task:
                raise errors.InvalidArgumentError(
                    None, op, f"Node '{op.name}' on {self.sub.task} uses variable '{v.name}' on {self.task[v]}: a "
                              f"reference cannot cross tasks (colocate the op with its variable)")
            self.add_ref(v)

    def node(self, op: Operation):
        nd = node_def(op)
        nd.device = _local_device(self.placement[op])
        del nd.input[:]
        nd.input.extend(self.input_name(t) for t in op.inputs)
        for c in op.control_inputs:
            if c in self.members:
                nd.input.append("^" + c.name)
                self.used_inside.add(c)
        self.check_attr_refs(op)
        return nd

    def ref_node(self, v: Operation):
        nd = node_def(v)
        nd.device = _local_device(self.placement.get(v, next(iter(self.placement.values()))))
        del nd.input[:]
        return nd

    def recv_node(self, t: Tensor, name: str):
        nd = GraphDef().node.add(name=name, op="Placeholder")
        nd.attr["dtype"].type = dtype_to_enum(t.dtype)
        nd.attr["shape"].shape.CopyFrom(shape_to_proto(t.shape))
        return nd


def _wire(sub: SubPartition, key, where: dict, task: dict, fed: set, fetch_set: set, placement: dict) -> None:
    """Builds the sub-partition's GraphDef and its feeds, fetches, keeps and targets."""
    w = _Wiring(sub, task, fed, placement)
    nodes = [w.node(op) for op in sub.ops]
    ref_nodes = [w.ref_node(v) for v in w.refs]
    recv_nodes = [w.recv_node(t, name) for t, name in w.recvs.items()]
    for t, name in w.recvs.items():
        src_key = where.get(t.op)
        here = t not in fed and src_key is not None and src_key[0] == sub.task
        (sub.local if here else sub.sent).append((name + ":0", t.name))
    gd = GraphDef()
    gd.versions.producer = PRODUCER_VERSION
    gd.node.extend(recv_nodes + ref_nodes + nodes)
    sub.graph_def = gd
    _outputs(sub, w.members, w.used_inside, where, fed, fetch_set)
    sub.reply_bytes = _reply_bytes(sub)


def _reply_bytes(sub: SubPartition) -> int:
    """Bytes of the values a run of `sub` returns, from their static shapes; -1 when a shape or size is not
    known (a string, a partly known shape)."""
    outputs = {t.name: t for op in sub.ops for t in op.outputs}
    total = 0
    for name in sub.returned:
        t = outputs.get(name)
        n = None if t is None or t.dtype.name == "string" else t.shape.num_elements()
        if n is None:
            return -1
        total += n * t.dtype.size
    return total


def _consumer_keys(sub: SubPartition, members: set, where: dict, fed: set) -> dict:
    """tensor name -> the (task, stage) keys of the other sub-partitions that read it."""
    needed_by: dict = {}
    for key_op, key in where.items():
        if key == (sub.task, sub.stage):
            continue
        for t in key_op.inputs:
            if t.op in members and t not in fed:
                needed_by.setdefault(t.name, set()).add(key)
    return needed_by


def _outputs(sub: SubPartition, members: set, used_inside: set, where: dict, fed: set, fetch_set: set) -> None:
    needed_by = _consumer_keys(sub, members, where, fed)
    for op in sub.ops:
        for t in op.outputs:
            keys = needed_by.get(t.name, set())
            remote = any(k[0] != sub.task for k in keys) or t.name in fetch_set
            later_here = any(k[0] == sub.task for k in keys)
            if remote or later_here:
                sub.fetch.append(t.name)
            if later_here:
                sub.keep.append(t.name)
                if remote:
                    sub.keep_returned.append(t.name)
        if not any(t.name in sub.fetch for t in op.outputs) and op not in used_inside:
            sub.targets.append(op.name)
