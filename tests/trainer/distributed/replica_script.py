"""Test helper: a between-graph TF1 script written the way public distributed examples are (only the import changed).

Its idioms are those of TensorFlow's classic `mnist_replica.py` and Kubeflow's `dist-mnist` (this file is
written here, not copied): flags for the cluster, `if FLAGS.job_name == "ps": server.join()` with nothing
after it (the ps falls through into the worker code, as in those scripts), the model under
`replica_device_setter`, `tf.train.Supervisor(...).prepare_or_wait_for_session(server.target, config)` with
`device_filters`, a raw `while True` loop on the global step with no `should_stop()`, and a final evaluation
after the loop. The model is a 20-weight linear regression (fast and deterministic enough to check).

Extra flags for the tests: `--extra_seconds S`: after its loop a worker keeps running steps for S seconds
(a straggler in its final steps); `--existing_servers`: no server in this process, the session goes to
`grpc://<this task's address>`, served by another process (mnist_replica's way); `--serve_only`: only this
task's server, `server.join()`, exiting 0 on SIGTERM (that other process, as TF's grpc_tensorflow_server.py).
Prints `FINAL step=G loss=L` at the end.
"""
import os
import signal
import sys
import tempfile
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402

import tensorfleet as tf  # noqa: E402

flags = tf.app.flags
flags.DEFINE_string("ps_hosts", "", "Comma-separated list of hostname:port pairs")
flags.DEFINE_string("worker_hosts", "", "Comma-separated list of hostname:port pairs")
flags.DEFINE_string("job_name", None, "job name: worker or ps")
flags.DEFINE_integer("task_index", None, "Worker task index, should be >= 0")
flags.DEFINE_integer("train_steps", 200, "Number of (global) training steps to perform")
flags.DEFINE_float("learning_rate", 0.05, "Learning rate")
flags.DEFINE_float("extra_seconds", 0.0, "Keep training this long after the loop (a straggler)")
flags.DEFINE_boolean("existing_servers", False, "Use the servers of other processes")
flags.DEFINE_boolean("serve_only", False, "Only serve this task (a server process)")
FLAGS = flags.FLAGS


def main(unused_argv):
    ps_spec = FLAGS.ps_hosts.split(",")
    worker_spec = FLAGS.worker_hosts.split(",")
    cluster = tf.train.ClusterSpec({"ps": ps_spec, "worker": worker_spec})
    if not FLAGS.existing_servers:
        server = tf.train.Server(cluster, job_name=FLAGS.job_name, task_index=FLAGS.task_index)
        if FLAGS.serve_only:
            signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(0))
            print("Serving %s" % server.target, flush=True)
            server.join()
        if FLAGS.job_name == "ps":
            server.join()

    is_chief = FLAGS.task_index == 0
    worker_device = "/job:worker/task:%d/cpu:0" % FLAGS.task_index
    with tf.device(tf.train.replica_device_setter(worker_device=worker_device, ps_device="/job:ps/cpu:0",
                                                  cluster=cluster)):
        global_step = tf.Variable(0, name="global_step", trainable=False)
        x = tf.placeholder(tf.float32, [None, 20])
        y_ = tf.placeholder(tf.float32, [None, 1])
        w = tf.Variable(tf.zeros([20, 1]), name="w")
        b = tf.Variable(tf.zeros([1]), name="b")
        loss = tf.reduce_mean(tf.square(tf.matmul(x, w) + b - y_))
        train_step = tf.train.AdamOptimizer(FLAGS.learning_rate).minimize(loss, global_step=global_step)
        init_op = tf.global_variables_initializer()

    train_dir = tempfile.mkdtemp()
    sv = tf.train.Supervisor(is_chief=is_chief, logdir=train_dir, init_op=init_op, recovery_wait_secs=1,
                             global_step=global_step)
    sess_config = tf.ConfigProto(allow_soft_placement=True, log_device_placement=False,
                                 device_filters=["/job:ps", "/job:worker/task:%d" % FLAGS.task_index])
    if FLAGS.existing_servers:
        target = "grpc://" + worker_spec[FLAGS.task_index]
        print("Using existing server at: %s" % target, flush=True)
    else:
        target = server.target
    print("Worker %d: Initializing session..." % FLAGS.task_index, flush=True)
    sess = sv.prepare_or_wait_for_session(target, config=sess_config)
    print("Worker %d: Session initialization complete." % FLAGS.task_index, flush=True)

    rng = np.random.RandomState(FLAGS.task_index)
    true_w = np.linspace(-1, 1, 20, dtype=np.float32).reshape(20, 1)

    def batch():
        xs = rng.randn(50, 20).astype(np.float32)
        return {x: xs, y_: xs @ true_w + 0.5}

    local_step = 0
    while True:
        _, step = sess.run([train_step, global_step], feed_dict=batch())
        local_step += 1
        if step >= FLAGS.train_steps:
            break
    end = time.time() + FLAGS.extra_seconds
    while time.time() < end:   # a straggler's last steps, after the chief may have ended
        _, step = sess.run([train_step, global_step], feed_dict=batch())
        time.sleep(0.01)
    final_loss = sess.run(loss, feed_dict=batch())   # the final evaluation after the loop
    print("FINAL step=%d loss=%.6f local_steps=%d" % (sess.run(global_step), final_loss, local_step), flush=True)


if __name__ == "__main__":
    tf.app.run()
