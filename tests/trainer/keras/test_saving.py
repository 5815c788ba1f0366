"""`save_weights` / `load_weights` / `save` / `load_model` (TF 1.15's rules): round trips in both formats for
Sequential, functional and subclassed models, TF's deferred restoration (a checkpoint loaded before the
variables exist), the name-based fallback for `tf.train.Saver` checkpoints, HDF5 attribute chunking, by_name
loading and the errors. test_saving_against_tf.py checks the files against real TensorFlow's."""
import os

import h5py
import numpy as np
import pytest

import tensorfleet as tf

K = tf.keras.backend
L = tf.keras.layers


def _data():
    rng = np.random.RandomState(1)
    return rng.randn(32, 6).astype(np.float32), rng.randint(0, 3, 32)


def _sequential(units=5):
    model = tf.keras.Sequential([L.Dense(units, activation="tanh", input_shape=(6,)), L.Dense(3, activation="softmax")])
    model.compile(tf.keras.optimizers.RMSprop(0.01, momentum=0.5), "sparse_categorical_crossentropy", metrics=["acc"])
    return model


class Subclassed(tf.keras.Model):
    def __init__(self):
        super().__init__()
        self.blocks = [L.Dense(4, activation="relu"), L.Dense(4, activation="relu")]
        self.head = L.Dense(3, activation="softmax")

    def call(self, inputs):
        x = inputs
        for block in self.blocks:
            x = block(x)
        return self.head(x)


def _fit(model, epochs=2):
    x, y = _data()
    model.fit(x, y, batch_size=8, epochs=epochs, verbose=0, shuffle=False)
    return x, y


def _texts(values):
    return [v.decode() if isinstance(v, bytes) else str(v) for v in values]


def _same(a, b):
    assert len(a) == len(b)
    for u, v in zip(a, b):
        np.testing.assert_array_equal(u, v)


@pytest.mark.parametrize("suffix", ["", ".h5"])
def test_weights_round_trip_sequential(tmp_path, suffix):
    model = _sequential()
    x, _ = _fit(model)
    path = str(tmp_path / ("w" + suffix))
    model.save_weights(path)
    other = _sequential()
    other.load_weights(path)
    _same(other.get_weights(), model.get_weights())
    np.testing.assert_allclose(other.predict(x), model.predict(x), rtol=1e-6)
    if not suffix:
        assert tf.train.latest_checkpoint(str(tmp_path)) == path  # recorded in the `checkpoint` file
        assert (tmp_path / "checkpoint").read_text().splitlines()[0] == 'model_checkpoint_path: "w"'
        other._make_train_function()
        _same(other.optimizer.get_weights(), model.optimizer.get_weights())  # iter and the RMSprop slots


def test_tf_format_keys_follow_the_object_graph(tmp_path):
    model = _sequential()
    _fit(model)
    model.save_weights(str(tmp_path / "w"))
    keys = sorted(k for k, _ in tf.train.list_variables(str(tmp_path / "w")))
    assert keys == sorted(["_CHECKPOINTABLE_OBJECT_GRAPH"] + [
        f"layer_with_weights-{i}/{w}/.ATTRIBUTES/VARIABLE_VALUE" for i in (0, 1) for w in ("kernel", "bias")] + [
        f"layer_with_weights-{i}/{w}/.OPTIMIZER_SLOT/optimizer/{s}/.ATTRIBUTES/VARIABLE_VALUE"
        for i in (0, 1) for w in ("kernel", "bias") for s in ("rms", "momentum")] + [
        f"optimizer/{h}/.ATTRIBUTES/VARIABLE_VALUE" for h in ("iter", "decay", "learning_rate", "momentum", "rho")])


def test_subclassed_model_deferred_restore_into_unbuilt_layers(tmp_path):
    model = Subclassed()
    model.compile("adam", "sparse_categorical_crossentropy")
    x, _ = _fit(model)
    model.save_weights(str(tmp_path / "w"))
    keys = {k for k, _ in tf.train.list_variables(str(tmp_path / "w"))}
    assert "blocks/1/kernel/.ATTRIBUTES/VARIABLE_VALUE" in keys and "head/bias/.ATTRIBUTES/VARIABLE_VALUE" in keys
    assert "head/kernel/.OPTIMIZER_SLOT/optimizer/v/.ATTRIBUTES/VARIABLE_VALUE" in keys and len(keys) == 1 + 6 * 3 + 5
    want = model.predict(x)
    K.clear_session()
    fresh = Subclassed()
    fresh.compile("adam", "sparse_categorical_crossentropy")
    fresh.load_weights(str(tmp_path / "w")).assert_nontrivial_match()  # nothing built yet: kept for later
    np.testing.assert_allclose(fresh.predict(x), want, rtol=1e-6)
    with pytest.raises(NotImplementedError, match="Saving the model to HDF5 format requires"):
        model.save(str(tmp_path / "m.h5"))
    with pytest.raises(ValueError, match="has not created its variables yet"):
        Subclassed().load_weights(str(tmp_path / "missing.h5"))


