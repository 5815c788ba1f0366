"""Writes the fixtures of tests/trainer/keras/test_callbacks_against_tf.py and test_saving_against_tf.py with
real TensorFlow's graph-mode Keras (the `tf1` extra): `python scripts/gen_keras_training_fixtures.py`.

`keras_callbacks.json`: the MLP of gen_keras_fixtures.py (same data and initial weights, SGD, no shuffling)
trained with TF 1.15's graph-mode callbacks (`tf.compat.v1.keras.callbacks.TensorBoard`, which TF 2.x keeps
unchanged for graph mode, ReduceLROnPlateau, CSVLogger, EarlyStopping with restore_best_weights,
ModelCheckpoint with save_best_only and a formatted file name): the History, every scalar and histogram event
TensorBoard's loader reads (tag, step, value), the CSV file, the checkpoint files written and the final weights.

`keras_saved/`: a small functional model trained a few steps with Adam and written by TF with
`model.save('model.h5')`, `model.save_weights('weights.h5')` and `model.save_weights('ckpt/weights')` (TF's
object-based checkpoint), plus `expected.npz` (inputs, TF's predictions, the weights and optimizer weights).
"""
from __future__ import annotations

import glob
import json
import os
import shutil
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, os.pardir, "tests", "trainer", "keras", "data")
sys.path.insert(0, HERE)
from gen_keras_fixtures import data  # noqa: E402  (the same data and initial weights)


def callbacks_model(tf):
    model = tf.keras.Sequential([tf.keras.layers.Dense(16, activation="relu", input_shape=(12,)),
                                 tf.keras.layers.Dense(4, activation="softmax")])
    model.compile(tf.keras.optimizers.legacy.SGD(0.5), "categorical_crossentropy", metrics=["accuracy"])
    return model


def callbacks_fixture(tf, work):
    """Trains with the callbacks; returns what they produced (JSON-able)."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    x, y, weights = data()
    tf.keras.backend.clear_session()
    model = callbacks_model(tf)
    model.set_weights(weights)
    cbs = [tf.compat.v1.keras.callbacks.TensorBoard(log_dir=os.path.join(work, "tb"), update_freq=32,
                                                    histogram_freq=2, profile_batch=0),
           tf.keras.callbacks.ReduceLROnPlateau(monitor="val_acc", patience=1, factor=0.5),
           tf.keras.callbacks.CSVLogger(os.path.join(work, "log.csv")),
           tf.keras.callbacks.EarlyStopping(monitor="val_acc", patience=3, restore_best_weights=True),
           tf.keras.callbacks.ModelCheckpoint(os.path.join(work, "w.{epoch:02d}-{val_loss:.3f}.h5"),
                                              save_best_only=True, save_weights_only=True)]
    history = model.fit(x, y, batch_size=16, epochs=12, shuffle=False, verbose=0, validation_split=0.25,
                        callbacks=cbs)
    acc = EventAccumulator(os.path.join(work, "tb"), size_guidance={"scalars": 0, "histograms": 0})
    acc.Reload()
    tags = acc.Tags()
    return {
        "history": {k: [float(v) for v in vs] for k, vs in history.history.items()},
        "epochs": [int(e) for e in history.epoch],
        "scalars": {t: [[e.step, e.value] for e in acc.Scalars(t)] for t in tags["scalars"]},
        "histograms": {t: [e.step for e in acc.Histograms(t)] for t in tags["histograms"]},
        "graph": bool(tags["graph"]),
        "csv": open(os.path.join(work, "log.csv")).read(),
        "checkpoints": sorted(os.path.basename(p) for p in glob.glob(os.path.join(work, "w.*.h5"))),
        "final_weights": [w.tolist() for w in model.get_weights()],
    }


def saving_model(tf):
    inputs = tf.keras.Input(shape=(12,), name="features")
    hidden = tf.keras.layers.Dense(8, activation="relu", name="hidden")(inputs)
    hidden = tf.keras.layers.Dropout(0.25)(hidden)
    outputs = tf.keras.layers.Dense(4, activation="softmax", name="probs")(hidden)
    model = tf.keras.Model(inputs, outputs)
    model.compile(tf.keras.optimizers.legacy.Adam(0.01), "categorical_crossentropy", metrics=["accuracy"])
    return model


def saving_fixture(tf, out_dir):
    """TF writes the model in its three formats after a few steps of Adam; returns the expected values."""
    x, y, _ = data()
    tf.keras.backend.clear_session()
    model = saving_model(tf)
    model.fit(x, y, batch_size=32, epochs=2, shuffle=False, verbose=0)
    model.save(os.path.join(out_dir, "model.h5"))
    model.save_weights(os.path.join(out_dir, "weights.h5"))
    model.save_weights(os.path.join(out_dir, "ckpt", "weights"))
    expected = {"x": x[:8], "predictions": model.predict(x[:8])}
    expected.update({f"weight_{i}": w for i, w in enumerate(model.get_weights())})
    expected.update({f"optimizer_{i}": w for i, w in enumerate(model.optimizer.get_weights())})
    np.savez_compressed(os.path.join(out_dir, "expected.npz"), **expected)


def main():
    import tensorflow as tf
    tf.compat.v1.disable_v2_behavior()
    os.makedirs(DATA, exist_ok=True)
    work = tempfile.mkdtemp()
    try:
        out = callbacks_fixture(tf, os.path.join(work, "callbacks"))
        path = os.path.join(DATA, "keras_callbacks.json")
        with open(path, "w") as f:
            json.dump(out, f, indent=1, sort_keys=True)
        print(f"wrote {os.path.normpath(path)} with TensorFlow {tf.__version__}")
        saved = os.path.join(DATA, "keras_saved")
        shutil.rmtree(saved, ignore_errors=True)
        os.makedirs(saved)
        saving_fixture(tf, saved)
        print(f"wrote {os.path.normpath(saved)}/ with TensorFlow {tf.__version__}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
