"""`tf.keras.estimator.model_to_estimator`: the estimator trains the Keras model exactly as `fit` does (warm-started
from the Keras weights, the same SGD trajectory over the same batches, the global step as the optimizer's
iterations), evaluates with the compiled Keras loss and metrics (as `evaluate` computes them), handles dict
features and sample weights, places the variables on the ps tasks under TF_CONFIG, loads `keras_model_path`
and exports a SavedModel that serves the Keras predictions. The distributed run of every role is
tests/local/test_local_keras_estimator_example.py."""
import json

import numpy as np
import pytest

import tensorfleet as tf

K = tf.keras.backend
L = tf.keras.layers


@pytest.fixture(autouse=True)
def _no_tf_config(monkeypatch):
    monkeypatch.delenv("TF_CONFIG", raising=False)


def _data(n=128):
    rng = np.random.RandomState(3)
    x = rng.randn(n, 6).astype(np.float32)
    y = (x[:, 0] + x[:, 1] > 0).astype(np.int64) + (x[:, 2] > 0.5).astype(np.int64)
    return x, y


def _model(lr=0.1):
    inputs = tf.keras.Input(shape=(6,), name="features")
    hidden = L.Dense(8, activation="tanh", name="hidden")(inputs)
    model = tf.keras.Model(inputs, L.Dense(3, activation="softmax", name="probs")(hidden))
    model.compile(tf.keras.optimizers.SGD(lr), "sparse_categorical_crossentropy", metrics=["accuracy"])
    rng = np.random.RandomState(5)
    model.set_weights([rng.uniform(-0.5, 0.5, w.shape).astype(np.float32) for w in model.get_weights()])
    return model


def _input_fn(x, y, batch, key="features"):
    return lambda: tf.data.Dataset.from_tensor_slices(({key: x}, y)).batch(batch)


def test_training_follows_fit_from_the_keras_weights(tmp_path):
    x, y = _data()
    model = _model()
    initial = model.get_weights()
    est = tf.keras.estimator.model_to_estimator(keras_model=model, model_dir=str(tmp_path))
    warm = tf.train.latest_checkpoint(str(tmp_path / "keras"))
    assert warm == str(tmp_path / "keras" / "keras_model.ckpt")
    np.testing.assert_array_equal(tf.train.load_variable(warm, "hidden/kernel"), initial[0])
    est.train(_input_fn(x, y, 32), steps=4)
    model.fit(x, y, batch_size=32, epochs=1, shuffle=False, verbose=0)  # the same 4 batches, in order
    for name, want in zip(("hidden/kernel", "hidden/bias", "probs/kernel", "probs/bias"), model.get_weights()):
        np.testing.assert_allclose(est.get_variable_value(name), want, rtol=1e-5, atol=1e-6, err_msg=name)
    assert est.get_variable_value("global_step") == 4  # the optimizer's `iterations` is the global step
    assert "training/SGD/iter" not in est.get_variable_names()


def test_evaluate_uses_the_keras_loss_and_metrics(tmp_path):
    x, y = _data()
    model = _model()
    est = tf.keras.estimator.model_to_estimator(keras_model=model, model_dir=str(tmp_path))
    est.train(_input_fn(x, y, 32), steps=2)
    results = est.evaluate(_input_fn(x, y, 128))  # one batch: the estimator's mean loss is the batch loss
    assert sorted(results) == ["acc", "global_step", "loss"]
    K.clear_session()
    check = _model()
    check.load_weights(tf.train.latest_checkpoint(str(tmp_path)))  # an estimator checkpoint, by names
    loss, acc = check.evaluate(x, y, batch_size=128, verbose=0)
    assert results["loss"] == pytest.approx(loss, rel=1e-5) and results["acc"] == pytest.approx(acc, rel=1e-6)


def test_sample_weights_and_dict_features(tmp_path):
    x, y = _data()
    w = np.where(np.arange(len(x)) % 2 == 0, 1.0, 0.0).astype(np.float32)
    model = _model(lr=0.0)  # training leaves the (warm-started) Keras weights as they are
    want = model.evaluate(x, y, sample_weight=w, batch_size=128, verbose=0)[0]
    est = tf.keras.estimator.model_to_estimator(keras_model=model, model_dir=str(tmp_path))
    est.train(_input_fn(x, y, 32), steps=1)

    def weighted():
        return tf.data.Dataset.from_tensor_slices(({"features": {"features": x}, "sample_weights": w}, y)).batch(128)
    assert est.evaluate(weighted)["loss"] == pytest.approx(want, rel=1e-5)
    assert est.evaluate(_input_fn(x, y, 128))["loss"] != pytest.approx(want, rel=1e-3)
    with pytest.raises(KeyError, match=r"Missed keys: \{'features'\}"):
        est.evaluate(_input_fn(x, y, 128, key="pixels"))


