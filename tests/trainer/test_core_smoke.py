"""Core path: variables, feeds, fetch structures, gradients of a tiny linear model vs numpy."""
import numpy as np
import pytest

import tensorfleet as tf
from gradcheck import check_gradients


def test_linear_model_values_and_gradients_match_numpy():
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    w = tf.Variable(np.arange(6, dtype=np.float32).reshape(3, 2) / 10, name="w")
    b = tf.Variable(tf.constant([0.5, -1.0]), name="b")
    y = tf.matmul(x, w) + b
    loss = tf.reduce_sum(y * y)
    gw, gb = tf.gradients(loss, [w, b])
    xv = np.arange(6, dtype=np.float32).reshape(2, 3)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        yv, lv, gwv, gbv = sess.run([y, loss, gw, gb], {x: xv})
    ref = xv @ (np.arange(6).reshape(3, 2) / 10) + [0.5, -1.0]
    np.testing.assert_allclose(yv, ref, rtol=1e-6)
    np.testing.assert_allclose(lv, (ref ** 2).sum(), rtol=1e-6)
    np.testing.assert_allclose(gwv, 2 * xv.T @ ref, rtol=1e-5)
    np.testing.assert_allclose(gbv, 2 * ref.sum(0), rtol=1e-5)


def test_broadcast_add_mul_matmul_gradients_finite_differences():
    rng = np.random.default_rng(1)
    a, b, c = rng.standard_normal((4, 3)), rng.standard_normal((3,)), rng.standard_normal((3, 2))
    check_gradients(lambda a, b, c: tf.matmul(a * b + b - a, c), [a, b, c])


def test_fetch_structures_and_names():
    a = tf.constant(1.0, name="a")
    b = tf.constant(2.0, name="b")
    s = tf.add(a, b)
    s2 = a + b
    # TF makes names unique case-insensitively: "Add" then "add" -> "add_1".
    assert (s.name, s2.name) == ("Add:0", "add_1:0")
    assert (a + b).name == "add_2:0"
    with tf.Session() as sess:
        out = sess.run({"s": s, "pair": (a, [b, "Add:0"])})
    assert out == {"s": 3.0, "pair": (1.0, [2.0, 3.0])}


def test_uninitialized_variable_names_it():
    v = tf.Variable([1.0, 2.0], name="weights")
    b = tf.Variable(1.0, name="bias")
    with tf.Session() as sess:
        with pytest.raises(tf.errors.FailedPreconditionError, match="uninitialized value weights") as e:
            sess.run(v + 1.0)
        assert e.value.op.name == "weights"
        sess.run(b.initializer)
        for fetch in (v * b, b * v, v * v, tf.add_n([v, v, v])):  # reads gathered with the consumer's inputs
            with pytest.raises(tf.errors.FailedPreconditionError, match="uninitialized value weights") as e:
                sess.run(fetch)
            assert e.value.op.name == "weights"


def test_wrong_feed_shape_names_placeholder_and_both_shapes():
    x = tf.placeholder(tf.float32, [None, 3], name="images")
    with tf.Session() as sess:
        with pytest.raises(ValueError, match=r"shape \(2, 4\) for Tensor 'images:0', which has shape '\(\?, 3\)'"):
            sess.run(x * 2.0, {x: np.ones((2, 4))})
