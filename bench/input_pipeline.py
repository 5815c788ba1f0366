"""Does tf.data's prefetch overlap the input pipeline with the training step?

Workload (float32, 1 BLAS thread per stage): a training step of an MLP 784-1024-1024-10 (softmax
cross-entropy, SGD) on batches of 128, fed from `tf.data`:
`from_tensor_slices(images, labels).repeat().batch(128).map(augment)` where `augment` is a slow,
GIL-releasing map (a random 784x784 "mixing" matmul chain per batch, the cost of decoding/augmenting) —
then either consumed directly (sequential: every step waits for its batch) or through `.prefetch(2)`
(the pipeline runs ahead on its own thread).

Measured in the same run, interleaved over rounds (median steps/s per contender):
  step_only       the step on pre-made batches fed with feed_dict (no pipeline)
  input_only      get_next of the pipeline alone (no step)
  sequential      the step fed from the pipeline without prefetch  (~ 1 / (t_step + t_input))
  prefetch        the step fed from the pipeline with prefetch(2)  (~ 1 / max(t_step, t_input) on 2 free cores)
Contenders take turns in chunks of --chunk steps; the prefetch pipeline may have made 2 batches while
the others ran, a bias of <= 2/chunk in its favour (5% at the default 40).
It prints t_prefetch / max(t_step, t_input) (1.0 = perfect overlap) and t_prefetch / (t_step + t_input)
(1.0 = no overlap). With --io-ms M the input stage is instead a reader that waits M ms per batch (storage
latency, no CPU), which shows the overlap even when every core is busy with the step.
For the CPU-bound map it also prints, per contender, the process CPU time per step (all threads) and
CPU/wall = the cores the contender actually got: two CPU-bound stages can overlap only as far as a second
core is free, so on a shared machine the honest bound is max(t_step, t_input, (cpu_step + cpu_input) / cores
obtained), printed as well, beside the load average before and after, and the cores two GIL-free numpy
threads obtain before and after and as a contender interleaved with the others (`probe`: what a perfect
overlap could use at that moment).
Run: `python bench/input_pipeline.py [--seconds S] [--rounds R] [--map-matmuls K | --io-ms M]`.
"""
from __future__ import annotations

import argparse
import os
import sys
import threading
import time

for _v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "trainer"))
from step_timing import format_thread_info, interleaved_rates, thread_info  # noqa: E402

import tensorfleet as tf  # noqa: E402

BATCH = 128


def _data(n=4096, seed=0):
    rng = np.random.RandomState(seed)
    images = rng.rand(n, 784).astype(np.float32)
    labels = np.eye(10, dtype=np.float32)[rng.randint(0, 10, n)]
    return images, labels


def _augment_fn(matmuls: int):
    mix = np.linalg.qr(np.random.RandomState(1).randn(784, 784))[0].astype(np.float32)

    def augment(x, y):
        m = tf.constant(mix)
        for _ in range(matmuls):
            x = tf.matmul(x, m)
        return x, y
    return augment


def _model(x, y):
    init = tf.glorot_uniform_initializer(seed=0)
    h = tf.layers.dense(x, 1024, tf.nn.relu, kernel_initializer=init)
    h = tf.layers.dense(h, 1024, tf.nn.relu, kernel_initializer=init)
    logits = tf.layers.dense(h, 10, kernel_initializer=init)
    loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits_v2(labels=y, logits=logits))
    return tf.train.GradientDescentOptimizer(0.01).minimize(loss)


def _pipeline(images, labels, matmuls, prefetch, io_ms=0.0):
    if io_ms > 0:  # a reader whose time is storage latency (no CPU): batches from a generator that waits
        def read_batches():
            i = 0
            while True:
                time.sleep(io_ms / 1000.0)
                j = (i * BATCH) % (len(images) - BATCH)
                i += 1
                yield images[j:j + BATCH], labels[j:j + BATCH]
        ds = tf.data.Dataset.from_generator(read_batches, (tf.float32, tf.float32),
                                            (tf.TensorShape([BATCH, 784]), tf.TensorShape([BATCH, 10])))
    else:
        ds = tf.data.Dataset.from_tensor_slices((images, labels)).repeat().batch(BATCH, drop_remainder=True)
        ds = ds.map(_augment_fn(matmuls))
    return ds.prefetch(2) if prefetch else ds


def build(matmuls: int, io_ms: float = 0.0):
    images, labels = _data()
    steps, sessions = {}, []

    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [BATCH, 784])
        y = tf.placeholder(tf.float32, [BATCH, 10])
        train = _model(x, y)
        s = tf.Session(graph=g)
        s.run(tf.global_variables_initializer())
    sessions.append(s)
    batches = [(images[i:i + BATCH], labels[i:i + BATCH]) for i in range(0, 8 * BATCH, BATCH)]
    counter = [0]

    def step_only(s=s, train=train):
        bx, by = batches[counter[0] % len(batches)]
        counter[0] += 1
        s.run(train, {x: bx, y: by})
    steps["step_only"] = step_only

    g = tf.Graph()
    with g.as_default():
        nxt = _pipeline(images, labels, matmuls, False, io_ms).make_one_shot_iterator().get_next()
        s = tf.Session(graph=g)
    sessions.append(s)
    steps["input_only"] = lambda s=s, nxt=nxt: s.run(nxt)

    for name, prefetch in (("sequential", False), ("prefetch", True)):
        g = tf.Graph()
        with g.as_default():
            bx, by = _pipeline(images, labels, matmuls, prefetch, io_ms).make_one_shot_iterator().get_next()
            train = _model(bx, by)
            s = tf.Session(graph=g)
            s.run(tf.global_variables_initializer())
        sessions.append(s)
        steps[name] = lambda s=s, train=train: s.run(train)
    return steps, sessions


