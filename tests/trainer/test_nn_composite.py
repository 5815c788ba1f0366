"""tf.nn.batch_normalization / tf.nn.l2_normalize against numpy, gradients by finite differences."""
import numpy as np

import tensorfleet as tf
from gradcheck import check_gradients


def test_batch_normalization_forward_matches_numpy():
    rng = np.random.RandomState(0)
    xv = rng.randn(5, 3).astype(np.float32)
    mean, var = xv.mean(0), xv.var(0)
    scale, offset = np.array([1.0, 2.0, 0.5], np.float32), np.array([0.0, -1.0, 3.0], np.float32)
    y = tf.nn.batch_normalization(tf.constant(xv), mean, var, offset, scale, 1e-3)
    y_no_affine = tf.nn.batch_normalization(tf.constant(xv), mean, var, None, None, 1e-3)
    with tf.Session() as sess:
        a, b = sess.run([y, y_no_affine])
    norm = (xv - mean) / np.sqrt(var + 1e-3)
    np.testing.assert_allclose(a, norm * scale + offset, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(b, norm, rtol=1e-5, atol=1e-5)
    assert y.dtype == tf.float32 and y.name.startswith("batchnorm/")


def test_batch_normalization_gradients():
    rng = np.random.RandomState(1)

    def build(x, scale, offset):
        mean, var = tf.nn.moments(x, axes=[0])
        return tf.nn.batch_normalization(x, mean, var, offset, scale, 1e-3)

    check_gradients(build, [rng.randn(4, 3), rng.rand(3) + 0.5, rng.randn(3)], rtol=1e-4, atol=1e-6)


def test_l2_normalize_forward_and_gradient():
    rng = np.random.RandomState(2)
    xv = rng.randn(3, 4)
    with tf.Session() as sess:
        out = sess.run(tf.nn.l2_normalize(tf.constant(xv), axis=1))
        zero = sess.run(tf.nn.l2_normalize(tf.zeros([2]), 0))
    np.testing.assert_allclose(out, xv / np.linalg.norm(xv, axis=1, keepdims=True), rtol=1e-6)
    np.testing.assert_array_equal(zero, [0.0, 0.0])
    check_gradients(lambda x: tf.nn.l2_normalize(x, dim=1), [xv], rtol=1e-4, atol=1e-6)
