"""Model.compile / fit / evaluate / predict on numpy arrays, checked against numpy: the epoch loss is the
sample-weighted mean of the batch losses, validation_split takes the last fraction, class and sample weights
weight the per-sample losses, regularization and loss weights add up, one session run per batch."""
import numpy as np
import pytest

import tensorfleet as tf
from tensorfleet.datasets import read_data_sets

K = tf.keras.backend
L = tf.keras.layers
rng = np.random.default_rng(4)


def softmax_model(n_in=4, n_out=3, lr=0.0, **compile_kwargs):
    model = tf.keras.Sequential([L.Dense(n_out, activation="softmax", input_shape=(n_in,))])
    compile_kwargs.setdefault("metrics", ["acc"])
    model.compile(tf.keras.optimizers.SGD(lr), "categorical_crossentropy", **compile_kwargs)
    return model


def per_sample_ce(model, x, y):
    p = np.clip(model.predict(x), 1e-7, 1 - 1e-7)
    return -(y * np.log(p)).sum(1)


def data(n=10, n_in=4, n_out=3):
    x = rng.standard_normal((n, n_in)).astype("float32")
    y = np.eye(n_out, dtype="float32")[rng.integers(0, n_out, n)]
    return x, y


def test_fit_mnist_mlp_reaches_keras_accuracy():
    mnist = read_data_sets(one_hot=True)
    x, y = mnist.train.images[:6000], mnist.train.labels[:6000]
    model = tf.keras.Sequential([L.Dense(128, activation="relu", input_shape=(784,)), L.Dropout(0.2),
                                 L.Dense(10, activation="softmax")])
    model.compile("adam", "categorical_crossentropy", metrics=["accuracy"])
    val = (mnist.test.images[:1000], mnist.test.labels[:1000])
    history = model.fit(x, y, batch_size=64, epochs=2, validation_data=val, verbose=0)
    assert sorted(history.history) == ["acc", "loss", "val_acc", "val_loss"] and history.epoch == [0, 1]
    assert history.history["loss"][1] < history.history["loss"][0]
    loss, acc = model.evaluate(*val, verbose=0)
    assert acc >= 0.87  # TF 2.15's graph-mode Keras, same setting, three seeds: 0.892, 0.896, 0.890
    assert history.history["val_loss"][-1] == pytest.approx(loss, rel=1e-5)  # the same weights, the same data
    assert history.history["val_acc"][-1] == pytest.approx(acc)
    assert history.params == {"batch_size": 64, "epochs": 2, "steps": None, "samples": 6000, "verbose": 0,
                              "do_validation": True,
                              "metrics": ["loss", "acc", "val_loss", "val_acc"]}


def test_epoch_loss_is_the_sample_weighted_mean_of_batch_losses():
    x, y = data(10)
    model = softmax_model()  # lr 0: the weights do not move, so every batch sees the same model
    history = model.fit(x, y, batch_size=4, epochs=2, verbose=0)  # batches of 4, 4 and 2
    ref = per_sample_ce(model, x, y).mean()
    assert history.history["loss"] == pytest.approx([ref, ref], rel=1e-5)
    acc = (model.predict(x).argmax(1) == y.argmax(1)).mean()
    assert history.history["acc"] == pytest.approx([acc, acc])
    assert model.evaluate(x, y, batch_size=3, verbose=0) == pytest.approx([ref, acc], rel=1e-5)


def test_validation_split_takes_the_last_fraction_before_shuffling(capsys):
    x, y = data(10)
    model = softmax_model()
    history = model.fit(x, y, validation_split=0.3, epochs=1, verbose=1)
    assert "Train on 7 samples, validate on 3 samples" in capsys.readouterr().out
    assert history.history["val_loss"][0] == pytest.approx(per_sample_ce(model, x[7:], y[7:]).mean(), rel=1e-5)
    assert history.history["loss"][0] == pytest.approx(per_sample_ce(model, x[:7], y[:7]).mean(), rel=1e-5)


