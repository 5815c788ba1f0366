"""tf.keras.losses and tf.keras.metrics against numpy: per-sample functions, Loss reductions and sample
weights, stateful metrics (update, result, reset), and how compile resolves names."""
import numpy as np
import pytest

import tensorfleet as tf

K = tf.keras.backend
losses, metrics = tf.keras.losses, tf.keras.metrics
rng = np.random.default_rng(3)
YT = rng.uniform(0, 1, (4, 3))
YP = rng.uniform(0.05, 0.95, (4, 3))


def run(t, feed=None):
    return K.get_session().run(t, feed)


def c(v):
    return K.constant(v, "float64")


@pytest.mark.parametrize("fn,ref", [
    (losses.mse, lambda t, p: ((p - t) ** 2).mean(-1)),
    (losses.mae, lambda t, p: np.abs(p - t).mean(-1)),
    (losses.mape, lambda t, p: 100 * (np.abs(t - p) / np.maximum(np.abs(t), 1e-7)).mean(-1)),
    (losses.msle, lambda t, p: ((np.log(p + 1) - np.log(t + 1)) ** 2).mean(-1)),
    (losses.logcosh, lambda t, p: np.log(np.cosh(p - t)).mean(-1)),
    (losses.kld, lambda t, p: (np.clip(t, 1e-7, 1) * np.log(np.clip(t, 1e-7, 1) / p)).sum(-1)),
    (losses.poisson, lambda t, p: (p - t * np.log(p + 1e-7)).mean(-1)),
    (losses.categorical_hinge, lambda t, p: np.maximum(0, ((1 - t) * p).max(-1) - (t * p).sum(-1) + 1)),
    (losses.cosine_proximity, lambda t, p: -(t * p).sum(-1) / np.linalg.norm(t, axis=-1) / np.linalg.norm(p, axis=-1)),
    (losses.binary_crossentropy, lambda t, p: -(t * np.log(p + 1e-7) + (1 - t) * np.log(1 - p + 1e-7)).mean(-1)),
])
def test_per_sample_loss_functions(fn, ref):
    np.testing.assert_allclose(run(fn(c(YT), c(YP))), ref(YT, YP), rtol=1e-6)


def test_hinge_losses_convert_binary_labels():
    t = np.array([[0.0, 1.0], [1.0, 1.0]])
    p = rng.standard_normal((2, 2))
    np.testing.assert_allclose(run(losses.hinge(c(t), c(p))), np.maximum(1 - (2 * t - 1) * p, 0).mean(-1))
    np.testing.assert_allclose(run(losses.squared_hinge(c(t), c(p))),
                               (np.maximum(1 - (2 * t - 1) * p, 0) ** 2).mean(-1))


def test_categorical_crossentropy_label_smoothing():
    t = np.eye(3)[[0, 1, 2, 0]]
    smooth = t * 0.8 + 0.2 / 3
    p = YP / YP.sum(1, keepdims=True)
    np.testing.assert_allclose(run(losses.categorical_crossentropy(c(t), c(p), label_smoothing=0.2)),
                               -(smooth * np.log(p)).sum(1), rtol=1e-9)


def test_loss_classes_reduce_and_weight():
    per_sample = ((YP - YT) ** 2).mean(-1)
    w = np.array([1.0, 0.0, 2.0, 0.5])
    mse = losses.MeanSquaredError()
    assert run(mse(c(YT), c(YP))) == pytest.approx(per_sample.mean())
    assert run(mse(c(YT), c(YP), sample_weight=c(w))) == pytest.approx((per_sample * w).sum() / 4)
    summed = losses.MeanSquaredError(reduction=losses.Reduction.SUM)
    assert run(summed(c(YT), c(YP), sample_weight=c(w))) == pytest.approx((per_sample * w).sum())
    none = losses.MeanSquaredError(reduction="none")
    np.testing.assert_allclose(run(none(c(YT), c(YP))), per_sample)
    logits = rng.standard_normal((4, 3))
    cce = losses.CategoricalCrossentropy(from_logits=True)
    t = np.eye(3)[[0, 1, 2, 0]]
    lsm = logits - np.log(np.exp(logits).sum(1, keepdims=True))
    assert run(cce(c(t), c(logits))) == pytest.approx(-(t * lsm).sum(1).mean())
    assert cce.get_config() == {"reduction": "auto", "name": "categorical_crossentropy", "from_logits": True,
                                "label_smoothing": 0}
    with pytest.raises(ValueError, match="Invalid Reduction Key"):
        losses.MeanSquaredError(reduction="mean")


