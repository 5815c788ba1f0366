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
Run: `python bench/input_pipeline.py [--seconds S] [--rounds R] [--map-matmuls K | --io-ms M]`.
"""
from __future__ import annotations

import argparse
import os
import sys
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
    try:
        rates = interleaved_rates(steps, seconds=args.seconds, rounds=args.rounds, chunk=args.chunk)
    finally:
        for s in sessions:
            s.close()
    med = {k: float(np.median(v)) for k, v in rates.items()}
    t = {k: 1000.0 / r for k, r in med.items()}
    print(format_thread_info(thread_info(include_torch=False)))
    print(f"machine: {os.cpu_count()} CPUs; load average {os.getloadavg()[0]:.2f}; input stage: "
          + (f"reader waiting {args.io_ms} ms/batch" if args.io_ms > 0 else f"map of {args.map_matmuls} matmuls"))
    for k in ("step_only", "input_only", "sequential", "prefetch"):
        print(f"{k:>11}: {med[k]:8.2f} steps/s  ({t[k]:7.2f} ms/step)   rounds: "
              + " ".join(f"{r:.1f}" for r in rates[k]))
    slower, total = max(t["step_only"], t["input_only"]), t["step_only"] + t["input_only"]
    print(f"prefetch / max(step, input) = {t['prefetch'] / slower:.2f}   (1.00 = full overlap)")
    print(f"prefetch / (step + input)   = {t['prefetch'] / total:.2f}   (1.00 = no overlap)")
    print(f"sequential / (step + input) = {t['sequential'] / total:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
