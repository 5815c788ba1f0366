"""BatchNormalization and LayerNormalization against numpy: batch vs moving statistics by `training` and the
learning phase, the moving averages `fit` updates (non-fused: batch variance; fused 4-D path: the Bessel-corrected
variance, as TF 1.15's fused kernel), TF 1.15's variable names, finite-difference gradients, configs."""
import numpy as np
import pytest

import tensorfleet as tf
from gradcheck import check_gradients

K = tf.keras.backend
L = tf.keras.layers
rng = np.random.default_rng(11)


def run(t, feed=None):
    return K.get_session().run(t, feed)


def bn(x, mean, var, gamma, beta, eps):
    return (x - mean) / np.sqrt(var + eps) * gamma + beta


def test_batch_normalization_defaults_names_and_phases():
    layer = L.BatchNormalization()
    assert layer.momentum == 0.99 and layer.epsilon == 1e-3 and layer.axis == [-1]
    x = rng.standard_normal((8, 3)) * 3 + 1
    ph = tf.placeholder(tf.float64, [None, 3])
    out = layer(ph)
    assert [v.name for v in layer.weights] == ["batch_normalization/gamma:0", "batch_normalization/beta:0",
                                               "batch_normalization/moving_mean:0",
                                               "batch_normalization/moving_variance:0"]
    assert [v.name for v in layer.trainable_weights] == ["batch_normalization/gamma:0", "batch_normalization/beta:0"]
    gamma, beta = rng.uniform(0.5, 2, 3), rng.standard_normal(3)
    mm, mv = rng.standard_normal(3), rng.uniform(0.5, 2, 3)
    layer.set_weights([gamma, beta, mm, mv])
    lp = K.learning_phase()
    np.testing.assert_allclose(run(out, {ph: x, lp: True}), bn(x, x.mean(0), x.var(0), gamma, beta, 1e-3))
    np.testing.assert_allclose(run(out, {ph: x}), bn(x, mm, mv, gamma, beta, 1e-3))  # phase defaults to 0
    assert len(layer.updates) == 2 and layer.get_updates_for(None) == []
    # running the updates with the phase False leaves the moving statistics alone, True moves them
    run(layer.updates, {ph: x, lp: False})
    np.testing.assert_allclose(run(layer.moving_mean), mm)
    run(layer.updates, {ph: x, lp: True})
    np.testing.assert_allclose(run(layer.moving_mean), mm * 0.99 + x.mean(0) * 0.01)
    np.testing.assert_allclose(run(layer.moving_variance), mv * 0.99 + x.var(0) * 0.01)


def test_static_training_argument():
    x = rng.standard_normal((6, 4))
    layer = L.BatchNormalization(center=False, scale=False)
    train = run(layer(K.constant(x, "float64"), training=True))
    np.testing.assert_allclose(train, (x - x.mean(0)) / np.sqrt(x.var(0) + 1e-3))
    assert len(layer.weights) == 2
    infer_layer = L.BatchNormalization()
    infer = run(infer_layer(K.constant(x, "float64"), training=False))
    np.testing.assert_allclose(infer, x / np.sqrt(1 + 1e-3))
    assert infer_layer.updates == []  # training=False: no moving-average update at all


def test_fused_path_on_4d_inputs_channels_first_and_last():
    x = rng.standard_normal((4, 3, 5, 2)) * 2 + 3
    for axis, reduce in ((-1, (0, 1, 2)), (1, (0, 2, 3))):
        layer = L.BatchNormalization(axis=axis, momentum=0.9, epsilon=1e-6)
        out = layer(K.constant(x, "float64"), training=True)
        assert layer.fused and layer.epsilon == 1.001e-5  # the fused kernel's minimum epsilon
        mean, var = x.mean(reduce, keepdims=True), x.var(reduce, keepdims=True)
        np.testing.assert_allclose(run(out), (x - mean) / np.sqrt(var + 1.001e-5))
        run(layer.updates)
        n = x.size / x.shape[axis]
        np.testing.assert_allclose(run(layer.moving_variance), 0.9 + 0.1 * var.ravel() * n / (n - 1))
        np.testing.assert_allclose(run(layer.moving_mean), 0.1 * mean.ravel())
    other_axis = L.BatchNormalization(axis=2)
    other_axis(K.constant(x, "float64"))
    assert not other_axis.fused  # fused only over axis 1 or 3 of a 4-D input


def test_non_fused_on_4d_and_multiple_axes():
    x = rng.standard_normal((3, 4, 2, 5))
    layer = L.BatchNormalization(axis=[1, 3], fused=False)
    out = run(layer(K.constant(x, "float64"), training=True))
    assert not layer.fused and layer.gamma.shape.as_list() == [1, 4, 1, 5]
    mean, var = x.mean((0, 2), keepdims=True), x.var((0, 2), keepdims=True)
    np.testing.assert_allclose(out, (x - mean) / np.sqrt(var + 1e-3))
    run(layer.updates)
    np.testing.assert_allclose(run(layer.moving_mean), 0.01 * mean[0, :, 0, :][None, :, None, :])


