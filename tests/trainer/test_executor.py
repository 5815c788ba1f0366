"""Executor: control dependencies, concurrency across devices, cancellation, statistics, metrics.

Test-only ops (`TestRecord`, `TestBlock`) record their start/end and block on
`threading.Event` handshakes, so overlap and ordering are proven without any
wall-clock threshold.
"""
import dataclasses
import threading
import time

import numpy as np
import pytest

import tensorfleet as tf
from tensorfleet import executor
from tensorfleet.executor import NodeKind, sequential
from tensorfleet.kernels import register_kernel
from tensorfleet.op_registry import register_op
from tensorfleet.ops.common import make_tensor
from tensorfleet.tensor_shape import TensorShape

EVENTS: dict = {}
LOG: list = []
_LOG_LOCK = threading.Lock()


def _record(what):
    with _LOG_LOCK:
        LOG.append((what, time.perf_counter(), threading.get_ident()))


def _scalar(op):
    return [(tf.float32, TensorShape([]))]


register_op("TestRecord", _scalar)              # cheap
register_op("TestBlock", _scalar, expensive=True)  # "expensive": may go to a pool


@register_kernel("TestRecord")
@register_kernel("TestBlock")
def _test_kernel(ctx, *inputs):
    name = ctx.op.name
    _record(name + ":start")
    plan = ctx.attrs.get("plan", ())
    for action, key in plan:
        if action == "set":
            EVENTS[key].set()
        elif action == "wait":
            ctx.attrs.setdefault("waited", {})[key] = EVENTS[key].wait(10.0)
        elif action == "poll":  # a short look: the correct outcome is "not set"
            ctx.attrs.setdefault("waited", {})[key] = EVENTS[key].wait(0.05)
        elif action == "fail":
            _record(name + ":end")
            raise tf.errors.InvalidArgumentError(None, None, f"test failure in {name}")
    _record(name + ":end")
    return np.float32(sum(float(x) for x in inputs) + 1.0)


def node(op_type, name, inputs=(), plan=(), device=None):
    with tf.device(device):
        return make_tensor(op_type, list(inputs), {"plan": tuple(plan)}, name=name)


@pytest.fixture(autouse=True, params=[True, False], ids=["compiled", "loop"])
def sequential_mode(request, monkeypatch):
    """Every test runs twice: sequential plans compiled to straight-line code from their second run, and not."""
    monkeypatch.setattr(sequential, "COMPILE", request.param)
    return request.param


def ctx_of(plan, op):
    return next(n.ctx for n in plan.plan.nodes if n.op is op and n.kind is NodeKind.OP)


@pytest.fixture(autouse=True)
def _reset():
    EVENTS.clear()
    LOG.clear()
    for k in ("a_started", "b_started", "a_failed", "never"):
        EVENTS[k] = threading.Event()
    yield


def sim_config(**kw):
    cfg = tf.ConfigProto(**kw)
    cfg.experimental.simulated_devices = ["/cpu:0", "/gpu:0", "/gpu:1"]
    return cfg


def starts_and_ends():
    return {w: t for w, t, _ in LOG}


def plan_of(sess):
    (plan,) = sess._plans.values()
    return plan


def test_two_blocking_ops_on_different_devices_overlap():
    a = node("TestBlock", "A", plan=[("set", "a_started"), ("wait", "b_started")], device="/cpu:0")
    b = node("TestBlock", "B", plan=[("set", "b_started"), ("wait", "a_started")], device="/gpu:0")
    with tf.Session(config=sim_config()) as s:
        assert s.run([a, b]) == [1.0, 1.0]
        plan = plan_of(s)
    assert plan.concurrent
    t = starts_and_ends()
    # each started before the other ended: the intervals overlap
    assert t["A:start"] < t["B:end"] and t["B:start"] < t["A:end"]
    assert {tid for w, _, tid in LOG if w.startswith("A")} != {tid for w, _, tid in LOG if w.startswith("B")}
    # and each actually saw the other one running
    for n in (a.op, b.op):
        assert all(ctx_of(plan, n).attrs["waited"].values())