def test_tf_saver_checkpoints_load_by_name(tmp_path):
    model = _sequential()
    x, _ = _fit(model)
    saver = tf.train.Saver(model.weights)
    path = saver.save(K.get_session(), str(tmp_path / "plain"))
    want = model.predict(x)
    K.clear_session()  # the same variable names (dense/kernel, ...) in a new graph
    other = _sequential()
    other.load_weights(path)
    np.testing.assert_allclose(other.predict(x), want, rtol=1e-6)


def test_a_checkpoint_of_another_model_matches_nothing(tmp_path):
    other = tf.keras.Sequential([L.Dense(2, input_shape=(3,))])
    other.save_weights(str(tmp_path / "w"))
    model = Subclassed()
    model.build((None, 6))
    with pytest.raises(AssertionError, match="Nothing except the root object matched"):
        model.load_weights(str(tmp_path / "w"))
    small = tf.keras.Sequential([L.Dense(3, input_shape=(3,))])
    with pytest.raises(ValueError, match=r"VALUE has shape \[3, 2\], variable dense_\d+/kernel has shape \[3, 3\]"):
        small.load_weights(str(tmp_path / "w"))


def test_hdf5_weights_layout_by_name_and_mismatches(tmp_path):
    model = _sequential()
    model.save_weights(str(tmp_path / "w.h5"))
    with h5py.File(tmp_path / "w.h5", "r") as f:
        assert _texts(f.attrs["layer_names"]) == ["dense", "dense_1"]  # Sequential: no InputLayer
        assert _texts(f["dense"].attrs["weight_names"]) == ["dense/kernel:0", "dense/bias:0"]
        assert _texts([f.attrs["keras_version"], f.attrs["backend"]]) == ["2.2.4-tf", "tensorflow"]
    bigger = _sequential(units=7)
    with pytest.raises(ValueError, match="incompatible|has shape"):
        bigger.load_weights(str(tmp_path / "w.h5"))
    one = tf.keras.Sequential([L.Dense(5, input_shape=(6,))])
    with pytest.raises(ValueError, match="containing 2 layers into a model with 1 layers"):
        one.load_weights(str(tmp_path / "w.h5"))
    named = tf.keras.Sequential([L.Dense(5, input_shape=(6,), name="dense"), L.Dense(9, name="dense_1")])
    with pytest.raises(ValueError, match="expects 2 weight|has shape"):
        named.load_weights(str(tmp_path / "w.h5"), by_name=True)
    named = tf.keras.Sequential([L.Dense(5, input_shape=(6,), name="dense"), L.Dense(3, name="other")])
    named.load_weights(str(tmp_path / "w.h5"), by_name=True)
    _same(named.layers[0].get_weights(), model.layers[0].get_weights())
    with pytest.raises(NotImplementedError, match="by_name=True"):
        model.save_weights(str(tmp_path / "tfw"))
        model.load_weights(str(tmp_path / "tfw"), by_name=True)


def test_long_name_lists_are_chunked(tmp_path):
    inputs = tf.keras.Input(shape=(2,))
    x = inputs
    for i in range(700):  # 700 names of ~100 bytes: more than HDF5's 64 KiB attribute limit
        x = L.Activation("linear", name=f"layer_{i:04d}_" + "x" * 90)(x)
    model = tf.keras.Model(inputs, L.Dense(1)(x))
    model.save_weights(str(tmp_path / "w.h5"))
    with h5py.File(tmp_path / "w.h5", "r") as f:
        assert "layer_names" not in f.attrs and "layer_names0" in f.attrs and "layer_names1" in f.attrs
    model.load_weights(str(tmp_path / "w.h5"))


def test_whole_model_h5_round_trip_with_optimizer(tmp_path):
    model = _sequential()
    x, y = _fit(model)
    model.save(str(tmp_path / "m.h5"))
    want = model.predict(x), model.optimizer.get_weights(), model.evaluate(x, y, verbose=0)
    model.save(str(tmp_path / "no_extension"))  # TF 1.15's default format is HDF5 whatever the name
    assert h5py.is_hdf5(tmp_path / "no_extension")
    K.clear_session()
    loaded = tf.keras.models.load_model(str(tmp_path / "m.h5"))
    np.testing.assert_allclose(loaded.predict(x), want[0], rtol=1e-6)
    assert isinstance(loaded.optimizer, tf.keras.optimizers.RMSprop) and loaded.metrics_names == ["loss", "acc"]
    _same(loaded.optimizer.get_weights(), want[1])
    np.testing.assert_allclose(loaded.evaluate(x, y, verbose=0), want[2], rtol=1e-6)
    uncompiled = tf.keras.models.load_model(str(tmp_path / "m.h5"), compile=False)
    assert uncompiled.optimizer is None


