"""Model files written by real TensorFlow's graph-mode Keras load here, and what tensorfleet writes has TF's
layout: a functional model trained with Adam, saved by TF as `model.h5` (config, weights, training config,
optimizer state), `weights.h5` and an object-based checkpoint `ckpt/weights`
(scripts/gen_keras_training_fixtures.py). scripts/check_keras_with_real_tf.py checks the other direction (real
TF loads what tensorfleet writes)."""
import os

import h5py
import numpy as np
import pytest

import tensorfleet as tf

DATA = os.path.join(os.path.dirname(__file__), "data", "keras_saved")
EXPECTED = np.load(os.path.join(DATA, "expected.npz"))


def _model():
    inputs = tf.keras.Input(shape=(12,), name="features")
    hidden = tf.keras.layers.Dense(8, activation="relu", name="hidden")(inputs)
    hidden = tf.keras.layers.Dropout(0.25)(hidden)
    outputs = tf.keras.layers.Dense(4, activation="softmax", name="probs")(hidden)
    model = tf.keras.Model(inputs, outputs)
    model.compile(tf.keras.optimizers.Adam(0.01), "categorical_crossentropy", metrics=["accuracy"])
    return model


def _assert_tf_weights(model):
    for i, w in enumerate(model.get_weights()):
        np.testing.assert_array_equal(w, EXPECTED[f"weight_{i}"])
    np.testing.assert_allclose(model.predict(EXPECTED["x"]), EXPECTED["predictions"], rtol=1e-5, atol=1e-7)


def test_load_model_h5_written_by_tf():
    model = tf.keras.models.load_model(os.path.join(DATA, "model.h5"))
    assert [w.name for w in model.weights] == ["hidden/kernel:0", "hidden/bias:0", "probs/kernel:0", "probs/bias:0"]
    _assert_tf_weights(model)
    assert model.optimizer.get_config()["learning_rate"] == pytest.approx(0.01)
    for i, w in enumerate(model.optimizer.get_weights()):  # iter, then the m and v slots
        np.testing.assert_array_equal(w, EXPECTED[f"optimizer_{i}"])
    assert model.metrics_names == ["loss", "acc"]
    model.fit(EXPECTED["x"], EXPECTED["predictions"], epochs=1, verbose=0)  # compiled, trains on
    assert tf.keras.backend.get_value(model.optimizer.iterations) == EXPECTED["optimizer_0"] + 1


def test_load_weights_h5_written_by_tf():
    model = _model()
    model.load_weights(os.path.join(DATA, "weights.h5"))
    _assert_tf_weights(model)


def test_load_weights_tf_checkpoint_written_by_tf_with_its_optimizer_state():
    model = _model()
    status = model.load_weights(os.path.join(DATA, "ckpt", "weights"))
    _assert_tf_weights(model)
    model.fit(EXPECTED["x"], EXPECTED["predictions"], epochs=1, verbose=0)  # creates the optimizer's slots
    status.assert_consumed()


def test_deferred_slots_take_the_checkpointed_values():
    """The optimizer's variables do not exist when the weights are loaded; they start from the checkpoint."""
    model = _model()
    model.load_weights(os.path.join(DATA, "ckpt", "weights"))
    model._make_train_function()
    values = model.optimizer.get_weights()
    for i, w in enumerate(values):
        np.testing.assert_array_equal(w, EXPECTED[f"optimizer_{i}"])


def test_our_checkpoint_has_tfs_keys_and_object_graph(tmp_path):
    model = _model()
    model.fit(EXPECTED["x"], EXPECTED["predictions"], epochs=1, verbose=0)
    model.save_weights(str(tmp_path / "weights"))
    ours = dict(tf.train.list_variables(str(tmp_path / "weights")))
    theirs = dict(tf.train.list_variables(os.path.join(DATA, "ckpt", "weights")))
    assert ours == theirs
    from tensorfleet.protos.trackable_object_graph_pb2 import TrackableObjectGraph

    def graph(path):
        proto = TrackableObjectGraph()
        proto.ParseFromString(tf.train.load_variable(path, "_CHECKPOINTABLE_OBJECT_GRAPH").item())
        return {(ref.local_name, tuple(a.checkpoint_key for a in proto.nodes[ref.node_id].attributes))
                for node in proto.nodes for ref in node.children}, \
            {(s.slot_name,) for node in proto.nodes for s in node.slot_variables}
    theirs_graph = graph(os.path.join(DATA, "ckpt", "weights"))
    ours_graph = graph(str(tmp_path / "weights"))
    assert ours_graph[1] == theirs_graph[1]
    assert ours_graph[0] == theirs_graph[0] - {("root", ())}  # TF 2.x adds a `root` self-reference


def test_our_hdf5_files_have_tfs_layout(tmp_path):
    model = _model()
    model.fit(EXPECTED["x"], EXPECTED["predictions"], epochs=1, verbose=0)
    model.set_weights([EXPECTED[f"weight_{i}"] for i in range(4)])
    model.save(str(tmp_path / "model.h5"))
    with h5py.File(tmp_path / "model.h5", "r") as ours, h5py.File(os.path.join(DATA, "model.h5"), "r") as theirs:
        assert set(ours.attrs) == set(theirs.attrs)
        assert set(ours) == set(theirs) == {"model_weights", "optimizer_weights"}

        def datasets(f):
            out = []
            f.visititems(lambda name, obj: out.append((name, obj.shape)) if isinstance(obj, h5py.Dataset) else None)
            return out
        assert datasets(ours["model_weights"]) == datasets(theirs["model_weights"])
        def names(f):
            return [a.decode() if isinstance(a, bytes) else str(a) for a in f["model_weights"].attrs["layer_names"]]
        assert names(ours) == names(theirs) == ["features", "hidden", "dropout", "probs"]
        np.testing.assert_array_equal(ours["model_weights/probs/probs/kernel:0"][()], EXPECTED["weight_2"])
