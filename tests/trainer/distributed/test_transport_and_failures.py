"""Transport proofs on real processes: the gRPC-only path (bulk off) gives the same results with tensors
larger than one chunk; a 1 GiB tensor crosses both ways; a worker killed while pushing leaves the ps's
variable whole (every update applied entirely or not at all)."""
import os
import subprocess
import sys
import time

import numpy as np
import pytest

import tensorfleet as tf

from dist_cluster import task_env

PUSHER = """
import json, sys
import numpy as np
import tensorfleet as tf
cluster = json.loads(sys.argv[1])
server = tf.train.Server(cluster, job_name="worker", task_index=0)
with tf.device("/job:ps/task:0"):
    v = tf.Variable(tf.zeros([4 << 20]), name="whole")
inc = tf.placeholder(tf.float32, [4 << 20])
with tf.device("/job:ps/task:0"):
    upd = tf.assign_add(v, inc)
ones = np.ones(4 << 20, np.float32)
with tf.Session(server.target, config=tf.ConfigProto(device_filters=["/job:ps"])) as sess:
    sess.run(v.initializer)
    for i in range(100000):
        sess.run(upd.op, {inc: ones})
        if i == 2:
            print("PUSHING", flush=True)
"""


def test_grpc_only_path_carries_multi_chunk_tensors(cluster_procs, local_servers, monkeypatch):
    monkeypatch.setenv("TENSORFLEET_BULK", "0")
    c = cluster_procs({"ps": 1, "worker": 2})
    c.start("ps", 0, env={"TENSORFLEET_BULK": "0", "TENSORFLEET_CHUNK_BYTES": str(1 << 18)})
    server = tf.train.Server(c.spec, job_name="worker", task_index=1)
    local_servers.append(server)
    x = tf.placeholder(tf.float32, [None])
    data = np.random.RandomState(0).rand(5 << 18).astype(np.float32)  # 5 MiB: many 256 KiB chunks
    with tf.device("/job:ps/task:0"):
        doubled = x * 2.0
        total = tf.reduce_sum(x)
    back = doubled + 0.0
    with tf.Session(server.target, config=tf.ConfigProto(device_filters=["/job:ps"])) as sess:
        got, s = sess.run([back, total], {x: data})
    np.testing.assert_array_equal(got, data * 2)
    np.testing.assert_allclose(s, data.sum(dtype=np.float64), rtol=1e-4)


@pytest.mark.slow
@pytest.mark.parametrize("bulk", ["1", "0"])
def test_a_1_gib_tensor_crosses_both_ways(cluster_procs, local_servers, monkeypatch, bulk):
    monkeypatch.setenv("TENSORFLEET_BULK", bulk)
    c = cluster_procs({"ps": 1, "worker": 2})
    c.start("ps", 0, env={"TENSORFLEET_BULK": bulk})
    server = tf.train.Server(c.spec, job_name="worker", task_index=1)
    local_servers.append(server)
    n = (1 << 30) // 4
    data = np.zeros(n, np.float32)
    data[0], data[n // 2], data[-1] = 3.0, 5.0, 7.0
    x = tf.placeholder(tf.float32, [None])
    with tf.device("/job:ps/task:0"):
        on_ps = tf.stack([x[0], x[n // 2], x[-1], tf.cast(tf.size(x), tf.float32)])
        echoed = tf.identity(x)  # back to the worker: 1 GiB the other way
    with tf.device("/job:worker/task:1"):
        probe = tf.stack([echoed[0], echoed[n // 2], echoed[-1]])
    with tf.Session(server.target, config=tf.ConfigProto(device_filters=["/job:ps"])) as sess:
        a, b = sess.run([on_ps, probe], {x: data})
    np.testing.assert_array_equal(a, [3.0, 5.0, 7.0, float(n)])
    np.testing.assert_array_equal(b, [3.0, 5.0, 7.0])


def test_a_worker_killed_while_pushing_leaves_the_variable_whole(cluster_procs, local_servers, tmp_path):
    import json

    c = cluster_procs({"ps": 1, "worker": 2})
    c.start("ps", 0)
    pusher = subprocess.Popen([sys.executable, "-c", PUSHER, json.dumps(c.spec)], stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True, env=task_env())
    try:
        deadline = time.monotonic() + 60
        line = ""
        while time.monotonic() < deadline and not line.startswith("PUSHING"):
            line = pusher.stdout.readline()
            if not line:
                break
        assert line.startswith("PUSHING"), line
        time.sleep(0.37)  # in the middle of a stream of 16 MiB pushes
        pusher.kill()
        pusher.wait(10)
    finally:
        if pusher.poll() is None:
            pusher.kill()
            pusher.wait(10)
    server = tf.train.Server(c.spec, job_name="worker", task_index=1)
    local_servers.append(server)
    with tf.device("/job:ps/task:0"):
        v = tf.Variable(tf.zeros([4 << 20]), name="whole")
    with tf.Session(server.target, config=tf.ConfigProto(device_filters=["/job:ps"])) as sess:
        value = sess.run(v)
    assert value[0] >= 3 and value[0] == int(value[0])
    assert np.all(value == value[0]), "a partial update reached the variable"
    assert os.environ.get("TENSORFLEET_BULK", "1") in ("1", "0")


def test_an_unreachable_bulk_port_falls_back_to_grpc(cluster_procs, caplog):
    from tensorfleet.distributed.client import RpcClient
    from tensorfleet.distributed.protos import service_pb2 as pb
    from dist_cluster import free_ports

    c = cluster_procs({"ps": 1})
    c.start("ps", 0)
    client = RpcClient(c.spec["ps"][0], "WorkerService", "/job:ps/replica:0/task:0")
    client.enable_bulk(free_ports(1)[0])  # nothing listens there (as if a network policy blocked it)
    status, _ = client.call("GetStatus", pb.GetStatusRequest(), pb.GetStatusResponse)
    assert status.task == "/job:ps/replica:0/task:0"
    assert "using gRPC" in caplog.text
    client.close()
