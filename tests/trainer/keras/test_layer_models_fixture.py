"""A CNN (Conv2D, BatchNormalization, pooling, Conv2DTranspose) and a masked recurrent model (Embedding(mask_zero)
-> Bidirectional(LSTM) -> GRU) against real TensorFlow's graph-mode Keras with TF 1.15's v1 layers: the same
predictions from the same weights, then the same History and final weights (moving statistics included) after
`fit` (fixture: scripts/gen_keras_fixtures.py, `layer_models`)."""
import os

import numpy as np
import pytest

import tensorfleet as tf

FIXTURE = np.load(os.path.join(os.path.dirname(__file__), "data", "keras_layer_models.npz"))
L = tf.keras.layers


def cnn():
    return tf.keras.Sequential([L.Conv2D(4, 3, padding="same", activation="relu", input_shape=(7, 7, 2)),
                                L.BatchNormalization(), L.MaxPooling2D(2),
                                L.Conv2DTranspose(3, 3, strides=2, padding="same"), L.AveragePooling2D(2),
                                L.Flatten(), L.Dense(3, activation="softmax")])


def rnn():
    return tf.keras.Sequential([L.Embedding(8, 4, mask_zero=True, input_length=6),
                                L.Bidirectional(L.LSTM(4, return_sequences=True)), L.GRU(3),
                                L.Dense(2, activation="softmax")])


@pytest.mark.parametrize("name", ["cnn", "rnn"])
def test_layer_model_matches_tensorflow_keras(name):
    x, y = FIXTURE[f"{name}/x"], FIXTURE[f"{name}/y"]
    model = cnn() if name == "cnn" else rnn()
    optimizer = tf.keras.optimizers.SGD(0.1, momentum=0.5) if name == "cnn" else tf.keras.optimizers.Adam(0.02)
    model.compile(optimizer, "categorical_crossentropy", metrics=["accuracy"])
    # TF 2 names the cell's weights in a cell scope (`lstm/lstm_cell/kernel`); TF 1.15 does not (`lstm/kernel`)
    tf2_names = [n.replace("/lstm_cell", "").replace("/gru_cell", "") for n in FIXTURE[f"{name}/names"]]
    assert [w.name for w in model.weights] == tf2_names
    count = len(model.weights)
    model.set_weights([FIXTURE[f"{name}/init_{i}"] for i in range(count)])
    np.testing.assert_allclose(model.predict(x, batch_size=8), FIXTURE[f"{name}/predict"], rtol=1e-5, atol=1e-6)
    history = model.fit(x, y, batch_size=8, epochs=3, shuffle=False, verbose=0)
    for key in ("loss", "acc"):
        np.testing.assert_allclose(history.history[key], FIXTURE[f"{name}/{key}"], rtol=2e-5, atol=1e-6,
                                   err_msg=key)
    for i, w in enumerate(model.get_weights()):
        np.testing.assert_allclose(w, FIXTURE[f"{name}/weight_{i}"], rtol=1e-4, atol=2e-6,
                                   err_msg=model.weights[i].name)