def test_loss_lookup():
    assert losses.get("mse") is losses.mean_squared_error and losses.get("MAE") is losses.mean_absolute_error
    assert isinstance(losses.get({"class_name": "Huber", "config": {"delta": 2.0}}), losses.Huber)
    with pytest.raises(ValueError, match="Unknown loss function"):
        losses.get("nope")


def test_accuracy_functions():
    t = np.eye(3)[[0, 1, 2, 1]]
    p = np.array([[0.8, 0.1, 0.1], [0.6, 0.3, 0.1], [0.1, 0.1, 0.8], [0.2, 0.7, 0.1]])
    np.testing.assert_array_equal(run(metrics.categorical_accuracy(c(t), c(p))), [1, 0, 1, 1])
    np.testing.assert_array_equal(run(metrics.sparse_categorical_accuracy(c([[0], [1], [2], [0]]), c(p))),
                                  [1, 0, 1, 0])
    np.testing.assert_array_equal(run(metrics.binary_accuracy(c([[1.0], [0.0]]), c([[0.7], [0.6]]))), [1, 0])
    top2 = metrics.top_k_categorical_accuracy(K.constant(t), K.constant(p), k=2)  # in_top_k: float32 only, as TF
    assert run(top2) == pytest.approx(1.0)


def test_stateful_mean_metric_accumulates_and_resets():
    m = metrics.Mean()
    values = tf.placeholder(tf.float32, [None])
    weights = tf.placeholder(tf.float32, [None])
    result = m(values, sample_weight=weights)
    run(result, {values: [1.0, 3.0], weights: [1.0, 1.0]})
    assert run(result, {values: [10.0], weights: [2.0]}) == pytest.approx((1 + 3 + 20) / 4)
    m.reset_states()
    assert run(m.result()) == 0.0
    assert tf.global_variables() == [] and len(m.variables) == 2  # in no collection: Saver() skips them


def test_metric_classes():
    acc = metrics.CategoricalAccuracy()
    t = np.eye(2)[[0, 1, 1]]
    p = np.array([[0.9, 0.1], [0.2, 0.8], [0.6, 0.4]])
    assert run(acc(c(t), c(p))) == pytest.approx(2 / 3)
    bacc = metrics.BinaryAccuracy(threshold=0.7)
    assert run(bacc(c([[1.0], [1.0]]), c([[0.8], [0.6]]))) == pytest.approx(0.5)
    mse = metrics.MeanSquaredError()
    assert run(mse(c(YT), c(YP))) == pytest.approx(((YP - YT) ** 2).mean())
    assert mse.get_config() == {"name": "mean_squared_error", "dtype": "float32"}
    assert metrics.get("acc") is metrics.accuracy and metrics.get("mse").__name__ == "mean_squared_error"


@pytest.mark.parametrize("loss,units,metric,name,fn", [
    ("categorical_crossentropy", 3, "accuracy", "acc", "categorical_accuracy"),
    ("sparse_categorical_crossentropy", 3, "acc", "acc", "sparse_categorical_accuracy"),
    ("binary_crossentropy", 3, "accuracy", "acc", "binary_accuracy"),
    ("mse", 1, "acc", "acc", "binary_accuracy"),
    ("categorical_crossentropy", 3, "mse", "mean_squared_error", "mean_squared_error"),
    ("categorical_crossentropy", 3, metrics.CategoricalAccuracy(name="ca"), "ca", "categorical_accuracy"),
])
def test_compile_resolves_metric_names_and_functions_as_keras_1_15(loss, units, metric, name, fn):
    model = tf.keras.Sequential([tf.keras.layers.Dense(units, input_shape=(2,))])
    model.compile("sgd", loss, metrics=[metric])
    assert model.metrics_names == ["loss", name]
    assert model.metrics[0]._fn.__name__ == fn
