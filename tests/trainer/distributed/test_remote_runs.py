"""Graphs run across real task processes on 127.0.0.1: placement, between-graph variable sharing,
errors with their class and task, graph extension through a remote master, in-graph replication,
model parallelism (overlap proven by a handshake), device_filters, and dead tasks. Oracle: numpy."""
import time

import numpy as np
import pytest

import tensorfleet as tf
from tensorfleet import errors

import dist_test_ops


def _worker1_server(c, local_servers):
    server = tf.train.Server(c.spec, job_name="worker", task_index=1)
    local_servers.append(server)
    return server


def test_client_on_worker1_runs_ops_pinned_to_ps0_and_worker0(cluster_procs, local_servers):
    c = cluster_procs({"ps": 1, "worker": 2})
    c.start("ps", 0)
    c.start("worker", 0)
    server = _worker1_server(c, local_servers)
    xv = np.arange(6, dtype=np.float32).reshape(2, 3)
    x = tf.placeholder(tf.float32, [2, 3])
    with tf.device("/job:ps/task:0"):
        v = tf.Variable(np.ones((3, 2), np.float32), name="v")
        on_ps = tf.matmul(x, v)
    with tf.device("/job:worker/task:0"):
        on_w0 = tf.nn.relu(on_ps - 4.0) * 2.0
    here = on_w0 + tf.reduce_sum(x)
    with tf.Session(server.target) as sess:
        sess.run(v.initializer)
        a, b, h = sess.run([on_ps, on_w0, here], {x: xv})
        names = sorted(d.name for d in sess.list_devices())
    ref = xv @ np.ones((3, 2), np.float32)
    np.testing.assert_allclose(a, ref)
    np.testing.assert_allclose(b, np.maximum(ref - 4, 0) * 2)
    np.testing.assert_allclose(h, np.maximum(ref - 4, 0) * 2 + xv.sum())
    assert names == ["/job:ps/replica:0/task:0/device:CPU:0", "/job:worker/replica:0/task:0/device:CPU:0",
                     "/job:worker/replica:0/task:1/device:CPU:0"]


def test_log_device_placement_prints_full_device_names(cluster_procs, local_servers, capfd):
    c = cluster_procs({"ps": 1, "worker": 2})
    c.start("ps", 0)
    c.start("worker", 0)
    server = _worker1_server(c, local_servers)
    with tf.device("/job:ps"):
        a = tf.constant(1.0, name="on_ps")
    b = tf.add(a, 1.0, name="here")
    with tf.Session(server.target, config=tf.ConfigProto(log_device_placement=True)) as sess:
        assert sess.run(b) == 2.0
    err = capfd.readouterr().err
    assert "on_ps: (Const): /job:ps/replica:0/task:0/device:CPU:0" in err
    assert "here: (Add): /job:worker/replica:0/task:1/device:CPU:0" in err or \
           "here: (AddV2): /job:worker/replica:0/task:1/device:CPU:0" in err


def _model(graph, task):
    with graph.as_default(), tf.device(tf.train.replica_device_setter(ps_tasks=1,
                                                                       worker_device=f"/job:worker/task:{task}")):
        v = tf.Variable(tf.zeros([4]), name="shared")
        inc = v.assign_add(tf.ones([4]))
    return v, inc


def test_between_graph_replicas_share_ps_variables_and_reset_clears_them(cluster_procs, local_servers):
    c = cluster_procs({"ps": 1, "worker": 2})
    c.start("ps", 0)
    w0 = tf.train.Server(c.spec, job_name="worker", task_index=0)
    local_servers.append(w0)
    w1 = _worker1_server(c, local_servers)
    ga, gb = tf.Graph(), tf.Graph()
    va, inca = _model(ga, 0)
    vb, incb = _model(gb, 1)
    config = tf.ConfigProto(device_filters=["/job:ps"])  # and the session's own task, always
    with tf.Session(w0.target, graph=ga, config=config) as sa:
        sa.run(va.initializer)
        sa.run(inca)
    with tf.Session(w1.target, graph=gb, config=config) as sb:  # a new session, another graph: same variable
        np.testing.assert_allclose(sb.run(incb), [2, 2, 2, 2])
    tf.Session.reset(w1.target)
    with tf.Session(w0.target, graph=ga, config=config) as sa:
        with pytest.raises(errors.FailedPreconditionError, match="shared") as info:
            sa.run(va)
    assert "/job:ps/replica:0/task:0" in str(info.value)


