"""Checks that real TensorFlow's Keras loads what tensorfleet's Keras writes (the `tf1` extra; never a test):
    python scripts/check_keras_with_real_tf.py [--tensorfleet-python PY] [--keep DIR]

Tensorfleet, in its own interpreter (`--tensorfleet-python`, default $TENSORFLEET_PYTHON, else .venv/bin/python;
this script with `--write DIR`), trains a Sequential MLP and a functional model (Dropout, two inputs) with Adam
and a subclassed model with RMSprop, then writes each with `model.save('model.h5')`, `save_weights('weights.h5')`,
`save_weights('ckpt/weights')` (TF's object-based checkpoint) and `model.save('saved_model', save_format='tf')`,
with the inputs, predictions, weights and optimizer weights in expected.npz. Real TensorFlow (graph mode,
`tf.compat.v1`) then loads each file into the same architecture (`load_model` for the whole models), compares
every weight and optimizer weight exactly and the predictions within 1e-5, trains one more epoch from the
checkpoints (the optimizer slots restored on creation, `assert_consumed`), and serves the SavedModel's
`serving_default` signature. Prints one line per case and exits 0 when everything agrees.
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def build(tf, kind):
    """The same architectures in tensorfleet and in TF (`tf` is either module)."""
    L = tf.keras.layers
    if kind == "sequential":
        model = tf.keras.Sequential([L.Dense(16, activation="relu", input_shape=(12,)),
                                     L.Dense(4, activation="softmax")])
    elif kind == "functional":
        a, b = tf.keras.Input(shape=(12,), name="a"), tf.keras.Input(shape=(3,), name="b")
        hidden = L.Dropout(0.2)(L.Dense(8, activation="tanh", name="hidden")(L.concatenate([a, b])))
        model = tf.keras.Model([a, b], L.Dense(4, activation="softmax", name="probs")(hidden))
    else:
        class Subclassed(tf.keras.Model):
            def __init__(self):
                super().__init__()
                self.blocks = [L.Dense(8, activation="relu"), L.Dense(8, activation="relu")]
                self.head = L.Dense(4, activation="softmax")

            def call(self, inputs):
                x = inputs
                for block in self.blocks:
                    x = block(x)
                return self.head(x)
        model = Subclassed()
    optimizers = getattr(tf.keras.optimizers, "legacy", tf.keras.optimizers)  # TF 2.x keeps TF 1.15's as legacy
    optimizer = optimizers.RMSprop(0.01) if kind == "subclassed" else optimizers.Adam(0.01)
    model.compile(optimizer, "categorical_crossentropy", metrics=["accuracy"])
    return model


def data(kind):
    rng = np.random.RandomState(7)
    x = rng.randn(64, 12).astype(np.float32)
    y = np.eye(4, dtype=np.float32)[rng.randint(0, 4, 64)]
    if kind == "functional":
        return [x, rng.randn(64, 3).astype(np.float32)], y
    return x, y


def write(out):
    import tensorfleet as tf
    for kind in ("sequential", "functional", "subclassed"):
        tf.keras.backend.clear_session()
        model = build(tf, kind)
        x, y = data(kind)
        model.fit(x, y, batch_size=16, epochs=2, verbose=0)
        d = os.path.join(out, kind)
        os.makedirs(d)
        if kind != "subclassed":
            model.save(os.path.join(d, "model.h5"))
            model.save(os.path.join(d, "saved_model"), save_format="tf")
            model.save_weights(os.path.join(d, "weights.h5"))
        model.save_weights(os.path.join(d, "ckpt", "weights"))
        expected = {"predictions": model.predict(x)}
        expected.update({f"w{i}": w for i, w in enumerate(model.get_weights())})
        expected.update({f"o{i}": w for i, w in enumerate(model.optimizer.get_weights())})
        np.savez(os.path.join(d, "expected.npz"), **expected)


def check(out):
    import tensorflow as tf
    tf.compat.v1.disable_v2_behavior()
    failures = 0

    def compare(case, model, e, x, optimizer=True):
        nonlocal failures
        weights = model.get_weights()
        ok = len(weights) == len([k for k in e if k.startswith("w")]) and \
            all(np.array_equal(w, e[f"w{i}"]) for i, w in enumerate(weights))
        if optimizer:
            opt = model.optimizer.get_weights()
            ok = ok and all(np.array_equal(w, e[f"o{i}"]) for i, w in enumerate(opt))
        err = float(np.abs(model.predict(x) - e["predictions"]).max())
        ok = ok and err < 1e-5
        failures += not ok
        print(f"{case:38s} {'ok' if ok else 'FAILED'}  (worst prediction error {err:.1e})")

    for kind in ("sequential", "functional", "subclassed"):
        d = os.path.join(out, kind)
        e = dict(np.load(os.path.join(d, "expected.npz")))
        x, y = data(kind)
        if kind != "subclassed":
            tf.keras.backend.clear_session()
            compare(f"{kind} load_model(model.h5)", tf.keras.models.load_model(os.path.join(d, "model.h5")), e, x)
            tf.keras.backend.clear_session()
            model = build(tf, kind)
            model.load_weights(os.path.join(d, "weights.h5"))
            compare(f"{kind} load_weights(weights.h5)", model, e, x, optimizer=False)
            with tf.compat.v1.Session(graph=tf.Graph()) as sess:
                meta = tf.compat.v1.saved_model.loader.load(sess, ["serve"], os.path.join(d, "saved_model"))
                sig = meta.signature_def["serving_default"]
                feeds = dict(zip(sorted(sig.inputs), x if isinstance(x, list) else [x]))
                got = sess.run(next(iter(sig.outputs.values())).name,
                               {sig.inputs[k].name: v for k, v in feeds.items()})
                err = float(np.abs(got - e["predictions"]).max())
                failures += err >= 1e-5
                print(f"{kind + ' SavedModel serving_default':38s} {'ok' if err < 1e-5 else 'FAILED'}  "
                      f"(worst prediction error {err:.1e})")
        tf.keras.backend.clear_session()
        model = build(tf, kind)
        status = model.load_weights(os.path.join(d, "ckpt", "weights"))
        if kind == "subclassed":  # its layers are built (and their weights restored) by the first call
            model.predict(x)
        else:
            model._make_train_function()  # creates the optimizer's slots: restored from the checkpoint
        compare(f"{kind} load_weights(ckpt/weights)", model, e, x, optimizer=kind != "subclassed")
        model.fit(x, y, epochs=1, verbose=0)
        status.assert_consumed()
    print(f"real TensorFlow {tf.__version__}: " + ("everything agrees" if not failures else f"{failures} FAILED"))
    return 1 if failures else 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", help=argparse.SUPPRESS)
    parser.add_argument("--tensorfleet-python", default=os.environ.get("TENSORFLEET_PYTHON")
                        or os.path.join(REPO, ".venv", "bin", "python"))
    parser.add_argument("--keep", help="write the files into this directory and keep them")
    args = parser.parse_args(argv)
    if args.write:
        write(args.write)
        return 0
    try:
        import tensorflow  # noqa: F401
    except ImportError:
        print("skipped: TensorFlow is not installed (the tf1 extra)")
        return 0
    out = args.keep or tempfile.mkdtemp()
    try:
        env = dict(os.environ, PYTHONPATH=os.path.join(REPO, "trainer"))
        subprocess.run([args.tensorfleet_python, os.path.abspath(__file__), "--write", out], check=True, env=env)
        return check(out)
    finally:
        if not args.keep:
            shutil.rmtree(out, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
