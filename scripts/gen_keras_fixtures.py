"""Writes tests/trainer/keras/data/keras_fit_trajectories.npz and keras_layer_models.npz with real TensorFlow's
Keras (the `tf1` extra).

Run with a TensorFlow install: `python scripts/gen_keras_fixtures.py`. It uses TF's graph-mode Keras
(`tf.compat.v1.disable_v2_behavior()`, the v1 training loops and the OptimizerV2 classes of TF 1.15, which
TF 2.x keeps as `tf.keras.optimizers.legacy`) to train a small MLP from fixed initial weights on fixed random
data (no shuffling, no dropout) with each optimizer, and records the History and the final weights.
tests/trainer/keras/test_fit_trajectories.py trains the same model with tensorfleet and compares.

`layer_models()` does the same for a small CNN (Conv2D, BatchNormalization, MaxPooling2D, Conv2DTranspose,
AveragePooling2D) and a masked recurrent model (Embedding(mask_zero) -> Bidirectional(LSTM) -> GRU), with TF
1.15's v1 layers (`tf.compat.v1.keras.layers`: v1 LSTM/GRU defaults, the v1 fused BatchNormalization): the
predictions before training, the History and the final weights (moving statistics included).
tests/trainer/keras/test_layer_models_fixture.py compares.
"""
from __future__ import annotations

import os

import numpy as np

DATA = os.path.join(os.path.dirname(__file__), os.pardir, "tests", "trainer", "keras", "data")
OUT = os.path.join(DATA, "keras_fit_trajectories.npz")
LAYERS_OUT = os.path.join(DATA, "keras_layer_models.npz")

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
    _save(OUT, out, tf)
    _save(LAYERS_OUT, layer_models(tf), tf)


def _save(path, arrays, tf):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    np.savez_compressed(path, **arrays)
    print(f"wrote {os.path.normpath(path)} ({os.path.getsize(path)} bytes) with TensorFlow {tf.__version__}")


def layer_model_data():
    """Fixed random images with 3 classes, and id sequences (0-padded, lengths 2-6) with 2 classes."""
    rng = np.random.default_rng(20191016)
    images = rng.standard_normal((24, 7, 7, 2)).astype(np.float32)
    image_labels = np.eye(3, dtype=np.float32)[(images[:, :3, :3, 0].sum((1, 2)) > 0).astype(int)
                                               + (images[:, 4:, 4:, 1].sum((1, 2)) > 0).astype(int)]
    lengths = rng.integers(2, 7, 24)
    ids = np.where(np.arange(6)[None, :] < lengths[:, None], rng.integers(1, 8, (24, 6)), 0).astype(np.int32)
    id_labels = np.eye(2, dtype=np.float32)[(ids == 3).any(1).astype(int)]
    return images, image_labels, ids, id_labels


def initial_weights(shapes, seed):
    """Uniform(-0.4, 0.4) weights; `positive` (a moving variance) in [0.5, 1.5]."""
    rng = np.random.default_rng(seed)
    return [(rng.uniform(0.5, 1.5, shape) if positive else rng.uniform(-0.4, 0.4, shape)).astype(np.float32)
            for shape, positive in shapes]


def layer_models(tf):
    images, image_labels, ids, id_labels = layer_model_data()
    v1 = tf.compat.v1.keras.layers
    out = {"cnn/x": images, "cnn/y": image_labels, "rnn/x": ids, "rnn/y": id_labels}
    for name, build, x, y, opt in (
            ("cnn", lambda: tf.keras.Sequential([
                tf.keras.layers.Conv2D(4, 3, padding="same", activation="relu", input_shape=(7, 7, 2)),
                v1.BatchNormalization(), tf.keras.layers.MaxPooling2D(2),
                tf.keras.layers.Conv2DTranspose(3, 3, strides=2, padding="same"),
                tf.keras.layers.AveragePooling2D(2), tf.keras.layers.Flatten(),
                tf.keras.layers.Dense(3, activation="softmax")]), images, image_labels,
             lambda: tf.keras.optimizers.legacy.SGD(0.1, momentum=0.5)),
            ("rnn", lambda: tf.keras.Sequential([
                tf.keras.layers.Embedding(8, 4, mask_zero=True, input_length=6),
                tf.keras.layers.Bidirectional(v1.LSTM(4, return_sequences=True)), v1.GRU(3),
                tf.keras.layers.Dense(2, activation="softmax")]), ids, id_labels,
             lambda: tf.keras.optimizers.legacy.Adam(0.02))):
        tf.keras.backend.clear_session()
        model = build()
        model.compile(opt(), "categorical_crossentropy", metrics=["accuracy"])
        shapes = [(w.shape, "moving_variance" in w.name) for w in model.weights]
        weights = initial_weights(shapes, seed=len(name))
        model.set_weights(weights)
        out.update({f"{name}/init_{i}": w for i, w in enumerate(weights)})
        out[f"{name}/predict"] = model.predict(x, batch_size=8)
        history = model.fit(x, y, batch_size=8, epochs=3, shuffle=False, verbose=0)
        for key in ("loss", "acc"):
            out[f"{name}/{key}"] = np.asarray(history.history[key], np.float64)
        for i, w in enumerate(model.get_weights()):
            out[f"{name}/weight_{i}"] = w
        out[f"{name}/names"] = np.array([w.name for w in model.weights])
    return out


if __name__ == "__main__":
    main()