def test_moving_statistics_after_fit_match_numpy():
    """fit runs the updates once per batch with the learning phase True: moving = 0.99 m + 0.01 batch."""
    x = (rng.standard_normal((40, 3)) * [1, 2, 3] + [0, 1, -1]).astype(np.float32)
    model = tf.keras.Sequential([L.BatchNormalization(input_shape=(3,), momentum=0.8)])
    model.compile(tf.keras.optimizers.SGD(0.0), "mse")
    model.fit(x, np.zeros_like(x), batch_size=10, epochs=2, shuffle=False, verbose=0)
    mean, var = np.zeros(3), np.ones(3)
    for _ in range(2):
        for b in range(4):
            batch = x[b * 10:(b + 1) * 10].astype(np.float64)
            mean = 0.8 * mean + 0.2 * batch.mean(0)
            var = 0.8 * var + 0.2 * batch.var(0)
    _, _, mm, mv = model.get_weights()
    np.testing.assert_allclose(mm, mean, rtol=1e-5)
    np.testing.assert_allclose(mv, var, rtol=1e-5)
    # predict normalises with the moving statistics
    np.testing.assert_allclose(model.predict(x[:5]), (x[:5] - mm) / np.sqrt(mv + 1e-3), rtol=1e-5, atol=1e-6)


def test_conv_batch_norm_fit_updates_with_bessel_correction():
    x = rng.standard_normal((8, 3, 3, 2)).astype(np.float32)
    model = tf.keras.Sequential([L.BatchNormalization(input_shape=(3, 3, 2))])
    model.compile(tf.keras.optimizers.SGD(0.0), "mse")
    model.fit(x, np.zeros_like(x), batch_size=4, epochs=1, shuffle=False, verbose=0)
    mean, var = np.zeros(2), np.ones(2)
    for b in range(2):
        batch = x[b * 4:(b + 1) * 4].astype(np.float64)
        mean = 0.99 * mean + 0.01 * batch.mean((0, 1, 2))
        var = 0.99 * var + 0.01 * batch.var((0, 1, 2), ddof=1)
    np.testing.assert_allclose(model.get_weights()[2], mean, rtol=1e-5)
    np.testing.assert_allclose(model.get_weights()[3], var, rtol=1e-5)


@pytest.mark.parametrize("fused,shape", [(True, (3, 2, 2, 2)), (False, (5, 3))])
def test_batch_normalization_gradients(fused, shape):
    gamma, beta = rng.uniform(0.5, 1.5, shape[-1]), rng.standard_normal(shape[-1])

    def build(t):
        return L.BatchNormalization(gamma_initializer=tf.constant_initializer(gamma), fused=fused,
                                    beta_initializer=tf.constant_initializer(beta), dtype="float64")(t, training=True)

    check_gradients(build, [rng.standard_normal(shape)], rtol=1e-4, atol=1e-6)


def test_layer_normalization():
    x = rng.standard_normal((3, 4, 5))
    layer = L.LayerNormalization()
    out = layer(K.constant(x, "float64"))
    assert [v.name for v in layer.weights] == ["layer_normalization/gamma:0", "layer_normalization/beta:0"]
    gamma, beta = rng.standard_normal(5), rng.standard_normal(5)
    layer.set_weights([gamma, beta])
    mean, var = x.mean(-1, keepdims=True), x.var(-1, keepdims=True)
    np.testing.assert_allclose(run(out), (x - mean) / np.sqrt(var + 1e-3) * gamma + beta, rtol=1e-10)
    two = L.LayerNormalization(axis=[1, 2], epsilon=1e-5, center=False)
    out2 = run(two(K.constant(x, "float64")))
    mean, var = x.mean((1, 2), keepdims=True), x.var((1, 2), keepdims=True)
    np.testing.assert_allclose(out2, (x - mean) / np.sqrt(var + 1e-5), rtol=1e-10)
    assert two.gamma.shape.as_list() == [4, 5] and len(two.weights) == 1
    check_gradients(lambda t: L.LayerNormalization(gamma_initializer=tf.constant_initializer(gamma),
                                                   dtype="float64")(t), [x[:2, :2]], rtol=1e-4)


def test_configs_round_trip():
    for layer in [L.BatchNormalization(axis=1, momentum=0.9, epsilon=1e-4, center=False,
                                       gamma_regularizer="l2"), L.LayerNormalization(axis=[1, 2], epsilon=1e-5)]:
        config = layer.get_config()
        assert type(layer).from_config(config).get_config() == config
    config = L.BatchNormalization().get_config()
    assert config["axis"] == [-1] and config["momentum"] == 0.99 and config["epsilon"] == 1e-3
    assert config["moving_variance_initializer"]["class_name"] == "Ones"
    with pytest.raises(NotImplementedError, match="renorm"):
        L.BatchNormalization(renorm=True)
