"""fit / evaluate / predict on tf.data Datasets: steps from the dataset's size, the per-step loss average,
(x, y, sample_weight) elements, dict inputs, validation datasets, and TF's errors."""
import numpy as np
import pytest

import tensorfleet as tf

K = tf.keras.backend
L = tf.keras.layers
rng = np.random.default_rng(6)
X = rng.standard_normal((10, 4)).astype("float32")
Y = np.eye(3, dtype="float32")[rng.integers(0, 3, 10)]


def model_lr0(**compile_kwargs):
    model = tf.keras.Sequential([L.Dense(3, activation="softmax", input_shape=(4,))])
    model.compile(tf.keras.optimizers.SGD(0.0), "categorical_crossentropy", **compile_kwargs)
    return model


def ce(model, x, y):
    p = np.clip(model.predict(x), 1e-7, 1 - 1e-7)
    return -(y * np.log(p)).sum(1)


def test_fit_on_a_dataset_counts_steps_and_averages_batch_losses(capsys):
    model = model_lr0(metrics=["acc"])
    ds = tf.data.Dataset.from_tensor_slices((X, Y)).batch(4)  # 3 steps: 4, 4, 2 samples
    history = model.fit(ds, epochs=2, verbose=2)
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "Train on 3 steps" and out[2].startswith("3/3 - ")
    losses = ce(model, X, Y)
    step_mean = np.mean([losses[:4].mean(), losses[4:8].mean(), losses[8:].mean()])  # steps, not samples
    assert history.history["loss"] == pytest.approx([step_mean] * 2, rel=1e-5)
    acc = (model.predict(X).argmax(1) == Y.argmax(1)).mean()
    assert history.history["acc"] == pytest.approx([acc] * 2)
    assert model.evaluate(ds, verbose=0) == pytest.approx([step_mean, acc], rel=1e-5)
    np.testing.assert_allclose(model.predict(tf.data.Dataset.from_tensor_slices(X).batch(3)), model.predict(X),
                               rtol=1e-6)


def test_dataset_training_updates_the_same_weights():
    model = tf.keras.Sequential([L.Dense(3, activation="softmax", input_shape=(4,))])
    model.compile(tf.keras.optimizers.SGD(0.5), "categorical_crossentropy")
    before = model.evaluate(X, Y, verbose=0)
    model.fit(tf.data.Dataset.from_tensor_slices((X, Y)).batch(10), epochs=5, verbose=0)
    assert model.evaluate(X, Y, verbose=0) < before
    assert len(tf.trainable_variables()) == 2


def test_sample_weights_and_steps_per_epoch_on_repeated_datasets():
    model = model_lr0()
    w = rng.uniform(0, 2, 10).astype("float32")
    ds = tf.data.Dataset.from_tensor_slices((X, Y, w)).batch(10)
    assert model.evaluate(ds, verbose=0) == pytest.approx((w * ce(model, X, Y)).sum() / 10, rel=1e-5)
    history = model.fit(ds.repeat(), steps_per_epoch=2, epochs=2, verbose=0)
    assert len(history.history["loss"]) == 2
    with pytest.raises(ValueError, match="infinitely repeating dataset, you must specify the `steps_per_epoch`"):
        model.fit(ds.repeat(), epochs=1, verbose=0)
    with pytest.raises(ValueError, match="contains 1 batches, but you passed `epochs=2` and `steps_per_epoch=1`"):
        model.fit(ds, steps_per_epoch=1, epochs=2, verbose=0)


def test_validation_dataset_and_unknown_size(capsys):
    model = model_lr0()
    train = tf.data.Dataset.from_tensor_slices((X, Y)).batch(5)
    val = tf.data.Dataset.from_tensor_slices((X[:4], Y[:4])).batch(2)
    history = model.fit(train, validation_data=val, epochs=2, verbose=1)
    assert "Train on 2 steps, validate on 2 steps" in capsys.readouterr().out
    assert history.history["val_loss"] == pytest.approx([ce(model, X[:4], Y[:4]).mean()] * 2, rel=1e-5)
    filtered = tf.data.Dataset.from_tensor_slices((X, Y)).filter(lambda x, y: True).batch(5)  # size unknown
    history = model.fit(filtered, epochs=2, verbose=0)
    assert len(history.history["loss"]) == 2


def test_dict_inputs_for_a_functional_model():
    a, b = tf.keras.Input((2,), name="a"), tf.keras.Input((2,), name="b")
    model = tf.keras.Model([a, b], L.Dense(3, activation="softmax")(L.concatenate([a, b])))
    model.compile(tf.keras.optimizers.SGD(0.0), "categorical_crossentropy")
    ds = tf.data.Dataset.from_tensor_slices(({"a": X[:, :2], "b": X[:, 2:]}, Y)).batch(10)
    expected = model.evaluate([X[:, :2], X[:, 2:]], Y, verbose=0)
    assert model.evaluate(ds, verbose=0) == pytest.approx(expected, rel=1e-6)


def test_dataset_argument_errors():
    model = model_lr0()
    ds = tf.data.Dataset.from_tensor_slices((X, Y)).batch(5)
    with pytest.raises(ValueError, match="you should not specify a target"):
        model.fit(ds, Y, verbose=0)
    with pytest.raises(ValueError, match="`batch_size` argument must not be specified"):
        model.fit(ds, batch_size=5, verbose=0)
    with pytest.raises(ValueError, match="`validation_split` argument is not supported"):
        model.fit(ds, validation_split=0.5, verbose=0)


def test_deferred_model_built_from_a_dataset():
    model = tf.keras.Sequential([L.Dense(3, activation="softmax")])
    model.compile("sgd", "categorical_crossentropy")
    model.fit(tf.data.Dataset.from_tensor_slices((X, Y)).batch(5), verbose=0)
    assert model.layers[0].kernel.shape.as_list() == [4, 3]
