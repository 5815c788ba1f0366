"""Test helper: a TF1 between-graph training script (only the import changed), run as one process per task.

Usage: python train_script.py CLUSTER_JSON JOB TASK STYLE LAST_STEP [CHECKPOINT_DIR]

STYLE (the chief's way of ending; other workers always use the same style's normal form):
  mts            `with tf.train.MonitoredTrainingSession(...)` + StopAtStepHook
  mts-noclose    MonitoredTrainingSession, never closed: the process just exits
  sv             Supervisor: prepare_or_wait_for_session, loop, sv.stop()
  sv-nostop      Supervisor without sv.stop() or sess.close()
  crash          MonitoredTrainingSession; the chief raises an uncaught exception after LAST_STEP
  crash-finally  the same, with `mon.close()` in a `finally` around the raise

MODEL: `TRAIN_MODEL=mnist` the 784-256-10 MLP on MNIST (prints `ACCURACY a` at the end on the chief),
otherwise a 20-weight linear regression on synthetic data. Prints `SESSION global_step=G` whenever a
(new) session is created, `STEP g` every 20 steps, `STOPPED g` at the end. The ps runs `server.join()`.
With `CHIEF_GO_FILE`, the chief starts its steps only once that file exists (after its session is made).
"""
import json
import os
import sys
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402

import tensorfleet as tf  # noqa: E402


class _SessionLog(tf.train.SessionRunHook):
    def __init__(self, global_step):
        self._gs = global_step

    def after_create_session(self, session, coord):
        print("SESSION global_step=%d" % session.run(self._gs), flush=True)


def _model(replica):
    if os.environ.get("TRAIN_MODEL") == "mnist":
        from tensorfleet.datasets import read_data_sets

        data = read_data_sets("MNIST_data", one_hot=True, seed=replica)
        x = tf.placeholder(tf.float32, [None, 784])
        y = tf.placeholder(tf.float32, [None, 10])
        w1 = tf.Variable(tf.truncated_normal([784, 256], stddev=1.0 / 28, seed=1), name="hid_w")
        b1 = tf.Variable(tf.zeros([256]), name="hid_b")
        w2 = tf.Variable(tf.truncated_normal([256, 10], stddev=1.0 / 16, seed=2), name="sm_w")
        b2 = tf.Variable(tf.zeros([10]), name="sm_b")
        logits = tf.matmul(tf.nn.relu(tf.matmul(x, w1) + b1), w2) + b2
        loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits_v2(labels=y, logits=logits))
        accuracy = tf.reduce_mean(tf.cast(tf.equal(tf.argmax(logits, 1), tf.argmax(y, 1)), tf.float32))
        return x, y, loss, 0.3, (lambda: data.train.next_batch(100)), (
            accuracy, {x: data.test.images, y: data.test.labels})
    rng = np.random.RandomState(replica)
    true_w = np.arange(20, dtype=np.float32).reshape(20, 1) / 20
    x = tf.placeholder(tf.float32, [None, 20])
    y = tf.placeholder(tf.float32, [None, 1])
    w = tf.Variable(tf.zeros([20, 1]), name="w")
    loss = tf.reduce_mean(tf.square(tf.matmul(x, w) - y))

    def batch():
        xs = rng.randn(32, 20).astype(np.float32)
        return xs, xs @ true_w

    return x, y, loss, 0.05, batch, None


def main():
    cluster = tf.train.ClusterSpec(json.loads(sys.argv[1]))
    job, task, style, last_step = sys.argv[2], int(sys.argv[3]), sys.argv[4], int(sys.argv[5])
    checkpoint_dir = sys.argv[6] if len(sys.argv) > 6 else None
    server = tf.train.Server(cluster, job_name=job, task_index=task)
    if job == "ps":
        print("READY", server.target, flush=True)
        try:
            server.join()   # ends the process when released (SystemExit(0)): nothing after it runs
            print("PS_JOIN_RETURNED", flush=True)
        finally:
            print("PS_FINALLY", flush=True)
        return
    is_chief = task == 0
    with tf.device(tf.train.replica_device_setter(worker_device=f"/job:worker/task:{task}", cluster=cluster)):
        global_step = tf.train.get_or_create_global_step()
        x, y, loss, lr, batch, evaluation = _model(task)
        train_op = tf.train.GradientDescentOptimizer(lr).minimize(loss, global_step=global_step)
    config = tf.ConfigProto(device_filters=["/job:ps", f"/job:worker/task:{task}"])
    print("READY", server.target, flush=True)
    if style.startswith("sv"):
        _supervisor(server, is_chief, style, last_step, checkpoint_dir, config, global_step, train_op, x, y, batch)
        return
    hooks = [tf.train.StopAtStepHook(last_step=last_step), _SessionLog(global_step)]
    mon = tf.train.MonitoredTrainingSession(master=server.target, is_chief=is_chief, checkpoint_dir=checkpoint_dir,
                                            hooks=hooks, save_checkpoint_steps=100 if checkpoint_dir else None,
                                            save_summaries_steps=None, save_summaries_secs=None,
                                            log_step_count_steps=None, config=config)
    if is_chief:
        _wait_for_go()
    step = _loop(mon, train_op, global_step, x, y, batch)
    if is_chief and evaluation is not None:   # before close(): closing releases the ps (and its variables)
        with tf.Session(server.target, config=config) as sess:
            print("ACCURACY %.4f" % sess.run(evaluation[0], evaluation[1]), flush=True)
    if style == "crash" and is_chief:
        raise RuntimeError("the chief crashes")
    if style == "crash-finally" and is_chief:
        try:
            raise RuntimeError("the chief crashes")
        finally:
            mon.close()
    if style == "mts-noclose" and is_chief:
        print("STOPPED %d" % step, flush=True)
        return   # never closed: the process exit releases the cluster
    mon.close()
    print("STOPPED %d" % step, flush=True)


def _wait_for_go():
    go = os.environ.get("CHIEF_GO_FILE")
    deadline = time.monotonic() + 120
    while go and not os.path.exists(go) and time.monotonic() < deadline:
        time.sleep(0.05)


def _loop(sess, train_op, global_step, x, y, batch, should_stop=None):
    step = 0
    stop = should_stop or sess.should_stop
    try:
        while not stop():
            xs, ys = batch()
            _, step = sess.run([train_op, global_step], {x: xs, y: ys})
            if step % 20 == 0:
                print("STEP %d" % step, flush=True)
    except tf.errors.OutOfRangeError as e:   # a step that lost the ps after the chief released the cluster
        print("ENDED %s" % str(e).splitlines()[0][:80], flush=True)
    return step


def _supervisor(server, is_chief, style, last_step, logdir, config, global_step, train_op, x, y, batch):
    sv = tf.train.Supervisor(is_chief=is_chief, logdir=logdir, global_step=global_step, save_model_secs=0,
                             save_summaries_secs=0)
    sess = sv.prepare_or_wait_for_session(server.target, config=config)
    print("SESSION global_step=%d" % sess.run(global_step), flush=True)
    if is_chief:
        _wait_for_go()
    step = _loop(sess, train_op, global_step, x, y, batch,
                 should_stop=lambda: sv.should_stop() or int(sess.run(global_step)) >= last_step)
    if style == "sv-nostop" and is_chief:
        print("STOPPED %d" % step, flush=True)
        return
    sv.stop()
    print("STOPPED %d" % step, flush=True)


if __name__ == "__main__":
    main()
