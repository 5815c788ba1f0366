"""Distributed MNIST training in TF1's MonitoredTrainingSession style, sync or async, only the import changed.

The 784-H-10 MLP under `tf.train.replica_device_setter`; every worker runs

    with tf.train.MonitoredTrainingSession(master=server.target, is_chief=is_chief, checkpoint_dir=...,
                                           hooks=[tf.train.StopAtStepHook(last_step=N), sync_hook, ...]) as sess:
        while not sess.should_stop():
            sess.run(train_op, feed_dict=...)

where with `--sync_replicas` the optimizer is a `tf.train.SyncReplicasOptimizer` and
`sync_hook = opt.make_session_run_hook(is_chief)` (the chief's hook starts the queue
runner that aggregates the gradients and releases the workers step by step).

    python examples/distributed/mnist_monitored_replica.py --job_name=ps --task_index=0 \\
        --ps_hosts=127.0.0.1:2222 --worker_hosts=127.0.0.1:2223,127.0.0.1:2224
    python examples/distributed/mnist_monitored_replica.py --job_name=worker --task_index=0 --sync_replicas ...
    python examples/distributed/mnist_monitored_replica.py --job_name=worker --task_index=1 --sync_replicas ...

The chief measures the test accuracy with a `FinalOpsHook` and prints a JSON line
(test accuracy, global step, global steps/s, stale gradients dropped). The ps serves
until killed (as TF's).
"""
import argparse
import json
import math
import os
import tempfile
import time

import tensorfleet as tf
from tensorfleet.datasets import read_data_sets


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--ps_hosts", default="")
    p.add_argument("--worker_hosts", default="")
    p.add_argument("--job_name", default="")
    p.add_argument("--task_index", type=int, default=0)
    p.add_argument("--sync_replicas", action="store_true")
    p.add_argument("--replicas_to_aggregate", type=int, default=None, help="default: the number of workers")
    p.add_argument("--hidden_units", type=int, default=256)
    p.add_argument("--train_steps", type=int, default=500, help="last global step (StopAtStepHook)")
    p.add_argument("--batch_size", type=int, default=100)
    p.add_argument("--learning_rate", type=float, default=0.5)
    p.add_argument("--checkpoint_dir", default="", help="default: a fresh temporary directory")
    return p.parse_args(argv)


class _Rate(tf.train.SessionRunHook):
    """Global steps per second over the run (first to last global step this worker saw)."""

    def begin(self):
        self._gs = tf.train.get_global_step()
        self.first = self.last = None

    def before_run(self, run_context):
        return tf.train.SessionRunArgs(self._gs)

    def after_run(self, run_context, run_values):
        now = time.time()
        if self.first is None:
            self.first = (now, run_values.results)
        self.last = (now, run_values.results)

    def rate(self):
        if not self.first or self.last[0] <= self.first[0]:
            return 0.0
        return (self.last[1] - self.first[1]) / (self.last[0] - self.first[0])


def main(argv=None):
    args = parse_args(argv)
    worker_spec = args.worker_hosts.split(",")
    num_workers = len(worker_spec)
    cluster = tf.train.ClusterSpec({"ps": args.ps_hosts.split(","), "worker": worker_spec})
    server = tf.train.Server(cluster, job_name=args.job_name, task_index=args.task_index)
    if args.job_name == "ps":
        print(f"ps {args.task_index} serving at {server.target}", flush=True)
        server.join()
        return
    is_chief = args.task_index == 0
    mnist = read_data_sets("MNIST_data", one_hot=True, seed=args.task_index)

    with tf.device(tf.train.replica_device_setter(worker_device=f"/job:worker/task:{args.task_index}",
                                                  cluster=cluster)):
        global_step = tf.train.get_or_create_global_step()
        x = tf.placeholder(tf.float32, [None, 784])
        y_ = tf.placeholder(tf.float32, [None, 10])
        hid_w = tf.Variable(tf.truncated_normal([784, args.hidden_units], stddev=1.0 / 28, seed=1), name="hid_w")
        hid_b = tf.Variable(tf.zeros([args.hidden_units]), name="hid_b")
        sm_w = tf.Variable(tf.truncated_normal([args.hidden_units, 10], stddev=1.0 / math.sqrt(args.hidden_units),
                                               seed=2), name="sm_w")
        sm_b = tf.Variable(tf.zeros([10]), name="sm_b")
        logits = tf.matmul(tf.nn.relu(tf.matmul(x, hid_w) + hid_b), sm_w) + sm_b
        loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits_v2(labels=y_, logits=logits))
        accuracy = tf.reduce_mean(tf.cast(tf.equal(tf.argmax(logits, 1), tf.argmax(y_, 1)), tf.float32))
        opt = tf.train.GradientDescentOptimizer(args.learning_rate)
        if args.sync_replicas:
            opt = tf.train.SyncReplicasOptimizer(opt, replicas_to_aggregate=args.replicas_to_aggregate or num_workers,
                                                 total_num_replicas=num_workers)
        train_op = opt.minimize(loss, global_step=global_step)

    rate = _Rate()
    hooks = [tf.train.StopAtStepHook(last_step=args.train_steps), rate]
    if args.sync_replicas:
        hooks.append(opt.make_session_run_hook(is_chief))
    final = tf.train.FinalOpsHook({"accuracy": accuracy, "global_step": global_step,
                                   **({"stale": opt.stale_gradients()} if args.sync_replicas else {})},
                                  final_ops_feed_dict={x: mnist.test.images, y_: mnist.test.labels})
    config = tf.ConfigProto(device_filters=["/job:ps", f"/job:worker/task:{args.task_index}"])
    print(f"Worker {args.task_index}: starting the MonitoredTrainingSession", flush=True)
    local_steps = 0
    with tf.train.MonitoredTrainingSession(master=server.target, is_chief=is_chief,
                                           checkpoint_dir=(args.checkpoint_dir or tempfile.mkdtemp())
                                           if is_chief else None,
                                           hooks=hooks, chief_only_hooks=[final], config=config,
                                           save_checkpoint_steps=10 ** 6, save_summaries_steps=None,
                                           log_step_count_steps=None) as sess:
        print(f"Worker {args.task_index}: session ready", flush=True)
        while not sess.should_stop():
            batch_xs, batch_ys = mnist.train.next_batch(args.batch_size)
            sess.run(train_op, feed_dict={x: batch_xs, y_: batch_ys})
            local_steps += 1
    result = {"local_steps": local_steps, "global_steps_per_s": rate.rate(), "sync": bool(args.sync_replicas)}
    if is_chief:
        values = final.final_ops_values
        result.update(test_accuracy=float(values["accuracy"]), global_step=int(values["global_step"]))
        if args.sync_replicas:
            result["stale_gradients"] = int(values["stale"])
    print(json.dumps(result), flush=True)


if __name__ == "__main__":
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    main()
