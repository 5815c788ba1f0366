"""Core Keras layers against numpy (forward) and finite differences (gradients), with TF 1.15's names."""
import numpy as np
import pytest

import tensorfleet as tf
from gradcheck import check_gradients

K = tf.keras.backend
L = tf.keras.layers
rng = np.random.default_rng(1)


def run(t, feed=None):
    return K.get_session().run(t, feed)


def test_dense_forward_names_defaults_and_gradients():
    x = rng.standard_normal((4, 3))
    layer = L.Dense(5, activation="relu", dtype="float64")
    out = layer(K.constant(x, "float64"))
    assert [v.name for v in layer.weights] == ["dense/kernel:0", "dense/bias:0"]
    kernel, bias = layer.get_weights()
    limit = np.sqrt(6 / (3 + 5))  # glorot_uniform
    assert np.abs(kernel).max() <= limit and np.all(bias == 0)
    np.testing.assert_allclose(run(out), np.maximum(x @ kernel + bias, 0))
    assert out.op.type == "Relu" and out.op.inputs[0].op.type == "BiasAdd"
    w, b = rng.standard_normal((3, 5)), rng.standard_normal(5)
    check_gradients(lambda t: L.Dense(5, activation="tanh", kernel_initializer=tf.constant_initializer(w),
                                      bias_initializer=tf.constant_initializer(b), dtype="float64")(t), [x])


def test_dense_on_rank_3_inputs_uses_the_last_axis():
    x = rng.standard_normal((2, 4, 3))
    layer = L.Dense(2, dtype="float64")
    out = layer(K.constant(x, "float64"))
    assert out.shape.as_list() == [2, 4, 2]
    kernel, bias = layer.get_weights()
    np.testing.assert_allclose(run(out), x @ kernel + bias)
    assert layer.compute_output_shape((None, 4, 3)).as_list() == [None, 4, 2]


def test_dense_input_dim_and_config():
    layer = L.Dense(3, input_dim=7, kernel_regularizer="l2", bias_constraint="non_neg")
    config = layer.get_config()
    assert config["batch_input_shape"] == (None, 7) and config["units"] == 3
    assert config["kernel_initializer"] == {"class_name": "GlorotUniform", "config": {"seed": None,
                                                                                   "dtype": "float32"}}
    assert config["kernel_regularizer"] == {"class_name": "L1L2", "config": {"l1": 0.0, "l2": 0.01}}
    assert config["bias_constraint"]["class_name"] == "NonNeg" and config["activation"] == "linear"
    clone = L.Dense.from_config(config)
    assert clone.units == 3 and clone.kernel_regularizer.l2 == 0.01


def test_activation_flatten_reshape_permute_repeat():
    x = rng.standard_normal((2, 3, 4)).astype("float32")
    t = K.constant(x)
    np.testing.assert_allclose(run(L.Activation("sigmoid")(t)), 1 / (1 + np.exp(-x)), rtol=1e-6)
    np.testing.assert_array_equal(run(L.Flatten()(t)), x.reshape(2, 12))
    np.testing.assert_array_equal(run(L.Flatten(data_format="channels_first")(t)),
                                  x.transpose(0, 2, 1).reshape(2, 12))
    ph = tf.placeholder(tf.float32, [None, 3, 4])
    assert L.Flatten()(ph).shape.as_list() == [None, 12]
    reshaped = L.Reshape((4, -1))(ph)
    assert reshaped.shape.as_list() == [None, 4, 3]
    np.testing.assert_array_equal(run(reshaped, {ph: x}), x.reshape(2, 4, 3))
    with pytest.raises(ValueError, match="total size"):
        L.Reshape((5, -1))(ph)
    np.testing.assert_array_equal(run(L.Permute((2, 1))(t)), x.transpose(0, 2, 1))
    with pytest.raises(ValueError, match="Invalid permutation"):
        L.Permute((0, 1))
    rep = L.RepeatVector(3)(t[:, 0])
    assert rep.shape.as_list() == [2, 3, 4]
    np.testing.assert_array_equal(run(rep), np.repeat(x[:, None, 0], 3, axis=1))
    check_gradients(lambda v: L.Permute((2, 1))(L.Reshape((4, 3))(v)), [x.astype(np.float64)])


def test_dropout_training_argument_and_learning_phase():
    x = np.ones((400, 50), np.float32)
    t = K.constant(x)
    dropped = run(L.Dropout(0.25, seed=2)(t, training=True))
    kept = dropped != 0
    assert abs(kept.mean() - 0.75) < 0.02 and np.allclose(dropped[kept], 1 / 0.75)
    np.testing.assert_array_equal(run(L.Dropout(0.25)(t, training=False)), x)
    out = L.Dropout(0.25, seed=3)(t)  # training=None: the learning phase decides
    np.testing.assert_array_equal(run(out), x)
    assert (run(out, {K.learning_phase(): True}) == 0).mean() > 0.2
    K.set_learning_phase(1)
    assert (run(L.Dropout(0.5)(t)) == 0).mean() > 0.4


def test_dropout_noise_shape_drops_whole_rows():
    out = run(L.Dropout(0.5, noise_shape=(None, 1), seed=4)(K.ones((100, 6)), training=True))
    assert np.all((out == 0).all(1) | (out != 0).all(1))


def test_lambda_layer():
    x = rng.standard_normal((2, 3)).astype("float32")
    layer = L.Lambda(lambda t, k: t * k, arguments={"k": 3.0})
    np.testing.assert_allclose(run(layer(K.constant(x))), 3 * x)
    assert tuple(layer.compute_output_shape((None, 3)).as_list()) == (None, 3)
    inferred = L.Lambda(lambda t: K.concatenate([t, t]))
    assert inferred.compute_output_shape((None, 5)).as_list() == [None, 10]
    assert L.Lambda(lambda t: t, output_shape=(7,)).compute_output_shape((4, 3)).as_list() == [4, 7]
    config = layer.get_config()
    assert config["function_type"] == "lambda"
    with pytest.raises(ValueError, match="never loads code"):
        L.Lambda.from_config(config)
    named = L.Lambda(K.square).get_config()
    assert named["function"] == "square" and named["function_type"] == "function"
    rebuilt = L.Lambda.from_config(named, custom_objects={"square": K.square})
    np.testing.assert_allclose(run(rebuilt(K.constant(x))), x ** 2, rtol=1e-6)


def test_masking_and_activity_regularization():
    x = np.array([[[1.0, 2.0], [0.0, 0.0], [3.0, 0.0]]], np.float32)
    out = L.Masking(0.0)(K.constant(x))
    np.testing.assert_array_equal(run(out._keras_mask), [[True, False, True]])
    np.testing.assert_array_equal(run(out), x)
    layer = L.ActivityRegularization(l1=0.5, l2=0.25)
    inp = tf.placeholder(tf.float32, [None, 2])
    layer(inp)
    value = run(layer.losses[0], {inp: [[1.0, -2.0], [3.0, 0.0]]})
    assert value == pytest.approx((0.5 * 6 + 0.25 * 14) / 2)


def test_dropout_gradient_uses_the_forward_mask_under_the_learning_phase():
    x = tf.placeholder(tf.float32, [8, 16])
    out = L.Dropout(0.5)(x)
    grad = tf.gradients(tf.reduce_sum(out), x)[0]
    o, g = run([out, grad], {x: np.ones((8, 16)), K.learning_phase(): True})
    np.testing.assert_array_equal(o, g)  # d sum(x * mask / keep) / dx = mask / keep, the same mask
    assert 0 < (o == 0).mean() < 1
