"""What a checkpoint of large variables costs: `tf.train.Saver.save` and `restore` of 100 MB of float32 (one
variable, or 4 of 25 MB), against a baseline in the same run: the same bytes written with numpy's `tofile` +
fsync and read back with `fromfile` (the file system's floor, no checksum, no format).

Contenders alternate in each round; the medians, the ratios to the baseline and the absolute seconds are
printed with the machine. Running it with `PYTHONPATH` on another checkout of `trainer/` measures that
version's format the same way (how the bundle format was compared with the earlier v1 format).

    OPENBLAS_NUM_THREADS=1 PYTHONPATH=trainer python bench/checkpoint_io.py [--mb 100] [--rounds 5] [--dir DIR]
"""
from __future__ import annotations

import argparse
import os
import platform
import statistics
import tempfile
import time

for _v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import numpy as np  # noqa: E402

import tensorfleet as tf  # noqa: E402


def _baseline_write(path: str, arrays) -> None:
    with open(path, "wb") as f:
        for a in arrays:
            a.tofile(f)
        f.flush()
        os.fsync(f.fileno())


def _baseline_read(path: str, arrays) -> list:
    with open(path, "rb") as f:
        return [np.fromfile(f, dtype=a.dtype, count=a.size) for a in arrays]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--dir", default=None, help="where the files go (default: a temporary directory)")
    args = parser.parse_args(argv)
    n = args.mb * (1 << 20) // 4
    rng = np.random.default_rng(0)
    print(f"machine: {platform.machine()} {os.cpu_count()} CPUs, python {platform.python_version()}, "
          f"tensorfleet from {os.path.dirname(tf.__file__)}")
    with tempfile.TemporaryDirectory(dir=args.dir) as d:
        for parts in (1, 4):
            arrays = [rng.standard_normal(n // parts).astype(np.float32) for _ in range(parts)]
            g = tf.Graph()
            with g.as_default():
                variables = [tf.Variable(a, name=f"v{i}") for i, a in enumerate(arrays)]
                saver = tf.train.Saver()
                sess = tf.Session(graph=g)
                sess.run(tf.global_variables_initializer())
            times: dict = {"save": [], "restore": [], "baseline write": [], "baseline read": []}
            prefix, raw = os.path.join(d, "model.ckpt"), os.path.join(d, "raw.bin")
            for _ in range(args.rounds):
                t = time.perf_counter()
                saver.save(sess, prefix, write_meta_graph=False)
                times["save"].append(time.perf_counter() - t)
                t = time.perf_counter()
                _baseline_write(raw, arrays)
                times["baseline write"].append(time.perf_counter() - t)
                t = time.perf_counter()
                saver.restore(sess, prefix)
                times["restore"].append(time.perf_counter() - t)
                t = time.perf_counter()
                back = _baseline_read(raw, arrays)
                times["baseline read"].append(time.perf_counter() - t)
            assert all(np.array_equal(a, b) for a, b in zip(arrays, back, strict=True))
            got = sess.run(variables)
            assert all(np.array_equal(a, b) for a, b in zip(arrays, got, strict=True))
            sess.close()
            med = {k: statistics.median(v) for k, v in times.items()}
            print(f"{args.mb} MB in {parts} variable(s), median of {args.rounds}: "
                  f"save {med['save']:.3f} s ({med['save'] / med['baseline write']:.2f}x numpy tofile+fsync "
                  f"{med['baseline write']:.3f} s), restore {med['restore']:.3f} s "
                  f"({med['restore'] / med['baseline read']:.2f}x numpy fromfile {med['baseline read']:.3f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
