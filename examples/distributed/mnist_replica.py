"""Between-graph replicated MNIST training, TF1 style, with only the import changed.

    # one process per task (or set TF_CONFIG as the operator does and omit the host lists):
    python examples/distributed/mnist_replica.py --job_name=ps --task_index=0 \\
        --ps_hosts=127.0.0.1:2222 --worker_hosts=127.0.0.1:2223,127.0.0.1:2224
    python examples/distributed/mnist_replica.py --job_name=worker --task_index=0 ...   # the chief
    python examples/distributed/mnist_replica.py --job_name=worker --task_index=1 ...

The ps tasks call `server.join()`. Each worker builds the same 784-256-10 MLP under
`tf.device(tf.train.replica_device_setter(...))`, so the variables live on the ps
tasks and the math on the worker, and trains asynchronously through a plain
`tf.Session(server.target)`: the chief (the `chief` task if TF_CONFIG has one, else
worker 0) initialises the variables, the others poll `tf.report_uninitialized_variables()`
until it has. The chief prints the test accuracy once every worker's steps are in
(`test_accuracy=0.97...`).
"""
import argparse
import json
import os
import time

import numpy as np

import tensorfleet as tf
from tensorfleet.datasets import read_data_sets


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--ps_hosts", default="")
    p.add_argument("--worker_hosts", default="")
    p.add_argument("--job_name", default="")
    p.add_argument("--task_index", type=int, default=0)
    p.add_argument("--train_steps", type=int, default=1000, help="steps per worker")
    p.add_argument("--batch_size", type=int, default=100)
    p.add_argument("--hidden_units", type=int, default=256)
    p.add_argument("--learning_rate", type=float, default=0.3)
    p.add_argument("--wait_secs", type=float, default=120, help="chief: how long to wait for the others' steps")
    return p.parse_args(argv)


def cluster_and_task(args):
    if args.ps_hosts or args.worker_hosts:
        cluster = {"ps": args.ps_hosts.split(","), "worker": args.worker_hosts.split(",")}
        return tf.train.ClusterSpec(cluster), args.job_name, args.task_index
    resolver = tf.distribute.cluster_resolver.TFConfigClusterResolver()
    return resolver.cluster_spec(), resolver.task_type, resolver.task_id


def uninitialized(sess, report_op) -> int:
    return len(sess.run(report_op)) if not isinstance(report_op, list) else sum(not v for v in sess.run(report_op))


def report_uninitialized():
    """tf.report_uninitialized_variables(); before tf.string exists, the per-variable flags it is built from."""
    if hasattr(tf, "report_uninitialized_variables"):
        return tf.report_uninitialized_variables()
    return [tf.is_variable_initialized(v) for v in tf.global_variables()]


def main(argv=None):
    args = parse_args(argv)
    cluster, job_name, task_index = cluster_and_task(args)
    server = tf.train.Server(cluster, job_name=job_name, task_index=task_index)
    if job_name == "ps":
        print(f"ps {task_index} serving at {server.target}", flush=True)
        server.join()
        return
    if job_name not in ("chief", "worker"):
        print(f"{job_name} {task_index}: nothing to do in this example", flush=True)
        return
    # TF's rule: the chief task if the cluster has one, else worker 0
    is_chief = job_name == "chief" or (task_index == 0 and "chief" not in cluster.jobs)
    num_workers = sum(cluster.num_tasks(j) for j in ("chief", "worker") if j in cluster.jobs)
    replica = task_index + (1 if job_name == "worker" and "chief" in cluster.jobs else 0)
    mnist = read_data_sets("MNIST_data", one_hot=True, seed=replica)

    worker_device = f"/job:{job_name}/task:{task_index}"
    with tf.device(tf.train.replica_device_setter(worker_device=worker_device, cluster=cluster)):
        global_step = tf.Variable(0, name="global_step", trainable=False)
        x = tf.placeholder(tf.float32, [None, 784], name="x")
        y_ = tf.placeholder(tf.float32, [None, 10], name="y_")
        hid_w = tf.Variable(tf.truncated_normal([784, args.hidden_units], stddev=1.0 / 28, seed=1), name="hid_w")
        hid_b = tf.Variable(tf.zeros([args.hidden_units]), name="hid_b")
        sm_w = tf.Variable(tf.truncated_normal([args.hidden_units, 10], stddev=1.0 / np.sqrt(args.hidden_units),
                                               seed=2), name="sm_w")
        sm_b = tf.Variable(tf.zeros([10]), name="sm_b")
        hid = tf.nn.relu(tf.matmul(x, hid_w) + hid_b)
        logits = tf.matmul(hid, sm_w) + sm_b
        loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits_v2(labels=y_, logits=logits))
        opt = tf.train.GradientDescentOptimizer(args.learning_rate)
        train_op = opt.minimize(loss, global_step=global_step)
        correct = tf.equal(tf.argmax(logits, 1), tf.argmax(y_, 1))
        accuracy = tf.reduce_mean(tf.cast(correct, tf.float32))
    init_op = tf.global_variables_initializer()
    report_op = report_uninitialized()

    config = tf.ConfigProto(device_filters=["/job:ps", worker_device])
    with tf.Session(server.target, config=config) as sess:
        if is_chief:
            sess.run(init_op)
            print("chief: variables initialised", flush=True)
        else:
            while uninitialized(sess, report_op):
                print(f"{job_name} {task_index}: waiting for the chief to initialise the variables", flush=True)
                time.sleep(0.2)
        start = time.time()
        step = 0
        for local_step in range(args.train_steps):
            xs, ys = mnist.train.next_batch(args.batch_size)
            _, step = sess.run([train_op, global_step], {x: xs, y_: ys})
            if local_step % 200 == 0:
                print(f"{job_name} {task_index}: local step {local_step}, global step {step}", flush=True)
        elapsed = time.time() - start
        print(f"{job_name} {task_index}: {args.train_steps} steps in {elapsed:.2f} s "
              f"({args.train_steps / elapsed:.1f} steps/s), global step {step}", flush=True)
        if is_chief:
            deadline = time.time() + args.wait_secs
            while sess.run(global_step) < num_workers * args.train_steps and time.time() < deadline:
                time.sleep(0.1)
            acc = sess.run(accuracy, {x: mnist.test.images, y_: mnist.test.labels})
            print(f"global_step={sess.run(global_step)} test_accuracy={acc:.4f}", flush=True)
            print(json.dumps({"test_accuracy": float(acc), "global_step": int(sess.run(global_step))}), flush=True)


if __name__ == "__main__":
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    main()
