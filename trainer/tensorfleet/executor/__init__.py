"""The executor: builds a frozen plan for (fetches, feeds, targets) and runs it with a strategy.

Sits between the kernels/placement layer and the session. Layout:

- `plan.py`: `build_plan` in five named stages (`prune`, `order`, `place`,
  `insert_transfers`, `bind_kernels`) into a frozen `Plan`: typed `Node`
  records in topological order, consumer lists and initial pending counts.
- `ordering.py`: the prune and order stages.
- `device_kernels.py`: kernel wrappers for GPUs (host memory for shape
  arithmetic, capped simulated memory, the current CUDA device).
- run strategies, each a module whose object takes a plan and keeps what it
  learns about it (compiled code, measured sizes) to itself:
  `sequential.py` (in order, in the caller's thread; compiled to straight-line
  code from the second run, switch `sequential.COMPILE`), `concurrent.py`
  (dependency counting + the per-device `thread_pools.py`) and `cuda_graph.py`
  (replay of a whole run as a CUDA graph).
- `control_flow_kernels.py`: the kernels of the functional `If`/`While` ops,
  which run their bodies as sub-plans (docs/control-flow.md).
- `execution.py`: `ExecutionPlan`, a plan with its chosen strategy, which
  `Session` caches per signature; `counters.py`: the counters `metrics` exports.

Building a plan for a subset of the graph (a distributed partition)::

    from tensorfleet.executor import ExecutionPlan, plan_for_ops

    plan = plan_for_ops(task_ops, feeds, fetches, resources, devices=placement,
                        make_transfer=my_transfers)   # stages 3-5 on the ops you chose
    runnable = ExecutionPlan.for_plan(plan, pools=pools, inter_op_threads=0)
    values = runnable.run(feed_values)

`task_ops` must be a topological order (`order(prune(roots, fed), fed)`, then
filtered to one task, keeps it one). `devices` maps every op in `task_ops`, and
every producer of their inputs, to a device object (`.name`, `.device_type`,
`.xp`, `.cuda_id`, `.memory`).

The transfer seam (`plan.insert_transfers`): every edge whose value must change
device, and every input whose producer is not in the plan, goes through one
transfer node per (tensor, fed, destination device), shared by all consumers
there. The node comes from `make_transfer(tensor, src_device, dst_device, fed)`,
which returns a `plan.Transfer(op, kernel, reads_source)`:
- in process (the default, `plan.copy_transfers`): a `CopyNode` on the
  destination whose kernel copies the source value (`reads_source=True`);
- across processes: a Recv node with `reads_source=False` (no input, no
  predecessor; its kernel returns the value that arrived). Send nodes are
  ordinary graph ops (or targets) of the producing task's partition.
A Recv that blocks in its kernel works with every strategy; one that completes
asynchronously would post its completion to `concurrent.ConcurrentRun`'s
`done_q` like a pool task does.
"""
from .execution import ExecutionPlan
from .ordering import order, prune
from .plan import (HOST, Node, NodeFailed, NodeKind, Plan, Transfer, TransferFactory, bind_kernels, build_plan,
                   copy_transfers, insert_transfers, place, plan_for_ops)
from .counters import ExecutorStatistics, statistics
from . import control_flow_kernels  # noqa: F401  (registers the If/While kernels)

__all__ = ["ExecutionPlan", "ExecutorStatistics", "HOST", "Node", "NodeFailed", "NodeKind", "Plan", "Transfer",
           "TransferFactory", "bind_kernels", "build_plan", "copy_transfers", "insert_transfers", "order", "place",
           "plan_for_ops", "prune", "statistics"]
