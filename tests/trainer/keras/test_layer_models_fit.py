"""Small CNN and LSTM models trained with `fit` on scikit-learn's 8x8 digits (1797 images bundled with
scikit-learn; train on 1200, evaluate on the other 597): they must learn the task, as Keras's do in a few
epochs (held-out accuracy: CNN 0.958, LSTM 0.961 here with these seeds; the thresholds, 0.93 and 0.92, leave
room for other numerics)."""
import numpy as np
import pytest

import tensorfleet as tf
from tensorfleet import datasets

L = tf.keras.layers


@pytest.fixture(scope="module")
def digits():
    try:
        images, labels = datasets.load_digits_arrays()
    except datasets.MissingDataError as e:  # scikit-learn not installed
        pytest.skip(str(e))
    x = (images.astype(np.float32) / 16.0).reshape(-1, 8, 8)
    perm = np.random.default_rng(0).permutation(len(x))
    x, labels = x[perm], labels[perm]
    return x[:1200], labels[:1200], x[1200:], labels[1200:]


def test_cnn_with_batch_norm_and_dropout_learns_digits(digits):
    x_train, y_train, x_test, y_test = digits
    tf.set_random_seed(1)
    np.random.seed(1)
    model = tf.keras.Sequential([
        L.Conv2D(16, 3, padding="same", activation="relu", input_shape=(8, 8, 1)), L.BatchNormalization(),
        L.MaxPooling2D(2), L.Conv2D(32, 3, padding="same", activation="relu"), L.GlobalAveragePooling2D(),
        L.Dropout(0.25), L.Dense(10, activation="softmax")])
    model.compile(tf.keras.optimizers.Adam(0.01), "sparse_categorical_crossentropy", metrics=["accuracy"])
    history = model.fit(x_train[..., None], y_train, batch_size=32, epochs=15, verbose=0)
    loss, acc = model.evaluate(x_test[..., None], y_test, verbose=0)
    assert history.history["loss"][-1] < history.history["loss"][0] / 3
    assert acc >= 0.93, (loss, acc, history.history["acc"])


def test_lstm_over_image_rows_learns_digits(digits):
    x_train, y_train, x_test, y_test = digits
    tf.set_random_seed(2)
    np.random.seed(2)
    model = tf.keras.Sequential([L.LSTM(32, input_shape=(8, 8)), L.Dense(10, activation="softmax")])
    model.compile(tf.keras.optimizers.Adam(0.01), "sparse_categorical_crossentropy", metrics=["accuracy"])
    model.fit(x_train, y_train, batch_size=32, epochs=8, verbose=0)
    _, acc = model.evaluate(x_test, y_test, verbose=0)
    assert acc >= 0.92, acc
