"""Writes tests/trainer/keras/data/keras_fit_trajectories.npz with real TensorFlow's Keras (the `tf1` extra).

Run with a TensorFlow install: `python scripts/gen_keras_fixtures.py`. It uses TF's graph-mode Keras
(`tf.compat.v1.disable_v2_behavior()`, the v1 training loops and the OptimizerV2 classes of TF 1.15, which
TF 2.x keeps as `tf.keras.optimizers.legacy`) to train a small MLP from fixed initial weights on fixed random
data (no shuffling, no dropout) with each optimizer, and records the History and the final weights.
tests/trainer/keras/test_fit_trajectories.py trains the same model with tensorfleet and compares.
"""
from __future__ import annotations

import os

import numpy as np

OUT = os.path.join(os.path.dirname(__file__), os.pardir, "tests", "trainer", "keras", "data",
                   "keras_fit_trajectories.npz")

# name -> (optimizer class name in tf.keras.optimizers.legacy, kwargs); float32 models
OPTIMIZERS = {
    "sgd": ("SGD", {"learning_rate": 0.1}),
    "sgd_nesterov_decay": ("SGD", {"learning_rate": 0.1, "momentum": 0.9, "nesterov": True, "decay": 0.01}),
    "adam": ("Adam", {"learning_rate": 0.01}),
    "adam_amsgrad": ("Adam", {"learning_rate": 0.01, "amsgrad": True}),
    "rmsprop": ("RMSprop", {"learning_rate": 0.01}),
    "rmsprop_centered_momentum": ("RMSprop", {"learning_rate": 0.01, "momentum": 0.5, "centered": True}),
    "adagrad": ("Adagrad", {"learning_rate": 0.1}),
    "adadelta": ("Adadelta", {"learning_rate": 1.0}),
    "adamax": ("Adamax", {"learning_rate": 0.01}),
    "nadam": ("Nadam", {"learning_rate": 0.01}),
}


def data():
    rng = np.random.default_rng(20191015)
    x = rng.standard_normal((96, 12)).astype(np.float32)
    labels = (x[:, :4].sum(1) > 0).astype(int) + 2 * (x[:, 4:8].sum(1) > 0).astype(int)
    y = np.eye(4, dtype=np.float32)[labels]
    weights = [rng.uniform(-0.4, 0.4, (12, 16)).astype(np.float32), np.zeros(16, np.float32),
               rng.uniform(-0.4, 0.4, (16, 4)).astype(np.float32), np.full(4, 0.1, np.float32)]
    return x, y, weights


def main():
    import tensorflow as tf
    tf.compat.v1.disable_v2_behavior()
    x, y, weights = data()
    out = {"x": x, "y": y}
    out.update({f"init_{i}": w for i, w in enumerate(weights)})
    for name, (cls, kwargs) in OPTIMIZERS.items():
        tf.keras.backend.clear_session()
        model = tf.keras.Sequential([
            tf.keras.layers.Dense(16, activation="relu", input_shape=(12,), kernel_regularizer="l2"),
            tf.keras.layers.Dense(4, activation="softmax")])
        model.compile(getattr(tf.keras.optimizers.legacy, cls)(**kwargs), "categorical_crossentropy",
                      metrics=["accuracy"])
        model.set_weights(weights)
        history = model.fit(x, y, batch_size=32, epochs=3, shuffle=False, verbose=0, validation_split=0.25)
        for key in ("loss", "acc", "val_loss", "val_acc"):
            out[f"{name}/{key}"] = np.asarray(history.history[key], np.float64)
        for i, w in enumerate(model.get_weights()):
            out[f"{name}/weight_{i}"] = w
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    np.savez_compressed(OUT, **out)
    print(f"wrote {os.path.normpath(OUT)} ({os.path.getsize(OUT)} bytes) with TensorFlow {tf.__version__}")


if __name__ == "__main__":
    main()
