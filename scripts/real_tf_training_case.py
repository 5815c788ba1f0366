"""One training job run the same way by tensorfleet and by real TensorFlow (for check_with_real_tf.py training).

    python scripts/real_tf_training_case.py {tensorfleet|tensorflow} {local|distributed} OUT.json

dist-mnist's model (a 784-100-10 MLP, the summed clipped cross entropy, `AdamOptimizer(0.01)` with
`global_step`) from fixed initial values, on 300 fixed batches of 100 from a fixed synthetic data set (a
random teacher network labels Gaussian inputs): `local` in one session, `distributed` on 2 ps + 1 worker
(servers in this process on 127.0.0.1, `replica_device_setter(cluster=)`, one worker: no interleaving).
Writes the loss every 25 steps and the final cross entropy on 2,000 held-out examples.
"""
from __future__ import annotations

import json
import os
import socket
import sys

import numpy as np

STEPS, BATCH = 300, 100


def _runtime(impl: str):
    if impl == "tensorflow":
        import tensorflow.compat.v1 as tf

        tf.disable_v2_behavior()
        return tf
    import tensorfleet as tf

    return tf


def _data():
    rng = np.random.RandomState(0)
    teacher = rng.randn(784, 10).astype(np.float32)
    x = (rng.rand(12000, 784) < 0.2).astype(np.float32)   # sparse and non-negative, as MNIST's pixels
    labels = np.argmax((x - 0.2) @ teacher, axis=1)   # learnable without noise: rounding is not amplified
    y = np.eye(10, dtype=np.float32)[labels]
    init = {"hid_w": (rng.randn(784, 100) / 28).astype(np.float32), "hid_b": np.zeros(100, np.float32),
            "sm_w": (rng.randn(100, 10) / 10).astype(np.float32), "sm_b": np.zeros(10, np.float32)}
    batches = [rng.randint(0, 10000, BATCH) for _ in range(STEPS)]
    return x, y, init, batches


def _free_ports(n: int) -> list:
    socks = [socket.socket() for _ in range(n)]
    for s in socks:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in socks]
    for s in socks:
        s.close()
    return ports


def main(impl: str, mode: str, out: str) -> None:
    tf = _runtime(impl)
    x_all, y_all, init, batches = _data()
    device, target = None, ""
    if mode == "distributed":
        p = _free_ports(3)
        cluster = tf.train.ClusterSpec({"ps": [f"127.0.0.1:{p[0]}", f"127.0.0.1:{p[1]}"],
                                        "worker": [f"127.0.0.1:{p[2]}"]})
        servers = [tf.train.Server(cluster, job_name="ps", task_index=i) for i in range(2)]
        servers.append(tf.train.Server(cluster, job_name="worker", task_index=0))
        device = tf.train.replica_device_setter(worker_device="/job:worker/task:0", cluster=cluster)
        target = servers[-1].target
    with tf.device(device):
        global_step = tf.Variable(0, name="global_step", trainable=False)
        w = {name: tf.Variable(value, name=name) for name, value in init.items()}
        x = tf.placeholder(tf.float32, [None, 784])
        y_ = tf.placeholder(tf.float32, [None, 10])
        hid = tf.nn.relu(tf.nn.xw_plus_b(x, w["hid_w"], w["hid_b"]))
        y = tf.nn.softmax(tf.nn.xw_plus_b(hid, w["sm_w"], w["sm_b"]))
        xent = -tf.reduce_sum(y_ * tf.log(tf.clip_by_value(y, 1e-10, 1.0)))
        train_op = tf.train.AdamOptimizer(0.01).minimize(xent, global_step=global_step)
    sess = tf.Session(target)
    sess.run(tf.global_variables_initializer())
    curve = []
    for i, idx in enumerate(batches):
        _, loss = sess.run([train_op, xent], {x: x_all[idx], y_: y_all[idx]})
        if i % 25 == 0:
            curve.append(float(loss))
    final = float(sess.run(xent, {x: x_all[10000:], y_: y_all[10000:]}))
    with open(out, "w") as f:
        json.dump({"curve": curve, "final": final, "global_step": int(sess.run(global_step))}, f)
    sys.stdout.flush()
    os._exit(0)   # in-process servers: no job-end protocol is checked here


if __name__ == "__main__":
    main(*sys.argv[1:4])
