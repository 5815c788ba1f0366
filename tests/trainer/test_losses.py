"""tf.losses against numpy formulas of TF 1.15's losses_impl (weights, reductions, label smoothing, collections)."""
import numpy as np
import pytest

import tensorfleet as tf
from gradcheck import check_gradients
from helpers import np_softmax, run

R = tf.losses.Reduction
rng = np.random.RandomState(0)
PRED = rng.randn(4, 3).astype(np.float32)
LAB = rng.randn(4, 3).astype(np.float32)
W = np.array([[1.0], [0.0], [2.0], [0.5]], np.float32)


@pytest.mark.parametrize("reduction,expected", [
    (R.SUM_BY_NONZERO_WEIGHTS, lambda l: (l * W).sum() / (3 * 3)),
    (R.MEAN, lambda l: (l * W).sum() / (W.sum() * 3)),
    (R.SUM, lambda l: (l * W).sum()),
    (R.SUM_OVER_BATCH_SIZE, lambda l: (l * W).sum() / 12),
    (R.NONE, lambda l: l * W),
])
def test_mean_squared_error_reductions(reduction, expected):
    loss = tf.losses.mean_squared_error(LAB, PRED, weights=W, reduction=reduction)
    np.testing.assert_allclose(run(loss), expected((PRED - LAB) ** 2), rtol=1e-5)
    assert tf.get_collection(tf.GraphKeys.LOSSES) == [loss]


def test_regression_losses_default_reduction_is_mean():
    d = PRED - LAB
    huber = np.where(np.abs(d) <= 1.0, 0.5 * d ** 2, np.abs(d) - 0.5)
    p = 1 / (1 + np.exp(-PRED))
    y = (LAB > 0).astype(np.float32)
    got = run([tf.losses.absolute_difference(LAB, PRED), tf.losses.huber_loss(LAB, PRED),
                tf.losses.log_loss(y, p), tf.losses.hinge_loss(y, PRED),
                tf.losses.mean_squared_error(LAB, PRED, weights=0.0)])
    np.testing.assert_allclose(got[0], np.abs(d).mean(), rtol=1e-5)
    np.testing.assert_allclose(got[1], huber.mean(), rtol=1e-5)
    np.testing.assert_allclose(got[2], np.mean(-y * np.log(p + 1e-7) - (1 - y) * np.log(1 - p + 1e-7)), rtol=1e-5)
    np.testing.assert_allclose(got[3], np.maximum(0, 1 - (2 * y - 1) * PRED).mean(), rtol=1e-5)
    assert got[4] == 0.0  # all weights zero: div_no_nan
    assert len(tf.losses.get_losses()) == 5


def test_cosine_distance():
    a = LAB / np.linalg.norm(LAB, axis=1, keepdims=True)
    b = PRED / np.linalg.norm(PRED, axis=1, keepdims=True)
    got = run(tf.losses.cosine_distance(a, b, axis=1))
    np.testing.assert_allclose(got, np.mean(1 - (a * b).sum(1)), rtol=1e-5)
    with pytest.raises(ValueError, match="axis"):
        tf.losses.cosine_distance(a, b)


def test_classification_losses_with_weights_and_label_smoothing():
    labels = np.array([0, 2, 1, 2])
    onehot = np.eye(3, dtype=np.float32)[labels]
    bw = np.array([1.0, 0.0, 2.0, 1.0], np.float32)
    xent = -np.log(np_softmax(PRED.astype(np.float64))[np.arange(4), labels])
    smooth = onehot * 0.9 + 0.1 / 3
    xent_smooth = -(smooth * np.log(np_softmax(PRED.astype(np.float64)))).sum(1)
    sig_lab = smooth * 0.8 + 0.5 * 0.2
    sig = np.maximum(PRED, 0) - PRED * sig_lab + np.log1p(np.exp(-np.abs(PRED)))
    got = run([tf.losses.softmax_cross_entropy(onehot, PRED),
                tf.losses.softmax_cross_entropy(onehot, PRED, weights=bw),
                tf.losses.softmax_cross_entropy(onehot, PRED, label_smoothing=0.1),
                tf.losses.sparse_softmax_cross_entropy(labels, PRED, weights=bw),
                tf.losses.sparse_softmax_cross_entropy(labels.reshape(4, 1).astype(np.int32), PRED),
                tf.losses.sigmoid_cross_entropy(smooth, PRED, label_smoothing=0.2)])
    np.testing.assert_allclose(got[0], xent.mean(), rtol=1e-5)
    np.testing.assert_allclose(got[1], (xent * bw).sum() / 3, rtol=1e-5)
    np.testing.assert_allclose(got[2], xent_smooth.mean(), rtol=1e-5)
    np.testing.assert_allclose(got[3], (xent * bw).sum() / 3, rtol=1e-5)
    np.testing.assert_allclose(got[4], xent.mean(), rtol=1e-5)
    np.testing.assert_allclose(got[5], sig.mean(), rtol=1e-5)


def test_total_loss_and_regularization_collections():
    x = tf.constant(PRED)
    tf.layers.dense(x, 2, kernel_regularizer=lambda w: 0.1 * tf.reduce_sum(tf.square(w)), name="fc")
    with tf.variable_scope("other"):
        v = tf.get_variable("v", initializer=np.float32(3.0))
    tf.losses.add_loss(2.0 * v, loss_collection="custom")
    data = tf.losses.mean_squared_error(LAB, PRED)
    reg = tf.losses.get_regularization_loss()
    assert reg.name == "total_regularization_loss:0"
    total = tf.losses.get_total_loss()
    assert total.name == "total_loss:0"
    assert tf.losses.get_losses(loss_collection="custom")[0].op.type == "Mul"
    assert tf.losses.get_regularization_losses(scope="other") == []
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        k, d, r, t = sess.run([tf.trainable_variables()[0], data, reg, total])
    assert r == pytest.approx(0.1 * (k ** 2).sum(), rel=1e-5)
    assert t == pytest.approx(d + r, rel=1e-6)
    with tf.Graph().as_default():
        with pytest.raises(ValueError):
            tf.losses.get_total_loss()
        assert run(tf.losses.get_regularization_loss()) == 0.0
    with pytest.raises(ValueError, match="Invalid Reduction"):
        tf.losses.mean_squared_error(LAB, PRED, reduction="bogus")
    with pytest.raises(ValueError, match="broadcast"):
        tf.losses.mean_squared_error(LAB, PRED, weights=np.ones(4, np.float32))


def test_loss_gradients():
    # TF computes losses in float32 (inputs are cast), so differences use a float32-sized step.
    labels = np.eye(3)[[0, 2, 1, 2]]
    bw = np.array([1.0, 0.0, 2.0, 1.0])
    check_gradients(lambda p: tf.losses.softmax_cross_entropy(labels, p, weights=bw, label_smoothing=0.1),
                    [PRED.astype(np.float64)], rtol=1e-2, atol=1e-4, eps=1e-3)
    # Regression losses return float32 whatever the input dtype (as TF's).
    check_gradients(lambda p: tf.cast(tf.losses.huber_loss(LAB.astype(np.float64), p, weights=W), tf.float64),
                    [PRED.astype(np.float64)], rtol=1e-2, atol=1e-4, eps=1e-3)
