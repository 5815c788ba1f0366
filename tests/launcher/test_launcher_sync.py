"""tensorfleet-train --sync-replicas: the built-in models through tf.train.SyncReplicasOptimizer, as real processes.

The end-to-end tests need `tf.train.SyncReplicasOptimizer` (issue 11) and are skipped with that reason where
this tensorfleet has none. The oracle is TF 1.15's documented behaviour: only the chief's queue runner
applies updates, one per global step, each from `replicas_to_aggregate` gradients, so the job stops at
`--steps` (at most one step past it: a replica may hold a token from the queue's initial ones) and
every task exits 0.

The ps's stale-gradient count is read from the runtime's real ConditionalAccumulator (which exists today).
"""
import json
import socket

import numpy as np
import pytest
import tensorfleet as tf
from tensorfleet_train import ps as ps_role
from tensorfleet_train.exit_codes import ExitCode

HAS_SYNC = hasattr(tf.train, "SyncReplicasOptimizer")
needs_sync = pytest.mark.skipif(not HAS_SYNC, reason="needs tf.train.SyncReplicasOptimizer (issue 11)")
needs_server = pytest.mark.skipif(not hasattr(tf.train, "Server"),
                                  reason="needs the distributed runtime (tf.train.Server, issue 10)")
DIGITS = ["--data", "digits", "--log-format", "json"]


def _ports(n):
    socks = [socket.socket() for _ in range(n)]
    for s in socks:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in socks]
    for s in socks:
        s.close()
    return ports


def _tf_config(cluster, job, index):
    return {"cluster": cluster, "task": {"type": job, "index": index}, "environment": "cloud"}


@pytest.mark.skipif(HAS_SYNC, reason="this tensorfleet has tf.train.SyncReplicasOptimizer")
def test_sync_replicas_without_the_optimizer_is_a_permanent_bad_argument(launcher):
    proc = launcher(["--model", "mnist-softmax", "--steps", "5", "--sync-replicas", *DIGITS])
    assert proc.wait() == ExitCode.BAD_ARGUMENTS
    assert "SyncReplicasOptimizer" in proc.events("exit")[0]["msg"]


@needs_sync
def test_single_process_sync_replicas_trains_to_exactly_the_target_step(launcher, tmp_path):
    proc = launcher(["--model", "mnist-softmax", "--steps", "150", "--log-every", "50", "--sync-replicas",
                     "--checkpoint-dir", str(tmp_path), *DIGITS])
    assert proc.wait() == 0, proc.output
    sync = proc.events("sync_replicas")[0]
    assert (sync["replicas_to_aggregate"], sync["total_num_replicas"]) == (1, 1)
    test = proc.events("test")[0]
    assert 150 <= test["global_step"] <= 151 and test["accuracy"] > 0.85, test
    assert proc.events("done")[0]["local_steps"] >= test["global_step"]   # a gradient for every update


@needs_sync
@needs_server
def test_chief_ps_two_workers_sync_stop_at_the_target_step_and_release_the_ps(launcher, tmp_path):
    ps, chief_port, w0, w1 = _ports(4)
    cluster = {"ps": [f"127.0.0.1:{ps}"], "chief": [f"127.0.0.1:{chief_port}"],
               "worker": [f"127.0.0.1:{w0}", f"127.0.0.1:{w1}"]}
    args = ["--model", "mnist-mlp", "--steps", "200", "--log-every", "50", "--sync-replicas",
            "--replicas-to-aggregate", "3", *DIGITS]
    ps_proc = launcher(args, tf_config=_tf_config(cluster, "ps", 0))
    chief = launcher([*args, "--checkpoint-dir", str(tmp_path)], tf_config=_tf_config(cluster, "chief", 0))
    workers = [launcher(args, tf_config=_tf_config(cluster, "worker", i)) for i in range(2)]
    assert chief.wait() == 0, chief.output
    for worker in workers:
        assert worker.wait() == 0, worker.output
    assert ps_proc.wait() == 0, ps_proc.output
    for proc in (chief, *workers):
        sync = proc.events("sync_replicas")[0]
        assert (sync["replicas_to_aggregate"], sync["total_num_replicas"]) == (3, 3)
        assert 200 <= proc.events("done")[0]["global_step"] <= 201    # one update a global step, no race
    test = chief.events("test")[0]
    assert 200 <= test["global_step"] <= 201 and test["accuracy"] > 0.85, test
    # every global step took 3 gradients: the three tasks pushed at least 3 per update together
    assert sum(p.events("done")[0]["local_steps"] for p in (chief, *workers)) >= 3 * test["global_step"]
    assert json.loads((tmp_path / "training_complete.json").read_text())["global_step"] == test["global_step"]


@needs_server
def test_ps_counts_the_stale_gradients_its_accumulators_dropped():
    """A real ps server holding a ConditionalAccumulator: a gradient of an older step is dropped (TF's
    rule) and the ps role's count moves by exactly the number dropped."""
    (port,) = _ports(1)
    cluster = tf.train.ClusterSpec({"ps": [f"127.0.0.1:{port}"]})
    server = tf.train.Server(cluster, job_name="ps", task_index=0)
    try:
        assert ps_role._stale_gradients(server) == 0
        graph = tf.Graph()
        with graph.as_default(), tf.device("/job:ps/task:0"):
            acc = tf.ConditionalAccumulator(tf.float32, shape=[2], shared_name="grads")
            grad = tf.placeholder(tf.float32, [2])
            step = tf.placeholder(tf.int64, [])
            apply = acc.apply_grad(grad, local_step=step)
            set_step = acc.set_global_step(step)
        with tf.Session(server.target, graph=graph) as sess:
            sess.run(set_step, {step: 5})
            sess.run(apply, {grad: np.ones(2, np.float32), step: 5})    # current: accumulated
            sess.run(apply, {grad: np.ones(2, np.float32), step: 4})    # stale: dropped
            sess.run(apply, {grad: np.ones(2, np.float32), step: 3})    # stale: dropped
        assert ps_role._stale_gradients(server) == 2
    finally:
        server.stop()


def test_stale_gradient_count_is_zero_where_the_runtime_keeps_none():
    assert ps_role._stale_gradients(object()) == 0
