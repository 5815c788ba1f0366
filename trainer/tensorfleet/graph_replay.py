"""Replay of a whole `Session.run` as a CUDA graph (opt-in: `ConfigProto.experimental.cuda_graph_replay`).

Part of the executor (split out of `executor.py`): the session attaches a
`CudaGraphReplay` to a plan when the option is on; `ExecutionPlan.run` asks it
first and falls back to the normal path whenever it returns None.

Eligible plans: every node on one real GPU (feeds are the only host values,
through their copy nodes), no stateful op other than variables, their assigns
and the fused optimizer updates (`train.training_ops.APPLY_OPS`, which write
the variable and its slot variables); host RNG streams cannot be captured. Protocol:
1. the first run goes the normal way (warm-up: constants uploaded, cuBLAS handles
   and pool blocks created);
2. the second run is captured on a dedicated (blocking) stream into a CUDA graph,
   with a static device buffer per feed; variables read by the plan keep their
   arrays: every variable the step replaces is copied back into its old array at
   the end of the graph, so the graph always reads and writes the same memory
   (the only place Tensorfleet updates a stored array in place);
3. later runs with the same feed shapes copy the feeds into the static buffers
   (pinned staging) and launch the graph. A changed feed shape or a variable
   replaced by another plan falls back to (or re-captures after) a normal run.
Any failure while capturing (a kernel that syncs with the host, say) disables
replay for the plan; runs then take the normal path.
"""
from __future__ import annotations

import numpy as np

from .kernels import backend
from .kernels.transfer_kernels import CopyNode
from .train.training_ops import APPLY_OPS

_VARIABLE_OPS = {"VariableV2", "Assign", "AssignAdd", "AssignSub"}


class CudaGraphReplay:
    """The captured graph of one plan and the static buffers it reads and writes."""

    def __init__(self, plan, resources, cuda_id: int, feed_copy_steps: list, var_names: list):
        self.resources = resources
        self.cuda_id = cuda_id
        self.feed_copy_steps = feed_copy_steps  # [(feed index, copy slot)]
        self.var_names = var_names
        self.graph = None
        self.static_vals = None
        self.static_feeds: list = []
        self.var_arrays: dict = {}
        self.disabled = False
        self.runs = 0
        self.replays = 0
        self.captures = 0
        self.last_error = None
        self.stream = None
        #: fetches of fed tensors: fetch slot -> feed index (returned as fed, like the normal path)
        self.fetched_feeds = {s: k for k, s in enumerate(plan.feed_slots) if s in set(plan.fetch_slots)}

    @classmethod
    def for_plan(cls, plan, resources):
        """A replay for `plan`, or None when it is not eligible."""
        devs = {d.name: d for d in plan.step_devices}  # copy nodes sit on their destination device
        if len(devs) != 1 or next(iter(devs.values())).cuda_id is None or backend.cupy_module() is None:
            return None
        cuda_id = next(iter(devs.values())).cuda_id
        var_names = []
        for node in plan.nodes:
            if isinstance(node, CopyNode):
                if not node.fed:
                    return None
                continue
            if node.op_def.stateful and node.type not in _VARIABLE_OPS and node.type not in APPLY_OPS:
                return None
            if node.type == "VariableV2":
                var_names.append(node.name)
            elif node.type in _VARIABLE_OPS:
                var_names.append(node.attrs["var"].name)
            elif node.type in APPLY_OPS:  # the variable and each slot variable it updates
                var_names.extend(node.attrs[a].name for a in ("var",) + APPLY_OPS[node.type][0])
        feed_index = {}
        for k, s in enumerate(plan.feed_slots):
            feed_index.setdefault(s, k)
        feed_copies = []
        for st in plan._steps_full:
            node = st[4]
            if isinstance(node, CopyNode):
                feed_copies.append((feed_index[st[2][0]], st[3][0]))
        return cls(plan, resources, cuda_id, feed_copies, sorted(set(var_names)))

    # -- running --------------------------------------------------------------
    def run(self, plan, feed_values):
        """The fetched values after one replay, or None to make the plan run normally."""
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
            for (k, _slot), buf in zip(self.feed_copy_steps, self.static_feeds):
                _copy_into(buf, feed_values[k], self.cuda_id)
        self.graph.launch(self.stream)
        self.replays += 1
        fed = self.fetched_feeds
        return [feed_values[fed[s]] if s in fed else self.static_vals[s] for s in plan.fetch_slots]

    def _still_valid(self, feed_values) -> bool:
        for (k, _), buf in zip(self.feed_copy_steps, self.static_feeds):
            v = feed_values[k]
            if tuple(np.shape(v)) != buf.shape or np.asarray(v).dtype != buf.dtype:
                return False
        return self._vars_unchanged()

    def _vars_unchanged(self) -> bool:
        variables = self.resources.variables
        return all(variables.get(n) is a for n, a in self.var_arrays.items())

    def _capture(self, plan, feed_values) -> bool:
        cp = backend.cupy_module()
        from .executor import _run_steps

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
            steps = [st for st, full in zip(plan._fast, plan._steps_full) if not
                     (isinstance(full[4], CopyNode) and full[3][0] in copy_slots)]
            stream = self.stream or cp.cuda.Stream(non_blocking=False)
            ok = False
            try:
                with stream:
                    stream.begin_capture()
                    try:
                        _run_steps(steps, vals)
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
                self.last_error = getattr(e, "error", e)  # executor._StepFailed carries the kernel's error
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
