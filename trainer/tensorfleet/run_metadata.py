"""`tf.RunOptions` / `tf.RunMetadata` (TF's protos) and how a traced `Session.run` fills `RunMetadata`.

Flow: `Session.run(fetches, options=RunOptions(trace_level=...), run_metadata=md)` with a trace level above
NO_TRACE hands the executor a list; its traced loop (`executor.sequential.run_traced`) appends one record
per node it runs: (node, start and end `time.perf_counter()` seconds, native thread id, an (numpy dtype,
shape, nbytes) per output). `fill_step_stats` turns them into TF's `StepStats`: one `DeviceStepStats` per
device under TF's full device name, one `NodeExecStats` per node with
- `all_start_micros`: the node's start, microseconds since the epoch;
- `op_start_rel_micros` 0, `op_end_rel_micros` = `all_end_rel_micros` = its run time (the kernel call is
  the whole node here; TF separates scheduling from the op);
- `timeline_label` "name = Type(input, ...)" as TF's executor writes it, `thread_id`;
- `output`: each output's dtype, shape and bytes (`TensorDescription`), and `memory`: the outputs' bytes on
  the device's allocator ("cpu", or "gpu_<i>"), which TensorBoard's graph view shows per node.
`output_partition_graphs=True` adds one GraphDef per device of the nodes the run executed
(`fill_partition_graphs`, local sessions). A distributed session's tasks fill their partitions' stats the
same way under their own device names ("/job:worker/replica:0/task:1/device:CPU:0") and the master merges
them per device (`merge_step_stats`) into the RunStep's answer. Tracing off costs the hot path nothing:
the session checks `options` once per run and the untraced strategies never look at a trace.
"""
from __future__ import annotations

import time
from .executor.plan import NodeKind
from .protos.config_pb2 import RunMetadata, RunOptions
from .protos.step_stats_pb2 import StepStats
from .tensor_proto import dtype_to_enum

__all__ = ["RunMetadata", "RunOptions"]


def trace_requested(options, run_metadata) -> bool:
    """TF's rule: a run is traced when both are given and the trace level is above NO_TRACE."""
    return options is not None and run_metadata is not None and \
        getattr(options, "trace_level", RunOptions.NO_TRACE) > RunOptions.NO_TRACE


def _allocator(device) -> str:
    kind = getattr(device, "device_type", "CPU")
    return "cpu" if kind == "CPU" else f"{kind.lower()}_{getattr(getattr(device, 'spec', None), 'device_index', 0)}"


def _name_and_label(node) -> tuple:
    """The node's name and TF's timeline label "name = Type(input, ...)". A variable read the executor runs
    for its consumer is TF's `<variable>/read` Identity."""
    op = node.op
    if node.kind is NodeKind.VARIABLE_READ:
        return f"{op.name}/read", f"{op.name}/read = Identity({op.name})"
    inputs = [t.name[:-2] if t.name.endswith(":0") else t.name for t in getattr(op, "inputs", ())]
    return op.name, f"{op.name} = {op.type}({', '.join(inputs)})"


_LOCAL_TASK = "/job:localhost/replica:0/task:0"


def fill_step_stats(step_stats: StepStats, trace: list, task: str = "") -> None:
    """Appends the trace's records to `step_stats`, grouped per device in the order they first ran. `task`
    (a worker's "/job:worker/replica:0/task:1"): its partitions' devices, local to it, get its name."""
    offset = time.time() - time.perf_counter()
    by_device: dict = {}
    for node, start, end, tid, outputs in trace:
        device = node.device
        dev_stats = by_device.get(device.name)
        if dev_stats is None:
            name = device.name
            if task and name.startswith(_LOCAL_TASK):
                name = task + name[len(_LOCAL_TASK):]
            dev_stats = by_device[device.name] = step_stats.dev_stats.add(device=name)
        duration = max(int(round((end - start) * 1e6)), 0)
        name, label = _name_and_label(node)
        ns = dev_stats.node_stats.add(node_name=name, all_start_micros=int((start + offset) * 1e6),
                                      op_start_rel_micros=0, op_end_rel_micros=duration,
                                      all_end_rel_micros=duration, timeline_label=label, thread_id=tid & 0xFFFFFFFF)
        total = 0
        allocator = _allocator(device)
        for slot, desc in enumerate(outputs):
            if desc is None:
                continue
            dtype, shape, nbytes = desc
            total += nbytes
            out = ns.output.add(slot=slot)
            td = out.tensor_description
            try:
                td.dtype = dtype_to_enum(dtype)
            except Exception:  # noqa: BLE001  (a dtype TF has no number for: leave DT_INVALID)
                pass
            for d in shape:
                td.shape.dim.add(size=int(d))
            ad = td.allocation_description
            ad.requested_bytes = ad.allocated_bytes = nbytes
            ad.allocator_name = allocator
        if total:
            ns.memory.add(allocator_name=allocator, total_bytes=total, peak_bytes=total, live_bytes=total)


def fill_partition_graphs(run_metadata: RunMetadata, plan) -> None:
    """One GraphDef per device with the graph ops the plan ran there (TF's partition graphs also hold its
    _Send/_Recv nodes; a cross-device copy here is an executor node, not a graph op)."""
    from .graph_def import as_graph_def  # late: graph_def imports the op registry

    by_device: dict = {}
    for op in plan.ops:
        by_device.setdefault(getattr(plan.devices.get(op), "name", ""), []).append(op)
    for name, ops in by_device.items():
        gd = run_metadata.partition_graphs.add()
        gd.CopyFrom(as_graph_def(ops[0].graph, ops=ops, add_shapes=False, opaque_ok=True))
        for nd in gd.node:
            nd.device = name


def merge_step_stats(into: StepStats, other: StepStats) -> None:
    """Adds `other`'s devices to `into`; a device present in both gets the other's nodes appended."""
    index = {d.device: d for d in into.dev_stats}
    for dev in other.dev_stats:
        target = index.get(dev.device)
        if target is None:
            target = index[dev.device] = into.dev_stats.add(device=dev.device)
        target.node_stats.extend(dev.node_stats)
