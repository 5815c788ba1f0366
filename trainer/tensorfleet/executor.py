"""The executor: turns (fetches, feeds, targets) into a placed, kernel-bound plan and runs it.

Flow: `Session.run` asks for a plan (built once per signature and cached by the
session). Building prunes the graph to the needed ops (topological order),
places them (`placement.Placer`), inserts a copy node on every edge that crosses
devices (`kernels.transfer_kernels`), binds each node to the kernel of its
device type with a `KernelContext` whose `xp` is its device's array module (on
real GPUs shape arithmetic stays on the host, `device_steps.gpu_host_memory`), and
precomputes integer value slots, consumer lists and initial pending counts
(data and control inputs).

Two ways to run a plan, chosen once per plan:
- sequential (the fast path): nodes in topological order in the caller's thread,
  no locks, no per-node bookkeeping. Used when no two expensive nodes can ever be
  ready together (one device and no independent expensive pair, or
  inter_op_parallelism_threads == 1 / < 0). A thread hand-off costs ~75-110 us on
  our VMs, more than a whole small training step's graph overhead. The order runs
  variable updates after everything independent of them (gradients, then
  updates); Const values are computed once and pre-filled; a consumer's own
  variable reads are gathered with its inputs; each value is dropped after its
  last reader, so kernels may reuse dead buffers (`kernels.registry.owns`). A plan
  that runs a second time is compiled into straight-line code
  (`scheduling.compile_sequential`).
- concurrent (dependency counting): the caller thread schedules; ready cheap nodes
  run inline; when two or more expensive nodes (MatMul, Conv, large elementwise)
  are ready, all but one go to the inter-op pool of their device. Used when
  independent expensive nodes sit on different devices, or on one device and the
  first run measured them as big enough (>= OFFLOAD_MIN_COST multiply-adds).
Kernels with a `prepare(ctx, plan_ops)` hook see the whole plan once, at build
time (Conv2D hands its im2col matrix to the filter gradient of the same input).
The first error cancels the run (nothing new starts, running nodes are waited
for) and is raised with the failing node's name. `statistics()` returns a
frozen snapshot of the counters for `metrics`.
"""
from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from operator import itemgetter
from typing import Callable, Optional, Sequence

import numpy as np

from . import errors
from .graph import Operation, Tensor
from .kernels import KernelContext, ResourceStore, lookup
from .kernels.core_kernels import variable as _read_variable
from .kernels.gpu_memory import is_oom
from .kernels.transfer_kernels import CopyNode, copy_kernel, copy_node_name
from .device_steps import checked_outputs, gpu_host_memory, on_cuda_device, use_cuda_device
from .plan_order import prune
from .scheduling import (COMPILE_MAX_STEPS, _gather_with_reads, _run_steps, _run_steps_releasing, _StepFailed,
                         compile_sequential, cost, independent_pairs, run_concurrent)

#: same-device expensive nodes are run concurrently only if both cost at least this many multiply-adds
OFFLOAD_MIN_COST = 1 << 24
#: an op whose (static) output has at least this many elements counts as expensive ("large elementwise")
LARGE_ELEMENTWISE = 1 << 20
_PAIR_ANALYSIS_LIMIT = 400


@dataclass(frozen=True)
class ExecutorStatistics:
    """A snapshot of executor counters, exported by `metrics` as Prometheus series."""

    runs: int
    nodes_executed: int
    errors: int
    run_seconds_total: float
    plans_built: int
    inline_nodes: int = 0           # nodes run in a concurrent run's caller thread
    pool_nodes: int = 0             # nodes handed to an inter-op pool
    concurrent_runs: int = 0        # runs that used the dependency-counting path
    max_ready_queue_depth: int = 0  # most nodes ready at once in a concurrent run
    queue_depth: int = 0            # tasks waiting in the shared inter-op pools now
    device_seconds: tuple = ()      # ((device name, seconds), ...)

    def device_seconds_dict(self) -> dict:
        return dict(self.device_seconds)


class _Counters:
    def __init__(self):
        self.lock = threading.Lock()
        self.runs = self.nodes = self.errors = self.plans = 0
        self.inline = self.pooled = self.concurrent = self.max_ready = 0
        self.seconds = 0.0
        self.device_seconds: dict = {}


_COUNTERS = _Counters()


def statistics() -> ExecutorStatistics:
    from .thread_pools import all_queue_depth

    c = _COUNTERS
    with c.lock:
        return ExecutorStatistics(c.runs, c.nodes, c.errors, c.seconds, c.plans, c.inline, c.pooled, c.concurrent,
                                  c.max_ready, all_queue_depth(), tuple(sorted(c.device_seconds.items())))


