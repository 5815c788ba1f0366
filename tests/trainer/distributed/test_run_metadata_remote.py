"""A traced step of a distributed session: every task's partition stats come back in RunMetadata.step_stats,
merged per device under TF's full device names (real task processes on 127.0.0.1)."""
import numpy as np
import pytest

import tensorfleet as tf

tb_config = pytest.importorskip("tensorboard.compat.proto.config_pb2")

PS = "/job:ps/replica:0/task:0/device:CPU:0"
W0 = "/job:worker/replica:0/task:0/device:CPU:0"
W1 = "/job:worker/replica:0/task:1/device:CPU:0"
FULL = dict(trace_level=tf.RunOptions.FULL_TRACE)


def _nodes(meta) -> dict:
    return {d.device: [n.node_name for n in d.node_stats] for d in meta.step_stats.dev_stats}


def test_traced_step_merges_the_stats_of_every_task(cluster_procs, local_servers):
    c = cluster_procs({"ps": 1, "worker": 2})
    c.start("ps", 0)
    c.start("worker", 0)
    server = tf.train.Server(c.spec, job_name="worker", task_index=1)
    local_servers.append(server)
    x = tf.placeholder(tf.float32, [2, 3], name="x")
    with tf.device("/job:ps/task:0"):
        v = tf.Variable(np.ones((3, 2), np.float32), name="v")
        on_ps = tf.matmul(x, v, name="on_ps")
    with tf.device("/job:worker/task:0"):
        on_w0 = tf.nn.relu(on_ps - 4.0, name="on_w0")
    here = tf.add(on_w0, 1.0, name="here")
    xv = np.arange(6, dtype=np.float32).reshape(2, 3)
    with tf.Session(server.target) as sess:
        sess.run(v.initializer)
        untraced = tf.RunMetadata()
        sess.run(here, {x: xv}, options=tf.RunOptions(), run_metadata=untraced)
        assert untraced.SerializeToString() == b""
        meta = tf.RunMetadata()
        got = sess.run(here, {x: xv}, options=tf.RunOptions(**FULL), run_metadata=meta)
    np.testing.assert_allclose(got, np.maximum(xv @ np.ones((3, 2)) - 4, 0) + 1)
    nodes = _nodes(meta)
    assert set(nodes) == {PS, W0, W1}
    assert "on_ps" in nodes[PS] and "v/read" in nodes[PS]
    assert "on_w0" in nodes[W0] and "here" in nodes[W1]
    for dev in meta.step_stats.dev_stats:
        for n in dev.node_stats:
            assert n.all_start_micros > 0 and n.all_end_rel_micros >= 0
    on_ps_stats = next(n for d in meta.step_stats.dev_stats for n in d.node_stats if n.node_name == "on_ps")
    assert [d.size for d in on_ps_stats.output[0].tensor_description.shape.dim] == [2, 2]
    parsed = tb_config.RunMetadata.FromString(meta.SerializeToString())
    assert {d.device for d in parsed.step_stats.dev_stats} == {PS, W0, W1}


def test_remote_master_returns_the_trace_of_its_task(cluster_procs):
    c = cluster_procs({"ps": 1})
    c.start("ps", 0)
    x = tf.placeholder(tf.float32, [None], name="x")
    y = tf.multiply(x, 2.0, name="y")
    meta = tf.RunMetadata()
    with tf.Session("grpc://" + c.spec["ps"][0]) as sess:  # not a server of this process: RunStep over RPC
        np.testing.assert_allclose(sess.run(y, {x: [1.0, 2.0]}, options=tf.RunOptions(**FULL), run_metadata=meta),
                                   [2.0, 4.0])
    assert "y" in _nodes(meta)[PS]
