"""The sequential run strategy: a plan's nodes in order in the caller's thread, no locks.

Part of the executor (`execution.ExecutionPlan` picks it when no two expensive
nodes can ever be ready together). `SequentialRun(plan)` is its per-plan cache:
the steps with the value slots to drop around each (so kernels may reuse dead
buffers, `kernels.ownership.owns`), the Const values computed once, and, from
the plan's second run on, the same steps compiled into straight-line code
(`compile_sequential`; switched off with `COMPILE = False`). `run_nodes`,
`run_by_device` and `run_traced` are the plain loops over `Node` records that
the other paths (first runs that measure, several devices, traces, CUDA graph
capture, single pool tasks) use. Every loop raises `plan.NodeFailed` naming the
failing node.
"""
from __future__ import annotations

import threading
import time
from operator import itemgetter
from typing import Any, Callable, Optional, Sequence

import numpy as np

from .. import errors
from ..kernels import KernelContext, ResourceStore, ownership
from ..kernels.ownership import owns
from ..kernels.core_kernels import variable as _read_variable
from .plan import Node, NodeFailed, NodeKind, Plan

#: the switch: compile a plan that runs a second time into straight-line code (the loop otherwise)
COMPILE = True
#: plans with more sequential steps than this keep the loop (compiling them would cost more than it saves)
COMPILE_MAX_STEPS = 2000


def run_nodes(nodes: Sequence[Node], vals: list) -> None:
    """Every node's kernel with its inputs from `vals`, outputs stored back into `vals`; values are kept.

    Arguments go through one tuple held in a local while `vals` keeps its
    references, so a kernel never sees itself as the sole owner of an input
    (`kernels.ownership.owns`).
    """
    args: Any
    for node in nodes:
        # `args` holds the tuple through the call: a temporary one may be released by the call itself
        # (CPython 3.12+), and then a kernel would not see `vals` as a second holder of its input
        args = (node.ctx, *[vals[i] for i in node.inputs])
        try:
            r = node.kernel(*args)
        except BaseException as e:  # noqa: BLE001
            raise NodeFailed(node, e) from None
        args = None
        outs = node.outputs
        if len(outs) == 1:
            vals[outs[0]] = r
        elif outs:
            for s, v in zip(outs, r, strict=False):
                vals[s] = v


def device_segments(nodes: Sequence[Node]) -> list:
    """[(start, end, device name)] runs of consecutive nodes on one device."""
    segs: list = []
    for i, n in enumerate(nodes):
        if segs and segs[-1][2] == n.device.name:
            segs[-1][1] = i + 1
        else:
            segs.append([i, i + 1, n.device.name])
    return [tuple(s) for s in segs]


def run_by_device(nodes: Sequence[Node], segments: list, vals: list, per_dev: dict) -> int:
    """`run_nodes` one device segment at a time, adding each segment's seconds to `per_dev`."""
    for a, b, dev in segments:
        t = time.perf_counter()
        try:
            run_nodes(nodes[a:b], vals)
        finally:
            per_dev[dev] = per_dev.get(dev, 0.0) + time.perf_counter() - t
    return len(nodes)


def run_traced(nodes: Sequence[Node], vals: list, trace: list, per_dev: dict) -> int:
    """`run_nodes` appending a `TraceRecord` per node (RunOptions trace_level, `run_metadata.fill_step_stats`):
    (node, start and end `perf_counter` seconds, native thread id, (dtype, shape, nbytes) per output)."""
    tid = threading.get_native_id()
    for node in nodes:
        t = time.perf_counter()
        try:
            run_nodes((node,), vals)
        finally:
            end = time.perf_counter()
            dev = node.device.name
            per_dev[dev] = per_dev.get(dev, 0.0) + end - t
        trace.append((node, t, end, tid, tuple(_describe(vals[s]) for s in node.outputs)))
    return len(nodes)


def _describe(value) -> Optional[tuple]:
    """(numpy dtype, shape, nbytes) of an array value (numpy or cupy); None for anything else (resources)."""
    shape = getattr(value, "shape", None)
    nbytes = getattr(value, "nbytes", None)
    if shape is None or nbytes is None:
        return None
    return value.dtype, tuple(shape), int(nbytes)


