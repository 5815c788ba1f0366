"""The simple placer on a simulated 1-CPU + 2-GPU device list (no hardware needed)."""
import logging

import numpy as np
import pytest

import tensorfleet as tf
from tensorfleet.devices import SimulatedDevice

CPU0 = "/job:localhost/replica:0/task:0/device:CPU:0"
GPU0 = "/job:localhost/replica:0/task:0/device:GPU:0"
GPU1 = "/job:localhost/replica:0/task:0/device:GPU:1"


def config(devices=("/cpu:0", "/gpu:0", "/gpu:1"), **kw):
    cfg = tf.ConfigProto(**kw)
    cfg.experimental.simulated_devices = list(devices)
    return cfg


def placed(sess):
    return sess.device_placement()


def test_list_devices_like_tf():
    with tf.Session(config=config()) as s:
        devs = s.list_devices()
    assert [d.name for d in devs] == [GPU0, GPU1, CPU0]
    assert [d.device_type for d in devs] == ["GPU", "GPU", "CPU"]
    assert all(d.memory_limit_bytes > 0 for d in devs)


def test_default_device_is_gpu0_when_a_gpu_is_visible():
    a = tf.constant(np.ones((2, 2), np.float32), name="a")
    b = tf.matmul(a, a, name="b")
    with tf.Session(config=config()) as s:
        np.testing.assert_allclose(s.run(b), np.full((2, 2), 2.0))
        assert placed(s) == {"a": GPU0, "b": GPU0}


def test_default_device_is_cpu0_without_gpu():
    a = tf.constant(1.0, name="a")
    with tf.Session(config=config(("/cpu:0",))) as s:
        s.run(a)
        assert placed(s) == {"a": CPU0}
    with tf.Session() as s:  # this CI machine: no GPU
        s.run(a)
        assert placed(s)["a"] in (CPU0, GPU0)


def test_pinned_nodes_go_to_their_device_and_partial_specs_complete():
    with tf.device("/gpu:1"):
        a = tf.constant(1.0, name="a")
    with tf.device("/cpu"):
        b = tf.add(a, 1.0, name="b")
    with tf.device("/job:localhost"):
        c = tf.add(b, 1.0, name="c")
    with tf.device("/device:GPU:*"):
        d = tf.add(c, 1.0, name="d")
    with tf.Session(config=config()) as s:
        assert s.run(d) == 4.0
        p = placed(s)
    assert (p["a"], p["b"], p["c"], p["d"]) == (GPU1, CPU0, GPU0, GPU0)


def test_rule1_placement_is_kept_across_runs_of_a_session():
    a = tf.constant(1.0, name="a")
    b = tf.add(a, tf.constant(1.0, name="one"), name="b")
    with tf.Session(config=config()) as s:
        s.run(a)
        assert placed(s) == {"a": GPU0}
        # a device function that would now move `a` elsewhere: rule 1 keeps it
        a.op._set_device("/cpu:0")
        assert s.run(b) == 2.0
        assert placed(s) == {"a": GPU0, "one": GPU0, "b": GPU0}
    with tf.Session(config=config()) as s2:  # a new session places afresh
        s2.run(b)
        assert placed(s2)["a"] == CPU0


def test_int32_variable_on_gpu_fails_with_tf_wording():
    with tf.device("/gpu:0"):
        v = tf.Variable(3, name="v")
    with tf.Session(config=config()) as s:
        with pytest.raises(tf.errors.InvalidArgumentError) as e:
            s.run(v.initializer)
    assert str(e.value).splitlines()[0] == (
        "Cannot assign a device for operation 'v': Could not satisfy explicit device specification "
        "'/device:GPU:0' because no supported kernel for GPU devices is available.")


def test_soft_placement_falls_back_to_a_device_with_a_kernel():
    with tf.device("/gpu:0"):
        v = tf.Variable(3, name="v")
        w = tf.Variable(np.float32(2.0), name="w")
    with tf.Session(config=config(allow_soft_placement=True)) as s:
        s.run([v.initializer, w.initializer])
        assert s.run(v) == 3
        p = placed(s)
    assert p["v"] == p["v/Assign"] == CPU0  # whole colocation group moved together
    assert p["w"] == p["w/Assign"] == GPU0


def test_unknown_device_index_errors_or_falls_back():
    with tf.device("/gpu:7"):
        a = tf.constant(1.0, name="a")
    with tf.Session(config=config()) as s:
        with pytest.raises(tf.errors.InvalidArgumentError, match="Could not satisfy explicit device specification "
                                                                 "'/device:GPU:7' because no devices matching"):
            s.run(a)
    with tf.Session(config=config(allow_soft_placement=True)) as s:
        assert s.run(a) == 1.0
        assert placed(s)["a"] == GPU0


