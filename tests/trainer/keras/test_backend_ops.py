"""tf.keras.backend tensor functions against numpy (forward) and finite differences (gradients)."""
import numpy as np
import pytest

import tensorfleet as tf
from gradcheck import check_gradients

K = tf.keras.backend
rng = np.random.default_rng(0)


def run(t, feed=None):
    return K.get_session().run(t, feed)


@pytest.mark.parametrize("xs,ys", [((2, 3), (3, 4)), ((2, 5, 3), (3, 4)), ((2, 3), (4, 3, 5)), ((2, 2, 3), (4, 3, 5))])
def test_dot_matches_theano_style_dot(xs, ys):
    x, y = rng.standard_normal(xs), rng.standard_normal(ys)
    out = K.dot(K.constant(x, "float64"), K.constant(y, "float64"))
    expected = np.tensordot(x, y, axes=[[x.ndim - 1], [y.ndim - 2]]) if y.ndim > 1 else x @ y
    assert K.int_shape(out) == expected.shape
    np.testing.assert_allclose(run(out), expected, rtol=1e-12)


def test_batch_dot_axes_as_keras_1_15():
    x, y = rng.standard_normal((4, 3)), rng.standard_normal((4, 3))
    def c64(v):
        return K.constant(v, "float64")

    np.testing.assert_allclose(run(K.batch_dot(c64(x), c64(y), axes=1)), np.sum(x * y, axis=1, keepdims=True))
    a, b = rng.standard_normal((4, 2, 3)), rng.standard_normal((4, 3, 5))
    np.testing.assert_allclose(run(K.batch_dot(c64(a), c64(b))), np.einsum("bij,bjk->bik", a, b))
    c = rng.standard_normal((4, 2, 5))
    np.testing.assert_allclose(run(K.batch_dot(c64(a), c64(c), axes=(1, 1))), np.einsum("bij,bik->bjk", a, c))


def test_reductions_and_elementwise():
    x = rng.standard_normal((3, 4))
    t = K.constant(x, "float64")
    cases = [(K.sum(t, 1), x.sum(1)), (K.mean(t, 0, keepdims=True), x.mean(0, keepdims=True)),
             (K.max(t), x.max()), (K.min(t, 1), x.min(1)), (K.prod(t, 1), x.prod(1)), (K.var(t, 1), x.var(1)),
             (K.std(t), x.std()), (K.argmax(t), x.argmax(-1)), (K.argmin(t, 0), x.argmin(0)),
             (K.cumsum(t, 1), np.cumsum(x, 1)), (K.logsumexp(t, 1), np.log(np.exp(x).sum(1))),
             (K.sqrt(t), np.sqrt(np.maximum(x, 0))), (K.clip(t, -0.5, 0.5), np.clip(x, -0.5, 0.5)),
             (K.clip(t, 0.5, 0.1), np.clip(x, 0.5, 0.5)), (K.pow(K.abs(t), 3), np.abs(x) ** 3),
             (K.any(K.greater(t, 2.0), 1), (x > 2).any(1))]
    for got, want in cases:
        np.testing.assert_allclose(run(got), want, rtol=1e-10)
    np.testing.assert_allclose(run(K.mean(K.greater(t, 0))), (x > 0).mean(), rtol=1e-6)
    assert K.mean(K.greater(t, 0)).dtype == tf.float32  # bools are averaged in floatx


