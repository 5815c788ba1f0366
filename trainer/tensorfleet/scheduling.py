"""Running plan steps: the inner loop, and the dependency-counting scheduler for concurrent plans.

Part of the executor (split out of `executor.py`, which decides which one a plan
uses). `_run_steps` is the whole sequential fast path: kernels in order, inputs
from and outputs into a list of value slots, no locks. `run_concurrent` is the
caller-thread scheduler: pending counters per node, ready lists of cheap and
expensive nodes; cheap ones run inline, and when two or more expensive nodes are
ready all but one go to the inter-op pool of their device (`thread_pools`).
Completions come back on a queue; the first error cancels the run: nothing new
starts, nodes already in a pool are waited for.
"""
from __future__ import annotations

import queue
import time
from typing import Optional

import numpy as np

from . import errors
from .kernels import ResourceStore


class _Cancelled(Exception):
    pass


class _CancelFlag:
    __slots__ = ("is_set",)

    def __init__(self):
        self.is_set = False

    def set(self):
        self.is_set = True


class _StepFailed(Exception):
    """Carries the failing fast-path step (identity) and the original exception out of `_run_steps`."""

    def __init__(self, step, error: BaseException):
        super().__init__(step, error)
        self.step, self.error = step, error


def _run_steps(steps, vals) -> None:
    """The inner loop: every kernel with its inputs from `vals`, outputs stored back into `vals`.

    Arguments go through one tuple while `vals` keeps its references, so a kernel
    never sees itself as the sole owner of an input (`kernels.registry.owns`).
    """
    step = None
    try:
        for step in steps:
            fn, ctx, ins, out = step
            r = fn(*(ctx, *[vals[i] for i in ins]))
            if out.__class__ is int:
                vals[out] = r
            elif out is not None:
                for s, v in zip(out, r):
                    vals[s] = v
    except BaseException as e:  # noqa: BLE001
        raise _StepFailed(step, e) from None


def _run_steps_releasing(steps, vals) -> None:
    """`_run_steps` for the sequential plan, also dropping each value after its last reader.

    Steps are (fn, ctx, get, out, before, after): `get` is None (no inputs), a
    slot (one input) or a callable returning the input tuple from `vals` (an
    `operator.itemgetter` of slots, or a gatherer that also reads variables
    from the store); `before` lists the
    inputs this step reads last, dropped from `vals` before the call so that the
    kernel's arguments hold the only references (a kernel may then reuse such a
    buffer, see `kernels.registry.owns`); `after` lists outputs nobody reads.
    Dropping values bounds peak memory like TF's executor does, and lets update
    kernels see that no reader holds a variable's array any more.
    """
    step = None
    try:
        for step in steps:
            fn, ctx, get, out, before, after = step
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
                for s, v in zip(out, r):
                    vals[s] = v
            r = None  # hold no value beyond its slot: a later kernel may own it
            if after is not None:
                for s in after:
                    vals[s] = None
    except BaseException as e:  # noqa: BLE001
        raise _StepFailed(step, e) from None


