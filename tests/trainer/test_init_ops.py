"""Initializers: TF1 classes and tf.initializers, values/limits/moments, dtypes, seeding, fans."""
import numpy as np
import pytest

import tensorfleet as tf
from helpers import run
from tensorfleet.ops.init_ops import _compute_fans


def test_constant_initializers():
    np.testing.assert_array_equal(run(tf.zeros_initializer()([2, 3])), np.zeros((2, 3)))
    ones = tf.ones_initializer()([2], dtype=tf.int32)
    assert ones.dtype == tf.int32
    np.testing.assert_array_equal(run(ones), [1, 1])
    np.testing.assert_array_equal(run(tf.constant_initializer(2.5)([2, 2])), np.full((2, 2), 2.5))
    np.testing.assert_array_equal(run(tf.constant_initializer([1, 2, 3, 4])([2, 2])), [[1, 2], [3, 4]])
    with pytest.raises(TypeError):
        tf.constant_initializer([1, 2, 3])([2, 2])
    assert tf.initializers.zeros is tf.zeros_initializer and tf.initializers.glorot_uniform is \
        tf.glorot_uniform_initializer


def test_fans():
    assert _compute_fans([]) == (1, 1)
    assert _compute_fans([5]) == (5, 5)
    assert _compute_fans([3, 4]) == (3, 4)
    assert _compute_fans([3, 3, 8, 16]) == (72, 144)


@pytest.mark.parametrize("init,check", [
    (tf.glorot_uniform_initializer(seed=1), lambda v: np.abs(v).max() <= np.sqrt(6 / 500) and
     abs(v.std() - np.sqrt(2 / 500)) < 0.003),
    (tf.glorot_normal_initializer(seed=1), lambda v: abs(v.std() - np.sqrt(2 / 500)) < 0.003 and
     np.abs(v).max() <= 2 * np.sqrt(2 / 500) / 0.8796 + 1e-6),
    (tf.variance_scaling_initializer(2.0, "fan_in", "untruncated_normal", seed=1),
     lambda v: abs(v.std() - np.sqrt(2 / 200)) < 0.004),
    (tf.he_uniform(seed=1), lambda v: np.abs(v).max() <= np.sqrt(6 / 200) and
     abs(v.std() - np.sqrt(2 / 200)) < 0.004),
    (tf.he_normal(seed=1), lambda v: abs(v.std() - np.sqrt(2 / 200)) < 0.004),
    (tf.random_normal_initializer(1.0, 0.5, seed=1), lambda v: abs(v.mean() - 1) < 0.02 and abs(v.std() - .5) < .02),
    (tf.truncated_normal_initializer(0.0, 0.5, seed=1), lambda v: np.abs(v).max() <= 1.0),
    (tf.random_uniform_initializer(-0.1, 0.3, seed=1), lambda v: v.min() >= -0.1 and v.max() < 0.3),
    (tf.orthogonal_initializer(gain=2.0, seed=1), lambda v: np.allclose(v @ v.T, 4 * np.eye(200), atol=1e-4)),
], ids=lambda x: type(x).__name__ if not callable(x) or hasattr(x, "get_config") else "")
def test_random_initializer_statistics(init, check):
    t = init([200, 300])
    assert t.dtype == tf.float32 and t.shape.as_list() == [200, 300]
    assert check(run(t).astype(np.float64))


def test_seeded_initializer_reproducible_and_dtype_rules():
    a = run(tf.glorot_uniform_initializer(seed=3)([4, 4]))
    tf.reset_default_graph()
    b = run(tf.glorot_uniform_initializer(seed=3)([4, 4]))
    np.testing.assert_array_equal(a, b)
    assert tf.glorot_uniform_initializer()([2, 2], dtype=tf.float64).dtype == tf.float64
    with pytest.raises(ValueError, match="floating"):
        tf.glorot_uniform_initializer()([2, 2], dtype=tf.int32)
    assert tf.variance_scaling_initializer(seed=1).get_config()["distribution"] == "truncated_normal"
    assert tf.initializers.variance_scaling(mode="fan_out")([3, 3]).shape.as_list() == [3, 3]
    conv = run(tf.glorot_uniform_initializer(seed=0)([3, 3, 8, 16]))
    assert np.abs(conv).max() <= np.sqrt(6 / (72 + 144))
