"""Activation layers against numpy; noise and spatial-dropout layers by learning phase (identity at test time,
their defining statistics in training), and Dropout's tf.cond whose gradient reuses the forward mask."""
import numpy as np
import pytest

import tensorfleet as tf
from gradcheck import check_gradients

K = tf.keras.backend
L = tf.keras.layers
rng = np.random.default_rng(29)


def run(t, feed=None):
    return K.get_session().run(t, feed)


def test_activation_layers():
    x = rng.standard_normal((3, 4)) * 3
    t = K.constant(x, "float64")
    np.testing.assert_allclose(run(L.LeakyReLU()(t)), np.where(x > 0, x, 0.3 * x))
    np.testing.assert_allclose(run(L.ELU(0.5)(t)), np.where(x > 0, x, 0.5 * (np.exp(x) - 1)))
    np.testing.assert_allclose(run(L.ThresholdedReLU(1.0)(t)), np.where(x > 1.0, x, 0))
    np.testing.assert_allclose(run(L.Softmax(axis=0)(t)), np.exp(x) / np.exp(x).sum(0))
    np.testing.assert_allclose(run(L.ReLU(max_value=2.0)(t)), np.clip(x, 0, 2))
    x32 = x.astype(np.float32)  # K.relu with a threshold casts its mask to floatx, as TF's
    np.testing.assert_allclose(run(L.ReLU(negative_slope=0.1, threshold=0.5)(K.constant(x32))),
                               np.where(x32 > 0.5, x32, 0.1 * (x32 - 0.5)), rtol=1e-6)
    y = rng.standard_normal((2, 3, 4))
    prelu = L.PReLU(alpha_initializer=tf.constant_initializer(0.25), shared_axes=[1])
    out = prelu(K.constant(y, "float64"))
    assert prelu.weights[0].name == "p_re_lu/alpha:0" and prelu.get_weights()[0].shape == (1, 4)
    np.testing.assert_allclose(run(out), np.where(y > 0, y, 0.25 * y))
    with pytest.raises(ValueError, match="cannot be negative"):
        L.ReLU(max_value=-1)
    check_gradients(lambda t: L.PReLU(alpha_initializer=tf.constant_initializer(0.2), dtype="float64")(t),
                    [rng.standard_normal((2, 3)) + 0.05])
    check_gradients(lambda t: L.LeakyReLU(0.1)(t), [np.array([[-1.0, 2.0, -0.5]])])


def test_prelu_forward():
    x = rng.standard_normal((2, 3, 4))
    prelu = L.PReLU(alpha_initializer="random_uniform", dtype="float64")
    out = prelu(K.constant(x, "float64"))
    alpha = prelu.get_weights()[0]
    assert alpha.shape == (3, 4)
    np.testing.assert_allclose(run(out), np.where(x > 0, x, alpha * x))


def test_noise_layers_are_identity_at_test_time_and_noisy_in_training():
    x = np.ones((2000, 10), np.float32) * 2
    ph = tf.placeholder(tf.float32, [None, 10])
    lp = K.learning_phase()
    for layer in [L.GaussianNoise(0.5), L.GaussianDropout(0.3), L.AlphaDropout(0.2), L.Dropout(0.4)]:
        out = layer(ph)
        np.testing.assert_array_equal(run(out, {ph: x}), x)
        train = run(out, {ph: x, lp: True})
        assert not np.allclose(train, x)
        if isinstance(layer, L.GaussianNoise):
            assert abs((train - x).std() - 0.5) < 0.02 and abs((train - x).mean()) < 0.02
        if isinstance(layer, L.GaussianDropout):  # x * N(1, rate / (1 - rate))
            assert abs((train / x).std() - np.sqrt(0.3 / 0.7)) < 0.02
        if isinstance(layer, L.Dropout):
            assert set(np.unique(train)) == {0.0, np.float32(2 / 0.6)}
        if isinstance(layer, L.AlphaDropout):  # kept: a * x + b; dropped: a * alpha' + b (SELU's saturation)
            alpha_p = -1.6732632423543772 * 1.0507009873554805
            a = ((1 - 0.2) * (1 + 0.2 * alpha_p ** 2)) ** -0.5
            b = -a * alpha_p * 0.2
            np.testing.assert_allclose(np.unique(train), sorted([a * alpha_p + b, a * 2 + b]), rtol=1e-5)
    assert L.GaussianNoise(0.5).get_config()["stddev"] == 0.5
    z = rng.standard_normal((20000, 5)).astype(np.float32)  # AlphaDropout keeps a unit normal's mean and variance
    alpha = run(L.AlphaDropout(0.2)(K.constant(z), training=True))
    assert abs(alpha.mean()) < 0.03 and abs(alpha.std() - 1) < 0.03


def test_spatial_dropout_drops_whole_feature_maps():
    x = np.ones((4, 6, 5, 8), np.float32)
    out = run(L.SpatialDropout2D(0.5)(K.constant(x), training=True))
    per_map = out.reshape(4, 30, 8)
    assert np.all(per_map.min(1) == per_map.max(1))  # each (example, channel) map all kept or all dropped
    assert 0 < (per_map[:, 0] == 0).mean() < 1
    seq = run(L.SpatialDropout1D(0.5)(K.constant(np.ones((4, 7, 9), np.float32)), training=True))
    assert np.all(seq.min(1) == seq.max(1))
    first = run(L.SpatialDropout2D(0.5, data_format="channels_first")(K.constant(x), training=True))
    assert np.all(first.reshape(4, 6, 40).min(2) == first.reshape(4, 6, 40).max(2))
    config = L.SpatialDropout2D(0.3, data_format="channels_first").get_config()
    assert config["rate"] == 0.3 and config["data_format"] == "channels_first"


def test_dropout_under_the_learning_phase_is_a_cond_whose_gradient_uses_the_forward_mask():
    x = (rng.standard_normal((50, 8)) + 3).astype(np.float32)
    ph = tf.placeholder(tf.float32, [None, 8])
    out = L.Dropout(0.5)(ph)
    assert out.op.type == "If"  # tf.cond on the learning phase, as TF 1.15's smart_cond
    grad = tf.gradients(tf.reduce_sum(out * 3.0), ph)[0]
    for _ in range(3):
        o, g = run([out, grad], {ph: x, K.learning_phase(): True})
        np.testing.assert_allclose(g, 3.0 * o / x, rtol=1e-5)
    assert L.Dropout(0.5)(ph, training=False).op.type == "Identity"


def test_configs_round_trip():
    for layer in [L.LeakyReLU(0.2), L.PReLU(shared_axes=[1, 2]), L.ELU(0.7), L.ThresholdedReLU(0.3),
                  L.Softmax(axis=1), L.ReLU(6.0, 0.1, 0.2), L.GaussianNoise(0.1), L.GaussianDropout(0.2),
                  L.AlphaDropout(0.1, seed=3), L.SpatialDropout1D(0.2), L.SpatialDropout2D(0.3)]:
        config = layer.get_config()
        assert L.deserialize(L.serialize(layer)).get_config() == config
