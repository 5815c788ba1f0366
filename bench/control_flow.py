"""Cost of tf.while_loop: N matmul steps in a loop vs the same steps unrolled straight-line vs numpy by hand.

    OPENBLAS_NUM_THREADS=1 python bench/control_flow.py [--steps 50] [--size 64] [--seconds 1] [--repeats 5]

Each contender computes y <- tanh(y @ w) `--steps` times on a `--size` square
matrix, forward only and forward + gradient w.r.t. w (tf.gradients through the
While op vs through the unrolled graph vs hand-written numpy backprop). The
contenders take turns within each of `--repeats` rounds of about `--seconds`
each; the script prints the median absolute runs/s, the median ratio to
numpy taken within each round, and the machine. The three results are checked
to agree before timing.
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


def build(kind: str, steps: int, x0: np.ndarray, w0: np.ndarray, grad: bool):
    """(session, run()) computing the loop's result (and d sum(y) / dw when `grad`) in tensorfleet."""
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, x0.shape, name="x")
        w = tf.constant(w0, name="w")
        if kind == "while":
            y = tf.while_loop(lambda i, y: i < steps, lambda i, y: (i + 1, tf.tanh(tf.matmul(y, w))), [0, x])[1]
        else:
            y = x
            for _ in range(steps):
                y = tf.tanh(tf.matmul(y, w))
        fetch = tf.gradients(tf.reduce_sum(y), w)[0] if grad else y
    sess = tf.Session(graph=g)
    return sess, (lambda: sess.run(fetch, {x: x0}))


def numpy_run(steps: int, x0: np.ndarray, w0: np.ndarray, grad: bool):
    def run():
        ys = [x0]
        for _ in range(steps):
            ys.append(np.tanh(ys[-1] @ w0))
        if not grad:
            return ys[-1]
        dy, dw = np.ones_like(ys[-1]), np.zeros_like(w0)
        for k in range(steps, 0, -1):
            dz = dy * (1 - ys[k] ** 2)
            dw += ys[k - 1].T @ dz
            dy = dz @ w0.T
        return dw
    return run


def rate(fn, seconds: float) -> float:
    fn()
    n, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        fn()
        n += 1
    return n / (time.perf_counter() - t0)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=50)
    ap.add_argument("--size", type=int, default=64)
    ap.add_argument("--seconds", type=float, default=1.0)
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args(argv)
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cpus, "
          f"python {platform.python_version()}, numpy {np.__version__}, "
          f"OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS')}")
    rs = np.random.RandomState(0)
    x0 = rs.randn(args.size, args.size).astype(np.float32)
    w0 = (rs.randn(args.size, args.size) / np.sqrt(args.size)).astype(np.float32)
    for grad in (False, True):
        runs = {"numpy": numpy_run(args.steps, x0, w0, grad)}
        sessions = []
        for kind in ("while", "unrolled"):
            sess, fn = build(kind, args.steps, x0, w0, grad)
            sessions.append(sess)
            runs[f"tf {kind}"] = fn
        ref = runs["numpy"]()
        for name, fn in runs.items():
            np.testing.assert_allclose(fn(), ref, rtol=2e-3, atol=2e-3 * float(np.abs(ref).max()), err_msg=name)
        rates: dict = {k: [] for k in runs}
        ratios: dict = {k: [] for k in runs}
        for _ in range(args.repeats):
            r = {k: rate(fn, args.seconds / len(runs)) for k, fn in runs.items()}
            for k in runs:
                rates[k].append(r[k])
                ratios[k].append(r[k] / r["numpy"])
        what = "forward + grad" if grad else "forward"
        print(f"-- {what}: {args.steps} steps of tanh(y @ w), {args.size}x{args.size} float32")
        for k in runs:
            print(f"{k:12s} {statistics.median(rates[k]):9.1f} runs/s  "
                  f"{1e6 / statistics.median(rates[k]) / args.steps:8.1f} us/step  "
                  f"x{statistics.median(ratios[k]):.2f} of numpy's rate", flush=True)
        w, u = statistics.median(rates["tf while"]), statistics.median(rates["tf unrolled"])
        print(f"while_loop / unrolled rate: {w / u:.2f}")
        for s in sessions:
            s.close()


if __name__ == "__main__":
    sys.exit(main())
