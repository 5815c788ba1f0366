"""`max_to_keep` holds across restarts (issue 26, item 5): the Saver that `MonitoredTrainingSession`, a
`Supervisor` and the Estimator restore through (SessionManager) takes over the checkpoints listed in the
directory's state file, so a job killed and restarted again and again keeps at most `max_to_keep`
checkpoints (+ the one being written when it was killed); a plain `tf.train.Saver` keeps TF's behaviour
(it knows only the checkpoints it wrote itself).

The restart tests fork the test process (tensorfleet already imported: a restart costs no interpreter
start) and SIGKILL the child after a varying number of steps, so kills land between steps and inside
saves. Oracle: the checkpoints on disk (`.index` files, listed by the OS), after every kill and at the end.
Sessions run inline (inter_op_parallelism_threads=1): a forked child needs no thread of its parent.
"""
import os
import re
import select
import signal
import time

import numpy as np

import tensorfleet as tf
from helpers import fork_child, wait_child

INLINE = tf.ConfigProto(inter_op_parallelism_threads=1)
KEEP = 2
RESTARTS = 10


def _checkpoints(directory) -> list:
    steps = []
    for name in os.listdir(directory):
        m = re.match(r"model\.ckpt-(\d+)\.index$", name)
        if m:
            steps.append(int(m.group(1)))
    return sorted(steps)


def _read_steps(fd, n, timeout=120.0) -> None:
    """Waits until the child reported `n` more steps (one byte each)."""
    got, deadline = 0, time.monotonic() + timeout
    while got < n:
        ready, _, _ = select.select([fd], [], [], max(0.0, deadline - time.monotonic()))
        assert ready, "the child reported no step in time"
        chunk = os.read(fd, n - got)
        assert chunk, "the child ended early"
        got += len(chunk)


def _model():
    g = tf.Graph()
    with g.as_default():
        step = tf.train.get_or_create_global_step()
        v = tf.Variable(0.0, name="v")
        train = tf.group(tf.assign_add(v, 1.0), tf.assign_add(step, 1))
    return g, step, train


def _monitored(directory, last_step):
    def child(w):
        g, step, train = _model()
        with g.as_default():
            scaffold = tf.train.Scaffold(saver=tf.train.Saver(max_to_keep=KEEP))
            with tf.train.MonitoredTrainingSession(
                    checkpoint_dir=directory, scaffold=scaffold, save_checkpoint_steps=2, save_summaries_steps=None,
                    save_summaries_secs=None, log_step_count_steps=None, config=INLINE,
                    hooks=[tf.train.StopAtStepHook(last_step=last_step)]) as sess:
                while not sess.should_stop():
                    sess.run(train)
                    os.write(w, b"s")
    return child


def _supervised(directory, last_step):
    def child(w):
        g, step, train = _model()
        with g.as_default():
            sv = tf.train.Supervisor(logdir=directory, saver=tf.train.Saver(max_to_keep=KEEP), save_model_secs=0,
                                     summary_op=None)
            with sv.managed_session(config=INLINE) as sess:
                while sess.run(step) < last_step:
                    sess.run(train)
                    if sess.run(step) % 2 == 0:
                        sv.saver.save(sess, sv.save_path, global_step=step)
                    os.write(w, b"s")
    return child


def _kill_and_restart(tmp_path, make_child):
    directory = str(tmp_path / "ckpt")
    os.makedirs(directory)
    seen = set()
    for run in range(RESTARTS):
        pid, fd = fork_child(make_child(directory, 10 ** 9))
        try:
            _read_steps(fd, 1 + 3 * (run % 4))   # 1..10 steps in: between steps, inside saves
        finally:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            os.close(fd)
        on_disk = _checkpoints(directory)
        seen.update(on_disk)
        assert len(on_disk) <= KEEP + 1, f"restart {run + 1}: {len(on_disk)} checkpoints on disk: {on_disk}"
    step = max(seen)
    pid, fd = fork_child(make_child(directory, step + 4))   # the last run ends normally
    assert wait_child(pid) == 0
    os.close(fd)
    final = _checkpoints(directory)
    assert len(final) <= KEEP, final
    assert final[-1] >= step + 4 and tf.train.latest_checkpoint(directory).endswith(f"-{final[-1]}")
    # the oracle could fail: the runs wrote many more checkpoints than may stay
    assert len(seen) > KEEP + 1, seen
    return final


def test_monitored_training_session_keeps_max_to_keep_across_ten_kills(tmp_path):
    _kill_and_restart(tmp_path, _monitored)


def test_supervisor_keeps_max_to_keep_across_ten_kills(tmp_path):
    _kill_and_restart(tmp_path, _supervised)


def _linear_model_fn(features, labels, mode):
    w = tf.get_variable("w", [1], initializer=tf.zeros_initializer())
    loss = tf.reduce_mean(tf.square(features["x"] * w - labels))
    train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=tf.train.get_global_step())
    return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


def test_estimator_keeps_keep_checkpoint_max_across_new_estimators(tmp_path):
    x = np.arange(8, dtype=np.float32).reshape(-1, 1)
    config = tf.estimator.RunConfig(keep_checkpoint_max=KEEP, save_checkpoints_steps=1, save_summary_steps=None)
    for run in range(4):   # each a new Estimator, graph and Saver: what a restarted process has
        est = tf.estimator.Estimator(_linear_model_fn, model_dir=str(tmp_path), config=config)
        est.train(lambda: ({"x": tf.constant(x)}, tf.constant(2 * x)), steps=3)
        on_disk = _checkpoints(str(tmp_path))
        assert len(on_disk) <= KEEP and on_disk[-1] == 3 * (run + 1), on_disk


def test_a_plain_saver_keeps_tfs_behaviour_and_knows_only_its_own_checkpoints(tmp_path):
    g, step, train = _model()
    prefix = str(tmp_path / "model.ckpt")
    with g.as_default(), tf.Session(graph=g) as sess:
        sess.run(tf.global_variables_initializer())
        first = tf.train.Saver(max_to_keep=KEEP)
        for _ in range(3):
            sess.run(train)
            first.save(sess, prefix, global_step=step)
        assert _checkpoints(str(tmp_path)) == [2, 3]
        second = tf.train.Saver(max_to_keep=KEEP)   # a new Saver (a restarted script): TF's starts empty
        for _ in range(2):
            sess.run(train)
            second.save(sess, prefix, global_step=step)
        assert _checkpoints(str(tmp_path)) == [2, 3, 4, 5]
        state = tf.train.get_checkpoint_state(str(tmp_path))
        assert [os.path.basename(p) for p in state.all_model_checkpoint_paths] == ["model.ckpt-4", "model.ckpt-5"]
