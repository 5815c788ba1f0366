"""`Model.fit` steps/s on the MNIST MLP against the same model trained by `Session.run` by hand.

    OPENBLAS_NUM_THREADS=1 python bench/keras_fit.py [--rounds 7] [--steps 150] [--batch-sizes 128 32]

The model: 784-512-10, ReLU then softmax, categorical cross-entropy (TF 1.15's Keras computes it with the
fused softmax cross-entropy on the softmax's logits), plain SGD lr 0.1. Keras: a Sequential model compiled
with `tf.keras.optimizers.SGD(0.1)`, trained by `fit(x, y, batch_size, epochs=1, verbose=0, shuffle=True)`
over `steps * batch_size` images (its batching, shuffling, callbacks, logs and History, one `Session.run` per
step through the cached callable), once without and once with `metrics=['accuracy']`. By hand: the same graph
written in TF1 style (placeholders, variables, `tf.train.GradientDescentOptimizer(0.1).minimize`), a Python
loop slicing shuffled numpy batches and calling `sess.run([train_op, loss], feed_dict)` (fit fetches the loss
too; with the accuracy metric, the batch accuracy too). Both start from the same weights and follow the same
computation (checked: the same weights after 3 steps on the same batches).

The two alternate step by step: a callback runs one by-hand step after each Keras step (this shared machine's
speed drifts within seconds and has slow outliers, so medians of per-step times are compared); a Keras step is
timed from the end of the previous by-hand step to the end of its batch (fit's slicing, callbacks and logs
included), a by-hand step around its slicing and run. A round is one epoch of `--steps` steps; the ratio
Keras/by-hand (of the rounds' median step rates) is taken within each round and the median printed, with
absolute steps/s, fit's per-epoch set-up (and first step), the machine and the thread settings. MNIST is the
pinned copy when fetched, else random data of the same shape (the timing does not depend on the values).
"""
from __future__ import annotations

import os
import sys

for _v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import argparse  # noqa: E402
import platform  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

import step_timing  # noqa: E402
import tensorfleet as tf  # noqa: E402

HIDDEN, LR = 512, 0.1


def mnist(n):
    try:
        (x, y), _ = tf.keras.datasets.mnist.load_data()
        source = "MNIST"
    except tf.keras.datasets.MissingDataError:
        rng = np.random.RandomState(0)
        x, y = rng.randint(0, 256, (n, 28, 28)).astype(np.uint8), rng.randint(0, 10, n)
        source = "random data (MNIST not fetched)"
    x = x[:n].reshape(-1, 784).astype(np.float32) / 255.0
    return x, np.eye(10, dtype=np.float32)[y[:n]], source


def initial_weights(seed=0):
    rng = np.random.RandomState(seed)
    return [rng.uniform(-0.05, 0.05, (784, HIDDEN)).astype(np.float32), np.zeros(HIDDEN, np.float32),
            rng.uniform(-0.05, 0.05, (HIDDEN, 10)).astype(np.float32), np.zeros(10, np.float32)]


class KerasFit:
    def __init__(self, x, y, batch_size, metrics):
        self.graph = tf.Graph()
        self.x, self.y, self.batch_size = x, y, batch_size
        with self.graph.as_default():
            self.model = tf.keras.Sequential([tf.keras.layers.Dense(HIDDEN, activation="relu", input_shape=(784,)),
                                              tf.keras.layers.Dense(10, activation="softmax")])
            self.model.compile(tf.keras.optimizers.SGD(LR), "categorical_crossentropy", metrics=metrics)
            self.model.set_weights(initial_weights())

    def epoch(self, shuffle=True):
        with self.graph.as_default():
            self.model.fit(self.x, self.y, batch_size=self.batch_size, epochs=1, verbose=0, shuffle=shuffle)

    def weights(self):
        with self.graph.as_default():
            return self.model.get_weights()


class ByHand:
    def __init__(self, x, y, batch_size, accuracy=False):
        self.x, self.y, self.batch_size = x, y, batch_size
        self.graph = tf.Graph()
        with self.graph.as_default():
            self.images = tf.placeholder(tf.float32, [None, 784])
            self.labels = tf.placeholder(tf.float32, [None, 10])
            w1, b1, w2, b2 = (tf.Variable(w) for w in initial_weights())
            hidden = tf.nn.relu(tf.nn.bias_add(tf.matmul(self.images, w1), b1))
            logits = tf.nn.bias_add(tf.matmul(hidden, w2), b2)
            # what TF 1.15's K.categorical_crossentropy builds on a softmax output: the fused op on its logits
            self.loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits_v2(labels=self.labels, logits=logits))
            self.train_op = tf.train.GradientDescentOptimizer(LR).minimize(self.loss)
            self.fetches = [self.train_op, self.loss]
            if accuracy:  # the batch accuracy, fetched with the loss (fit's metric keeps a running mean)
                hits = tf.equal(tf.argmax(self.labels, -1), tf.argmax(tf.nn.softmax(logits), -1))
                self.fetches.append(tf.reduce_mean(tf.cast(hits, tf.float32)))
            self.variables = [w1, b1, w2, b2]
            self.sess = tf.Session()
            self.sess.run(tf.global_variables_initializer())

    def epoch(self, shuffle=True):
        self._order = np.random.permutation(len(self.x)) if shuffle else np.arange(len(self.x))
        self._start = 0
        for _ in range(0, len(self.x), self.batch_size):
            self.step()

    def step(self):
        """One step on the next batch of a shuffled pass (a new pass when one is done)."""
        if getattr(self, "_start", len(self.x)) >= len(self.x):
            self._order, self._start = np.random.permutation(len(self.x)), 0
        idx = self._order[self._start:self._start + self.batch_size]
        self._start += self.batch_size
        self.sess.run(self.fetches, feed_dict={self.images: self.x[idx], self.labels: self.y[idx]})

    def weights(self):
        return self.sess.run(self.variables)


