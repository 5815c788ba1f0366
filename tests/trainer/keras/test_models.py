"""Functional, Sequential and subclassed models: graph structure, shared layers, nesting, weights and names
(TF 1.15's), configs, and the summary table in Keras 1.15's format."""
import json

import numpy as np
import pytest

import tensorfleet as tf

K = tf.keras.backend
L = tf.keras.layers


def two_output_model():
    inp = tf.keras.Input((3,), name="x")
    shared = L.Dense(4, activation="relu", name="shared")
    a = shared(inp)
    b = shared(L.Dense(3, name="pre")(inp))
    merged = L.concatenate([a, b], name="merge")
    return tf.keras.Model(inp, [L.Dense(2, name="o1")(merged), L.Dense(1, name="o2")(merged)], name="two")


def test_functional_structure_layers_and_names():
    model = two_output_model()
    assert [layer.name for layer in model.layers] == ["x", "pre", "shared", "merge", "o1", "o2"]
    assert model.input_names == ["x"] and model.output_names == ["o1", "o2"]
    shared = model.get_layer("shared")
    assert len(shared.inbound_nodes) == 2 and shared.output_shape == (None, 4)
    flatten = L.Flatten()
    flatten(tf.keras.Input((2, 3)))
    flatten(tf.keras.Input((4,)))
    with pytest.raises(AttributeError, match="multiple inbound nodes, with different output shapes"):
        _ = flatten.output_shape
    assert model.get_layer(index=1).name == "pre"
    with pytest.raises(ValueError, match="No such layer"):
        model.get_layer("nope")
    assert [w.name for w in model.weights] == [
        "pre/kernel:0", "pre/bias:0", "shared/kernel:0", "shared/bias:0", "o1/kernel:0", "o1/bias:0",
        "o2/kernel:0", "o2/bias:0"]
    assert model.count_params() == 12 + 16 + 18 + 9


def test_functional_outputs_match_numpy_and_calling_on_new_inputs_shares_weights():
    model = two_output_model()
    x = np.random.default_rng(0).standard_normal((5, 3)).astype("float32")
    out1, out2 = model.predict(x)
    w = {layer.name: layer.get_weights() for layer in model.layers if layer.weights}

    def dense(v, name, relu=False):
        y = v @ w[name][0] + w[name][1]
        return np.maximum(y, 0) if relu else y

    merged = np.concatenate([dense(x, "shared", True), dense(dense(x, "pre"), "shared", True)], -1)
    np.testing.assert_allclose(out1, dense(merged, "o1"), rtol=1e-5)
    np.testing.assert_allclose(out2, dense(merged, "o2"), rtol=1e-5)
    new_in = tf.placeholder(tf.float32, [None, 3])
    again = model(new_in)
    np.testing.assert_allclose(K.get_session().run(again[0], {new_in: x}), out1, rtol=1e-6)
    assert len(model.weights) == 8 and len(tf.global_variables()) == 8


def test_nested_models_and_node_indices():
    inner = two_output_model()
    inp = tf.keras.Input((3,))
    o1, o2 = inner(inp)
    outer = tf.keras.Model(inp, L.add([o1, L.Dense(2, name="lift")(o2)]))
    assert inner in outer.layers and o1._keras_history == (inner, 1, 0) and o2._keras_history == (inner, 1, 1)
    x = np.ones((2, 3), np.float32)
    a, b = inner.predict(x)
    lw = outer.get_layer("lift").get_weights()
    np.testing.assert_allclose(outer.predict(x), a + b @ lw[0] + lw[1], rtol=1e-5)


def test_graph_errors():
    inp = tf.keras.Input((3,))
    other = tf.keras.Input((3,))
    with pytest.raises(ValueError, match="Graph disconnected"):
        tf.keras.Model(inp, L.add([L.Dense(3)(inp), other]))
    with pytest.raises(ValueError, match="must be the output of a TensorFlow `Layer`"):
        tf.keras.Model(inp, tf.nn.relu(inp))
    with pytest.raises(ValueError, match="must come from `tf.keras.Input`"):
        tf.keras.Model(tf.placeholder(tf.float32, [None, 3]), L.Dense(2)(inp))
    d = L.Dense(3, name="same")
    with pytest.raises(ValueError, match='The name "same" is used 2 times'):
        tf.keras.Model(inp, L.Dense(3, name="same")(d(inp)))


def test_multi_input_dict_call():
    a, b = tf.keras.Input((2,), name="a"), tf.keras.Input((2,), name="b")
    model = tf.keras.Model([a, b], L.subtract([a, b]))
    pa, pb = tf.placeholder(tf.float32, [None, 2]), tf.placeholder(tf.float32, [None, 2])
    out = model({"b": pb, "a": pa})
    assert K.get_session().run(out, {pa: [[3.0, 3.0]], pb: [[1.0, 2.0]]}).tolist() == [[2.0, 1.0]]
    np.testing.assert_array_equal(model.predict({"a": np.ones((1, 2)), "b": np.zeros((1, 2))}), [[1, 1]])


def test_functional_config_round_trip():
    model = two_output_model()
    config = model.get_config()
    assert config["input_layers"] == [["x", 0, 0]] and config["output_layers"] == [["o1", 0, 0], ["o2", 0, 0]]
    shared = next(c for c in config["layers"] if c["name"] == "shared")
    assert shared["inbound_nodes"] == [[["x", 0, 0, {}]], [["pre", 0, 0, {}]]]
    json.loads(model.to_json())
    clone = tf.keras.Model.from_config(config)
    clone.set_weights(model.get_weights())
    x = np.random.default_rng(1).standard_normal((4, 3)).astype("float32")
    for a, b in zip(model.predict(x), clone.predict(x)):
        np.testing.assert_allclose(a, b, rtol=1e-6)
    assert json.loads(clone.to_json())["config"]["layers"][2]["class_name"] == "Dense"


