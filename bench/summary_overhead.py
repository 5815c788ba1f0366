"""What TensorBoard summaries cost a training step: a 784-256-10 MLP step (batch 100, SGD) alone, against
the same step also fetching the loss as a scalar summary, or a merged summary (the loss scalar plus a
histogram of each of the 4 variables, 203,530 values) every step or every 10th step, each handed to a
FileWriter.

The contenders take turns in the same run (`step_timing.interleaved_rates`), so the ratios compare like with
like on this machine; absolute steps/s and the thread settings are printed beside them.

    OPENBLAS_NUM_THREADS=1 PYTHONPATH=trainer python bench/summary_overhead.py [--seconds 1] [--rounds 5]
"""
from __future__ import annotations

import argparse
import os
import platform
import sys
import tempfile
import time

for _v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from step_timing import format_thread_info, interleaved_rates, ratio_per_round  # noqa: E402

import tensorfleet as tf  # noqa: E402


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=1.0)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args(argv)

    rng = np.random.RandomState(0)
    x = tf.placeholder(tf.float32, [None, 784])
    y = tf.placeholder(tf.int64, [None])
    w1 = tf.Variable(rng.normal(0, 0.05, (784, 256)).astype(np.float32), name="w1")
    b1 = tf.Variable(np.zeros(256, np.float32), name="b1")
    w2 = tf.Variable(rng.normal(0, 0.05, (256, 10)).astype(np.float32), name="w2")
    b2 = tf.Variable(np.zeros(10, np.float32), name="b2")
    logits = tf.matmul(tf.nn.relu(tf.matmul(x, w1) + b1), w2) + b2
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
    train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
    loss_summary = tf.summary.scalar("loss", loss)
    for v in (w1, b1, w2, b2):
        tf.summary.histogram(v.op.name + "_hist", v)
    merged = tf.summary.merge_all()
    batches = [(rng.rand(100, 784).astype(np.float32), rng.randint(0, 10, 100).astype(np.int64)) for _ in range(10)]

    with tempfile.TemporaryDirectory() as logdir, tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        writer = tf.summary.FileWriter(logdir)
        counter = {"i": 0}

        def feed():
            counter["i"] += 1
            bx, by = batches[counter["i"] % len(batches)]
            return {x: bx, y: by}

        def step():
            sess.run(train, feed())

        def step_with_summary():
            blob, _ = sess.run([merged, train], feed())
            writer.add_summary(blob, counter["i"])

        def step_with_loss_summary():
            blob, _ = sess.run([loss_summary, train], feed())
            writer.add_summary(blob, counter["i"])

        def step_with_summary_every_10():
            if counter["i"] % 10 == 0:
                step_with_summary()
            else:
                step()

        t0 = time.perf_counter()
        rates = interleaved_rates({"step": step, "loss scalar every step": step_with_loss_summary,
                                   "summary every step": step_with_summary,
                                   "summary every 10th": step_with_summary_every_10},
                                  seconds=args.seconds, rounds=args.rounds)
        writer.close()
        elapsed = time.perf_counter() - t0
        print(f"machine: {platform.machine()} {os.cpu_count()} cpus, {platform.python_implementation()} "
              f"{platform.python_version()}; {format_thread_info()}")
        for name, r in rates.items():
            print(f"{name:>20}: {np.median(r):8.1f} steps/s (median of {len(r)} rounds)")
        for name in ("loss scalar every step", "summary every step", "summary every 10th"):
            print(f"{name:>20}: {ratio_per_round(rates, name, 'step'):.3f} x the plain step's rate")
        print(f"(ran {elapsed:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