def test_control_dependencies_are_honoured_exactly():
    # A and B are independent expensive nodes on two devices (a concurrent plan); C depends on A only through a
    # control edge. A polls (briefly) for C having started: if C started early, A would see it.
    a = node("TestBlock", "A", plan=[("poll", "c_started")], device="/cpu:0")
    b = node("TestBlock", "B", device="/gpu:0")
    with tf.control_dependencies([a.op]):
        c = node("TestRecord", "C", plan=[("set", "c_started")], device="/gpu:1")
    d = node("TestRecord", "D", inputs=[b, c], device="/gpu:0")
    EVENTS["c_started"] = threading.Event()
    with tf.Session(config=sim_config()) as s:
        assert s.run(d) == 3.0
        plan = plan_of(s)
    assert plan.concurrent
    t = starts_and_ends()
    assert t["A:end"] < t["C:start"]
    assert t["B:end"] < t["D:start"] and t["C:end"] < t["D:start"]
    ctx_a = ctx_of(plan, a.op)
    assert ctx_a.attrs["waited"] == {"c_started": False}  # C had not started while A ran


def test_control_dependency_order_on_the_sequential_path():
    a = node("TestRecord", "A")
    with tf.control_dependencies([a.op]):
        b = node("TestRecord", "B")
    with tf.control_dependencies([b.op]):
        c = node("TestRecord", "C")
    with tf.Session() as s:
        s.run(c)
        assert not plan_of(s).concurrent
    assert [w for w, _, _ in LOG] == ["A:start", "A:end", "B:start", "B:end", "C:start", "C:end"]


def test_first_error_cancels_the_run_and_names_the_node():
    # A fails once B is running; B finishes after A failed; C (after B) must never start.
    a = node("TestBlock", "A", plan=[("wait", "b_started"), ("set", "a_failed"), ("fail", None)],
             device="/cpu:0")
    b = node("TestBlock", "B", plan=[("set", "b_started"), ("wait", "a_failed")], device="/gpu:0")
    c = node("TestRecord", "C", inputs=[b], device="/gpu:0")
    before = executor.statistics()
    with tf.Session(config=sim_config()) as s:
        with pytest.raises(tf.errors.InvalidArgumentError, match="test failure in A") as e:
            s.run([a, c])
        assert e.value.op is a.op
        assert plan_of(s).concurrent
    names = [w for w, _, _ in LOG]
    assert "B:end" in names and "C:start" not in names
    assert executor.statistics().errors == before.errors + 1


def test_kernel_exception_is_raised_with_the_node_name():
    x = tf.placeholder(tf.float32, [None], name="x")
    y = tf.reshape(x, [2, 2], name="bad_reshape")
    with tf.Session() as s:
        with pytest.raises(tf.errors.InvalidArgumentError) as e:
            s.run(y, {x: np.ones(3, np.float32)})
    assert "bad_reshape" in str(e.value)


def test_sequential_path_for_a_single_device_chain():
    x = tf.placeholder(tf.float32, [3, 3])
    y = tf.matmul(tf.matmul(x, x), x)
    with tf.Session() as s:
        s.run(y, {x: np.eye(3, dtype=np.float32)})
        assert not plan_of(s).concurrent
    with tf.Session(config=sim_config(inter_op_parallelism_threads=1)) as s:
        with tf.device("/cpu:0"):
            a = node("TestBlock", "A")
        with tf.device("/gpu:0"):
            b = node("TestBlock", "B")
        s.run([a, b])
        assert not plan_of(s).concurrent  # one inter-op thread: never concurrent


