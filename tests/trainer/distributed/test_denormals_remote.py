"""Kernels a ps runs for a remote step flush denormals to zero, as TF's do (its executor's
`port::ScopedFlushDenormal`); tests/trainer/test_denormals.py has the oracle's values (real TF's results)."""
import platform
import sys

import numpy as np
import pytest

import tensorfleet as tf

pytestmark = pytest.mark.skipif(sys.platform != "linux" or platform.machine() != "x86_64",
                                reason="denormals are flushed on x86-64 Linux only (glibc's fesetmode)")


def test_a_ps_process_flushes_denormals_in_the_steps_it_runs(cluster_procs, local_servers):
    c = cluster_procs({"ps": 1, "worker": 1})
    c.start("ps", 0)
    server = tf.train.Server(c.spec, job_name="worker", task_index=0)
    local_servers.append(server)
    x = tf.placeholder(tf.float32, [3])
    with tf.device("/job:ps/task:0"):
        v = tf.Variable(np.full(3, 1e-38, np.float32), name="tiny")
        on_ps = tf.sqrt(x) + v * 0.5        # DAZ on x (2e-39), FTZ on the product
        halve = tf.assign(v, v * 0.5)
    with tf.Session(server.target, config=tf.ConfigProto(device_filters=["/job:ps"])) as sess:
        sess.run(v.initializer)
        np.testing.assert_array_equal(sess.run(on_ps, {x: np.full(3, 2e-39, np.float32)}), np.zeros(3))
        sess.run(halve.op)
        np.testing.assert_array_equal(sess.run(v), np.zeros(3))
    assert float(np.float32(1e-38) * np.float32(0.5)) != 0.0   # this process's numpy keeps them
