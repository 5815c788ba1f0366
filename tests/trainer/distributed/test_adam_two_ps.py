"""Adam over two ps processes from two between-graph workers (dist-mnist's layout): after a fixed
interleaving of steps, every variable, slot and beta power equals numpy's sequential model of TF's
ApplyAdam (tensorflow/core/kernels/training_ops.cc) with the beta powers multiplied once per step."""
import numpy as np

import tensorfleet as tf

SHAPES = {"hid_w": (3, 2), "hid_b": (2,), "sm_w": (2, 2), "sm_b": (2,)}  # ps1, ps0, ps1, ps0
LR, BETA1, BETA2, EPS = 0.1, 0.9, 0.999, 1e-8


def _replica(graph, cluster, task):
    with graph.as_default(), tf.device(tf.train.replica_device_setter(
            worker_device=f"/job:worker/task:{task}", cluster=cluster)):
        gs = tf.Variable(0, name="global_step", trainable=False)
        variables = {n: tf.Variable(np.full(s, 0.5, np.float32), name=n) for n, s in SHAPES.items()}
        grads = {n: tf.placeholder(tf.float32, s, name=f"g_{n}") for n, s in SHAPES.items()}
        loss = tf.add_n([tf.reduce_sum(variables[n] * grads[n]) for n in SHAPES])  # d loss / d var = g
        opt = tf.train.AdamOptimizer(LR, BETA1, BETA2, EPS)
        train = opt.minimize(loss, global_step=gs)
    return gs, variables, grads, opt, train


def test_two_workers_on_two_ps_match_numpy_adam_exactly(cluster_procs, local_servers):
    c = cluster_procs({"ps": 2, "worker": 2})
    c.start("ps", 0)
    c.start("ps", 1)
    servers = [tf.train.Server(c.spec, job_name="worker", task_index=i) for i in range(2)]
    local_servers.extend(servers)
    replicas = [_replica(tf.Graph(), c.spec, i) for i in range(2)]
    _, variables, _, opt, _ = replicas[1]
    assert {n: v.op.device for n, v in variables.items()} == {
        "hid_w": "/job:ps/task:1", "hid_b": "/job:ps/task:0", "sm_w": "/job:ps/task:1", "sm_b": "/job:ps/task:0"}
    sessions = [tf.Session(s.target, graph=r[0].graph) for s, r in zip(servers, replicas)]
    try:
        with replicas[0][0].graph.as_default():
            sessions[0].run(tf.global_variables_initializer())
        rng = np.random.RandomState(0)
        order = [0, 1, 1, 0, 1, 0, 0, 1]
        steps = [{n: rng.randn(*s).astype(np.float32) for n, s in SHAPES.items()} for _ in order]
        for who, g in zip(order, steps):
            _, _, grads, _, train = replicas[who]
            sessions[who].run(train, {grads[n]: g[n] for n in SHAPES})
        with replicas[1][0].graph.as_default():
            b1p, b2p = opt._get_beta_accumulators()
        got = sessions[1].run({"gs": replicas[1][0], "var": variables, "b1p": b1p, "b2p": b2p,
                               "m": {n: opt.get_slot(v, "m") for n, v in variables.items()},
                               "v": {n: opt.get_slot(v, "v") for n, v in variables.items()}})
    finally:
        for s in sessions:
            s.close()
    f32 = np.float32  # the kernel's arithmetic: float32 scalars and tensors, as TF's for a float32 variable
    one, b1, b2, lr, eps = f32(1), f32(BETA1), f32(BETA2), f32(LR), f32(EPS)
    var = {n: np.full(s, 0.5, f32) for n, s in SHAPES.items()}
    m = {n: np.zeros(s, f32) for n, s in SHAPES.items()}
    v = {n: np.zeros(s, f32) for n, s in SHAPES.items()}
    beta1_power, beta2_power = b1, b2
    for g in steps:
        lr_t = lr * np.sqrt(one - beta2_power) / (one - beta1_power)
        for n in SHAPES:
            m[n] += (g[n] - m[n]) * (one - b1)
            v[n] += (g[n] * g[n] - v[n]) * (one - b2)
            var[n] -= m[n] * lr_t / (np.sqrt(v[n]) + eps)
        beta1_power, beta2_power = beta1_power * b1, beta2_power * b2
    assert got["gs"] == len(order)
    np.testing.assert_allclose(got["b1p"], beta1_power, rtol=1e-6)
    np.testing.assert_allclose(got["b2p"], beta2_power, rtol=1e-6)
    for n in SHAPES:
        np.testing.assert_allclose(got["m"][n], m[n], rtol=1e-6)
        np.testing.assert_allclose(got["v"][n], v[n], rtol=1e-6)
        np.testing.assert_allclose(got["var"][n], var[n], rtol=1e-6)
