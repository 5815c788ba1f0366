"""TF 1.15's re-exporting namespaces (namespaces.py): tf.math, tf.random, tf.debugging and tf.linalg name the same
functions as the top level, `tensorfleet.math` imports as a module, and tf.random's samplers draw from the right
distributions."""
import numpy as np

import tensorfleet as tf
from helpers import init_and_run


def test_math_random_and_debugging_namespaces():
    assert tf.math.log is tf.log and tf.math.reduce_sum is tf.reduce_sum and tf.math.cumsum is tf.cumsum
    assert tf.math.top_k is tf.nn.top_k and tf.random.set_random_seed is tf.set_random_seed
    assert tf.random.normal is tf.random_normal and tf.random.uniform is tf.random_uniform
    assert tf.debugging.assert_equal is tf.assert_equal and tf.linalg.tensordot is tf.tensordot
    from tensorfleet.math import exp  # noqa: F401  (a real module)
    tf.random.set_random_seed(3)
    a = tf.random.normal([2000], seed=1)
    c = tf.random.categorical(tf.log([[0.5, 0.5]]), 4000, seed=2)
    u = tf.random.uniform([3], maxval=2.0, seed=1)
    va, vc, vu = init_and_run([a, c, u])
    assert abs(va.mean()) < 0.1 and abs(va.std() - 1) < 0.1
    assert c.dtype is tf.int64 and abs(vc.mean() - 0.5) < 0.05 and ((vu >= 0) & (vu < 2)).all()
    np.testing.assert_allclose(init_and_run(tf.math.log(tf.constant([1.0, np.e]))), [0, 1], atol=1e-6)