def test_shape_functions():
    x = rng.standard_normal((2, 3, 4)).astype("float32")
    t = K.placeholder(shape=(None, 3, 4))
    assert K.int_shape(t) == (None, 3, 4) and K.ndim(t) == 3 and K.dtype(t) == "float32"
    assert K.int_shape(K.placeholder(ndim=2)) == (None, None)
    feed = {t: x}
    np.testing.assert_array_equal(run(K.shape(t), feed), [2, 3, 4])
    np.testing.assert_array_equal(run(K.concatenate([t, t], axis=-1), feed), np.concatenate([x, x], -1))
    np.testing.assert_array_equal(run(K.batch_flatten(t), feed), x.reshape(2, -1))
    np.testing.assert_array_equal(run(K.permute_dimensions(t, (0, 2, 1)), feed), x.transpose(0, 2, 1))
    np.testing.assert_array_equal(run(K.repeat_elements(t, 2, axis=1), feed), np.repeat(x, 2, axis=1))
    np.testing.assert_array_equal(run(K.repeat(t[:, 0], 3), feed), np.repeat(x[:, None, 0], 3, axis=1))
    np.testing.assert_array_equal(run(K.arange(1, 7, 2)), [1, 3, 5])
    np.testing.assert_array_equal(run(K.one_hot(K.constant([0, 2], "int32"), 3)), np.eye(3)[[0, 2]])
    assert K.count_params(K.variable(np.zeros((3, 5)))) == 15
    assert K.is_keras_tensor(tf.keras.Input((2,))) and not K.is_keras_tensor(t)


def test_activations():
    x = rng.standard_normal((4, 5))
    t = K.constant(x, "float64")
    np.testing.assert_allclose(run(K.relu(t)), np.maximum(x, 0))
    np.testing.assert_allclose(run(K.relu(t, alpha=0.1)), np.where(x > 0, x, 0.1 * x))
    np.testing.assert_allclose(run(K.relu(t, max_value=0.5)), np.clip(x, 0, 0.5))
    t32 = K.constant(x)  # the threshold path multiplies by a floatx mask, as Keras (float64 inputs fail there too)
    np.testing.assert_allclose(run(K.relu(t32, threshold=0.3)), np.where(x > 0.3, x, 0), rtol=1e-6)
    np.testing.assert_allclose(run(K.relu(t32, alpha=0.2, max_value=1.0, threshold=0.1)),
                               np.where(x > 0.1, np.minimum(x, 1.0), 0) - 0.2 * np.maximum(0.1 - x, 0), rtol=1e-5,
                               atol=1e-7)
    e = np.exp(x - x.max(1, keepdims=True))
    np.testing.assert_allclose(run(K.softmax(t)), e / e.sum(1, keepdims=True), rtol=1e-12)
    np.testing.assert_allclose(run(K.elu(t, 0.5)), np.where(x > 0, x, 0.5 * (np.exp(x) - 1)), rtol=1e-12)
    np.testing.assert_allclose(run(K.hard_sigmoid(t)), np.clip(0.2 * x + 0.5, 0, 1))
    np.testing.assert_allclose(run(K.softsign(t)), x / (1 + np.abs(x)))


def test_categorical_crossentropy_probabilities_and_softmax_logits():
    logits = rng.standard_normal((4, 3))
    target = np.eye(3)[[0, 2, 1, 1]]
    p = np.exp(logits) / np.exp(logits).sum(1, keepdims=True)
    ref = -(target * np.log(p)).sum(1)
    probs = K.constant(p * 3.0, "float64")  # un-normalised probabilities are renormalised
    np.testing.assert_allclose(run(K.categorical_crossentropy(K.constant(target, "float64"), probs)), ref,
                               rtol=1e-9)
    soft = K.softmax(K.constant(logits, "float64"))
    ce = K.categorical_crossentropy(K.constant(target, "float64"), soft)
    assert ce.op.type == "SoftmaxCrossEntropyWithLogits"  # the Softmax's input is used as logits
    np.testing.assert_allclose(run(ce), ref, rtol=1e-9)
    np.testing.assert_allclose(run(K.categorical_crossentropy(K.constant(target, "float64"),
                                                              K.constant(logits, "float64"), from_logits=True)),
                               ref, rtol=1e-9)