def test_errors_cross_with_their_class_naming_node_and_task(cluster_procs, local_servers):
    c = cluster_procs({"ps": 1, "worker": 2})
    c.start("ps", 0)
    server = _worker1_server(c, local_servers)
    with tf.device("/job:ps/task:0"):
        bad = dist_test_ops.fail(tf.constant(1.0), "broken on purpose", name="bad_node")
        unset = tf.Variable(1.0, name="never_initialized")
    with tf.Session(server.target, config=tf.ConfigProto(device_filters=["/job:ps"])) as sess:
        with pytest.raises(errors.InvalidArgumentError) as info:
            sess.run(bad)
        assert "bad_node" in str(info.value) and "broken on purpose" in str(info.value)
        assert "/job:ps/replica:0/task:0" in str(info.value)
        with pytest.raises(errors.FailedPreconditionError, match="never_initialized"):
            sess.run(unset + 1.0)
        assert tf.is_variable_initialized(unset).eval(session=sess) == False  # noqa: E712


def test_remote_master_receives_the_graph_and_its_extensions(cluster_procs):
    c = cluster_procs({"ps": 1})
    c.start("ps", 0)
    target = "grpc://" + c.spec["ps"][0]
    x = tf.placeholder(tf.float32, [None], name="x")
    y = x * 2.0
    with tf.Session(target) as sess:  # not a server of this process: a remote master
        np.testing.assert_allclose(sess.run(y, {x: [1.0, 2.5]}), [2.0, 5.0])
        z = tf.reduce_sum(y) + 1.0  # graph growth: sent as an extension on the next run
        assert sess.run(z, {x: np.arange(4, dtype=np.float32)}) == 13.0
        assert [d.name for d in sess.list_devices()] == ["/job:ps/replica:0/task:0/device:CPU:0"]
        with pytest.raises(errors.InvalidArgumentError):  # raised by the remote master's run, same class
            sess.run(tf.reshape(x, [3]), {x: np.zeros(2, np.float32)})


def test_in_graph_replication_one_client_two_worker_tasks(cluster_procs, local_servers):
    c = cluster_procs({"ps": 1, "worker": 2})
    c.start("ps", 0)
    c.start("worker", 0)
    server = _worker1_server(c, local_servers)
    rng = np.random.RandomState(0)
    xs = [rng.randn(8, 3).astype(np.float32) for _ in range(2)]
    ys = [rng.randn(8, 1).astype(np.float32) for _ in range(2)]
    with tf.device("/job:ps/task:0"):
        w = tf.Variable(np.zeros((3, 1), np.float32), name="w")
    feeds, grads = {}, []
    for i in range(2):
        with tf.device(f"/job:worker/task:{i}"):
            x = tf.placeholder(tf.float32, [8, 3])
            y = tf.placeholder(tf.float32, [8, 1])
            loss = tf.reduce_mean(tf.square(tf.matmul(x, w) - y))
            grads.append(tf.gradients(loss, [w])[0])
            feeds[x], feeds[y] = xs[i], ys[i]
    with tf.device("/job:ps/task:0"):
        train = tf.assign_sub(w, 0.1 * tf.add_n(grads) / 2.0)
    w_ref = np.zeros((3, 1), np.float32)
    with tf.Session(server.target) as sess:
        sess.run(w.initializer)
        for _ in range(3):
            sess.run(train, feeds)
            g = sum(2 * xs[i].T @ (xs[i] @ w_ref - ys[i]) / 8 for i in range(2)) / 2
            w_ref = w_ref - 0.1 * g
        np.testing.assert_allclose(sess.run(w), w_ref, rtol=1e-5, atol=1e-6)