def test_tf_optimizer_is_not_saved(tmp_path, caplog):
    model = tf.keras.Sequential([L.Dense(2, input_shape=(3,))])
    model.compile(tf.train.AdamOptimizer(0.1), "mse")
    model.save(str(tmp_path / "m.h5"))
    assert "TensorFlow optimizers do not make it possible" in caplog.text
    assert tf.keras.models.load_model(str(tmp_path / "m.h5")).optimizer is None


def test_format_arguments_and_overwrite_prompt(tmp_path, monkeypatch):
    model = _sequential()
    with pytest.raises(ValueError, match="looks like an HDF5 file"):
        model.save_weights(str(tmp_path / "w.h5"), save_format="tf")
    with pytest.raises(ValueError, match='Unknown format "zip"'):
        model.save_weights(str(tmp_path / "w"), save_format="zip")
    model.save_weights(str(tmp_path / "w"), save_format="h5")  # h5 at a name without suffix
    assert h5py.is_hdf5(tmp_path / "w")
    model.load_weights(str(tmp_path / "w"))
    answers = iter(["maybe", "n"])
    monkeypatch.setattr("builtins.input", lambda prompt: next(answers))
    before = os.path.getmtime(tmp_path / "w")
    model.save_weights(str(tmp_path / "w"), overwrite=False, save_format="h5")
    assert os.path.getmtime(tmp_path / "w") == before
    with pytest.raises(OSError, match="Unable to load model"):
        tf.keras.models.load_model(str(tmp_path / "nothing"))
    with pytest.raises(tf.errors.NotFoundError, match="Unable to open weights"):
        model.load_weights(str(tmp_path / "nothing"))


def test_save_format_tf_writes_a_serving_saved_model(tmp_path):
    inputs = tf.keras.Input(shape=(6,), name="features")
    hidden = L.Dropout(0.5)(L.Dense(5, activation="relu", name="hidden")(inputs))
    model = tf.keras.Model(inputs, L.Dense(3, activation="softmax", name="probs")(hidden))
    model.compile("adam", "sparse_categorical_crossentropy")
    x, _ = _fit(model)
    want = model.predict(x)
    path = tmp_path / "export"
    model.save(str(path), save_format="tf", include_optimizer=False)
    assert sorted(os.listdir(path)) == ["assets", "saved_model.pb", "variables"]
    assert os.listdir(path / "assets") == ["saved_model.json"]
    from tensorfleet.protos.saved_model_pb2 import SavedModel
    saved = SavedModel()
    saved.ParseFromString((path / "saved_model.pb").read_bytes())
    nodes = {n.name: n.op for n in saved.meta_graphs[0].graph_def.node}
    assert {"hidden/kernel", "probs/bias"} <= set(nodes)
    random = [n for n, op in nodes.items() if op == "RandomUniform" and "/Initializer/" not in n]
    assert "keras_learning_phase" not in nodes and not random  # learning phase 0: no dropout mask drawn
    keys = {k for k, _ in tf.train.list_variables(str(path / "variables" / "variables"))}
    assert keys == {"_CHECKPOINTABLE_OBJECT_GRAPH"} | {
        f"layer_with_weights-{i}/{w}/.ATTRIBUTES/VARIABLE_VALUE" for i in (0, 1) for w in ("kernel", "bias")}
    with tf.Session(graph=tf.Graph()) as sess:  # the serving signature, through the SavedModel loader
        meta = tf.saved_model.loader.load(sess, [tf.saved_model.tag_constants.SERVING], str(path))
        sig = meta.signature_def["serving_default"]
        assert sorted(sig.inputs) == ["features"] and sorted(sig.outputs) == ["probs"]
        np.testing.assert_allclose(sess.run(sig.outputs["probs"].name, {sig.inputs["features"].name: x}), want,
                                   rtol=1e-6)
    K.clear_session()
    loaded = tf.keras.models.load_model(str(path))
    np.testing.assert_allclose(loaded.predict(x), want, rtol=1e-6)
    assert loaded.optimizer is None
    loaded.save(str(path), save_format="tf")  # overwrites
    assert tf.keras.experimental.load_from_saved_model(str(path)).count_params() == 6 * 5 + 5 + 5 * 3 + 3
    with pytest.raises(NotImplementedError, match="Subclassed models cannot be exported"):
        Subclassed().save(str(tmp_path / "sub"), save_format="tf")
    with pytest.raises(OSError, match="no assets/saved_model.json"):
        os.remove(path / "assets" / "saved_model.json")
        tf.keras.models.load_model(str(path))
