"""A same-host (Unix socket) bulk connection takes a whole gradient in one write at either end.

Linux gives a Unix stream socket 208 KiB to send and never grows it (no autotuning, unlike TCP), so a
300 KiB gradient (dist-mnist's 784x100 float32 weights) or its pull would go out in pieces, each waiting
for the reader to be scheduled: wake-ups inside the window between a step's read of the weights and its
update (bench/dist_mnist_adam.py measures what that does to async training). Oracle: the kernel's own
SO_SNDBUF of the sockets both ends hold, in one process hosting both tasks.
"""
import gc
import socket
import sys

import numpy as np
import pytest

import tensorfleet as tf

GRADIENT_BYTES = 784 * 100 * 4

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the same-host path is Linux's")


def _bulk_unix_sockets():
    """Connected Unix stream sockets of this process whose either end is a server's same-host bulk socket."""
    found = []
    for obj in gc.get_objects():
        if not isinstance(obj, socket.socket) or obj.fileno() < 0 or obj.family != socket.AF_UNIX:
            continue
        try:
            names = (obj.getsockname(), obj.getpeername())
        except OSError:   # not connected: a listener
            continue
        if any(isinstance(n, bytes) and n.startswith(b"\0tensorfleet-") and b"-grpc-" not in n for n in names):
            found.append(obj)
    return found


def test_both_ends_of_a_same_host_bulk_connection_send_a_gradient_in_one_write(local_servers):
    from loopback_ports import free_ports

    ports = free_ports(2)
    spec = {"ps": [f"127.0.0.1:{ports[0]}"], "worker": [f"127.0.0.1:{ports[1]}"]}
    ps = tf.train.Server(spec, job_name="ps", task_index=0)
    local_servers.append(ps)
    worker = tf.train.Server(spec, job_name="worker", task_index=0)
    local_servers.append(worker)
    grad = np.random.RandomState(0).rand(784, 100).astype(np.float32)
    g = tf.placeholder(tf.float32, [784, 100])
    with tf.device("/job:ps/task:0"):
        w = tf.Variable(tf.zeros([784, 100]), name="hid_w")
        push = tf.assign_add(w, g)
    with tf.Session(worker.target) as sess:
        sess.run(w.initializer)
        sess.run(push.op, {g: grad})
        np.testing.assert_array_equal(sess.run(w), grad)   # and pulled back
        socks = _bulk_unix_sockets()
        ends = {"client" if s.getpeername() else "server" for s in socks}
        assert ends == {"client", "server"}, socks
        for s in socks:
            assert s.getsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF) > GRADIENT_BYTES, s
