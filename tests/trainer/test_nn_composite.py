"""tf.nn.batch_normalization / l2_normalize / lrn / space_to_depth / depth_to_space / crelu / sufficient_statistics
/ normalize_moments / log_poisson_loss / fused_batch_norm (ops/nn_composite.py) against numpy and TF's formulas,
gradients by finite differences."""
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


def run(t):
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        return s.run(t)


def lrn_ref(x, r, bias, alpha, beta):
    c = x.shape[-1]
    out = np.empty_like(x)
    for d in range(c):
        s = np.sum(x[..., max(0, d - r):min(c, d + r + 1)] ** 2, axis=-1)
        out[..., d] = x[..., d] / (bias + alpha * s) ** beta
    return out


def test_lrn_matches_tf_formula_and_gradients():
    x = np.random.RandomState(2).randn(1, 2, 2, 7)
    got = run(tf.nn.lrn(tf.constant(x), depth_radius=2, bias=1.0, alpha=0.5, beta=0.75))
    np.testing.assert_allclose(got, lrn_ref(x, 2, 1.0, 0.5, 0.75), rtol=1e-12)
    np.testing.assert_allclose(run(tf.nn.local_response_normalization(tf.constant(x))), lrn_ref(x, 5, 1, 1, 0.5),
                               rtol=1e-12)
    check_gradients(lambda a: tf.nn.lrn(a, 2, 1.0, 0.5, 0.75), [x], rtol=1e-6, atol=1e-8)


def test_space_to_depth_matches_tf_doc_examples_and_round_trips():
    one = np.array([1, 2, 3, 4], np.float32).reshape(1, 2, 2, 1)
    assert run(tf.nn.space_to_depth(one, 2)).tolist() == [[[[1, 2, 3, 4]]]]
    three = np.arange(1, 13, dtype=np.float32).reshape(1, 2, 2, 3)
    assert run(tf.nn.space_to_depth(three, 2)).ravel().tolist() == list(range(1, 13))
    four = np.arange(1, 17, dtype=np.float32).reshape(1, 4, 4, 1)
    assert run(tf.space_to_depth(four, 2)).tolist() == [[[[1, 2, 5, 6], [3, 4, 7, 8]],
                                                           [[9, 10, 13, 14], [11, 12, 15, 16]]]]
    x = np.random.RandomState(0).randn(2, 4, 6, 3)
    np.testing.assert_array_equal(run(tf.depth_to_space(tf.nn.space_to_depth(x, 2), 2)), x)
    check_gradients(lambda a: tf.nn.space_to_depth(a, 2), [x])


def test_small_composites_match_tf_formulas():
    x = np.random.RandomState(5).randn(3, 4)
    np.testing.assert_allclose(run(tf.nn.crelu(tf.constant(x))), np.concatenate([np.maximum(x, 0),
                                                                                  np.maximum(-x, 0)], -1))
    count, m_ss, v_ss, _ = tf.nn.sufficient_statistics(tf.constant(x), [0])
    mean, var = tf.nn.normalize_moments(count, m_ss, v_ss, None)
    mv, vv = run([mean, var])
    np.testing.assert_allclose(mv, x.mean(0), rtol=1e-12)
    np.testing.assert_allclose(vv, x.var(0), rtol=1e-10)
    z, c = np.array([0.0, 1.0, 3.0]), np.array([0.5, -0.2, 1.1])
    full = np.exp(c) - z * c + np.where(z > 1, z * np.log(np.maximum(z, 1)) - z + 0.5 * np.log(2 * np.pi *
                                                                                              np.maximum(z, 1)), 0)
    np.testing.assert_allclose(run(tf.nn.log_poisson_loss(z, tf.constant(c))), np.exp(c) - z * c, rtol=1e-12)
    np.testing.assert_allclose(run(tf.nn.log_poisson_loss(z, tf.constant(c), compute_full_loss=True)), full,
                               rtol=1e-12)


def test_fused_batch_norm_training_and_inference():
    x = np.random.RandomState(6).randn(2, 3, 3, 4)
    scale, offset = np.linspace(0.5, 2, 4), np.linspace(-1, 1, 4)
    y, m, v = run(tf.nn.fused_batch_norm(tf.constant(x), scale, offset, epsilon=1e-3))
    bm, bv = x.mean((0, 1, 2)), x.var((0, 1, 2))
    np.testing.assert_allclose(y, (x - bm) / np.sqrt(bv + 1e-3) * scale + offset, rtol=1e-10)
    np.testing.assert_allclose(m, bm, rtol=1e-12)
    np.testing.assert_allclose(v, x.var((0, 1, 2), ddof=1), rtol=1e-10)  # TF returns the Bessel-corrected one
    yi, _, _ = run(tf.nn.fused_batch_norm(tf.constant(x), scale, offset, mean=bm, variance=bv, is_training=False))
    np.testing.assert_allclose(yi, y, rtol=1e-10)
