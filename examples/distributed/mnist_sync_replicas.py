"""Distributed MNIST training in TF1's Supervisor style, sync or async, with only the import changed.

The shape of TensorFlow 1.x's own `mnist_replica.py` (tools/dist_test): a 784-H-10 MLP
under `tf.train.replica_device_setter`, `tf.train.Supervisor` preparing the session
(the chief initialises, the others wait), and with `--sync_replicas` a
`tf.train.SyncReplicasOptimizer` whose chief runs `get_chief_queue_runner()` after
`get_init_tokens_op()`; workers use `local_step_init_op`, the chief `chief_init_op`, both
`ready_for_local_init_op`.

    python examples/distributed/mnist_sync_replicas.py --job_name=ps --task_index=0 \\
        --ps_hosts=127.0.0.1:2222 --worker_hosts=127.0.0.1:2223,127.0.0.1:2224
    python examples/distributed/mnist_sync_replicas.py --job_name=worker --task_index=0 --sync_replicas ...
    python examples/distributed/mnist_sync_replicas.py --job_name=worker --task_index=1 --sync_replicas ...

Each worker stops once the global step reaches `--train_steps`; the chief then prints a
JSON line with the test accuracy, the global step, its global steps/s and (sync) the
stale gradients dropped. The ps serves until killed (as TF's).
"""
import argparse
import json
import math
import os
import tempfile
import time

import tensorfleet as tf
from tensorfleet.datasets import read_data_sets

IMAGE_PIXELS = 28


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--ps_hosts", default="")
    p.add_argument("--worker_hosts", default="")
    p.add_argument("--job_name", default="")
    p.add_argument("--task_index", type=int, default=0)
    p.add_argument("--sync_replicas", action="store_true")
    p.add_argument("--replicas_to_aggregate", type=int, default=None, help="default: the number of workers")
    p.add_argument("--hidden_units", type=int, default=256)
    p.add_argument("--train_steps", type=int, default=500, help="global steps")
    p.add_argument("--batch_size", type=int, default=100)
    p.add_argument("--learning_rate", type=float, default=0.5)
    p.add_argument("--logdir", default="", help="Supervisor logdir (default: a fresh temporary directory)")
    return p.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    ps_spec, worker_spec = args.ps_hosts.split(","), args.worker_hosts.split(",")
    num_workers = len(worker_spec)
    cluster = tf.train.ClusterSpec({"ps": ps_spec, "worker": worker_spec})
    server = tf.train.Server(cluster, job_name=args.job_name, task_index=args.task_index)
    if args.job_name == "ps":
        print(f"ps {args.task_index} serving at {server.target}", flush=True)
        server.join()
        return
    is_chief = args.task_index == 0
    mnist = read_data_sets("MNIST_data", one_hot=True, seed=args.task_index)

    worker_device = f"/job:worker/task:{args.task_index}/cpu:0"
    with tf.device(tf.train.replica_device_setter(worker_device=worker_device, ps_device="/job:ps/cpu:0",
                                                  cluster=cluster)):
        global_step = tf.Variable(0, name="global_step", trainable=False)
        hid_w = tf.Variable(tf.truncated_normal([IMAGE_PIXELS * IMAGE_PIXELS, args.hidden_units],
                                                stddev=1.0 / IMAGE_PIXELS, seed=1), name="hid_w")
        hid_b = tf.Variable(tf.zeros([args.hidden_units]), name="hid_b")
        sm_w = tf.Variable(tf.truncated_normal([args.hidden_units, 10], stddev=1.0 / math.sqrt(args.hidden_units),
                                               seed=2), name="sm_w")
        sm_b = tf.Variable(tf.zeros([10]), name="sm_b")
        x = tf.placeholder(tf.float32, [None, IMAGE_PIXELS * IMAGE_PIXELS])
        y_ = tf.placeholder(tf.float32, [None, 10])
        hid = tf.nn.relu(tf.nn.xw_plus_b(x, hid_w, hid_b))
        logits = tf.nn.xw_plus_b(hid, sm_w, sm_b)
        cross_entropy = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits_v2(labels=y_, logits=logits))
        accuracy = tf.reduce_mean(tf.cast(tf.equal(tf.argmax(logits, 1), tf.argmax(y_, 1)), tf.float32))

        opt = tf.train.GradientDescentOptimizer(args.learning_rate)
        if args.sync_replicas:
            replicas_to_aggregate = args.replicas_to_aggregate or num_workers
            opt = tf.train.SyncReplicasOptimizer(opt, replicas_to_aggregate=replicas_to_aggregate,
                                                 total_num_replicas=num_workers, name="mnist_sync_replicas")
        train_step = opt.minimize(cross_entropy, global_step=global_step)

        if args.sync_replicas:
            local_init_op = opt.chief_init_op if is_chief else opt.local_step_init_op
            ready_for_local_init_op = opt.ready_for_local_init_op
            chief_queue_runner = opt.get_chief_queue_runner()
            sync_init_op = opt.get_init_tokens_op()
            stale = opt.stale_gradients()
        init_op = tf.global_variables_initializer()
        train_dir = args.logdir or tempfile.mkdtemp()
        if args.sync_replicas:
            sv = tf.train.Supervisor(is_chief=is_chief, logdir=train_dir, init_op=init_op,
                                     local_init_op=local_init_op, ready_for_local_init_op=ready_for_local_init_op,
                                     recovery_wait_secs=1, global_step=global_step)
        else:
            sv = tf.train.Supervisor(is_chief=is_chief, logdir=train_dir, init_op=init_op, recovery_wait_secs=1,
                                     global_step=global_step)
        sess_config = tf.ConfigProto(allow_soft_placement=True, log_device_placement=False,
                                     device_filters=["/job:ps", f"/job:worker/task:{args.task_index}"])
        if is_chief:
            print(f"Worker {args.task_index}: Initializing session...", flush=True)
        else:
            print(f"Worker {args.task_index}: Waiting for session to be initialized...", flush=True)
        sess = sv.prepare_or_wait_for_session(server.target, config=sess_config)
        print(f"Worker {args.task_index}: Session initialization complete.", flush=True)
        if args.sync_replicas and is_chief:
            sess.run(sync_init_op)
            sv.start_queue_runners(sess, [chief_queue_runner])

        time_begin = time.time()
        local_step, step, first_step = 0, 0, None
        while True:
            batch_xs, batch_ys = mnist.train.next_batch(args.batch_size)
            _, step = sess.run([train_step, global_step], feed_dict={x: batch_xs, y_: batch_ys})
            first_step = step if first_step is None else first_step
            local_step += 1
            if local_step % 100 == 0:
                print(f"Worker {args.task_index}: training step {local_step} done (global step: {step})",
                      flush=True)
            if step >= args.train_steps:
                break
        elapsed = time.time() - time_begin
        print(f"Training ends @ {time.time():f}; elapsed time: {elapsed:f} s", flush=True)
        if is_chief:
            acc = sess.run(accuracy, feed_dict={x: mnist.test.images, y_: mnist.test.labels})
            result = {"test_accuracy": float(acc), "global_step": int(sess.run(global_step)),
                      "local_steps": local_step, "global_steps_per_s": (step - first_step) / elapsed,
                      "sync": bool(args.sync_replicas)}
            if args.sync_replicas:
                result["stale_gradients"] = int(sess.run(stale))
            sv.stop()
            print(json.dumps(result), flush=True)
        else:
            print(json.dumps({"local_steps": local_step, "global_step": int(step)}), flush=True)


if __name__ == "__main__":
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    main()