def probe_step(matmuls: int = 6):
    """A contender that is two threads of GIL-free 784x784 matmuls: its CPU/wall is the cores free right then."""
    a = np.random.RandomState(2).rand(784, 784).astype(np.float32)

    def work():
        for _ in range(matmuls):
            a @ a

    def step():
        threads = [threading.Thread(target=work) for _ in range(2)]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
    return step


def probe_cores(seconds: float = 1.0) -> float:
    """CPU/wall of two threads doing GIL-free 784x784 matmuls: the cores this process can get right now."""
    a = np.random.RandomState(2).rand(784, 784).astype(np.float32)

    def spin(deadline):
        while time.perf_counter() < deadline:
            a @ a

    c0, w0 = time.process_time(), time.perf_counter()
    threads = [threading.Thread(target=spin, args=(w0 + seconds,)) for _ in range(2)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    return (time.process_time() - c0) / (time.perf_counter() - w0)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seconds", type=float, default=1.0, help="time per contender per round")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--map-matmuls", type=int, default=8, help="784x784 matmuls per batch in the slow map")
    p.add_argument("--io-ms", type=float, default=0.0,
                   help="instead of the compute map: a reader that waits this long per batch (storage latency)")
    p.add_argument("--chunk", type=int, default=40,
                   help="steps per turn (the prefetch contender starts each turn with <= 2 batches made ahead)")
    args = p.parse_args(argv)
    steps, sessions = build(args.map_matmuls, args.io_ms)
    load_before = os.getloadavg()
    probe_before = probe_cores()
    cpu = {k: [0.0, 0.0, 0] for k in steps}  # process CPU s, wall s, calls

    def timed(name, fn):
        def run():
            c0, w0 = time.process_time(), time.perf_counter()
            fn()
            acc = cpu[name]
            acc[0] += time.process_time() - c0
            acc[1] += time.perf_counter() - w0
            acc[2] += 1
        return run

    if args.io_ms <= 0:
        steps["probe"] = probe_step()
        cpu["probe"] = [0.0, 0.0, 0]
    try:
        rates = interleaved_rates({k: timed(k, fn) for k, fn in steps.items()}, seconds=args.seconds,
                                  rounds=args.rounds, chunk=args.chunk)
    finally:
        for s in sessions:
            s.close()
    probe_after = probe_cores()
    med = {k: float(np.median(v)) for k, v in rates.items()}
    t = {k: 1000.0 / r for k, r in med.items()}
    print(format_thread_info(thread_info(include_torch=False)))
    print(f"machine: {os.cpu_count()} CPUs; load average before {load_before[0]:.2f}, after "
          f"{os.getloadavg()[0]:.2f}; input stage: "
          + (f"reader waiting {args.io_ms} ms/batch" if args.io_ms > 0 else f"map of {args.map_matmuls} matmuls"))
    print(f"cores obtained by 2 threads of GIL-free numpy matmuls: {probe_before:.2f} before, {probe_after:.2f} "
          f"after")
    cpu_ms = {k: 1000.0 * c / max(n, 1) for k, (c, _, n) in cpu.items()}
    cores = {k: c / w if w else 0.0 for k, (c, w, _) in cpu.items()}
    for k in ("step_only", "input_only", "sequential", "prefetch"):
        print(f"{k:>11}: {med[k]:8.2f} steps/s  ({t[k]:7.2f} ms/step, CPU {cpu_ms[k]:7.2f} ms/step, "
              f"cores obtained {cores[k]:.2f})   rounds: " + " ".join(f"{r:.1f}" for r in rates[k]))
    per_round = [(1 / p) / max(1 / a, 1 / b) for a, b, p in zip(rates["step_only"], rates["input_only"],
                                                                rates["prefetch"])]
    slower, total = max(t["step_only"], t["input_only"]), t["step_only"] + t["input_only"]
    print(f"prefetch / max(step, input) = {t['prefetch'] / slower:.2f}   (1.00 = full overlap; per round: "
          + " ".join(f"{r:.2f}" for r in per_round) + ")")
    print(f"prefetch / (step + input)   = {t['prefetch'] / total:.2f}   (1.00 = no overlap)")
    print(f"sequential / (step + input) = {t['sequential'] / total:.2f}")
    if args.io_ms <= 0:
        bound = max(slower, (cpu_ms["step_only"] + cpu_ms["input_only"]) / max(cores["prefetch"], 1e-9))
        print(f"the GIL-free two-thread probe, interleaved with the contenders, obtained {cores['probe']:.2f} cores; "
              f"the prefetch contender {cores['prefetch']:.2f} (ratio {cores['prefetch'] / cores['probe']:.2f}), "
              f"step_only {cores['step_only']:.2f}, sequential {cores['sequential']:.2f}")
        print(f"CPU bound: both stages need {cpu_ms['step_only'] + cpu_ms['input_only']:.2f} ms CPU per step; "
              f"with the {cores['prefetch']:.2f} cores the prefetch contender obtained, no overlap can beat "
              f"{bound:.2f} ms/step: prefetch / that bound = {t['prefetch'] / bound:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
