"""The executor's plan API: frozen typed records, the transfer seam, plans for a subset of the graph.

Oracles: numpy for values, the graph's own edges for the dependency structure,
and a hand-written "other process" (a dict of values) behind a Recv-like transfer.
"""
import dataclasses

import numpy as np
import pytest

import tensorfleet as tf
from tensorfleet.devices import local_devices
from tensorfleet.executor import (HOST, ExecutionPlan, NodeFailed, NodeKind, Transfer, build_plan, copy_transfers,
                                  order, plan_for_ops, prune)
from tensorfleet.executor.sequential import run_nodes
from tensorfleet.kernels import ResourceStore


def _two_devices():
    cfg = tf.ConfigProto()
    cfg.experimental.simulated_devices = ["/cpu:0", "/gpu:0"]
    by_type = {d.device_type: d for d in local_devices(cfg)}
    return by_type["CPU"], by_type["GPU"]  # a simulated GPU: numpy arrays, a device of its own


DEV_A, DEV_B = _two_devices()


def test_the_plan_is_frozen_and_typed():
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    w = tf.Variable(np.ones((3, 2), np.float32), name="w")
    y = tf.matmul(x, w, name="y") + tf.constant(1.0, name="one")
    plan = build_plan([y], [x], [], ResourceStore())
    with pytest.raises(dataclasses.FrozenInstanceError):
        plan.nodes = ()
    with pytest.raises(dataclasses.FrozenInstanceError):
        plan.nodes[0].kernel = None
    assert isinstance(plan.nodes, tuple) and isinstance(plan.pending, tuple)
    assert [n.index for n in plan.nodes] == list(range(len(plan.nodes)))
    assert plan.pending == tuple(len(n.preds) for n in plan.nodes)
    for n in plan.nodes:
        for p in n.preds:
            assert p < n.index and n.index in plan.consumers[p]  # topological, consumers are the inverse
    assert plan.initial_ready == tuple(n.index for n in plan.nodes if not n.preds)
    # the matmul reads `w` through its own read node, right before it (TF1 ref semantics)
    mm = next(n for n in plan.nodes if n.op is y.op.inputs[0].op)
    read = next(n for n in plan.nodes if n.kind is NodeKind.VARIABLE_READ)
    assert read.op is w.op and read.index in mm.preds and read.outputs[0] in mm.inputs
    assert all(n.device is HOST for n in plan.nodes) and plan.transfers == []


def test_one_transfer_per_tensor_and_destination_shared_by_its_consumers():
    a = tf.constant(np.arange(4, dtype=np.float32), name="a")
    with tf.control_dependencies(None):
        b = tf.multiply(a, 2.0, name="b")
        c = tf.add(a, 1.0, name="c")
    d = tf.add(b, c, name="d")
    ops = order(prune([d.op], set()), set())
    devices = {op: (DEV_A if op is a.op else DEV_B) for op in ops}
    made = []
    plan = build_plan([d], [], [], ResourceStore(), lambda ops: devices,
                      make_transfer=copy_transfers(on_copy=made.append))
    (copy,) = [n for n in plan.nodes if n.kind is NodeKind.TRANSFER]
    assert made == [copy.op] and copy.device is DEV_B and copy.op.tensor is a
    for consumer in (b.op, c.op):
        node = next(n for n in plan.nodes if n.op is consumer)
        assert copy.index in node.preds and copy.outputs[0] in node.inputs
    (out,) = ExecutionPlan.for_plan(plan).run([])
    np.testing.assert_array_equal(out, np.arange(4) * 2 + np.arange(4) + 1)


def test_a_partition_reads_another_tasks_tensor_through_a_receive():
    """Task 1's plan for its own ops: the input made by task 0 arrives through a Recv-like transfer."""
    x = tf.placeholder(tf.float32, [2, 2], name="x")
    h = tf.matmul(x, x, name="h")             # task 0
    y = tf.nn.relu(h - 1.0, name="y")         # task 1
    z = tf.reduce_sum(y * h, name="z")        # task 1, reads h a second time
    all_ops = order(prune([z.op], {x}), {x})
    devices = {op: (DEV_A if op in (h.op, x.op) else DEV_B) for op in all_ops}
    task1 = [op for op in all_ops if devices[op] is DEV_B]
    xv = np.array([[1.0, 2.0], [3.0, -4.0]], np.float32)
    other_process = {"h:0": xv @ xv}           # what task 0 computed and sent
    asked = []

    def receive(tensor, src, dst, fed):
        asked.append((tensor.name, src, dst, fed))

        class Recv:
            name, type, device, attrs = f"{tensor.op.name}/_recv", "_Recv", dst.name, {}

        return Transfer(Recv(), lambda ctx: other_process[tensor.name], reads_source=False)

    plan = plan_for_ops(task1, [], [z], ResourceStore(), devices=devices, make_transfer=receive)
    assert asked == [("h:0", DEV_A, DEV_B, False)]  # one receive, shared by both readers of h
    (recv,) = [n for n in plan.nodes if n.kind is NodeKind.TRANSFER]
    assert recv.inputs == () and not recv.preds and recv.index in plan.initial_ready
    assert {n.op for n in plan.nodes if n.kind is NodeKind.OP} == set(task1)
    for _ in range(3):  # sequential, then compiled
        (got,) = ExecutionPlan.for_plan(plan).run([])
        hv = xv @ xv
        np.testing.assert_allclose(got, (np.maximum(hv - 1.0, 0) * hv).sum(), rtol=1e-6)


def test_a_transfer_that_reads_a_source_the_plan_does_not_have_is_an_error():
    a = tf.constant(1.0, name="a")
    b = tf.add(a, 1.0, name="b")
    devices = {a.op: DEV_A, b.op: DEV_B}
    with pytest.raises(tf.errors.InternalError, match="a:0 has no producer in this plan"):
        plan_for_ops([b.op], [], [b], ResourceStore(), devices=devices, make_transfer=copy_transfers())


def test_node_failed_carries_the_failing_node():
    x = tf.placeholder(tf.float32, [None], name="x")
    y = tf.reshape(x, [2, 2], name="bad")
    plan = build_plan([y], [x], [], ResourceStore())
    vals = [None] * plan.num_slots
    vals[plan.feed_slots[0]] = np.ones(3, np.float32)
    with pytest.raises(NodeFailed) as e:
        run_nodes(plan.nodes, vals)
    assert e.value.node.op is y.op and e.value.node is plan.nodes[e.value.node.index]
    assert isinstance(e.value.error, ValueError)


def test_running_leaves_the_plan_unchanged():
    x = tf.placeholder(tf.float32, [None, 2], name="x")
    y = tf.reduce_sum(tf.matmul(x, tf.constant(np.eye(2, dtype=np.float32))))
    runner = ExecutionPlan([y], [x], [], ResourceStore())
    plan = runner.plan
    before = {f.name: getattr(plan, f.name) for f in dataclasses.fields(plan)}
    for i in range(3):
        assert runner.run([np.full((3, 2), float(i), np.float32)]) == [np.float32(6 * i)]
    assert runner.compiled and runner.plan is plan
    assert all(getattr(plan, k) is v for k, v in before.items())