def test_class_weight_and_sample_weight():
    x, y = data(12)
    model = softmax_model()
    losses = per_sample_ce(model, x, y)
    classes = y.argmax(1)
    class_weight = {0: 1.0, 1: 3.0, 2: 0.5}
    cw = np.array([class_weight[c] for c in classes])
    sw = rng.uniform(0, 2, 12)
    h = model.fit(x, y, class_weight=class_weight, batch_size=12, verbose=0)
    assert h.history["loss"][0] == pytest.approx((cw * losses).sum() / 12, rel=1e-5)
    h = model.fit(x, y, sample_weight=sw, batch_size=12, verbose=0)
    assert h.history["loss"][0] == pytest.approx((sw * losses).sum() / 12, rel=1e-5)
    h = model.fit(x, y, sample_weight=sw, class_weight=class_weight, batch_size=12, verbose=0)
    assert h.history["loss"][0] == pytest.approx((sw * cw * losses).sum() / 12, rel=1e-5)
    assert model.evaluate(x, y, sample_weight=sw, verbose=0)[0] == pytest.approx((sw * losses).sum() / 12, rel=1e-5)
    with pytest.raises(ValueError, match="must contain all classes"):
        model.fit(x, y, class_weight={0: 1.0}, verbose=0)


def test_weighted_metrics_use_sample_weights():
    x, y = data(8)
    model = softmax_model(metrics=["acc"], weighted_metrics=["acc"])
    sw = np.array([1, 0, 0, 0, 1, 1, 0, 0], np.float32)
    _, acc, wacc = model.evaluate(x, y, sample_weight=sw, verbose=0)
    hits = model.predict(x).argmax(1) == y.argmax(1)
    assert model.metrics_names == ["loss", "acc", "weighted_acc"]
    assert acc == pytest.approx(hits.mean()) and wacc == pytest.approx((hits * sw).sum() / sw.sum())


def test_regularization_losses_are_added_to_the_loss():
    x, y = data(6)
    model = tf.keras.Sequential([L.Dense(3, activation="softmax", input_shape=(4,), kernel_regularizer="l2")])
    model.compile(tf.keras.optimizers.SGD(0.0), "categorical_crossentropy")
    kernel = model.layers[0].get_weights()[0]
    expected = per_sample_ce(model, x, y).mean() + 0.01 * (kernel ** 2).sum()
    assert model.evaluate(x, y, verbose=0) == pytest.approx(expected, rel=1e-5)


def test_multi_output_losses_weights_and_names():
    inp = tf.keras.Input((4,))
    hidden = L.Dense(5, activation="tanh")(inp)
    out_a = L.Dense(2, name="a")(hidden)
    out_b = L.Dense(3, activation="softmax", name="b")(hidden)
    model = tf.keras.Model(inp, [out_a, out_b])
    model.compile(tf.keras.optimizers.SGD(0.0), {"a": "mse", "b": "categorical_crossentropy"},
                  loss_weights={"a": 2.0, "b": 0.5}, metrics={"b": "acc"})
    assert model.metrics_names == ["loss", "a_loss", "b_loss", "b_acc"]
    x = rng.standard_normal((6, 4)).astype("float32")
    ya, yb = rng.standard_normal((6, 2)).astype("float32"), np.eye(3, dtype="float32")[[0, 1, 2, 0, 1, 2]]
    pa, pb = model.predict(x)
    la = ((pa - ya) ** 2).mean()
    lb = -(yb * np.log(np.clip(pb, 1e-7, 1))).sum(1).mean()
    total, got_a, got_b, acc = model.evaluate(x, {"a": ya, "b": yb}, batch_size=6, verbose=0)
    assert (got_a, got_b) == (pytest.approx(la, rel=1e-5), pytest.approx(lb, rel=1e-5))
    assert total == pytest.approx(2 * la + 0.5 * lb, rel=1e-5)
    assert acc == pytest.approx((pb.argmax(1) == yb.argmax(1)).mean())