class SequentialRun:
    """The sequential strategy's cache for one plan: release steps, Const values, compiled code.

    A step is (fn, ctx, get, out, before, after, node): `get` gathers the inputs
    from the value list (None: no inputs; an int: one slot; a callable: an
    `operator.itemgetter` of slots, or `gather_with_reads`); `out` is an int (one
    output), None (none) or a tuple of slots; `before` lists the inputs this step
    reads last, dropped before the kernel runs so that its argument tuple holds
    the only reference; `after` lists outputs nobody reads. Fetched values are
    never dropped. Dropping values bounds peak memory like TF's executor does,
    and lets update kernels see that no reader holds a variable's array any more.

    Left out of the steps: Const nodes (computed once, pre-filled into every
    run's value list), NoOps with nothing to do (the order already honours their
    control inputs) and variable reads nobody uses.
    """

    def __init__(self, plan: Plan):
        self.plan = plan
        self.steps, self.const_nodes = _release_steps(plan)
        self._prefilled: Optional[list] = None
        self._compiled: Optional[Callable[[list], None]] = None
        self._runs_uncompiled = 0
        self._feed_slots = plan.feed_slots

    @property
    def compiled(self) -> bool:
        return self._compiled is not None

    def initial_values(self) -> list:
        """The value list every run starts from (a copy of it): the Const values, computed at the first run."""
        if self._prefilled is None:
            vals: list = [None] * self.plan.num_slots
            for node in self.const_nodes:
                try:
                    vals[node.outputs[0]] = node.kernel(node.ctx)
                except BaseException as e:  # noqa: BLE001
                    raise NodeFailed(node, e) from None
            self._prefilled = vals
        return self._prefilled

    def run(self, feed_values) -> list:
        """One run from `feed_values` (in `plan.feed_slots` order); returns the value list."""
        vals = (self._prefilled or self.initial_values()).copy()
        for s, v in zip(self._feed_slots, feed_values):  # noqa: B905  (hot path; lengths match by construction)
            vals[s] = v
        compiled = self._compiled
        if compiled is not None:
            compiled(vals)
            return vals
        run_steps_releasing(self.steps, vals)
        self._runs_uncompiled += 1
        if self._runs_uncompiled == 2 and COMPILE and len(self.steps) <= COMPILE_MAX_STEPS:
            self._compiled = compile_sequential(self.steps)  # a plan that runs again
        return vals


def _release_steps(plan: Plan) -> tuple:
    """(steps, Const nodes) of `plan` for `run_steps_releasing` (see `SequentialRun`)."""
    nodes = plan.nodes
    last_read: dict = {}
    readers: dict = {}
    for n in nodes:
        for s in n.inputs:
            last_read[s] = n.index
            readers[s] = readers.get(s, 0) + 1
    keep = set(plan.fetch_slots)
    # A consumer's own read of a variable is folded into its input gathering.
    folded = {n.outputs[0]: n.op for n in nodes
              if n.kernel is _read_variable and not n.inputs and len(n.outputs) == 1 and n.outputs[0] not in keep
              and readers.get(n.outputs[0]) == 1}
    steps, consts = [], []
    for n in nodes:
        before = [s for s in dict.fromkeys(n.inputs) if last_read[s] == n.index and s not in keep]
        after = [s for s in n.outputs if s not in last_read and s not in keep]
        one_out = len(n.outputs) == 1
        if n.op.type == "VariableV2" and one_out and (n.outputs[0] in after or n.outputs[0] in folded):
            continue  # a variable read nobody uses, or one its consumer does itself
        if n.op.type == "Const" and one_out and n.kind is NodeKind.OP:
            consts.append(n)
            continue
        if n.op.type == "NoOp" and not n.inputs and not n.outputs:
            continue
        ins = n.inputs
        reads = {k: folded[s] for k, s in enumerate(ins) if s in folded}
        if reads:
            get = gather_with_reads(ins, reads, n.ctx.resources)
            before = [s for s in before if s not in folded]
        else:
            get = None if not ins else ins[0] if len(ins) == 1 else itemgetter(*ins)
        out = n.outputs[0] if one_out else (n.outputs or None)
        steps.append((n.kernel, n.ctx, get, out, tuple(before) or None, tuple(after) or None, n))
    return steps, consts


def run_steps_releasing(steps, vals) -> None:  # noqa: C901  (one flat loop on purpose: a call per step costs)
    """The sequential inner loop over `SequentialRun.steps`, dropping each value after its last reader."""
    step: Any = None
    args: Any
    try:
        for step in steps:
            fn, ctx, get, out, before, after, _ = step
            # one tuple: fn(*args) passes it as is (`owns` is calibrated on this)
            if get.__class__ is int:
                args = (ctx, vals[get])
            elif get is None:
                args = (ctx,)
            else:
                args = (ctx,) + get(vals)
            if before is not None:
                for s in before:
                    vals[s] = None
            r = fn(*args)
            args = None
            if out.__class__ is int:
                vals[out] = r
            elif out is not None:
                for s, v in zip(out, r, strict=False):
                    vals[s] = v
            r = None  # hold no value beyond its slot: a later kernel may own it
            if after is not None:
                for s in after:
                    vals[s] = None
    except BaseException as e:  # noqa: BLE001
        raise NodeFailed(step[6], e) from None


