"""Writes tests/trainer/data/vae_tf_losses.npz: a TF1-style variational autoencoder's losses under real TensorFlow.

Run with the `tf1` extra (real TensorFlow, `tf.compat.v1` with v2 behaviour disabled):
    python scripts/gen_vae_fixture.py [--digits PATH] [--out FILE]

The model is the public TF1 example's shape, written here for the test
(`tests/trainer/test_vae_agreement.py` imports `build_vae` and `train` from this
file and runs them on tensorfleet): an MLP encoder to a mean and a log-variance,
`tf.random_normal` reparameterisation, an MLP decoder with a sigmoid output, loss
= binary cross-entropy `-sum(x*log(1e-10+y) + (1-x)*log(1e-10+1-y))` plus the KL
term `-0.5*sum(1 + logvar - mu^2 - exp(logvar))`, averaged over the batch. The
data is scikit-learn's 8x8 digits scaled to [0, 1] (read from its bundled csv,
the file `tensorfleet.datasets.load_digits_arrays` reads too).

Two kinds of runs:
- deterministic (`det_<optimizer>`): initial weights, batches and the noise fed
  from numpy, so the loss of every step is a function of the runtime's ops
  alone; the test compares tensorfleet's step by step;
- seeded (`seeded_adam`): xavier-uniform initial weights from `tf.random_uniform`
  and the noise from `tf.random_normal` with graph seeds 1, 2, 3: the final
  losses spread as TF's random streams do; the test asserts tensorfleet's lies
  within that spread.
"""
from __future__ import annotations

import argparse
import gzip
import importlib.util
import pathlib
import sys

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parent.parent
OUT = ROOT / "tests" / "trainer" / "data" / "vae_tf_losses.npz"
HIDDEN, LATENT, BATCH = 640, 4, 64
DET_STEPS, SEEDED_STEPS, SEEDED_TAIL = 40, 400, 50


def digits_path() -> pathlib.Path:
    """scikit-learn's bundled digits csv, located without importing sklearn."""
    spec = importlib.util.find_spec("sklearn")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("scikit-learn's digits.csv.gz not found: pass --digits PATH")
    return pathlib.Path(list(spec.submodule_search_locations)[0]) / "datasets" / "data" / "digits.csv.gz"


def load_digits(path) -> np.ndarray:
    """The 1,797 digits as float32 [1797, 64] in [0, 1] (pixels 0-16, divided by 16)."""
    with gzip.open(path, "rt") as f:
        rows = [line.split(",") for line in f if line.strip()]
    return (np.array(rows, dtype=np.float32)[:, :64] / 16.0).astype(np.float32)


def build_vae(tf, n_in: int, deterministic: bool, optimizer: str):
    """The graph: returns (x, eps or None, loss, train_op); `deterministic` feeds weights' initial values and the
    noise from numpy (RandomState(0)); otherwise xavier-uniform `tf.random_uniform` and `tf.random_normal`."""
    rng = np.random.RandomState(0)

    def initial(n, m):
        r = np.sqrt(6.0 / (n + m))
        if deterministic:
            return rng.uniform(-r, r, (n, m)).astype(np.float32)
        return tf.random_uniform((n, m), minval=-r, maxval=r, dtype=tf.float32)

    def dense(h, n, m, act=None):
        w = tf.Variable(initial(n, m))
        b = tf.Variable(tf.zeros([m], dtype=tf.float32))
        y = tf.add(tf.matmul(h, w), b)
        return act(y) if act is not None else y

    x = tf.placeholder(tf.float32, [None, n_in])
    h = dense(dense(x, n_in, HIDDEN, tf.nn.softplus), HIDDEN, HIDDEN, tf.nn.softplus)
    mu, logvar = dense(h, HIDDEN, LATENT), dense(h, HIDDEN, LATENT)
    if deterministic:
        eps = tf.placeholder(tf.float32, [None, LATENT])
        noise = eps
    else:
        eps, noise = None, tf.random_normal((BATCH, LATENT), 0, 1, dtype=tf.float32)
    z = tf.add(mu, tf.multiply(tf.sqrt(tf.exp(logvar)), noise))
    g = dense(dense(z, LATENT, HIDDEN, tf.nn.softplus), HIDDEN, HIDDEN, tf.nn.softplus)
    y = tf.nn.sigmoid(dense(g, HIDDEN, n_in))
    reconstruction = -tf.reduce_sum(x * tf.log(1e-10 + y) + (1 - x) * tf.log(1e-10 + 1 - y), 1)
    kl = -0.5 * tf.reduce_sum(1 + logvar - tf.square(mu) - tf.exp(logvar), 1)
    loss = tf.reduce_mean(reconstruction + kl)
    opt = tf.train.RMSPropOptimizer(0.001) if optimizer == "rmsprop" else tf.train.AdamOptimizer(0.001)
    return x, eps, loss, opt.minimize(loss)


def train(tf, data: np.ndarray, steps: int, *, deterministic: bool, optimizer: str = "adam", seed: int = 0):
    """The per-step losses of `steps` training steps on batches drawn by RandomState(seed)."""
    graph = tf.Graph()
    with graph.as_default():
        if not deterministic:
            tf.set_random_seed(seed)
        x, eps, loss, train_op = build_vae(tf, data.shape[1], deterministic, optimizer)
        init = tf.global_variables_initializer()
    rng = np.random.RandomState(100 + seed)
    losses = []
    with tf.Session(graph=graph) as sess:
        sess.run(init)
        for _ in range(steps):
            feed = {x: data[rng.randint(0, len(data), BATCH)]}
            if eps is not None:
                feed[eps] = rng.randn(BATCH, LATENT).astype(np.float32)
            losses.append(sess.run([train_op, loss], feed)[1])
    return np.array(losses, dtype=np.float32)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--digits", type=pathlib.Path, default=None, help="scikit-learn's digits.csv.gz")
    ap.add_argument("--out", type=pathlib.Path, default=OUT)
    args = ap.parse_args(argv)
    import tensorflow.compat.v1 as tf  # the tf1 extra

    tf.disable_v2_behavior()
    data = load_digits(args.digits or digits_path())
    out = {f"det_{o}": train(tf, data, DET_STEPS, deterministic=True, optimizer=o) for o in ("rmsprop", "adam")}
    out["seeded_adam"] = np.array([train(tf, data, SEEDED_STEPS, deterministic=False, seed=s)[-SEEDED_TAIL:].mean()
                                   for s in (1, 2, 3)], dtype=np.float32)
    out["tf_version"] = np.array(tf.__version__)
    np.savez(args.out, **out)
    print(args.out, {k: v.tolist() if v.ndim == 0 or v.size <= 3 else v[[0, -1]].tolist() for k, v in out.items()})
    return 0


if __name__ == "__main__":
    sys.exit(main())
