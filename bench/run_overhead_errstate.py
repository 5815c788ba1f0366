"""Cost of the kernels' floating-point state around each Session.run: numpy's warnings off (issue 9) and,
since 2026-11-29, denormals flushed to zero as TF's kernels run (kernels/fp_state.py).

    OPENBLAS_NUM_THREADS=1 python bench/run_overhead_errstate.py [--calls 20000] [--rounds 7]

Times a trivial Session.run (two scalar feeds, one Add) three ways, taking turns within each round:
as shipped (kernels/fp_state: numpy's context variable set directly, and the MXCSR's DAZ/FTZ bits set and
restored), with np.errstate(all="ignore") instead (no flushing), and with no floating-point state change at
all; prints the median
microseconds per call of each and the median per-round differences against the latter.
"""
from __future__ import annotations

import argparse
import os
import platform
import statistics
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402

import tensorfleet as tf  # noqa: E402
from tensorfleet.kernels import fp_state  # noqa: E402


def _time_calls(sess, out, feeds, calls: int) -> float:
    run = sess.run
    t = time.perf_counter()
    for _ in range(calls):
        run(out, feeds)
    return (time.perf_counter() - t) / calls * 1e6


def _use(enter, exit_):
    fp_state.enter, fp_state.exit = enter, exit_


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=20000)
    ap.add_argument("--rounds", type=int, default=7)
    args = ap.parse_args()
    a = tf.placeholder(tf.float32, [])
    b = tf.placeholder(tf.float32, [])
    out = a + b
    feeds = {a: np.float32(1.0), b: np.float32(2.0)}
    shipped = (fp_state.enter, fp_state.exit)

    def errstate_enter():
        cm = np.errstate(all="ignore")
        cm.__enter__()
        return cm

    variants = {"none (before)": (lambda: None, lambda token: None), "shipped (fp_state)": shipped,
                "np.errstate": (errstate_enter, lambda cm: cm.__exit__(None, None, None))}
    times: dict = {k: [] for k in variants}
    with tf.Session() as sess:
        sess.run(out, feeds)
        for _ in range(args.rounds):
            for name, (enter, exit_) in variants.items():
                _use(enter, exit_)
                times[name].append(_time_calls(sess, out, feeds, args.calls))
    _use(*shipped)
    base = times["none (before)"]
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cpus, numpy {np.__version__}, "
          f"{args.rounds} rounds x {args.calls} calls each")
    for name, ts in times.items():
        diff = statistics.median(t - b0 for t, b0 in zip(ts, base, strict=True))
        print(f"Session.run, trivial graph, {name:20s}: {statistics.median(ts):6.2f} us/call "
              f"(median difference vs none {diff:+.2f} us/call)")


if __name__ == "__main__":
    main()