def test_sequential_with_input_shape_builds_at_once():
    model = tf.keras.Sequential([L.Dense(4, input_shape=(3,)), L.Dense(2)])
    assert model.inputs[0].name == "dense_input:0" and model.built
    assert [l.name for l in model.layers] == ["dense", "dense_1"]  # the InputLayer is not listed
    assert [w.name for w in model.weights] == ["dense/kernel:0", "dense/bias:0", "dense_1/kernel:0", "dense_1/bias:0"]
    model.pop()
    assert model.outputs[0].shape.as_list() == [None, 4] and len(model.layers) == 1
    model.add(L.Dense(5))
    assert model.output_shape == (None, 5)
    with pytest.raises(TypeError, match="instance of class Layer"):
        model.add("dense")
    seq2 = tf.keras.Sequential()
    seq2.add(tf.keras.Input((6,)))
    seq2.add(L.Dense(1))
    assert seq2.input_shape == (None, 6)


def test_sequential_deferred_build_names_weights_under_the_model():
    model = tf.keras.Sequential()
    model.add(L.Dense(5, activation="relu"))
    model.add(L.Dense(1))
    assert not model.built and model.weights == []
    out = model.predict(np.ones((3, 4), np.float32))
    assert out.shape == (3, 1)
    assert [w.name for w in model.weights] == ["sequential/dense/kernel:0", "sequential/dense/bias:0",
                                               "sequential/dense_1/kernel:0", "sequential/dense_1/bias:0"]
    built = tf.keras.Sequential([L.Dense(2)])
    built.build((None, 7))
    assert built.layers[0].kernel.shape.as_list() == [7, 2]


def test_sequential_config_round_trip():
    model = tf.keras.Sequential([L.Dense(4, input_shape=(3,), activation="tanh"), L.Dropout(0.5), L.Dense(1)])
    clone = tf.keras.Sequential.from_config(model.get_config())
    assert [type(l).__name__ for l in clone.layers] == ["Dense", "Dropout", "Dense"]
    clone.set_weights(model.get_weights())
    x = np.ones((2, 3), np.float32)
    np.testing.assert_allclose(clone.predict(x), model.predict(x), rtol=1e-6)
    copy = tf.keras.models.clone_model(model)
    assert copy.count_params() == model.count_params() and copy.layers[0] is not model.layers[0]


class Net(tf.keras.Model):
    def __init__(self):
        super().__init__(name="net")
        self.hidden = [L.Dense(8, activation="relu"), L.Dense(8, activation="relu")]
        self.out = L.Dense(3)
        self.scale = tf.Variable(2.0, name="scale_var")

    def call(self, x, training=None):
        for layer in self.hidden:
            x = layer(x)
        return self.out(x) * self.scale


def test_subclassed_model_tracks_layers_lists_and_variables():
    model = Net()
    assert model.layers == model.hidden + [model.out]
    y = model(tf.placeholder(tf.float32, [None, 5]))
    assert y.shape.as_list() == [None, 3]
    names = [w.name for w in model.weights]
    assert names[:2] == ["net/dense/kernel:0", "net/dense/bias:0"] and "scale_var:0" in names
    assert model.inputs and model.output_names == ["output_1"]
    model.compile("sgd", "mse")
    model.fit(np.ones((4, 5)), np.ones((4, 3)), verbose=0)


def test_subclassed_build_and_errors():
    model = Net()
    model.build((None, 4))
    assert model.out.kernel.shape.as_list() == [8, 3] and model.out.kernel.name == "dense_2/kernel:0"
    with pytest.raises(NotImplementedError, match="implement a `call` method"):
        tf.keras.Model().call(tf.constant(1.0))


def capture_summary(model, **kwargs):
    lines = []
    model.summary(print_fn=lines.append, **kwargs)
    return lines


def test_summary_sequential_format():
    model = tf.keras.Sequential([L.Dense(64, input_shape=(784,)), L.Dropout(0.2), L.Dense(10)])
    assert capture_summary(model) == [
        'Model: "sequential"',
        "_" * 65,
        "Layer (type)                 Output Shape              Param #   ",
        "=" * 65,
        "dense (Dense)                (None, 64)                50240     ",
        "_" * 65,
        "dropout (Dropout)            (None, 64)                0         ",
        "_" * 65,
        "dense_1 (Dense)              (None, 10)                650       ",
        "=" * 65,
        "Total params: 50,890",
        "Trainable params: 50,890",
        "Non-trainable params: 0",
        "_" * 65]


def test_summary_functional_with_connections():
    lines = capture_summary(two_output_model())
    assert lines[0] == 'Model: "two"' and len(lines[1]) == 98
    assert lines[2] == ("Layer (type)                    Output Shape         Param #     Connected to"
                        "                     ")
    assert lines[4].startswith("x (InputLayer)                  [(None, 3)]          0")
    shared = lines.index(next(line for line in lines if line.startswith("shared (Dense)")))
    assert lines[shared].endswith("x[0][0]                          ")
    assert lines[shared + 1].strip() == "pre[0][0]"
    assert "Total params: 55" in lines
    frozen = tf.keras.Sequential([L.Dense(2, input_shape=(3,), trainable=False), L.Dense(1)])
    assert capture_summary(frozen)[-3:-1] == ["Trainable params: 3", "Non-trainable params: 8"]
