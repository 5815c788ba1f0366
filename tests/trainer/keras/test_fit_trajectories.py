"""`fit` against real TensorFlow's Keras: the same MLP from the same initial weights on the same data (no
shuffling) with every optimizer gives TF's History and final weights (fixture written by
scripts/gen_keras_fixtures.py with TF's graph-mode Keras; see its docstring)."""
import os

import numpy as np
import pytest

import tensorfleet as tf

FIXTURE = np.load(os.path.join(os.path.dirname(__file__), "data", "keras_fit_trajectories.npz"))
O = tf.keras.optimizers
OPTIMIZERS = {
    "sgd": lambda: O.SGD(learning_rate=0.1),
    "sgd_nesterov_decay": lambda: O.SGD(learning_rate=0.1, momentum=0.9, nesterov=True, decay=0.01),
    "adam": lambda: O.Adam(learning_rate=0.01),
    "adam_amsgrad": lambda: O.Adam(learning_rate=0.01, amsgrad=True),
    "rmsprop": lambda: O.RMSprop(learning_rate=0.01),
    "rmsprop_centered_momentum": lambda: O.RMSprop(learning_rate=0.01, momentum=0.5, centered=True),
    "adagrad": lambda: O.Adagrad(learning_rate=0.1),
    "adadelta": lambda: O.Adadelta(learning_rate=1.0),
    "adamax": lambda: O.Adamax(learning_rate=0.01),
    "nadam": lambda: O.Nadam(learning_rate=0.01),
}


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_fit_matches_tensorflow_keras(name):
    model = tf.keras.Sequential([
        tf.keras.layers.Dense(16, activation="relu", input_shape=(12,), kernel_regularizer="l2"),
        tf.keras.layers.Dense(4, activation="softmax")])
    model.compile(OPTIMIZERS[name](), "categorical_crossentropy", metrics=["accuracy"])
    model.set_weights([FIXTURE[f"init_{i}"] for i in range(4)])
    history = model.fit(FIXTURE["x"], FIXTURE["y"], batch_size=32, epochs=3, shuffle=False, verbose=0,
                        validation_split=0.25)
    for key in ("loss", "acc", "val_loss", "val_acc"):
        np.testing.assert_allclose(history.history[key], FIXTURE[f"{name}/{key}"], rtol=2e-5, atol=1e-6,
                                   err_msg=key)
    for i, w in enumerate(model.get_weights()):
        np.testing.assert_allclose(w, FIXTURE[f"{name}/weight_{i}"], rtol=1e-4, atol=2e-6, err_msg=f"weight {i}")
