"""tf.layers.batch_normalization against numpy: batch/moving statistics, UPDATE_OPS, fused-style Bessel update."""
import numpy as np
import pytest

import tensorfleet as tf
from gradcheck import check_gradients

rng = np.random.RandomState(0)


def test_variables_training_and_inference():
    xv = (rng.randn(6, 3) * 2 + 1).astype(np.float32)
    x = tf.placeholder(tf.float32, [None, 3])
    y_train = tf.layers.batch_normalization(x, training=True, momentum=0.9, name="bn")
    y_infer = tf.layers.batch_normalization(x, training=False, name="bn", reuse=True)
    assert [v.name for v in tf.global_variables()] == ["bn/gamma:0", "bn/beta:0", "bn/moving_mean:0",
                                                       "bn/moving_variance:0"]
    assert [v.name for v in tf.trainable_variables()] == ["bn/gamma:0", "bn/beta:0"]
    updates = tf.get_collection(tf.GraphKeys.UPDATE_OPS)
    assert len(updates) == 2  # the inference call adds none
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        before = sess.run(y_infer, {x: xv})
        out = sess.run(y_train, {x: xv})
        sess.run(updates, {x: xv})
        mm, mv = sess.run(tf.global_variables()[2:])
        after = sess.run(y_infer, {x: xv})
    np.testing.assert_allclose(before, xv / np.sqrt(1 + 1e-3), rtol=1e-5)
    np.testing.assert_allclose(out, (xv - xv.mean(0)) / np.sqrt(xv.var(0) + 1e-3), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(mm, 0.1 * xv.mean(0), rtol=1e-5)
    np.testing.assert_allclose(mv, 0.9 + 0.1 * xv.var(0), rtol=1e-5)  # 2-D input: biased variance
    np.testing.assert_allclose(after, (xv - mm) / np.sqrt(mv + 1e-3), rtol=1e-4, atol=1e-5)


def test_training_tensor_selects_statistics_and_gates_updates():
    xv = rng.randn(4, 2).astype(np.float32) + 3
    x = tf.constant(xv)
    training = tf.placeholder_with_default(False, [])
    y = tf.layers.batch_normalization(x, training=training, center=False, scale=False)
    assert len(tf.global_variables()) == 2
    update_ops = tf.get_collection(tf.GraphKeys.UPDATE_OPS)
    with tf.control_dependencies(update_ops):
        train_out = tf.identity(y)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        np.testing.assert_allclose(sess.run(train_out), xv / np.sqrt(1 + 1e-3), rtol=1e-5)
        np.testing.assert_array_equal(sess.run(tf.global_variables()[0]), [0, 0])  # momentum 1: no change
        got = sess.run(train_out, {training: True})
        np.testing.assert_allclose(sess.run(tf.global_variables()[0]), 0.01 * xv.mean(0), rtol=1e-5)
    np.testing.assert_allclose(got, (xv - xv.mean(0)) / np.sqrt(xv.var(0) + 1e-3), rtol=1e-4, atol=1e-5)


def test_nchw_4d_uses_channel_axis_and_bessel_corrected_moving_variance():
    xv = rng.randn(2, 3, 2, 2).astype(np.float32)
    y = tf.layers.batch_normalization(tf.constant(xv), axis=1, training=True, momentum=0.0)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        out, _ = sess.run([y, tf.get_collection(tf.GraphKeys.UPDATE_OPS)])
        mv = sess.run(tf.global_variables()[3])
    mean, var = xv.mean((0, 2, 3), keepdims=True), xv.var((0, 2, 3), keepdims=True)
    np.testing.assert_allclose(out, (xv - mean) / np.sqrt(var + 1e-3), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(mv, xv.var((0, 2, 3), ddof=1), rtol=1e-5)


def test_gradients_in_training_mode():
    def build(x):
        # gradcheck runs no initializer: without gamma/beta the training-mode output reads no variable
        return tf.layers.batch_normalization(x, training=True, center=False, scale=False)

    check_gradients(build, [rng.randn(5, 3)], rtol=1e-4, atol=1e-6)


def test_errors():
    with pytest.raises(ValueError, match="undefined `axis` dimension"):
        tf.layers.batch_normalization(tf.placeholder(tf.float32, [2, None]))
