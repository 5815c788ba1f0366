"""Focused regressions found by running real TF1 programs (tests/trainer/test_tf1_programs.py)."""
import numpy as np
import pytest

import tensorfleet as tf


def test_gradient_descent_on_scalar_variable():
    # tf.Variable(5.0) + GradientDescent: the 0-d update must stay an array for the in-place subtract.
    w = tf.Variable(5.0)
    train = tf.train.GradientDescentOptimizer(0.1).minimize(tf.square(w))
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(train)
        assert sess.run(w) == pytest.approx(5.0 - 0.1 * 2 * 5.0)
        w64 = tf.Variable(np.float64(2.0))
        sess.run(w64.initializer)
        sess.run(tf.train.GradientDescentOptimizer(0.5).minimize(w64 * w64))
        assert sess.run(w64) == 0.0


def test_control_dependency_on_a_fed_placeholder_is_satisfied_by_the_feed():
    """TF's FeedInputs rewrite replaces a fed Placeholder's control edges with the feed's (tf.metrics.mean and
    friends put one on their `values`); unfed, the placeholder still asks for a value."""
    p = tf.placeholder(tf.float32, [None])
    v = tf.Variable(0.)
    with tf.control_dependencies([p]):
        u = tf.assign_add(v, tf.cast(tf.size(p), tf.float32))
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        assert sess.run(u, {p: np.ones(3, np.float32)}) == 3.0
        assert sess.run(u, {p: np.ones(2, np.float32)}) == 5.0
        with pytest.raises(tf.errors.InvalidArgumentError, match="must feed a value for placeholder tensor"):
            with tf.control_dependencies([p]):
                w = tf.assign_add(v, 1.0)
            sess.run(w)