def test_same_device_independent_matmuls_run_inline_when_small():
    x = tf.placeholder(tf.float32, [None, 8])
    w1 = tf.constant(np.ones((8, 8), np.float32))
    w2 = tf.constant(np.ones((8, 8), np.float32))
    y = tf.matmul(x, w1) + tf.matmul(x, w2)  # independent, tiny: a hand-off would cost more than it saves
    with tf.Session() as s:
        np.testing.assert_array_equal(s.run(y, {x: np.ones((4, 8), np.float32)}), np.full((4, 8), 16.0, np.float32))
        plan = plan_of(s)
        assert not plan.concurrent and not plan.measuring


def test_fed_tensor_whose_producer_also_runs_keeps_the_fed_value():
    a = tf.constant(1.0, name="a")
    b = tf.add(a, tf.constant(1.0), name="b")
    c = tf.add(b, tf.constant(10.0), name="c")
    with tf.Session() as s:
        assert s.run([b, c], {b: 5.0})[1] == 15.0  # b is fed: c reads the fed 5, not a+1
        assert s.run([c, a], {b: 5.0}) == [15.0, 1.0]


def test_statistics_is_a_frozen_record():
    a = tf.constant(np.ones(4, np.float32))
    b = a * 2.0
    before = executor.statistics()
    with tf.Session() as s:
        s.run(b)
        s.run(b)
    after = executor.statistics()
    assert after.runs == before.runs + 2
    assert after.plans_built == before.plans_built + 1
    assert after.nodes_executed - before.nodes_executed == 2 * 3  # a, the 2.0 constant, mul
    cpu = "/job:localhost/replica:0/task:0/device:CPU:0"
    assert after.device_seconds_dict()[cpu] > before.device_seconds_dict().get(cpu, 0.0)
    assert after.run_seconds_total > before.run_seconds_total
    with pytest.raises(dataclasses.FrozenInstanceError):
        after.runs = 0


def test_concurrent_statistics_count_pool_and_inline_nodes():
    a = node("TestBlock", "A", plan=[("set", "a_started"), ("wait", "b_started")], device="/cpu:0")
    b = node("TestBlock", "B", plan=[("set", "b_started"), ("wait", "a_started")], device="/gpu:0")
    before = executor.statistics()
    with tf.Session(config=sim_config()) as s:
        s.run([a, b])
    after = executor.statistics()
    assert after.concurrent_runs == before.concurrent_runs + 1
    assert after.pool_nodes == before.pool_nodes + 1
    assert after.inline_nodes == before.inline_nodes + 1
    assert after.max_ready_queue_depth >= 2
    devs = after.device_seconds_dict()
    assert "/job:localhost/replica:0/task:0/device:GPU:0" in devs


def test_run_metadata_full_trace():
    a = tf.constant(1.0, name="a")
    b = tf.add(a, a, name="b")
    meta = tf.RunMetadata()
    with tf.Session() as s:
        s.run(b, options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE), run_metadata=meta)
    (dev,) = meta.step_stats.dev_stats
    assert dev.device.endswith("CPU:0")
    assert [n.node_name for n in dev.node_stats] == ["a", "b"]


def test_prometheus_metrics_from_statistics():
    from prometheus_client import CollectorRegistry, generate_latest

    from tensorfleet.metrics import register_executor_metrics

    registry = CollectorRegistry()
    register_executor_metrics(registry)
    with tf.Session() as s:
        s.run(tf.constant(1.0) + 1.0)
    text = generate_latest(registry).decode()
    stats = executor.statistics()
    assert f"tensorfleet_executor_runs_total {float(stats.runs)}" in text
    assert "tensorfleet_executor_nodes_executed_total" in text
    assert "tensorfleet_executor_run_errors_total" in text
    assert 'tensorfleet_executor_device_seconds_total{device="/job:localhost/replica:0/task:0/device:CPU:0"}' in text
    assert "tensorfleet_executor_queue_depth" in text


