"""dynamic_rnn's two time loops on the mnist_lstm shape: unrolled (static time) vs tf.while_loop (unknown time).

    OPENBLAS_NUM_THREADS=1 python bench/rnn_time_loop.py [--batch 128] [--steps 28] [--depth 28] [--units 128]
                                                         [--seconds 2] [--repeats 3]

Both graphs are `tf.nn.dynamic_rnn(BasicLSTMCell(units), x, dtype=tf.float32)` + a dense softmax layer on the
last output + cross-entropy, with the same weights; one run is forward + backward (the gradients of every
trainable variable are fetched; `--forward-only`: the loss only). `x` is a placeholder [None, steps, depth]
(static time: the unrolled loop) or [None, None, depth] (unknown time: tf.while_loop + TensorArray). The
contenders take turns within each of `--repeats` rounds; the script prints the median absolute runs/s, the
median within-round ratio, and the machine. The two graphs' losses and gradients are checked to agree first.
"""
from __future__ import annotations

import os
import sys

for _v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import argparse  # noqa: E402
import platform  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

import tensorfleet as tf  # noqa: E402


def build(time_dim, args, weights=None):
    """(session, run(), weights) for one contender; `weights` (name -> array) makes both share values."""
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [None, time_dim, args.depth], name="x")
        y = tf.placeholder(tf.float32, [None, 10], name="y")
        outputs, _ = tf.nn.dynamic_rnn(tf.nn.rnn_cell.BasicLSTMCell(args.units), x, dtype=tf.float32)
        logits = tf.layers.dense(outputs[:, -1], 10)
        loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits_v2(labels=y, logits=logits))
        variables = tf.trainable_variables()
        grads = tf.gradients(loss, variables)
        whiles = sum(op.type == "While" for op in g.get_operations())
        sess = tf.Session(graph=g)
        sess.run(tf.global_variables_initializer())
        if weights is not None:
            for v in variables:
                v.load(weights[v.op.name], sess)
        weights = dict(zip([v.op.name for v in variables], sess.run(variables)))
    rs = np.random.RandomState(1)
    feed = {x: rs.rand(args.batch, args.steps, args.depth).astype(np.float32),
            y: np.eye(10, dtype=np.float32)[rs.randint(0, 10, args.batch)]}
    if args.forward_only:
        return sess, (lambda: sess.run([loss], feed)), weights, whiles
    return sess, (lambda: sess.run([loss] + grads, feed)), weights, whiles


def rate(fn, seconds: float) -> float:
    fn()
    n, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        fn()
        n += 1
    return n / (time.perf_counter() - t0)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--batch", type=int, default=128)
    ap.add_argument("--steps", type=int, default=28)
    ap.add_argument("--depth", type=int, default=28)
    ap.add_argument("--units", type=int, default=128)
    ap.add_argument("--seconds", type=float, default=2.0)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--forward-only", action="store_true", help="fetch the loss only (no gradients)")
    args = ap.parse_args(argv)
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cpus, "
          f"python {platform.python_version()}, numpy {np.__version__}, "
          f"OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS')}, load average {os.getloadavg()}")
    s_un, run_un, weights, w_un = build(args.steps, args)
    s_wl, run_wl, _, w_wl = build(None, args, weights)
    assert (w_un, w_wl) == (0, 1), (w_un, w_wl)
    for a, b in zip(run_un(), run_wl(), strict=True):
        np.testing.assert_allclose(b, a, rtol=1e-3, atol=1e-5)
    runs = {"unrolled (static time)": run_un, "while_loop (unknown time)": run_wl}
    rates: dict = {k: [] for k in runs}
    ratios = []
    for _ in range(args.repeats):
        r = {k: rate(fn, args.seconds) for k, fn in runs.items()}
        for k in runs:
            rates[k].append(r[k])
        ratios.append(r["while_loop (unknown time)"] / r["unrolled (static time)"])
    what = "forward" if args.forward_only else "forward + backward"
    print(f"-- {what}: dynamic_rnn(BasicLSTMCell({args.units})) over {args.steps} steps, "
          f"batch {args.batch}, depth {args.depth}, float32")
    for k in runs:
        med = statistics.median(rates[k])
        print(f"{k:28s} {med:7.2f} runs/s  {1e3 / med:8.1f} ms/run")
    print(f"while_loop / unrolled rate (median of per-round ratios): {statistics.median(ratios):.2f}; "
          f"load average after {os.getloadavg()}")
    s_un.close()
    s_wl.close()


if __name__ == "__main__":
    sys.exit(main())
