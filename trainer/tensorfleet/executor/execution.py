"""`ExecutionPlan`: one frozen `Plan` with the run strategy chosen for it; `run()` is one Session.run.

Flow: `Session.run` gets (or builds, once per signature) an `ExecutionPlan`,
which builds its `Plan` (`plan.build_plan`) and picks how to run it:
- sequential (`sequential.SequentialRun`, the fast path): when no two expensive
  nodes can ever be ready together (one device and no independent expensive
  pair, or inter_op_parallelism_threads == 1 / < 0). A thread hand-off costs
  ~75-110 us on our VMs, more than a whole small training step's graph overhead;
- concurrent (`concurrent.ConcurrentRun`): independent expensive nodes on
  different devices, or on one device and measured as big by the first run
  (`concurrent.SizeProbe`);
- by device: several devices and nothing worth running concurrently (the plain
  loop, timing each device segment);
- traced (RunOptions FULL_TRACE): the plain loop recording every node;
- CUDA graph replay (`cuda_graph.CudaGraphReplay`, opt-in, set as `replay` by
  the session): asked first, falls back to the others when it returns None.
The first error is raised naming the failing node (strategies raise
`plan.NodeFailed` carrying it); a kernel bug becomes InvalidArgumentError and a
device OOM the device's ResourceExhaustedError.
"""
from __future__ import annotations

import time
from typing import Any, Callable, NoReturn, Optional, Sequence

from .. import errors
from ..graph import Operation, Tensor
from ..kernels import ResourceStore
from ..kernels.gpu_memory import is_oom
from ..kernels.transfer_kernels import CopyNode
from .concurrent import ConcurrentRun, SizeProbe, choose
from .device_kernels import use_cuda_device
from .plan import HOST, NodeFailed, NodeKind, Plan, TransferFactory, build_plan, copy_transfers
from .sequential import SequentialRun, device_segments, run_by_device, run_traced
from .counters import COUNTERS, count_plan, count_run