def test_crossentropies_clip_probabilities_with_epsilon():
    target, output = np.array([[1.0, 0.0]]), np.array([[0.0, 1.0]])
    eps = 1e-7
    cce = run(K.categorical_crossentropy(K.constant(target, "float64"), K.constant(output, "float64")))
    np.testing.assert_allclose(cce, [-np.log(eps)], rtol=1e-9)
    bce = run(K.binary_crossentropy(K.constant(target, "float64"), K.constant(output, "float64")))
    o = np.clip(output, eps, 1 - eps)
    np.testing.assert_allclose(bce, -(target * np.log(o + eps) + (1 - target) * np.log(1 - o + eps)), rtol=1e-9)


def test_binary_and_sparse_crossentropy():
    logits = rng.standard_normal((5, 1))
    target = np.array([[1.0], [0.0], [1.0], [1.0], [0.0]])
    ref = np.maximum(logits, 0) - logits * target + np.log1p(np.exp(-np.abs(logits)))
    sig = K.sigmoid(K.constant(logits, "float64"))
    np.testing.assert_allclose(run(K.binary_crossentropy(K.constant(target, "float64"), sig)), ref, rtol=1e-9)
    labels = np.array([2, 0, 1])
    lg = rng.standard_normal((3, 4))
    lsm = lg - np.log(np.exp(lg).sum(1, keepdims=True))
    np.testing.assert_allclose(run(K.sparse_categorical_crossentropy(K.constant(labels[:, None]), K.softmax(
        K.constant(lg, "float64")))), -lsm[np.arange(3), labels], rtol=1e-9)
    seq = rng.standard_normal((2, 3, 4))
    seq_labels = np.array([[0, 1, 3], [2, 2, 0]])
    out = K.sparse_categorical_crossentropy(K.constant(seq_labels), K.constant(seq, "float64"), from_logits=True)
    seq_lsm = seq - np.log(np.exp(seq).sum(-1, keepdims=True))
    ref_seq = -np.take_along_axis(seq_lsm, seq_labels[..., None], -1)[..., 0]
    np.testing.assert_allclose(run(out), ref_seq, rtol=1e-9)


def test_crossentropy_gradients_by_finite_differences():
    target = np.eye(3)[[0, 2]]
    check_gradients(lambda x: K.categorical_crossentropy(K.constant(target, "float64"), K.softmax(x)),
                    [rng.standard_normal((2, 3))])
    check_gradients(lambda x: K.categorical_crossentropy(K.constant(target, "float64"), x),
                    [rng.uniform(0.1, 1.0, (2, 3))])
    check_gradients(lambda x: K.binary_crossentropy(K.constant([[1.0], [0.0]], "float64"), x),
                    [rng.uniform(0.1, 0.9, (2, 1))])


def test_switch_and_bias_add():
    cond = K.placeholder(shape=(), dtype="bool")
    out = K.switch(cond, lambda: K.constant(1.0), lambda: K.constant(2.0))
    assert run(out, {cond: True}) == 1.0 and run(out, {cond: False}) == 2.0
    mask = K.constant([[True, False], [False, True]], "bool")
    np.testing.assert_array_equal(run(K.switch(mask, K.ones((2, 2)), K.zeros((2, 2)))), [[1, 0], [0, 1]])
    x = rng.standard_normal((2, 3, 4))
    b = rng.standard_normal(3)
    np.testing.assert_allclose(run(K.bias_add(K.constant(x, "float64"), K.constant(b, "float64"),
                                              data_format="channels_first")), x + b[None, :, None])
    b2 = rng.standard_normal((3, 4))
    np.testing.assert_allclose(run(K.bias_add(K.constant(x, "float64"), K.constant(b2, "float64"))), x + b2)


def test_dropout_and_random():
    x = np.ones((200, 50), np.float32)
    out = run(K.dropout(K.constant(x), 0.3, seed=1))
    kept = out != 0
    assert abs(kept.mean() - 0.7) < 0.02 and np.allclose(out[kept], 1 / 0.7)
    r = run(K.random_binomial((1000,), p=0.25, seed=3))
    assert set(np.unique(r)) <= {0.0, 1.0} and abs(r.mean() - 0.25) < 0.05
    assert run(K.random_uniform((3,), 2.0, 3.0, seed=1)).min() >= 2.0