def test_non_local_job_raises_naming_device_and_op():
    with tf.device("/job:worker/task:1"):
        a = tf.constant(1.0, name="a")
    with tf.Session(config=config()) as s:
        with pytest.raises(tf.errors.InvalidArgumentError) as e:
            s.run(a)
    msg = str(e.value)
    assert "operation 'a'" in msg and "/job:worker/task:1" in msg and CPU0 in msg
    with tf.Session(config=config(allow_soft_placement=True)) as s:
        assert s.run(a) == 1.0
        assert placed(s)["a"] == GPU0


def test_job_ps_means_task0_default_device():
    devices = ["/cpu:0", "/job:ps/task:0/cpu:0", "/job:ps/task:1/cpu:0", "/job:ps/task:1/gpu:0"]
    with tf.device("/job:ps"):
        a = tf.constant(1.0, name="a")
    with tf.device("/job:ps/task:1"):
        b = tf.constant(1.0, name="b")
    c = tf.add(a, b, name="c")
    with tf.Session(config=config(devices)) as s:
        assert s.run(c) == 2.0
        p = placed(s)
    assert p["a"] == "/job:ps/replica:0/task:0/device:CPU:0"
    assert p["b"] == "/job:ps/replica:0/task:1/device:GPU:0"
    assert p["c"] == CPU0  # unpinned: this process's task


def test_colocation_group_lands_on_one_device():
    with tf.device("/gpu:1"):
        v = tf.Variable(np.zeros(2, np.float32), name="v")
    upd = v.assign_add(np.ones(2, np.float32))  # no device scope: colocated anyway
    with tf.Session(config=config()) as s:
        s.run(v.initializer)
        s.run(upd)  # the plan holds only AssignAdd (+ its input): the group still decides
        read = v.read_value()
        np.testing.assert_allclose(s.run(read), [1.0, 1.0])
        p = placed(s)
    assert p["v"] == p["v/Assign"] == p["AssignAdd"] == p[read.op.name] == GPU1


def test_colocation_conflict_errors_unless_soft():
    with tf.device("/gpu:0"):
        a = tf.constant(1.0, name="a")
    with tf.colocate_with(a):
        with tf.device("/gpu:1"):  # ignored inside colocate_with (TF), so pin explicitly below
            b = tf.identity(a, name="b")
    b.op._set_device("/device:GPU:1")
    with tf.Session(config=config()) as s:
        with pytest.raises(tf.errors.InvalidArgumentError, match="Cannot colocate nodes 'a' and 'b': Cannot merge "
                                                                 "devices with incompatible ids"):
            s.run(b)
    with tf.Session(config=config(allow_soft_placement=True)) as s:
        assert s.run(b) == 1.0
        p = placed(s)
    assert p["a"] == p["b"]


def test_log_device_placement_exact_lines_with_copy_nodes(capsys, caplog):
    with tf.device("/cpu:0"):
        a = tf.constant(np.ones((2, 2), np.float32), name="a")
    b = tf.matmul(a, a, name="b")
    with tf.device("/cpu:0"):
        c = tf.add(b, tf.constant(1.0, name="one"), name="c")
    with caplog.at_level(logging.DEBUG, logger="tensorfleet.placement"):
        with tf.Session(config=config(log_device_placement=True)) as s:
            np.testing.assert_allclose(s.run(c), np.full((2, 2), 3.0))
            s.run(c)  # cached plan: nothing new is logged
    expected = [
        f"a: (Const): {CPU0}",
        f"b: (MatMul): {GPU0}",
        f"one: (Const): {CPU0}",
        f"c: (Add): {CPU0}",
        f"a/_copy_0_to_GPU_0: (_Copy): {GPU0}",
        f"b/_copy_0_to_CPU_0: (_Copy): {CPU0}",
    ]
    err = capsys.readouterr().err.splitlines()
    assert err == expected
    assert [r.getMessage() for r in caplog.records if r.name == "tensorfleet.placement"] == expected


def test_feeds_get_copied_to_the_consuming_device(capsys):
    x = tf.placeholder(tf.float32, [2], name="x")
    y = tf.multiply(x, 2.0, name="y")
    with tf.Session(config=config(log_device_placement=True)) as s:
        np.testing.assert_allclose(s.run(y, {x: [1.0, 2.0]}), [2.0, 4.0])
    assert f"x/_feed/_copy_0_to_GPU_0: (_Copy): {GPU0}" in capsys.readouterr().err.splitlines()


def test_simulated_device_list_must_have_a_local_cpu():
    with pytest.raises(ValueError, match="local CPU"):
        tf.Session(config=config(["/gpu:0"]))
    sim = [SimulatedDevice("/cpu:0"), SimulatedDevice("/gpu:0", memory_limit_bytes=1 << 20)]
    with tf.Session(config=config(sim)) as s:
        assert [d.memory_limit_bytes for d in s.list_devices()] == [1 << 20, 268435456]
