"""tf.keras.initializers, regularizers, constraints and activations: Keras 1.15's defaults, lookup by name,
serialization, and values against numpy."""
import numpy as np
import pytest

import tensorfleet as tf

K = tf.keras.backend
I, R, C, A = tf.keras.initializers, tf.keras.regularizers, tf.keras.constraints, tf.keras.activations
rng = np.random.default_rng(8)


def run(t):
    return K.get_session().run(t)


def test_initializer_lookup_and_keras_defaults():
    assert isinstance(I.get("glorot_uniform"), I.GlorotUniform) and isinstance(I.get("zeros"), I.Zeros)
    assert isinstance(I.get("he_normal"), I.VarianceScaling) and I.get("he_normal").scale == 2.0
    assert I.get(None) is None and I.serialize(I.Ones()) == {"class_name": "Ones", "config": {"dtype": "float32"}}
    assert I.RandomNormal().stddev == 0.05 and (I.RandomUniform().minval, I.RandomUniform().maxval) == (-0.05, 0.05)
    assert I.TruncatedNormal().stddev == 0.05
    restored = I.deserialize({"class_name": "VarianceScaling", "config": {"scale": 3.0, "mode": "fan_out",
                                                                         "distribution": "uniform"}})
    assert (restored.scale, restored.mode) == (3.0, "fan_out")
    with pytest.raises(ValueError, match="Unknown initializer"):
        I.get("nope")


def test_initializer_values():
    w = run(I.glorot_uniform(seed=1)((200, 300)))
    limit = np.sqrt(6 / 500)
    assert np.abs(w).max() <= limit and abs(w.std() - limit / np.sqrt(3)) < 0.005
    np.testing.assert_array_equal(run(I.Identity(gain=2.0)((2, 3))), 2 * np.eye(2, 3))
    np.testing.assert_array_equal(run(I.Constant(1.5)((2,))), [1.5, 1.5])
    with pytest.raises(ValueError, match="2D matrices"):
        I.Identity()((2, 2, 2))


def test_regularizers():
    x = rng.standard_normal((3, 4))
    t = K.constant(x, "float64")
    assert run(R.l1(0.1)(t)) == pytest.approx(0.1 * np.abs(x).sum())
    assert run(R.l2(0.2)(t)) == pytest.approx(0.2 * (x ** 2).sum())
    assert run(R.l1_l2(0.1, 0.2)(t)) == pytest.approx(0.1 * np.abs(x).sum() + 0.2 * (x ** 2).sum())
    assert run(R.L1L2()(t)) == 0.0
    assert R.get("l2").get_config() == {"l1": 0.0, "l2": 0.01}  # the names l1/l2/l1_l2 give instances
    assert R.serialize(R.l1(0.3)) == {"class_name": "L1L2", "config": {"l1": 0.3, "l2": 0.0}}


def test_constraints_match_numpy():
    w = rng.standard_normal((4, 3))
    t = K.constant(w, "float64")
    norms = np.sqrt((w ** 2).sum(0, keepdims=True))
    np.testing.assert_allclose(run(C.MaxNorm(1.0)(t)), w * np.clip(norms, 0, 1) / (1e-7 + norms))
    np.testing.assert_allclose(run(C.NonNeg()(K.constant(w))), w * (w >= 0), rtol=1e-6)
    np.testing.assert_allclose(run(C.UnitNorm(axis=1)(t)), w / (1e-7 + np.sqrt((w ** 2).sum(1, keepdims=True))))
    mm = run(C.MinMaxNorm(0.5, 0.8, rate=0.5)(t))
    desired = 0.5 * np.clip(norms, 0.5, 0.8) + 0.5 * norms
    np.testing.assert_allclose(mm, w * desired / (1e-7 + norms))
    assert isinstance(C.get("max_norm"), C.MaxNorm) and C.serialize(C.MaxNorm(3))["config"]["max_value"] == 3


def test_activations():
    x = rng.standard_normal((2, 3, 4))
    t = K.constant(x, "float64")
    e = np.exp(x - x.max(-1, keepdims=True))
    np.testing.assert_allclose(run(A.softmax(t)), e / e.sum(-1, keepdims=True))
    assert A.softmax(K.constant(x[0], "float64")).op.type == "Softmax"
    with pytest.raises(ValueError, match="softmax to a tensor that is 1D"):
        A.softmax(K.constant([1.0, 2.0]))
    alpha, scale = 1.6732632423543772, 1.0507009873554805
    np.testing.assert_allclose(run(A.selu(t)), scale * np.where(x > 0, x, alpha * (np.exp(x) - 1)))
    assert A.get(None) is A.linear and A.get("relu") is A.relu and A.serialize(A.tanh) == "tanh"
    with pytest.raises(ValueError, match="Unknown activation function"):
        A.get("swishy")
    with pytest.raises(TypeError, match="Could not interpret activation"):
        A.get(3)