def gather_with_reads(ins, reads: dict, resources: ResourceStore):
    """An input gatherer for `run_steps_releasing` that reads some inputs straight from the variable store.

    `reads` maps input positions to VariableV2 ops. The read happens when the
    consumer is about to run (TF1 ref semantics, as the separate read node did),
    and an uninitialized variable raises FailedPreconditionError naming it.
    """
    variables = resources.variables  # the store's dict: never replaced, only updated

    def missing(name):
        var_op = next(op for op in reads.values() if op.name == name)
        try:
            resources.read(name, name)
        except errors.OpError as e:
            e._op = var_op
            raise

    if len(ins) == 2 and len(reads) == 1:  # the usual cases (x @ W, h + b, d @ W.T): no loop
        ((k, var_op),) = reads.items()
        name, other = var_op.name, ins[1 - k]
        if k == 0:
            return lambda vals: (variables[name] if name in variables else missing(name), vals[other])
        return lambda vals: (vals[other], variables[name] if name in variables else missing(name))
    plan = tuple((None if k not in reads else reads[k].name, s) for k, s in enumerate(ins))

    def read(name):
        return variables[name] if name in variables else missing(name)

    return lambda vals: tuple([vals[s] if n is None else read(n) for n, s in plan])


def compile_sequential(steps) -> Callable[[list], None]:
    """`run(vals)` doing exactly what `run_steps_releasing(steps, vals)` does, as straight-line code.

    A plan's steps never change, so a plan that runs again is turned once into
    one Python function with a line per kernel call: the loop's per-step
    unpacking and branching go away (1-2 us a step when the interpreter's data
    is cold after large kernels; +1 to 1.5% on the MLP training step). The
    source is built from slot numbers and fixed names only; kernels, contexts,
    gatherers and steps are bound through the function's namespace, never as
    text, so nothing of a graph (names, attributes, values) reaches the compiler.
    Arguments still go through one tuple (`owns` is calibrated on that).
    """
    ns: dict = {"NodeFailed": NodeFailed, "steps": steps}
    lines = ["def run(vals):", "    i = 0", "    try:"]
    for k, (fn, ctx, get, out, before, after, _) in enumerate(steps):
        ns[f"f{k}"], ns[f"c{k}"], ns[f"g{k}"] = fn, ctx, get
        if get.__class__ is int:
            args = f"(c{k}, vals[{int(get)}])"
        elif get is None:
            args = f"(c{k},)"
        else:
            args = f"(c{k},) + g{k}(vals)"
        body = [f"i = {k}", f"args = {args}"]
        body += [f"vals[{int(s)}] = None" for s in before or ()]
        if out.__class__ is int:
            body.append(f"vals[{int(out)}] = f{k}(*args)")
        elif out is None:
            body.append(f"f{k}(*args)")
        else:
            body.append(f"r = f{k}(*args)")
            body += [f"vals[{int(s)}] = r[{j}]" for j, s in enumerate(out)]
            body.append("r = None")
        body.append("args = None")
        body += [f"vals[{int(s)}] = None" for s in after or ()]
        lines += ["        " + b for b in body]
    lines += ["        pass", "    except BaseException as e:  # noqa: BLE001",
              "        raise NodeFailed(steps[i][6], e) from None"]  # the step's node, by position
    exec(compile("\n".join(lines), "<tensorfleet sequential plan>", "exec"), ns)  # noqa: S102 (see above)
    return ns["run"]


def _check_ownership() -> None:
    """Turns in-place kernels off (`ownership.disable`) unless `owns` and `ResourceStore.exclusive` read right
    on this interpreter, on the executor's real call paths: an argument only the call holds is owned, one
    that a value slot (a fetch, a later reader) or a second name also holds is not."""
    seen: list = []

    def probe(ctx, x):  # calls `owns` on its parameter, as kernels do
        seen.append(owns(x))

    steps = [(probe, None, 0, None, (0,), None, None), (probe, None, 1, None, None, None, None)]
    run_steps_releasing(steps, [np.zeros(2), np.zeros(2)])
    compile_sequential(steps)([np.zeros(2), np.zeros(2)])
    store = ResourceStore()
    node = Node(0, None, None, NodeKind.OP, probe, KernelContext(None, np, store), (0,), (), frozenset(), False)
    run_nodes((node,), [np.zeros(2)])
    store.store("v", np.zeros(2))
    alone = store.exclusive("v") is not None
    store.store("v", np.zeros(2))
    held = store.variables["v"]
    shared = store.exclusive("v") is not None
    del held
    if seen != [True, False, True, False, False] or not alone or shared:
        ownership.disable()


_check_ownership()
