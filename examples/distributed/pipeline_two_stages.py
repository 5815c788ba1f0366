"""Pipeline parallelism over two tasks: stage 1 of a model on one task, stage 2 on another,
micro-batches overlapping (stage 1 of a later micro-batch runs while stage 2 of micro-batch i does).

    python examples/distributed/pipeline_two_stages.py [--micro-batches 8] [--hidden 1024]

Starts two worker tasks on 127.0.0.1 itself (or joins `--hosts a:p,b:p`), pins the first
layer to /job:worker/task:0 and the second to /job:worker/task:1, and drives the stages
from two threads with a bounded queue between them, like TF1's staging areas. It prints
each stage's interval per micro-batch, how many stage-2 runs overlapped a stage-1 run of
a later micro-batch, the pipelined time against running the micro-batches one after the
other, and checks the result against numpy.
"""
import argparse
import json
import os
import queue
import socket
import subprocess
import sys
import threading
import time

import numpy as np

import tensorfleet as tf

TASK_MAIN = """
import json, sys, threading
import tensorfleet as tf
server = tf.train.Server(tf.train.ClusterSpec(json.loads(sys.argv[1])), job_name="worker", task_index=int(sys.argv[2]))
threading.Thread(target=lambda: (sys.stdin.read(), server.stop()), daemon=True).start()
print("READY", flush=True)
server.join()
"""


def _free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def start_tasks(cluster):
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1")
    procs = []
    for i in range(2):
        p = subprocess.Popen([sys.executable, "-c", TASK_MAIN, json.dumps(cluster), str(i)], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True, env=env)
        if not p.stdout.readline().startswith("READY"):
            raise RuntimeError("a task did not start")
        procs.append(p)
    return procs


def build(hidden, batch, seed=0):
    rng = np.random.RandomState(seed)
    w1 = (rng.randn(hidden, hidden) / np.sqrt(hidden)).astype(np.float32)
    w2 = (rng.randn(hidden, 10) / np.sqrt(hidden)).astype(np.float32)
    x = tf.placeholder(tf.float32, [batch, hidden], name="x")
    with tf.device("/job:worker/task:0"):
        h = tf.nn.relu(tf.matmul(tf.nn.relu(tf.matmul(x, tf.constant(w1))), tf.constant(w1)), name="stage1")
    h_in = tf.placeholder(tf.float32, [batch, hidden], name="h_in")
    with tf.device("/job:worker/task:1"):
        hh = tf.nn.relu(tf.matmul(tf.nn.relu(tf.matmul(h_in, tf.constant(w1))), tf.constant(w1)))
        logits = tf.matmul(hh, tf.constant(w2), name="stage2")
    return x, h, h_in, logits, (w1, w2)


def reference(xs, w1, w2):
    relu = lambda a: np.maximum(a, 0)  # noqa: E731
    h = relu(relu(xs @ w1) @ w1)
    return relu(relu(h @ w1) @ w1) @ w2


def run_pipelined(sess, x, h, h_in, logits, batches):
    handoff: queue.Queue = queue.Queue(maxsize=2)
    intervals: dict = {}
    results: dict = {}
    errors: list = []

    def stage1():
        try:
            for i, xb in enumerate(batches):
                t = time.perf_counter()
                value = sess.run(h, {x: xb})
                intervals[(1, i)] = (t, time.perf_counter())
                handoff.put((i, value))
        except Exception as e:  # noqa: BLE001 - reported by the caller
            errors.append(e)
        finally:
            handoff.put(None)

    def stage2():
        while True:
            item = handoff.get()
            if item is None:
                return
            i, value = item
            t = time.perf_counter()
            results[i] = sess.run(logits, {h_in: value})
            intervals[(2, i)] = (t, time.perf_counter())

    threads = [threading.Thread(target=stage1), threading.Thread(target=stage2)]
    start = time.perf_counter()
    for th in threads:
        th.start()
    for th in threads:
        th.join(600)
    if errors:
        raise errors[0]
    return time.perf_counter() - start, intervals, [results[i] for i in range(len(batches))]


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--hosts", default="")
    p.add_argument("--micro-batches", type=int, default=8)
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--hidden", type=int, default=1024)
    args = p.parse_args(argv)
    hosts = args.hosts.split(",") if args.hosts else [f"127.0.0.1:{_free_port()}", f"127.0.0.1:{_free_port()}"]
    cluster = {"worker": hosts, "client": [f"127.0.0.1:{_free_port()}"]}
    procs = [] if args.hosts else start_tasks({"worker": hosts})
    try:
        client = tf.train.Server(cluster, job_name="client", task_index=0)
        x, h, h_in, logits, (w1, w2) = build(args.hidden, args.batch)
        rng = np.random.RandomState(1)
        batches = [rng.randn(args.batch, args.hidden).astype(np.float32) for _ in range(args.micro_batches)]
        with tf.Session(client.target) as sess:
            sess.run(logits, {h_in: sess.run(h, {x: batches[0]})})  # warm up: partitions registered
            start = time.perf_counter()
            sequential = [sess.run(logits, {h_in: sess.run(h, {x: xb})}) for xb in batches]
            seq_time = time.perf_counter() - start
            pipe_time, intervals, piped = run_pipelined(sess, x, h, h_in, logits, batches)
        client.stop()
    finally:
        for proc in procs:
            proc.stdin.close()
            proc.wait(10)
    t0 = min(a for a, _ in intervals.values())
    for i in range(args.micro_batches):
        a1, b1 = intervals[(1, i)]
        a2, b2 = intervals[(2, i)]
        print(f"micro-batch {i}: stage 1 (task 0) {1e3 * (a1 - t0):7.1f}-{1e3 * (b1 - t0):7.1f} ms   "
              f"stage 2 (task 1) {1e3 * (a2 - t0):7.1f}-{1e3 * (b2 - t0):7.1f} ms")
    # pipelining: stage 2 of micro-batch i in flight while stage 1 of a later micro-batch is (how far stage 1
    # runs ahead, up to the queue's bound, depends on how the machine schedules the two threads)
    overlapped = sum(1 for i in range(args.micro_batches - 1)
                     if any(intervals[(2, i)][0] < intervals[(1, j)][1] and intervals[(1, j)][0] < intervals[(2, i)][1]
                            for j in range(i + 1, args.micro_batches)))
    for out, xb in zip(piped, batches, strict=True):
        np.testing.assert_allclose(out, reference(xb, w1, w2), rtol=2e-3, atol=2e-3)
    for a, b in zip(piped, sequential, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)
    print(f"overlapped: stage 2 of micro-batch i ran while stage 1 of a later one ran for {overlapped} of "
          f"{args.micro_batches - 1} pairs")
    print(f"pipelined {pipe_time * 1e3:.0f} ms vs one after the other {seq_time * 1e3:.0f} ms "
          f"({seq_time / pipe_time:.2f}x); results match numpy")
    print(json.dumps({"overlapped": overlapped, "pipelined_s": pipe_time, "sequential_s": seq_time}))


if __name__ == "__main__":
    main()