def test_sequential_order_runs_updates_after_everything_independent_of_them():
    """Gradients first, then updates (like hand-written code); dependencies still decide where they must."""
    x = tf.placeholder(tf.float32, [None, 3])
    w = tf.Variable(np.ones((3, 2), np.float32))
    b = tf.Variable(np.zeros(2, np.float32))
    loss = tf.reduce_sum(tf.nn.relu(tf.matmul(x, w) + b))
    train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
    with tf.control_dependencies([train]):
        after = tf.reduce_sum(w * 1.0)
    order = executor.order(executor.prune([train, after.op], set()), set())
    types = [op.type for op in order]
    first_update = types.index("ApplyGradientDescent")
    assert all(not t.startswith("Apply") for t in types[:first_update])
    assert set(types[first_update:first_update + 2]) == {"ApplyGradientDescent"}  # both updates together
    for i, op in enumerate(order):  # still a topological order
        for t in op.inputs:
            assert order.index(t.op) < i
        for c in op.control_inputs:
            assert order.index(c) < i
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        xv = np.array([[1.0, 2.0, 3.0]], np.float32)
        _, total = sess.run([train, after], {x: xv})
    # the read under control_dependencies([train]) sees the update: w - 0.1 * x^T (relu active everywhere)
    np.testing.assert_allclose(total, (np.ones((3, 2)) - 0.1 * xv.T @ np.ones((1, 2))).sum(), rtol=1e-6)


def test_a_plan_that_runs_again_is_compiled_and_behaves_the_same(monkeypatch):
    """Straight-line code from the second run on: same values and variables, same errors naming the node."""
    rng = np.random.default_rng(7)
    x = tf.placeholder(tf.float32, [None, 4], name="x")
    w = tf.Variable(rng.standard_normal((4, 3)).astype(np.float32), name="w")
    y = tf.nn.relu(tf.matmul(x, w) + tf.constant([0.5, -0.5, 0.0]))
    top, idx = tf.nn.top_k(y, k=2)                      # a kernel with two outputs
    loss = tf.reduce_sum(top)
    train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
    bad = tf.reshape(tf.nn.relu(x), [3, 4], name="bad_reshape")  # fails unless x has 3 rows
    compiled = []
    real = sequential.compile_sequential
    monkeypatch.setattr(sequential, "compile_sequential", lambda steps: compiled.append(len(steps)) or real(steps))

    def on(sess, compile_plans):  # `loop_s` stays on the loop: the oracle
        def run(*args):
            monkeypatch.setattr(sequential, "COMPILE", compile_plans)
            return sess.run(*args)
        return run

    with tf.Session() as loop_s, tf.Session() as s:
        loop_run, run = on(loop_s, False), on(s, True)
        loop_run(w.initializer)
        run(w.initializer)
        for i in range(4):
            xv = rng.standard_normal((5, 4)).astype(np.float32)
            ref = loop_run([top, idx, loss], {x: xv})
            got = run([top, idx, loss], {x: xv})
            for a, b in zip(got, ref, strict=True):
                np.testing.assert_array_equal(a, b)
            assert not loop_s._plan((top, idx, loss), (x,), ()).compiled
            assert s._plan((top, idx, loss), (x,), ()).compiled == (i >= 1)
        for _ in range(3):  # a training plan too: the variable ends up the same
            xv = rng.standard_normal((5, 4)).astype(np.float32)
            loop_run(train, {x: xv})
            run(train, {x: xv})
        np.testing.assert_array_equal(run(w), loop_run(w))
        for _ in range(2):
            run(bad, {x: np.ones((3, 4), np.float32)})
        assert s._plan((bad,), (x,), ()).compiled
        for _ in range(3):  # failing runs of a compiled plan still name the node
            with pytest.raises(tf.errors.InvalidArgumentError, match="bad_reshape") as e:
                run(bad, {x: np.ones((2, 4), np.float32)})
            assert e.value.op is bad.op
    assert compiled and all(n > 0 for n in compiled)
