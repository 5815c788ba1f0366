"""Replay of a whole `Session.run` as a CUDA graph (opt-in: `ConfigProto.experimental.cuda_graph_replay`).

A run strategy of the executor: the session attaches a `CudaGraphReplay` to an
`ExecutionPlan` when the option is on; `ExecutionPlan.run` asks it first and
falls back to the other strategies whenever it returns None.

Eligible plans: every node on one real GPU (feeds are the only host values,
through their copy nodes), no stateful op other than variables and the ops
whose definition says which variables they update (`OpDef.updates_variables`:
assigns, and the fused optimizer updates that write the variable and its slot
variables); host RNG streams cannot be captured. Protocol:
1. the first run goes the normal way (warm-up: constants uploaded, cuBLAS handles
   and pool blocks created);
2. the second run is captured on a dedicated (blocking) stream into a CUDA graph,
   with a static device buffer per feed; variables read by the plan keep their
   arrays: every variable the step replaces is copied back into its old array at
   the end of the graph, so the graph always reads and writes the same memory
   (update kernels also write in place, outside graphs, when no reader holds
   the array: `ResourceStore.exclusive`);
3. later runs with the same feed shapes copy the feeds into the static buffers
   (pinned staging) and launch the graph. A changed feed shape or a variable
   replaced by another plan falls back to (or re-captures after) a normal run.
Any failure while capturing (a kernel that syncs with the host, say) disables
replay for the plan; runs then take the normal path.
"""
from __future__ import annotations

from typing import Optional

import numpy as np

from ..kernels import backend
from .plan import NodeKind
from .sequential import run_nodes


class CudaGraphReplay:
    """The captured graph of one plan and the static buffers it reads and writes."""

    def __init__(self, plan, resources, cuda_id: int, feed_copy_steps: list, var_names: list):
        self.resources = resources
        self.cuda_id = cuda_id
        self.feed_copy_steps = feed_copy_steps  # [(feed index, copy slot)]
        self.var_names = var_names
        self.graph = None
        self.static_vals: Optional[list] = None
        self.static_feeds: list = []
        self.var_arrays: dict = {}
        self.disabled = False
        self.runs = 0
        self.replays = 0
        self.captures = 0
        self.last_error: Optional[BaseException] = None
        self.stream = None
        #: fetches of fed tensors: fetch slot -> feed index (returned as fed, like the normal path)
        self.fetched_feeds = {s: k for k, s in enumerate(plan.feed_slots) if s in set(plan.fetch_slots)}

    @classmethod
    def for_plan(cls, execution, resources):
        """A replay for `execution` (an `ExecutionPlan`), or None when its plan is not eligible."""
        plan = execution.plan
        devs = {n.device.name: n.device for n in plan.nodes}  # copy nodes sit on their destination device
        if len(devs) != 1 or next(iter(devs.values())).cuda_id is None or backend.cupy_module() is None:
            return None
        cuda_id = next(iter(devs.values())).cuda_id
        var_names = []
        feed_index: dict = {}
        for k, s in enumerate(plan.feed_slots):
            feed_index.setdefault(s, k)
        feed_copies = []
        for node in plan.nodes:
            op = node.op
            if node.kind is NodeKind.TRANSFER:
                if not getattr(op, "fed", False):
                    return None
                feed_copies.append((feed_index[node.inputs[0]], node.outputs[0]))
                continue
            if node.kind is NodeKind.VARIABLE_READ:
                continue  # its VariableV2 op is a node of its own
            updates = op.op_def.updates_variables
            if op.op_def.stateful and op.type != "VariableV2" and not updates:
                return None
            if op.type == "VariableV2":
                var_names.append(op.name)
            var_names.extend(op.attrs[a].name for a in updates)  # the variable and each slot variable it writes
        return cls(plan, resources, cuda_id, feed_copies, sorted(set(var_names)))

    # -- running --------------------------------------------------------------
    def run(self, execution, feed_values):
        """The fetched values after one replay, or None to make the plan run normally."""
        plan = execution.plan
        if self.disabled:
            return None
        self.runs += 1
        if self.runs == 1:
            return None  # warm-up run on the normal path
        if self.graph is not None and not self._still_valid(feed_values):
            self.graph = None
            if not self._vars_unchanged():
                return None  # another plan replaced a variable: run normally, capture again next time
        if self.graph is None:
            if not self._capture(plan, feed_values):
                return None
        else:
            for (k, _slot), buf in zip(self.feed_copy_steps, self.static_feeds, strict=True):
                _copy_into(buf, feed_values[k], self.cuda_id)
        self.graph.launch(self.stream)
        self.replays += 1
        fed = self.fetched_feeds
        return [feed_values[fed[s]] if s in fed else self.static_vals[s] for s in plan.fetch_slots]

    def _still_valid(self, feed_values) -> bool:
        for (k, _), buf in zip(self.feed_copy_steps, self.static_feeds, strict=True):
            v = feed_values[k]
            if tuple(np.shape(v)) != buf.shape or np.asarray(v).dtype != buf.dtype:
                return False
        return self._vars_unchanged()

    def _vars_unchanged(self) -> bool:
        variables = self.resources.variables
        return all(variables.get(n) is a for n, a in self.var_arrays.items())

    def _capture(self, plan, feed_values) -> bool:
        cp = backend.cupy_module()
        variables = self.resources.variables
        before = {n: variables.get(n) for n in self.var_names}
        if any(v is None or not backend.is_device_array(v) for v in before.values()):
            self.disabled = True  # uninitialized or host-resident variables: nothing to replay
            return False
        vals = [None] * plan.num_slots
        copy_slots = set()
        statics = []
        with cp.cuda.Device(self.cuda_id):
            for k, cslot in self.feed_copy_steps:
                host = np.asarray(feed_values[k])
                buf = cp.empty(host.shape, host.dtype)
                _copy_into(buf, host, self.cuda_id)
                vals[cslot] = buf
                copy_slots.add(cslot)
                statics.append(buf)
            nodes = [n for n in plan.nodes if not (n.kind is NodeKind.TRANSFER and n.outputs[0] in copy_slots)]
            stream = self.stream or cp.cuda.Stream(non_blocking=False)
            ok = False
            try:
                with stream:
                    stream.begin_capture()
                    try:
                        run_nodes(nodes, vals)
                        for n, old in before.items():
                            new = variables.get(n)
                            if new is not old:
                                cp.copyto(old, new)
                    except BaseException:
                        try:  # end the (invalidated) capture; its own error would hide the cause
                            stream.end_capture()
                        except Exception:  # noqa: BLE001
                            pass
                        raise
                    graph = stream.end_capture()
                ok = True
            except Exception as e:  # noqa: BLE001  (a kernel that cannot be captured)
                self.last_error = getattr(e, "error", e)  # plan.NodeFailed carries the kernel's error
            finally:
                # the arrays the step stored (e.g. an optimizer's new slot values) are graph memory:
                # keep them alive with the graph, or the pool could hand them out again
                written = [variables.get(n) for n in before]
                for n, old in before.items():
                    variables[n] = old
            if not ok:
                self.disabled = True
                return False
        self.stream, self.graph, self.static_vals, self.static_feeds = stream, graph, vals, statics
        self.var_arrays = before
        self._graph_arrays = written
        self.captures += 1
        return True


def _copy_into(buf, value, cuda_id: int) -> None:
    """Host value -> existing device buffer, through the pinned staging buffer."""
    # np.asarray, not np.ascontiguousarray: the latter makes a 0-d feed (1,), which buf.set rejects
    backend.upload_via_pinned(buf, np.asarray(value, dtype=buf.dtype), cuda_id)
