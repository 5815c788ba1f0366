"""The RPC accounting hook (distributed/rpc_accounting.py) that feeds the tensorfleet_rpc_* series: both
ends of every call are seen, and they agree. Oracle: the caller's count of what it sent equals the
server's count of the bytes it received (and back), measured independently on each side (the request
message's size vs the raw bytes the server took off the wire), and the reply of a fetched variable is
at least the array's numpy nbytes. Two servers in this process on 127.0.0.1."""
import collections

import numpy as np
import pytest

import tensorfleet as tf
from dist_cluster import free_ports
from tensorfleet.distributed.rpc_accounting import observing, set_rpc_observer


@pytest.mark.parametrize("bulk", ["1", "0"], ids=["bulk-path", "grpc"])
def test_both_ends_of_every_call_are_counted_and_agree(local_servers, monkeypatch, bulk):
    monkeypatch.setenv("TENSORFLEET_BULK", bulk)
    ps_port, worker_port = free_ports(2)
    spec = tf.train.ClusterSpec({"ps": [f"127.0.0.1:{ps_port}"], "worker": [f"127.0.0.1:{worker_port}"]})
    local_servers.append(tf.train.Server(spec, job_name="ps", task_index=0))
    worker = tf.train.Server(spec, job_name="worker", task_index=0)
    local_servers.append(worker)
    values = np.arange(5000, dtype=np.float32)
    with tf.device("/job:ps/task:0"):
        v = tf.Variable(values, name="v")
        doubled = v * 2.0
    events = []
    set_rpc_observer(lambda *event: events.append(event))
    try:
        assert observing()
        with tf.Session(worker.target) as sess:
            sess.run(v.initializer)
            np.testing.assert_array_equal(sess.run(doubled), values * 2)
    finally:
        set_rpc_observer(None)
    assert not observing()
    client = [e for e in events if e[2] == "client"]
    server = [e for e in events if e[2] == "server"]
    assert client and all(e[0] == "/job:ps/replica:0/task:0" for e in client if e[1] == "RunGraph")
    assert all(e[0] == "unknown" and e[5] is None for e in server)
    assert all(e[5] is not None and e[5] >= 0 for e in client)
    sums = collections.defaultdict(lambda: [0, 0, 0, 0])
    for _peer, method, side, sent, received, _ in events:
        row = sums[method]
        if side == "client":
            row[0] += sent
            row[1] += received
        else:
            row[2] += received
            row[3] += sent
    for method, (client_sent, client_received, server_received, server_sent) in sums.items():
        assert (client_sent, client_received) == (server_received, server_sent), method
    run_graph_replies = [e[3] for e in server if e[1] == "RunGraph"]
    assert max(run_graph_replies) >= values.nbytes


def test_an_observer_that_raises_does_not_fail_the_call(local_servers):
    (port,) = free_ports(1)
    spec = tf.train.ClusterSpec({"worker": [f"127.0.0.1:{port}"], "ps": [f"127.0.0.1:{free_ports(1)[0]}"]})
    local_servers.append(tf.train.Server(spec, job_name="ps", task_index=0))
    server = tf.train.Server(spec, job_name="worker", task_index=0)
    local_servers.append(server)

    def broken(*_):
        raise RuntimeError("observer bug")
    set_rpc_observer(broken)
    try:
        with tf.device("/job:ps/task:0"):
            c = tf.constant(3.0) + 1.0
        with tf.Session(server.target) as sess:
            assert sess.run(c) == 4.0
    finally:
        set_rpc_observer(None)