def test_learning_phase_is_fed_true_by_fit_only():
    x, y = data(50)
    model = tf.keras.Sequential([L.Dropout(0.5, input_shape=(4,)), L.Dense(3, activation="softmax")])
    model.compile(tf.keras.optimizers.SGD(0.0), "categorical_crossentropy")
    clean = model.evaluate(x, y, verbose=0)
    assert clean == pytest.approx(per_sample_ce(model, x, y).mean(), rel=1e-5)  # predict/evaluate: no dropout
    # fit: dropout on, a new mask each epoch (SGD(0.0): the weights stay). One mask may by chance give the clean
    # loss within 1e-3 (seen once, a fresh-clone suite run on 2026-11-29: 1.52162 against 1.52175); five cannot.
    trained = model.fit(x, y, batch_size=50, epochs=5, verbose=0).history["loss"]
    assert any(loss != pytest.approx(clean, rel=1e-3) for loss in trained), (trained, clean)
    assert model.evaluate(x, y, verbose=0) == pytest.approx(clean, rel=1e-6)   # and off again after fit


def test_one_session_run_per_batch(monkeypatch):
    x, y = data(10)
    model = softmax_model(lr=0.1)
    model.fit(x, y, batch_size=4, verbose=0)  # builds the train function, initialises the variables
    sess = K.get_session()
    runs = []
    original = type(sess).run
    monkeypatch.setattr(type(sess), "run", lambda self, *a, **k: runs.append(1) or original(self, *a, **k))
    model.fit(x, y, batch_size=4, epochs=2, verbose=0)
    assert len(runs) == 2 * 3 + 2  # 3 batches per epoch, plus one metric reset per epoch


def test_tf_train_optimizer_and_gradient_step():
    model = tf.keras.Sequential([L.Dense(1, use_bias=False, kernel_initializer="ones", input_shape=(2,))])
    model.compile(tf.train.GradientDescentOptimizer(0.1), "mse")
    x, y = np.array([[1.0, 2.0]], np.float32), np.array([[1.0]], np.float32)
    model.train_on_batch(x, y)
    grad = 2 * (x @ np.ones((2, 1)) - y) * x.T  # d mse / d kernel
    np.testing.assert_allclose(model.get_weights()[0], np.ones((2, 1)) - 0.1 * grad, rtol=1e-6)


def test_on_batch_methods_and_initial_epoch():
    x, y = data(8)
    model = softmax_model(lr=0.5)
    before = model.test_on_batch(x, y)
    trained = model.train_on_batch(x, y)
    assert trained == pytest.approx(before)  # the loss is taken before the update
    assert model.test_on_batch(x, y)[0] < before[0]
    np.testing.assert_allclose(model.predict_on_batch(x), model.predict(x), rtol=1e-6)
    history = model.fit(x, y, epochs=3, initial_epoch=1, verbose=0)
    assert history.epoch == [1, 2] and len(history.history["loss"]) == 2


def test_shuffle_modes_and_determinism():
    x, y = data(9)
    for shuffle in (False, "batch", True):
        model = softmax_model(lr=0.0)
        loss = model.fit(x, y, batch_size=4, shuffle=shuffle, verbose=0).history["loss"][0]
        assert loss == pytest.approx(per_sample_ce(model, x, y).mean(), rel=1e-5)


def test_input_errors_name_the_input():
    model = softmax_model()
    x, y = data(4)
    with pytest.raises(ValueError, match=r"expected dense_input to have shape \(4,\) but got array with shape \(5,\)"):
        model.fit(np.ones((4, 5)), y, verbose=0)
    with pytest.raises(ValueError, match="same number of samples as target arrays"):
        model.fit(x, y[:3], verbose=0)
    with pytest.raises(ValueError, match=r"expected dense to have shape \(3,\) but got array with shape \(1,\)"):
        model.fit(x, y.argmax(1), verbose=0)
    single = tf.keras.Sequential([L.Dense(1, input_shape=(4,))])
    single.compile("sgd", "categorical_crossentropy")
    with pytest.raises(ValueError, match="while using as loss `categorical_crossentropy`"):
        single.fit(x, y[:, :1], verbose=0)
    bare = tf.keras.Sequential([L.Dense(1, input_shape=(4,))])
    with pytest.raises(RuntimeError, match="You must compile your model"):
        bare.fit(x, y, verbose=0)