def _gather_with_reads(ins, reads: dict, resources: ResourceStore):
    """An input gatherer for `_run_steps_releasing` that reads some inputs straight from the variable store.

    `reads` maps input positions to VariableV2 ops. The read happens when the
    consumer is about to run (TF1 ref semantics, as the separate read step did),
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


#: plans with more sequential steps than this keep the loop (compiling them would cost more than it saves)
COMPILE_MAX_STEPS = 2000


def compile_sequential(steps):
    """`run(vals)` doing exactly what `_run_steps_releasing(steps, vals)` does, as straight-line code.

    A plan's steps never change, so a plan that runs again is turned once into
    one Python function with a line per kernel call: the loop's per-step
    unpacking and branching go away (1-2 us a step when the interpreter's data
    is cold after large kernels; +1 to 1.5% on the MLP training step). The
    source is built from slot numbers and fixed names only; kernels, contexts
    and gatherers are bound through the function's namespace, never as text, so
    nothing of a graph (names, attributes, values) reaches the compiler.
    Arguments still go through one tuple (`owns` is calibrated on that).
    """
    ns = {"_StepFailed": _StepFailed, "steps": steps}
    lines = ["def run(vals):", "    i = 0", "    try:"]
    for k, (fn, ctx, get, out, before, after) in enumerate(steps):
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
              "        raise _StepFailed(steps[i], e) from None"]
    exec(compile("\n".join(lines), "<tensorfleet sequential plan>", "exec"), ns)  # noqa: S102 (see above)
    return ns["run"]


def _pool_task(step, i, vals, done_q, cancel) -> None:
    if cancel.is_set:
        done_q.put((i, _Cancelled(), 0.0))
        return
    t = time.perf_counter()
    try:
        _run_steps((step,), vals)
    except _StepFailed as f:
        done_q.put((i, f.error, 0.0))
        return
    done_q.put((i, None, time.perf_counter() - t))


def independent_pairs(preds: list, expensive: list, limit: int) -> list:
    """Pairs (i, j) of expensive steps neither of which depends on the other (ancestor bitsets)."""
    exp = [i for i, e in enumerate(expensive) if e]
    if len(exp) < 2:
        return []
    if len(exp) > limit:
        return [(exp[0], exp[1])]
    anc = [0] * len(preds)
    for i, p in enumerate(preds):  # steps are in topological order
        a = 0
        for j in p:
            a |= anc[j] | (1 << j)
        anc[i] = a
    return [(i, j) for x, i in enumerate(exp) for j in exp[x + 1:] if not (anc[j] >> i) & 1]


def run_concurrent(plan, vals) -> tuple:
    """Runs `plan` with dependency counting in this thread plus the device pools.

    Returns (nodes run, {device: seconds}, inline nodes, pooled nodes, most ready at once, first error or None,
    the failing step's index or None).
    """
    steps, fast, consumers, expensive = plan._steps_full, plan._fast, plan.consumers, plan.expensive
    pending = list(plan.pending0)
    cheap = [i for i in plan.initial_ready if not expensive[i]]
    heavy = [i for i in plan.initial_ready if expensive[i]]
    done_q: queue.SimpleQueue = queue.SimpleQueue()
    cancel = _CancelFlag()
    outstanding = 0
    per_dev: dict = {}
    ran = inline = pooled = 0
    max_ready = len(cheap) + len(heavy)
    error: Optional[tuple] = None
    perf = time.perf_counter

    def release(i):
        for c in consumers[i]:
            pending[c] -= 1
            if pending[c] == 0:
                (heavy if expensive[c] else cheap).append(c)

    def collect(wait: bool) -> Optional[tuple]:
        """Takes finished pool nodes (all that are done, or with `wait` the next one to finish) and
        releases their consumers; returns (error, step index) for a failed one."""
        nonlocal outstanding, ran
        while outstanding and (wait or not done_q.empty()):
            j, err, dt = done_q.get()
            outstanding -= 1
            if err is not None:
                return err, j
            ran += 1
            d = steps[j][5].name
            per_dev[d] = per_dev.get(d, 0.0) + dt
            release(j)
            if wait:
                break
        return None

    while True:
        if cheap or heavy:
            if cheap:
                i = cheap.pop()
            else:
                while len(heavy) > 1:  # two or more expensive nodes ready: all but one go to pools
                    j = heavy.pop(0)
                    plan._pools.pool_for(steps[j][5]).submit(_pool_task, fast[j], j, vals, done_q, cancel)
                    outstanding += 1
                    pooled += 1
                i = heavy.pop()
            t = perf()
            try:
                _run_steps((fast[i],), vals)
            except _StepFailed as f:
                error = (f.error, i)
                break
            d = steps[i][5].name
            per_dev[d] = per_dev.get(d, 0.0) + perf() - t
            ran += 1
            inline += 1
            release(i)
            if len(cheap) + len(heavy) > max_ready:
                max_ready = len(cheap) + len(heavy)
            error = collect(wait=False)
            if error is not None:
                break
        elif outstanding:
            error = collect(wait=True)
            if error is not None:
                break
        else:
            break
    if error is not None:
        cancel.set()
        while outstanding:  # wait for running nodes; nothing new starts
            done_q.get()
            outstanding -= 1
        return ran, per_dev, inline, pooled, max_ready, error[0], error[1]
    return ran, per_dev, inline, pooled, max_ready, None, None


def cost(step, vals) -> int:
    """Multiply-adds of an expensive node, from the shapes its first run saw."""
    fn, ctx, ins, outs, node, _ = step
    out_sizes = [getattr(vals[s], "size", 0) for s in outs]
    out_elems = max(out_sizes) if out_sizes else 0
    in_shapes = [getattr(vals[s], "shape", ()) for s in ins]
    if node.type in ("MatMul", "BatchMatMul", "BatchMatMulV2") and in_shapes and len(in_shapes[0]) >= 2:
        a = in_shapes[0]
        k = a[-2] if node.attrs.get("transpose_a") or node.attrs.get("adj_x") else a[-1]
        return int(out_elems) * int(k)
    if node.type.startswith("Conv") and len(in_shapes) >= 2 and len(in_shapes[1]) >= 2:
        return int(out_elems) * int(np.prod(in_shapes[1][:-1]))
    in_elems = sum(int(np.prod(s)) for s in in_shapes)
    return max(int(out_elems), in_elems) * 16
