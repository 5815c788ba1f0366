"""Model parallelism, TF1 style: one MNIST MLP split across tasks with `tf.device`.

    # under TF_CONFIG (deploy/examples/05-model-parallel.yaml: a chief and 2 workers), or by hand:
    python examples/distributed/model_parallel.py --job_name=worker --task_index=0 \\
        --chief_host=127.0.0.1:2222 --worker_hosts=127.0.0.1:2223,127.0.0.1:2224   # (and task 1, then the chief)

Each worker task only serves (`server.join()`): it holds one layer's variables and runs that layer's
math. The chief builds the graph once and places it by hand, layer by layer:

    /job:worker/task:0   hidden layer 1 (784 -> 256): its weights and its forward and backward math
    /job:worker/task:1   hidden layer 2 (256 -> 128)
    /job:chief/task:0    the softmax layer, the loss, the global step; it feeds the batches

so every training step sends activations forward from task to task and gradients back (between-task
transfers the runtime does for each `Session.run`), and every variable is updated where it lives. The
chief prints the test accuracy at the end (`test_accuracy=0.9...`) and exits 0; the job succeeds with
the chief, and the default cleanPodPolicy removes the workers, which serve until then.
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
    p.add_argument("--chief_host", default="")
    p.add_argument("--worker_hosts", default="")
    p.add_argument("--job_name", default="")
    p.add_argument("--task_index", type=int, default=0)
    p.add_argument("--steps", type=int, default=1000)
    p.add_argument("--batch_size", type=int, default=100)
    p.add_argument("--learning_rate", type=float, default=0.3)
    p.add_argument("--log_every", type=int, default=100)
    return p.parse_args(argv)


def cluster_and_task(args):
    if args.chief_host or args.worker_hosts:
        cluster = {"chief": [args.chief_host], "worker": args.worker_hosts.split(",")}
        return tf.train.ClusterSpec(cluster), args.job_name, args.task_index
    resolver = tf.distribute.cluster_resolver.TFConfigClusterResolver()
    return resolver.cluster_spec(), resolver.task_type, resolver.task_id


def dense(x, units, name, seed, activation=None):
    """A dense layer whose variables live on the current device (the caller's `tf.device`)."""
    fan_in = int(x.get_shape()[1])
    w = tf.Variable(tf.truncated_normal([fan_in, units], stddev=1.0 / np.sqrt(fan_in), seed=seed), name=name + "_w")
    b = tf.Variable(tf.zeros([units]), name=name + "_b")
    out = tf.matmul(x, w) + b
    return activation(out) if activation else out


def build(cluster, learning_rate):
    """The model, split over the tasks: one hidden layer per worker task, the rest on the chief."""
    workers = cluster.num_tasks("worker")
    layers = [256, 128][:max(workers, 1)]
    with tf.device("/job:chief/task:0"):
        global_step = tf.train.get_or_create_global_step()
        x = tf.placeholder(tf.float32, [None, 784], name="x")
        labels = tf.placeholder(tf.int64, [None], name="labels")
    h = x
    for i, units in enumerate(layers):
        with tf.device(f"/job:worker/task:{i % workers}"):
            h = dense(h, units, f"hidden{i + 1}", seed=i + 1, activation=tf.nn.relu)
    with tf.device("/job:chief/task:0"):
        logits = dense(h, 10, "softmax", seed=9)
        loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits))
        accuracy = tf.reduce_mean(tf.cast(tf.equal(tf.argmax(logits, 1), labels), tf.float32))
        # gradients are placed with the ops they differentiate: each layer's backward math runs on its task
        train_op = tf.train.GradientDescentOptimizer(learning_rate).minimize(
            loss, global_step=global_step, colocate_gradients_with_ops=True)
    return x, labels, loss, accuracy, train_op, global_step


def main(argv=None):
    args = parse_args(argv)
    cluster, job_name, task_index = cluster_and_task(args)
    server = tf.train.Server(cluster, job_name=job_name, task_index=task_index)
    if job_name != "chief":
        print(f"{job_name} {task_index}: serving my layer at {server.target}", flush=True)
        server.join()
        return
    mnist = read_data_sets("MNIST_data", one_hot=False, seed=0)
    x, labels, loss, accuracy, train_op, global_step = build(cluster, args.learning_rate)
    placed = {v.op.name: v.device for v in tf.global_variables()}
    print("placement: " + ", ".join(f"{name} on {device}" for name, device in sorted(placed.items())), flush=True)
    with tf.Session(server.target) as sess:
        sess.run(tf.global_variables_initializer())
        start, step = time.time(), 0
        while step < args.steps:
            xs, ys = mnist.train.next_batch(args.batch_size)
            _, value, step = sess.run([train_op, loss, global_step], {x: xs, labels: ys})
            if step % args.log_every == 0:
                print(f"step {step}: loss {value:.4f} ({step / (time.time() - start):.1f} steps/s)", flush=True)
        acc = sess.run(accuracy, {x: mnist.test.images, labels: mnist.test.labels})
        print(f"global_step={step} test_accuracy={acc:.4f}", flush=True)
        print(json.dumps({"test_accuracy": float(acc), "global_step": int(step), "placement": placed}), flush=True)


if __name__ == "__main__":
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    main()