class ExecutionPlan:
    """A pruned, placed, kernel-bound plan for one (fetches, feeds, targets) signature, and how it runs."""

    def __init__(self, fetches: Sequence[Tensor], feeds: Sequence[Tensor], targets: Sequence[Operation],
                 resources: ResourceStore, place: Optional[Callable[[list], dict]] = None, *,
                 host_device: Any = None, pools: Any = None, inter_op_threads: int = 0,
                 on_copy: Optional[Callable[[CopyNode], None]] = None,
                 make_transfer: Optional[TransferFactory] = None):
        plan = build_plan(fetches, feeds, targets, resources, place, host_device=host_device,
                          make_transfer=make_transfer or copy_transfers(on_copy))
        self._start(plan, pools, inter_op_threads)

    @classmethod
    def for_plan(cls, plan: Plan, *, pools: Any = None, inter_op_threads: int = 0) -> "ExecutionPlan":
        """An ExecutionPlan over a plan built elsewhere (e.g. `plan.plan_for_ops` for a partition)."""
        self = cls.__new__(cls)
        self._start(plan, pools, inter_op_threads)
        return self

    def _start(self, plan: Plan, pools: Any, inter_op_threads: int) -> None:
        self.plan = plan
        self.replay: Any = None  # a cuda_graph.CudaGraphReplay, installed by the session when asked for
        self._segments = device_segments(plan.nodes) or [(0, 0, HOST.name)]
        self._device0 = self._segments[0][2]
        self._sequential = SequentialRun(plan) if len(self._segments) == 1 else None
        self._cuda_id = plan.cuda_id
        self._num_nodes = len(plan.nodes)
        self._fetch_slots = plan.fetch_slots
        self._concurrent: Optional[ConcurrentRun] = None
        self._probe: Optional[SizeProbe] = None
        if pools is not None and inter_op_threads >= 0 and inter_op_threads != 1:
            choice = choose(plan, pools)
            if isinstance(choice, ConcurrentRun):
                self._concurrent = choice
            else:
                self._probe = choice
        count_plan()

    # -- what tests and tools look at ---------------------------------------
    @property
    def concurrent(self) -> bool:
        return self._concurrent is not None

    @property
    def measuring(self) -> bool:
        """True until the first run has measured whether same-device expensive nodes are worth a pool."""
        return self._probe is not None

    @property
    def compiled(self) -> bool:
        return self._sequential is not None and self._sequential.compiled

    @property
    def step_devices(self) -> list:
        return [n.device for n in self.plan.nodes]

    @property
    def copy_nodes(self) -> list:
        return self.plan.transfers

    # -- running --------------------------------------------------------------
    def run(self, feed_values: Sequence, trace: Optional[list] = None) -> list:
        """Runs the plan and returns the fetched values; the first failing node's error is raised naming it."""
        if self.replay is not None:
            out = self.replay.run(self, feed_values)
            if out is not None:
                return out
        t0 = time.perf_counter()
        if self._cuda_id is not None:
            use_cuda_device(self._cuda_id)
        seq = self._sequential
        if trace is not None or seq is None or self._concurrent is not None or self._probe is not None:
            return self._run_scheduled(feed_values, trace, t0)
        try:  # the sequential fast path, inline: its counting too
            vals = seq.run(feed_values)
        except NodeFailed as f:
            self._fail(f, t0)
        dt = time.perf_counter() - t0
        c = COUNTERS
        with c.lock:
            c.runs += 1
            c.nodes += self._num_nodes
            c.seconds += dt
            ds = c.device_seconds
            ds[self._device0] = ds.get(self._device0, 0.0) + dt
        return [vals[s] for s in self._fetch_slots]

    def _run_scheduled(self, feed_values: Sequence, trace: Optional[list], t0: float) -> list:
        """Traced, concurrent or by-device runs (and the first run that measures sizes): values are kept."""
        plan = self.plan
        vals: list = [None] * plan.num_slots
        for s, v in zip(plan.feed_slots, feed_values, strict=True):
            vals[s] = v
        per_dev: dict = {}
        try:
            if trace is not None:
                ran = run_traced(plan.nodes, vals, trace, per_dev)
            elif self._concurrent is not None:
                ran = self._concurrent.run(vals, per_dev)
            else:
                ran = run_by_device(plan.nodes, self._segments, vals, per_dev)
        except NodeFailed as f:
            self._fail(f, t0, per_dev)
        if ran != len(plan.nodes):
            raise errors.InternalError(None, None, f"Executor finished with {len(plan.nodes) - ran} of "
                                                   f"{len(plan.nodes)} nodes not run (a dependency cycle?)")
        count_run(ran, t0, tuple(per_dev.items()))
        if self._probe is not None:
            self._concurrent = self._probe.decide(vals)
            self._probe = None
        return [vals[s] for s in plan.fetch_slots]

    def _fail(self, failure: NodeFailed, t0: float, per_dev: Optional[dict] = None) -> NoReturn:
        """Counts the failed run and raises its error (an InvalidArgumentError for a kernel bug) naming the node."""
        node, e = failure.node, failure.error
        done = failure.nodes_done if failure.nodes_done is not None else node.index
        count_run(done, t0, tuple((per_dev or {}).items()), failed=True)
        op = None if node.kind is NodeKind.TRANSFER else node.op
        if isinstance(e, errors.OpError):
            if e.op is None and op is not None:
                e._op = op
            raise e
        memory = getattr(node.device, "memory", None)
        if is_oom(e) and memory is not None:
            raise memory.translate(e, node.op) from e
        if not isinstance(e, Exception):  # KeyboardInterrupt and friends pass through
            raise e
        raise errors.InvalidArgumentError(None, op, f"{type(e).__name__}: {e}\n\t [[node {node.name} "
                                                    f"(op: {node.op.type})]]") from e
