"""Embedding training on a parameter server: sparse (IndexedSlices) gradients vs the dense form, same run.

    OPENBLAS_NUM_THREADS=1 python bench/embedding_training.py [--rounds 3] [--steps 30] [--vocab 200000] [--dim 64]

Two processes on 127.0.0.1: a ps task holding an embedding table (`--vocab` x `--dim` float32) and this
process, a worker whose in-process master runs the steps: look up a batch of ids, a small dense layer, a
softmax loss, MomentumOptimizer. The worker's gradient for the table is
- sparse (this runtime's default, as TF's): an IndexedSlices of the looked-up rows; only those rows go to
  the ps, and the ps updates only them (TF's SparseApplyMomentum);
- dense (the baseline, what the runtime did before IndexedSlices): the same gradient converted to a dense
  tensor of the whole table, sent and applied whole.
Rounds alternate the two graphs in one session pair. It prints steps/s per round, the median ratio, the
bytes per step that cross to the ps, and the machine.
"""
from __future__ import annotations

import os
import sys

for _v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import socket  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PS_MAIN = """
import json, sys, threading
import tensorfleet as tf
server = tf.train.Server(tf.train.ClusterSpec(json.loads(sys.argv[1])), job_name="ps", task_index=0)
threading.Thread(target=lambda: (sys.stdin.read(), server.stop()), daemon=True).start()
print("READY", flush=True)
server.join()
"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _env() -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([os.path.join(ROOT, "trainer"), env.get("PYTHONPATH", "")])
    return env


def _build(tf, vocab, dim, batch, dense):
    """The model's train op and loss; `dense` converts the table's gradient to a dense tensor first."""
    ids = tf.placeholder(tf.int64, [batch], name="ids")
    labels = tf.placeholder(tf.int64, [batch], name="labels")
    with tf.device("/job:ps/task:0"):
        table = tf.get_variable("table", [vocab, dim], initializer=tf.random_normal_initializer(0.0, 0.05, seed=1))
    with tf.device("/job:worker/task:0"):
        w = tf.get_variable("w", [dim, 10], initializer=tf.zeros_initializer())
        logits = tf.matmul(tf.nn.embedding_lookup(table, ids), w)
        loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits))
        opt = tf.train.MomentumOptimizer(0.1, 0.9)
        grads = opt.compute_gradients(loss)
        if dense:
            grads = [(tf.convert_to_tensor(g), v) for g, v in grads]
        kinds = {v.op.name: type(g).__name__ for g, v in grads}
        train = opt.apply_gradients(grads)
    return ids, labels, train, loss, kinds


def _round(tf, server, graph, ops, steps, batch, vocab, rng):
    ids, labels, train, loss, _ = ops
    feeds = [{ids: rng.integers(0, vocab, batch), labels: rng.integers(0, 10, batch)} for _ in range(steps + 3)]
    with tf.Session(server.target, graph=graph) as sess:
        for f in feeds[:3]:  # warm: plans, connections
            sess.run(train, f)
        t0 = time.perf_counter()
        for f in feeds[3:]:
            sess.run(train, f)
        elapsed = time.perf_counter() - t0
        final = sess.run(loss, feeds[0])
    return steps / elapsed, float(final)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--vocab", type=int, default=200_000)
    parser.add_argument("--dim", type=int, default=64)
    parser.add_argument("--batch", type=int, default=256)
    args = parser.parse_args(argv)
    sys.path.insert(0, os.path.join(ROOT, "trainer"))
    import tensorfleet as tf

    cluster = {"ps": [f"127.0.0.1:{_free_port()}"], "worker": [f"127.0.0.1:{_free_port()}"]}
    ps = subprocess.Popen([sys.executable, "-c", PS_MAIN, json.dumps(cluster)], stdin=subprocess.PIPE,
                          stdout=subprocess.PIPE, text=True, env=_env())
    try:
        if not ps.stdout.readline().startswith("READY"):
            raise SystemExit("the ps task did not start")
        server = tf.train.Server(cluster, job_name="worker", task_index=0)
        graphs = {}
        for mode in ("sparse", "dense"):
            g = tf.Graph()
            with g.as_default():
                ops = _build(tf, args.vocab, args.dim, args.batch, mode == "dense")
                init = tf.global_variables_initializer()
            graphs[mode] = (g, ops, init)
            print(f"{mode}: gradient of the table is {ops[4]['table']}")
        rng = np.random.default_rng(0)
        rates: dict = {"sparse": [], "dense": []}
        for r in range(args.rounds):
            for mode in ("sparse", "dense") if r % 2 == 0 else ("dense", "sparse"):
                g, ops, init = graphs[mode]
                with tf.Session(server.target, graph=g) as sess:
                    sess.run(init)
                rate, final = _round(tf, server, g, ops, args.steps, args.batch, args.vocab, rng)
                rates[mode].append(rate)
                print(f"round {r + 1} {mode:6s} {rate:8.2f} steps/s (loss {final:.4f})", flush=True)
        server.stop()
    finally:
        ps.stdin.close()
        ps.wait(10)
    sparse, dense = statistics.median(rates["sparse"]), statistics.median(rates["dense"])
    table_mb = args.vocab * args.dim * 4 / 1e6
    rows_mb = args.batch * args.dim * 4 / 1e6
    print(f"machine: {platform.machine()} {os.cpu_count()} cpus, CPython {platform.python_version()}, "
          f"load {os.getloadavg()[0]:.2f}; table {args.vocab}x{args.dim} float32 ({table_mb:.1f} MB), batch "
          f"{args.batch}")
    print(f"to the ps per step: sparse {rows_mb:.3f} MB of rows (+ ids), dense {table_mb:.1f} MB")
    print(f"median steps/s: sparse {sparse:.2f}, dense {dense:.2f}: ratio {sparse / dense:.1f}x "
          f"(rounds sparse {', '.join(f'{x:.1f}' for x in rates['sparse'])}; dense "
          f"{', '.join(f'{x:.1f}' for x in rates['dense'])})")


if __name__ == "__main__":
    main()