def same_computation(x, y, batch_size):
    """Worst weight difference after 3 unshuffled steps of each (the comparison is of equal work)."""
    k, h = KerasFit(x[:3 * batch_size], y[:3 * batch_size], batch_size, None), ByHand(x[:3 * batch_size],
                                                                                    y[:3 * batch_size], batch_size)
    k.epoch(shuffle=False)
    h.epoch(shuffle=False)
    return max(float(np.abs(a - b).max()) for a, b in zip(k.weights(), h.weights()))


class _Interleave(tf.keras.callbacks.Callback):
    """Runs one by-hand step after each Keras step: the two alternate step by step, so the machine's drift
    falls on both alike. A Keras step is timed from the end of the previous by-hand step to the end of the
    Keras batch (fit's slicing, callbacks and logs included), a by-hand step around its own slicing and run."""

    def __init__(self, by_hand):
        super().__init__()
        self.by_hand, self.keras_times, self.hand_times, self.last = by_hand, [], [], None

    def on_train_batch_end(self, batch, logs=None):
        t1 = time.perf_counter()
        if self.last is not None:  # the first step of an epoch also holds fit's set-up (timed apart)
            self.keras_times.append(t1 - self.last)
        self.by_hand.step()
        self.last = time.perf_counter()
        self.hand_times.append(self.last - t1)


def bench(x, y, batch_size, metrics, rounds):
    """Per round (one epoch): the median step of each; the ratio of the medians; fit's per-epoch set-up."""
    keras, by_hand = KerasFit(x, y, batch_size, metrics), ByHand(x, y, batch_size, accuracy=bool(metrics))
    keras.epoch()  # warm-up: plans compiled, callables made
    by_hand.epoch()
    rates: dict = {"keras fit": [], "by hand": []}
    setup = []
    for _ in range(rounds):
        interleave = _Interleave(by_hand)
        t0 = time.perf_counter()
        with keras.graph.as_default():
            keras.model.fit(x, y, batch_size=batch_size, epochs=1, verbose=0, shuffle=True, callbacks=[interleave])
        total = time.perf_counter() - t0
        rates["keras fit"].append(1 / statistics.median(interleave.keras_times))
        rates["by hand"].append(1 / statistics.median(interleave.hand_times))
        setup.append(total - sum(interleave.keras_times) - sum(interleave.hand_times))
    ratio = statistics.median(a / b for a, b in zip(rates["keras fit"], rates["by hand"]))
    return {name: statistics.median(v) for name, v in rates.items()}, ratio, rates, statistics.median(setup)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--steps", type=int, default=150, help="steps per timed epoch (a round)")
    ap.add_argument("--batch-sizes", type=int, nargs="+", default=[128, 32])
    args = ap.parse_args(argv)
    try:
        from threadpoolctl import threadpool_limits
        threadpool_limits(int(os.environ["OPENBLAS_NUM_THREADS"]))
    except Exception:  # noqa: BLE001
        pass
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cpus, "
          f"python {platform.python_version()}, numpy {np.__version__}, load average {os.getloadavg()[0]:.1f}")
    for batch_size in args.batch_sizes:
        x, y, source = mnist(args.steps * batch_size)
        print(f"batch {batch_size}, {args.steps} steps per epoch on {source}; same computation check: worst weight "
              f"difference after 3 steps {same_computation(x, y, batch_size):.1e}")
        for metrics in (None, ["accuracy"]):
            med, ratio, rates, setup = bench(x, y, batch_size, metrics, args.rounds)
            label = "fit, metrics=['accuracy']" if metrics else "fit, no metrics"
            per_round = sorted(a / b for a, b in zip(rates["keras fit"], rates["by hand"]))
            quartiles = per_round[len(per_round) // 4], per_round[(3 * len(per_round)) // 4]
            print(f"  {label:26s} {med['keras fit']:7.1f} steps/s   by hand {med['by hand']:7.1f} steps/s   "
                  f"keras/by hand = {ratio:.3f} (rounds' quartiles {quartiles[0]:.3f}-{quartiles[1]:.3f}); "
                  f"fit's set-up and first step {setup * 1e3:.1f} ms per epoch", flush=True)
    print(step_timing.format_thread_info(step_timing.thread_info()))


if __name__ == "__main__":
    t0 = time.time()
    main()
    print(f"bench took {time.time() - t0:.0f} s")