class _HostDevice:
    """The device of a plan built without placement: CPU:0 with numpy."""

    name = "/job:localhost/replica:0/task:0/device:CPU:0"
    device_type = "CPU"
    short_name = "CPU:0"
    cuda_id = None
    is_real_gpu = False
    memory = None
    xp = np
    spec = None


_HOST = _HostDevice()


class ExecutionPlan:
    """A pruned, placed, kernel-bound schedule for one (fetches, feeds, targets) signature."""

    def __init__(self, fetches: Sequence[Tensor], feeds: Sequence[Tensor], targets: Sequence[Operation],
                 resources: ResourceStore, place: Optional[Callable[[list], dict]] = None, *,
                 host_device=None, pools=None, inter_op_threads: int = 0,
                 on_copy: Optional[Callable[[CopyNode], None]] = None):
        fed = set(feeds)
        roots = [t.op for t in fetches if t not in fed] + list(targets)
        self.ops = prune(roots, fed)
        host = host_device or _HOST
        devices = place(self.ops) if place is not None else {op: host for op in self.ops}
        self.devices = devices
        self._pools = pools

        # -- value slots: feeds first, then every output; copies get their own slots
        slot: dict = {}
        for t in feeds:
            slot.setdefault(("feed", t), len(slot))
        for op in self.ops:
            for out in op._outputs:
                slot[("out", out)] = len(slot)
        step_of_op: dict = {}
        copies: dict = {}  # (tensor, fed, device name) -> step index
        steps: list = []   # (fn, ctx, ins, outs, node, device)
        preds: list = []   # per step: set of predecessor step indices
        host_slots: set = set()  # slots of host (numpy) values on real GPUs: see gpu_host_memory

        def source(t: Tensor, dev):
            """(slot, predecessor step or None) to read tensor `t` on device `dev`, inserting a copy if needed."""
            is_fed = t in fed
            src_dev = host if is_fed else devices[t._op]
            src_slot = slot[("feed", t)] if is_fed else slot[("out", t)]
            src_step = None if is_fed else step_of_op[t._op]
            if src_dev is dev:
                return src_slot, src_step
            key = (t, is_fed, dev.name)
            ci = copies.get(key)
            if ci is None:
                node = CopyNode(copy_node_name(t, dev, fed=is_fed), t, src_dev, dev, fed=is_fed)
                cslot = len(slot)
                slot[("copy", key)] = cslot
                ci = len(steps)
                ctx = KernelContext(op=node, xp=dev.xp, resources=resources, device=dev.name)
                steps.append((copy_kernel(src_dev, dev), ctx, (src_slot,), (cslot,), node, dev))
                preds.append(set() if src_step is None else {src_step})
                copies[key] = ci
                if on_copy is not None:
                    on_copy(node)
            return steps[ci][3][0], ci

        for op in self.ops:
            dev = devices[op]
            fn = lookup(op, dev.device_type)
            if fn is None:
                raise errors.InvalidArgumentError(
                    None, op, f"No {dev.device_type} kernel registered for op '{op.name}' of type {op.type} "
                              f"(dtype {op.outputs[0].dtype.name if op.outputs else 'n/a'})")
            ins, p, var_inputs = [], set(), []
            for k, t in enumerate(op._inputs):
                if t._op.type == "VariableV2" and t not in fed and devices[t._op] is dev:
                    var_inputs.append(k)  # read when this op runs, below
                    ins.append(None)
                    continue
                s, ps = source(t, dev)
                ins.append(s)
                if ps is not None:
                    p.add(ps)
            for c in op._control_inputs:
                if c in step_of_op:
                    p.add(step_of_op[c])
            for k in var_inputs:
                # TF1 ref semantics: a variable input is read when its consumer runs, after all of the
                # consumer's other inputs and control inputs (e.g. an update it waits for), not whenever
                # the variable node happened to run. One read step per consumer, right before it.
                var_op = op._inputs[k]._op
                vstep = steps[step_of_op[var_op]]
                rslot = len(slot)
                slot[("read", var_op, op, k)] = rslot
                steps.append((vstep[0], vstep[1], (), (rslot,), var_op, dev))
                preds.append(set(p))
                p.add(len(steps) - 1)
                ins[k] = rslot
            mem = dev.memory
            if mem is not None and mem.check_outputs:
                fn = checked_outputs(fn, mem)
            xp = dev.xp
            if dev.cuda_id is not None:
                fn, xp = gpu_host_memory(op, fn, ins, host_slots, xp)
                if xp is np:
                    host_slots.update(slot[("out", o)] for o in op._outputs)
            ctx = KernelContext(op=op, xp=xp, resources=resources, device=dev.name, attrs=dict(op.attrs))
            step_of_op[op] = len(steps)
            steps.append((fn, ctx, tuple(ins), tuple(slot[("out", o)] for o in op._outputs), op, dev))
            preds.append(p)

        # Kernels with a `prepare(ctx, plan_ops)` hook look at the whole plan once, here (e.g. Conv2D
        # keeps its im2col matrix when the same plan computes the filter gradient from the same input).
        in_plan = set(self.ops)
        for _, ctx, _, _, node, dev in steps:
            if not isinstance(node, CopyNode):
                prepare = getattr(lookup(node, dev.device_type), "prepare", None)
                if prepare is not None:
                    prepare(ctx, in_plan)
        self.num_slots = len(slot)
        self.feed_slots = [slot[("feed", t)] for t in feeds]
        self.fetch_slots = [slot[("feed", t)] if t in fed else slot[("out", t)] for t in fetches]
        self.nodes = [s[4] for s in steps]
        self.step_devices = [s[5] for s in steps]
        self.copy_nodes = [s[4] for s in steps if isinstance(s[4], CopyNode)]
        self._steps_full = steps
        # the fast path's steps: (fn, ctx, ins, out) with out an int (one output), None (none) or a tuple
        self._fast = [(fn, ctx, ins, outs[0] if len(outs) == 1 else (None if not outs else outs))
                      for fn, ctx, ins, outs, _, _ in steps]
        self._fast_seq = self._with_releases(self._fast)
        self._compiled = None  # compile_sequential(self._fast_seq), made when the plan runs a second time
        self._runs_uncompiled = 0
        self._segments = self._device_segments()
        self._single_segment = len(self._segments) == 1
        self._device0 = self._segments[0][2]
        self._num_steps = len(steps)
        cuda_ids = {d.cuda_id for d in self.step_devices if d.cuda_id is not None}
        self._cuda_id = next(iter(cuda_ids)) if len(cuda_ids) == 1 else None
        if len(cuda_ids) > 1:
            self._fast = [on_cuda_device(st, d.cuda_id) if d.cuda_id is not None else st
                          for st, d in zip(self._fast, self.step_devices)]
        # -- dependency counting
        n = len(steps)
        self.pending0 = [len(p) for p in preds]
        consumers: list = [[] for _ in range(n)]
        for i, p in enumerate(preds):
            for j in sorted(p):
                consumers[j].append(i)
        self.consumers = consumers
        self.initial_ready = [i for i in range(n) if not preds[i]]
        self._preds = preds
        self.expensive = [self._is_expensive(s[4], s[5]) for s in steps]
        self.concurrent = False
        self._profile_first_run = False
        if pools is not None and inter_op_threads >= 0 and inter_op_threads != 1:
            self._decide_concurrency()
        self.replay = None  # a graph_replay.CudaGraphReplay, installed by the session when asked for
        with _COUNTERS.lock:
            _COUNTERS.plans += 1

    # -- planning helpers -----------------------------------------------------
    def _with_releases(self, fast: list) -> list:
        """Sequential steps (fn, ctx, get, out, before, after) with the slots to drop around each.

        `get` gathers the inputs from the value list: None (no inputs), an int (one
        slot), an `operator.itemgetter` (several) or a gatherer that also reads the
        consumer's variables from the store (`scheduling._gather_with_reads`). `before`: inputs this step reads
        last; they are dropped before the kernel runs, so the kernel holds the only
        reference and may reuse the buffer (`kernels.registry.owns`). `after`:
        outputs nobody reads. Fetched values are never dropped.

        Left out: Const nodes (their values are computed once and pre-filled into
        every run's value list, `_prefilled`), NoOps with nothing to do (the order
        already honours their control inputs) and variable reads nobody uses.
        """
        last_read: dict = {}
        readers: dict = {}
        for i, (_, _, ins, _) in enumerate(fast):
            for s in ins:
                last_read[s] = i
                readers[s] = readers.get(s, 0) + 1
        keep = set(self.fetch_slots)
        before: list = [[] for _ in fast]
        after: list = [[] for _ in fast]
        for s, i in last_read.items():
            if s not in keep:
                before[i].append(s)
        for i, (_, _, _, out) in enumerate(fast):
            for s in ((out,) if out.__class__ is int else out or ()):
                if s not in last_read and s not in keep:
                    after[i].append(s)
        # A consumer's own read of a variable (see __init__) is folded into its input gathering.
        folded = {out: self.nodes[i] for i, (fn, _, ins, out) in enumerate(fast)
                  if fn is _read_variable and not ins and out.__class__ is int and out not in keep
                  and readers.get(out) == 1}
        seq, self._seq_index, self._const_steps = [], [], []
        for i, ((fn, ctx, ins, out), b, a) in enumerate(zip(fast, before, after)):
            node = self.nodes[i]
            if node.type == "VariableV2" and out.__class__ is int and (out in a or out in folded):
                continue  # a variable read nobody uses, or one its consumer does itself
            if node.type == "Const" and out.__class__ is int and not isinstance(node, CopyNode):
                self._const_steps.append(i)
                continue
            if node.type == "NoOp" and not ins and out is None:
                continue
            reads = {k: folded[s] for k, s in enumerate(ins) if s in folded}
            if reads:
                get = _gather_with_reads(ins, reads, ctx.resources)
                b = [s for s in b if s not in folded]
            else:
                get = None if not ins else ins[0] if len(ins) == 1 else itemgetter(*ins)
            seq.append((fn, ctx, get, out, tuple(b) or None, tuple(a) or None))
            self._seq_index.append(i)
        self._prefilled = None
        return seq

    def _prefill(self) -> list:
        """The value list every sequential run starts from: the Const nodes' values, computed once."""
        vals = [None] * self.num_slots
        for i in self._const_steps:
            fn, ctx, _, out = self._fast[i]
            try:
                vals[out] = fn(ctx)
            except BaseException as e:  # noqa: BLE001
                self._fail(e, time.perf_counter(), i)
        self._prefilled = vals
        return vals

    def _device_segments(self) -> list:
        """[(start, end, device name)] runs of consecutive steps on one device."""
        segs = []
        for i, d in enumerate(self.step_devices):
            if segs and segs[-1][2] == d.name:
                segs[-1][1] = i + 1
            else:
                segs.append([i, i + 1, d.name])
        return [tuple(s) for s in segs] or [(0, 0, _HOST.name)]

    @staticmethod
    def _is_expensive(node, dev) -> bool:
        if isinstance(node, CopyNode) or dev.cuda_id is not None:  # real-GPU work is async launches: cheap
            return False
        if node.op_def.expensive:
            return True
        for o in node._outputs:
            ne = o.shape.num_elements() if o.shape.is_fully_defined() else None
            if ne is not None and ne >= LARGE_ELEMENTWISE:
                return True
        return False

    def _independent_pairs(self) -> list:
        return independent_pairs(self._preds, self.expensive, _PAIR_ANALYSIS_LIMIT)

    def _decide_concurrency(self) -> None:
        pairs = self._independent_pairs()
        if any(self.step_devices[i].name != self.step_devices[j].name for i, j in pairs):
            self.concurrent = True
        elif pairs:
            self._pairs = pairs
            self._profile_first_run = True  # decide from the sizes the first run sees

    def _decide_from_sizes(self, vals: list) -> None:
        self._profile_first_run = False
        costs = [cost(self._steps_full[i], vals) if e else 0 for i, e in enumerate(self.expensive)]
        self.expensive = [c >= OFFLOAD_MIN_COST for c in costs]
        self.concurrent = any(self.expensive[i] and self.expensive[j] for i, j in self._pairs)

    # -- running --------------------------------------------------------------
    def run(self, feed_values: Sequence, trace: Optional[list] = None) -> list:
        """Runs the plan; the first failing node's error is raised with its name."""
        if self.replay is not None:
            out = self.replay.run(self, feed_values)
            if out is not None:
                return out
        t0 = time.perf_counter()
        if self._cuda_id is not None:
            use_cuda_device(self._cuda_id)
        sequential = trace is None and not self.concurrent and self._single_segment and not self._profile_first_run
        if sequential:
            vals = (self._prefilled or self._prefill()).copy()
        else:
            vals = [None] * self.num_slots
        for s, v in zip(self.feed_slots, feed_values):
            vals[s] = v
        if trace is not None:
            self._run_traced(vals, trace, t0)
        elif self.concurrent:
            self._run_concurrent(vals, t0)
        elif self._single_segment:
            try:
                if sequential:
                    compiled = self._compiled
                    if compiled is not None:
                        compiled(vals)
                    else:
                        _run_steps_releasing(self._fast_seq, vals)
                        self._runs_uncompiled += 1
                        if self._runs_uncompiled == 2 and len(self._fast_seq) <= COMPILE_MAX_STEPS:
                            self._compiled = compile_sequential(self._fast_seq)  # a plan that runs again
                else:  # the first run of a plan to profile: keep every value, the profile reads their shapes
                    _run_steps(self._fast, vals)
            except _StepFailed as f:
                self._fail(f.error, t0, self._index_of(f.step))
            dt = time.perf_counter() - t0
            c = _COUNTERS
            with c.lock:
                c.runs += 1
                c.nodes += self._num_steps
                c.seconds += dt
                ds = c.device_seconds
                ds[self._device0] = ds.get(self._device0, 0.0) + dt
        else:
            self._run_segments(vals, t0)
        if self._profile_first_run:
            self._decide_from_sizes(vals)
        return [vals[s] for s in self.fetch_slots]

    def _run_segments(self, vals, t0) -> int:
        fast = self._fast
        per_dev: dict = {}
        for a, b, dev in self._segments:
            t = time.perf_counter()
            try:
                _run_steps(fast[a:b], vals)
            except _StepFailed as f:
                self._fail(f.error, t0, self._index_of(f.step), per_dev)
            per_dev[dev] = per_dev.get(dev, 0.0) + time.perf_counter() - t
        self._count(len(fast), t0, tuple(per_dev.items()))
        return len(fast)

    def _run_traced(self, vals, trace: list, t0) -> int:
        """Sequential run that records (node name, device, start, end) per node (RunOptions FULL_TRACE)."""
        per_dev: dict = {}
        for i, (step, full) in enumerate(zip(self._fast, self._steps_full)):
            t = time.perf_counter()
            try:
                _run_steps((step,), vals)
            except _StepFailed as f:
                self._fail(f.error, t0, i, per_dev)
            end = time.perf_counter()
            dev = full[5].name
            per_dev[dev] = per_dev.get(dev, 0.0) + end - t
            trace.append((full[4].name, dev, t, end, threading.get_ident()))
        self._count(len(self._fast), t0, tuple(per_dev.items()))
        return len(self._fast)

    def _run_concurrent(self, vals, t0) -> None:
        ran, per_dev, inline, pooled, max_ready, error, failed = run_concurrent(self, vals)
        with _COUNTERS.lock:
            _COUNTERS.inline += inline
            _COUNTERS.pooled += pooled
            _COUNTERS.concurrent += 1
            _COUNTERS.max_ready = max(_COUNTERS.max_ready, max_ready)
        if error is not None:
            self._fail(error, t0, failed, per_dev, nodes_done=ran)
        if ran != len(self._steps_full):
            raise errors.InternalError(None, None, f"Executor finished with {len(self._steps_full) - ran} of "
                                                   f"{len(self._steps_full)} nodes not run (a dependency cycle?)")
        self._count(ran, t0, tuple(per_dev.items()))

    # -- errors and counters --------------------------------------------------
    def _index_of(self, step) -> int:
        for i, s in enumerate(self._fast):
            if s is step:
                return i
        return next(self._seq_index[k] for k, r in enumerate(self._fast_seq) if r is step)

    def _fail(self, e: BaseException, t0, i: int, per_dev=None, nodes_done=None):
        """Counts the failed run and raises `e` (or an InvalidArgumentError for a kernel bug) naming node `i`."""
        node, dev = self._steps_full[i][4], self._steps_full[i][5]
        self._count(nodes_done if nodes_done is not None else i, t0, tuple((per_dev or {}).items()), failed=True)
        if isinstance(e, errors.OpError):
            if e.op is None and not isinstance(node, CopyNode):
                e._op = node
            raise e
        if is_oom(e) and getattr(dev, "memory", None) is not None:
            raise dev.memory.translate(e, node) from e
        if not isinstance(e, Exception):  # KeyboardInterrupt and friends pass through
            raise e
        raise errors.InvalidArgumentError(None, None if isinstance(node, CopyNode) else node,
                                          f"{type(e).__name__}: {e}\n\t [[node {node.name} (op: {node.type})]]") \
            from e

    @staticmethod
    def _count(n: int, t0: float, per_dev: tuple, failed: bool = False) -> None:
        c = _COUNTERS
        dt = time.perf_counter() - t0
        with c.lock:
            c.runs += 1
            c.nodes += n
            c.seconds += dt
            c.errors += failed
            ds = c.device_seconds
            for d, s in per_dev:
                ds[d] = ds.get(d, 0.0) + s