def test_variables_are_placed_on_the_ps_tasks(tmp_path, monkeypatch):
    cluster = {"chief": ["127.0.0.1:1"], "worker": ["127.0.0.1:2"], "ps": ["127.0.0.1:3", "127.0.0.1:4"]}
    monkeypatch.setenv("TF_CONFIG", json.dumps({"cluster": cluster, "task": {"type": "worker", "index": 0}}))
    x, y = _data()
    est = tf.keras.estimator.model_to_estimator(keras_model=_model(), model_dir=str(tmp_path))
    assert not (tmp_path / "keras").exists()  # only the chief writes the warm-start checkpoint
    graph = tf.Graph()
    with graph.as_default(), graph.device(est._device_fn):  # what Estimator.train builds
        tf.train.get_or_create_global_step()
        features, labels = tf.data.Dataset.from_tensor_slices(({"features": x}, y)).batch(8) \
            .make_one_shot_iterator().get_next()
        spec = est._call_model_fn(features, labels, tf.estimator.ModeKeys.TRAIN, est.config)
        devices = {v.op.name: v.device for v in tf.global_variables()}
    assert {"hidden/kernel", "probs/bias", "training/SGD/learning_rate"} <= set(devices)
    assert set(devices.values()) <= {"/job:ps/task:0", "/job:ps/task:1"} and len(set(devices.values())) == 2
    assert spec.train_op.device == "/job:worker/task:0"


def test_keras_model_path_predict_and_export(tmp_path):
    x, _ = _data()
    model = _model()
    want = model.predict(x)
    model.save(str(tmp_path / "model.h5"))
    est = tf.keras.estimator.model_to_estimator(keras_model_path=str(tmp_path / "model.h5"),
                                                model_dir=str(tmp_path / "est"))
    est.train(_input_fn(x, np.zeros(len(x), np.int64), 32), steps=1)  # the warm start needs a training run
    preds = np.stack([p["probs"] for p in est.predict(lambda: tf.data.Dataset.from_tensor_slices(
        {"features": x}).batch(32))])
    assert preds.shape == want.shape and not np.allclose(preds, want)  # one SGD step was taken
    receiver = tf.estimator.export.build_raw_serving_input_receiver_fn(
        {"features": tf.placeholder(tf.float32, [None, 6])})
    export = est.export_saved_model(str(tmp_path / "export"), receiver).decode()
    with tf.Session(graph=tf.Graph()) as sess:
        meta = tf.saved_model.loader.load(sess, ["serve"], export)
        sig = meta.signature_def["serving_default"]
        served = sess.run(sig.outputs["probs"].name, {sig.inputs["features"].name: x})
    np.testing.assert_allclose(served, preds, rtol=1e-5, atol=1e-7)


class Tiny(tf.keras.Model):
    def __init__(self, units=3, **kwargs):
        super().__init__(**kwargs)
        self.units = units
        self.out = L.Dense(units, activation="softmax")

    def call(self, inputs):
        return self.out(inputs)

    def get_config(self):
        return {"units": self.units}

    @classmethod
    def from_config(cls, config):
        return cls(**config)


class NoConfig(tf.keras.Model):
    def __init__(self):
        super().__init__()
        self.out = L.Dense(3)

    def call(self, inputs):
        return self.out(inputs)


def test_subclassed_models_and_argument_errors(tmp_path):
    x, y = _data()
    tiny = Tiny()
    tiny.compile("adam", "sparse_categorical_crossentropy")
    est = tf.keras.estimator.model_to_estimator(keras_model=tiny, model_dir=str(tmp_path / "tiny"))
    est.train(lambda: tf.data.Dataset.from_tensor_slices((x, y)).batch(32), steps=3)
    assert est.get_variable_value("global_step") == 3
    bare = NoConfig()
    bare.compile("adam", "mse")
    with pytest.raises(ValueError, match="must implement `Model.get_config`"):
        tf.keras.estimator.model_to_estimator(keras_model=bare)
    with pytest.raises(ValueError, match="Either `keras_model` or `keras_model_path`"):
        tf.keras.estimator.model_to_estimator()
    with pytest.raises(ValueError, match="but not both"):
        tf.keras.estimator.model_to_estimator(keras_model=tiny, keras_model_path="m.h5")
    uncompiled = tf.keras.Sequential([L.Dense(2, input_shape=(3,))])
    with pytest.raises(ValueError, match="has not been compiled yet"):
        tf.keras.estimator.model_to_estimator(keras_model=uncompiled, model_dir=str(tmp_path / "u"))
    with pytest.raises(NotImplementedError, match="checkpoint_format='checkpoint'"):
        tf.keras.estimator.model_to_estimator(keras_model=tiny, model_dir=str(tmp_path / "c"),
                                              checkpoint_format="checkpoint")
    with pytest.raises(ValueError, match="set both in constructor and `RunConfig`"):
        tf.keras.estimator.model_to_estimator(keras_model=tiny, model_dir=str(tmp_path / "a"),
                                              config=tf.estimator.RunConfig(model_dir=str(tmp_path / "b")))


def test_compile_with_target_tensors():
    """What the model_fn uses: the targets are given tensors (no target placeholder is fed)."""
    x, y = _data(16)
    model = _model()
    labels = tf.constant(y)
    model.compile(tf.keras.optimizers.SGD(0.1), "sparse_categorical_crossentropy", target_tensors=[labels])
    assert model._feed_targets == []
    loss = tf.keras.backend.get_session().run(model.total_loss, {model.inputs[0]: x})
    want = _model().evaluate(x, y, batch_size=16, verbose=0)[0]
    assert loss == pytest.approx(want, rel=1e-5)
    with pytest.raises(ValueError, match="one entry per model output"):
        model.compile("sgd", "mse", target_tensors=[labels, labels])
    with pytest.raises(ValueError, match='Unknown entry in `target_tensors` dictionary: "nope"'):
        model.compile("sgd", "mse", target_tensors={"nope": labels})
    with pytest.raises(TypeError, match="Expected `target_tensors`"):
        model.compile("sgd", "mse", target_tensors=3)
