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
