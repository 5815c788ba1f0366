"""replica_device_setter: placement strings exactly as TF 1.15 computes them (its documented examples)."""
import pytest

import tensorfleet as tf


def test_five_variables_round_robin_over_two_ps_tasks():
    with tf.device(tf.train.replica_device_setter(ps_tasks=2)):
        vs = [tf.Variable(float(i), name=f"v{i}") for i in range(5)]
        y = vs[0] + vs[1]
    assert [v.op.device for v in vs] == ["/job:ps/task:0", "/job:ps/task:1", "/job:ps/task:0", "/job:ps/task:1",
                                         "/job:ps/task:0"]
    assert y.op.device == "/job:worker"


def test_cluster_argument_counts_ps_tasks_and_none_without_ps():
    cluster = tf.train.ClusterSpec({"ps": ["a:1", "b:1", "c:1"], "worker": ["w:1"]})
    with tf.device(tf.train.replica_device_setter(cluster=cluster)):
        vs = [tf.Variable(1.0) for _ in range(4)]
    assert [v.op.device for v in vs] == ["/job:ps/task:0", "/job:ps/task:1", "/job:ps/task:2", "/job:ps/task:0"]
    assert tf.train.replica_device_setter(cluster={"worker": ["w:1"]}) is None
    assert tf.train.replica_device_setter(ps_tasks=0) is None


def test_nested_device_scopes_override_fields_as_tf_does():
    with tf.device(tf.train.replica_device_setter(ps_tasks=2, worker_device="/job:worker")):
        with tf.device("/gpu:1"):
            a = tf.constant(1.0, name="a")
            with tf.device("/task:1"):
                b = tf.constant(2.0, name="b")
        with tf.device("/job:ps/task:1"):
            v = tf.Variable(1.0, name="pinned")
        w = tf.Variable(1.0, name="w")
    assert a.op.device == "/job:worker/device:GPU:1"
    assert b.op.device == "/job:worker/task:1/device:GPU:1"
    assert v.op.device == "/job:ps/task:1"
    # the pinned variable still advanced the round robin (TF calls the strategy before merging)
    assert w.op.device == "/job:ps/task:1"


def test_worker_device_with_task_and_ps_device_merge():
    with tf.device(tf.train.replica_device_setter(ps_tasks=1, worker_device="/job:worker/task:3/cpu:0")):
        v = tf.Variable(1.0)
        c = v * 2.0
    assert v.op.device == "/job:ps/task:0"
    assert c.op.device == "/job:worker/task:3/device:CPU:0"


def test_greedy_load_balancing_by_byte_size():
    strategy = tf.train.GreedyLoadBalancingStrategy(2, tf.train.byte_size_load_fn)
    with tf.device(tf.train.replica_device_setter(ps_tasks=2, ps_strategy=strategy)):
        big = tf.Variable(tf.zeros([1000]), name="big")       # 4000 bytes -> task 0
        small1 = tf.Variable(tf.zeros([10]), name="small1")   # task 1 (0 < 4000)
        small2 = tf.Variable(tf.zeros([10]), name="small2")   # task 1 (40 < 4000)
        mid = tf.Variable(tf.zeros([2000], tf.float64), name="mid")  # task 1 (80 < 4000)
        last = tf.Variable(tf.zeros([1]), name="last")        # task 0 (4000 < 16080)
    assert [x.op.device[-1] for x in (big, small1, small2, mid, last)] == ["0", "1", "1", "1", "0"]
    with pytest.raises(TypeError, match="ps_strategy must be callable"):
        tf.train.replica_device_setter(ps_tasks=2, ps_strategy=3)


def test_byte_size_load_fn_needs_one_output_with_a_known_shape():
    v = tf.Variable(tf.zeros([3, 4], tf.float64))
    assert tf.train.byte_size_load_fn(v.op) == 96
    with pytest.raises(ValueError, match="single output"):
        tf.train.byte_size_load_fn(tf.no_op())


def test_merge_devices_false_keeps_an_existing_device():
    with tf.device(tf.train.replica_device_setter(ps_tasks=1, merge_devices=False)):
        with tf.device("/cpu:0"):
            c = tf.constant(1.0)
        d = tf.constant(2.0)
    assert c.op.device == "/device:CPU:0"
    assert d.op.device == "/job:worker"


def test_adam_slots_and_beta_powers_over_two_ps_tasks_as_tf_places_them():
    """dist-mnist's layout (2 ps): what TF 2.15's `tf.compat.v1` gives for this graph (printed by hand): slots
    beside their variable, beta1/beta2_power beside the first variable by name (`hid_b`, on ps0), each
    ApplyAdam and the beta-power updates on the ps of what they write, the constants on the worker."""
    cluster = tf.train.ClusterSpec({"ps": ["a:1", "b:1"], "worker": ["c:1"] * 4})
    with tf.device(tf.train.replica_device_setter(worker_device="/job:worker/task:0", cluster=cluster)):
        gs = tf.Variable(0, name="global_step", trainable=False)
        hid_w = tf.Variable(tf.zeros([784, 100]), name="hid_w")
        hid_b = tf.Variable(tf.zeros([100]), name="hid_b")
        sm_w = tf.Variable(tf.zeros([100, 10]), name="sm_w")
        sm_b = tf.Variable(tf.zeros([10]), name="sm_b")
        x = tf.placeholder(tf.float32, [None, 784])
        loss = tf.reduce_sum(tf.matmul(tf.nn.relu(tf.matmul(x, hid_w) + hid_b), sm_w) + sm_b)
        tf.train.AdamOptimizer(0.01).minimize(loss, global_step=gs)
    g = tf.get_default_graph()
    ps0, ps1, worker = "/job:ps/task:0", "/job:ps/task:1", "/job:worker/task:0"
    expected = {"global_step": ps0, "hid_w": ps1, "hid_b": ps0, "sm_w": ps1, "sm_b": ps0,
                "beta1_power": ps0, "beta2_power": ps0, "hid_w/Adam": ps1, "hid_w/Adam_1": ps1,
                "hid_b/Adam": ps0, "hid_b/Adam_1": ps0, "sm_w/Adam": ps1, "sm_w/Adam_1": ps1, "sm_b/Adam": ps0,
                "sm_b/Adam_1": ps0, "Adam/update_hid_w/ApplyAdam": ps1, "Adam/update_hid_b/ApplyAdam": ps0,
                "Adam/update_sm_w/ApplyAdam": ps1, "Adam/update_sm_b/ApplyAdam": ps0, "Adam/Assign_1": ps0,
                "Adam/beta1": worker, "Adam/beta2": worker, "Adam/update": worker, "Adam": ps0}
    assert {name: g.get_operation_by_name(name).device for name in expected} == expected
    for name in ("beta1_power", "beta2_power", "Adam/Assign_1"):
        assert g.get_operation_by_name(name).colocation_groups() == [b"loc:@hid_b"]
    for v in ("hid_w", "hid_b", "sm_w", "sm_b"):
        for slot in ("Adam", "Adam_1"):
            assert g.get_operation_by_name(f"{v}/{slot}").colocation_groups() == [f"loc:@{v}".encode()]