def test_model_parallel_branches_on_two_tasks_overlap(cluster_procs, local_servers, tmp_path):
    c = cluster_procs({"ps": 1, "worker": 2})
    c.start("worker", 0)
    c.start("ps", 0)
    server = _worker1_server(c, local_servers)
    a_flag, b_flag = tmp_path / "a", tmp_path / "b"
    with tf.device("/job:worker/task:0"):
        a = dist_test_ops.handshake(tf.constant(1.0), a_flag, b_flag, timeout=30)
    with tf.device("/job:ps/task:0"):
        b = dist_test_ops.handshake(tf.constant(2.0), b_flag, a_flag, timeout=30)
    total = a + b  # each branch waits for the other: finishes only if both run at once
    with tf.Session(server.target) as sess:
        assert sess.run(total) == 5.0


def test_device_filters_limit_the_tasks_a_session_needs(cluster_procs, local_servers, monkeypatch):
    c = cluster_procs({"ps": 1, "worker": 3})
    c.start("ps", 0)
    server = _worker1_server(c, local_servers)  # workers 0 and 2 never start
    with tf.device("/job:ps/task:0"):
        a = tf.constant(3.0)
    with tf.Session(server.target, config=tf.ConfigProto(device_filters=["/job:ps", "/job:worker/task:1"])) as s:
        assert s.run(a * 2.0) == 6.0
    monkeypatch.setenv("TENSORFLEET_STARTUP_SECONDS", "1")
    start = time.monotonic()
    with pytest.raises(errors.UnavailableError, match=r"/job:worker/replica:0/task:[02]"):
        tf.Session(server.target)
    assert time.monotonic() - start < 15


def test_a_killed_ps_is_unavailable_naming_the_task_within_bounded_time(cluster_procs, local_servers):
    c = cluster_procs({"ps": 1, "worker": 2})
    c.start("ps", 0)
    server = _worker1_server(c, local_servers)
    with tf.device("/job:ps/task:0"):
        v = tf.Variable(1.0, name="v")
    with tf.Session(server.target, config=tf.ConfigProto(device_filters=["/job:ps"])) as sess:
        sess.run(v.initializer)
        assert sess.run(v + 1.0) == 2.0
        c.kill("ps", 0)
        start = time.monotonic()
        with pytest.raises(errors.UnavailableError) as info:
            sess.run(v + 1.0)
        assert time.monotonic() - start < 10
        assert "/job:ps/replica:0/task:0" in str(info.value)


def test_a_released_ps_serves_until_the_workers_have_ended_then_join_exits_0(cluster_procs, local_servers):
    c = cluster_procs({"ps": 2, "worker": 1})
    c.start("ps", 0)
    c.start("ps", 1)
    server = tf.train.Server(c.spec, job_name="worker", task_index=0)
    local_servers.append(server)
    assert server.master.shutdown_tasks("ps", reason="test over") == []
    time.sleep(1)
    for index in (0, 1):   # released, but worker 0 has not ended: still serving it
        assert c.procs[("ps", index)].poll() is None
        assert server.master.worker(*server.master.tasks()[index]).status().task.startswith("/job:ps")
    server.stop()   # worker 0 ends: it tells both ps
    for index in (0, 1):  # run_task.py's join() ends the process with the release's exit code
        assert c.procs[("ps", index)].wait(20) == 0


@pytest.mark.parametrize("bulk", ["1", "0"])
def test_run_options_timeout_bounds_a_slow_remote_step(cluster_procs, local_servers, monkeypatch, tmp_path, bulk):
    monkeypatch.setenv("TENSORFLEET_BULK", bulk)
    c = cluster_procs({"ps": 1, "worker": 2})
    c.start("ps", 0, env={"TENSORFLEET_BULK": bulk})
    server = _worker1_server(c, local_servers)
    with tf.device("/job:ps/task:0"):  # waits 3 s for a file that never appears
        slow = dist_test_ops.handshake(tf.constant(1.0), tmp_path / "mine", tmp_path / "never", timeout=3)
        quick = tf.constant(2.0) * 2.0
    with tf.Session(server.target, config=tf.ConfigProto(device_filters=["/job:ps"])) as sess:
        start = time.monotonic()
        with pytest.raises(errors.DeadlineExceededError, match="/job:ps/replica:0/task:0"):
            sess.run(slow, options=tf.RunOptions(timeout_in_ms=300))
        assert time.monotonic() - start < 2.5
        assert sess.run(quick) == 4.0  # the session still works
