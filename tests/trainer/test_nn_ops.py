"""tf.nn activations, softmax, cross entropies, bias_add, l2_loss, dropout, moments, embedding_lookup, in_top_k:
forward vs numpy references, gradients vs central finite differences, TF errors, dtype preservation."""
import numpy as np
import pytest

import tensorfleet as tf
from gradcheck import check_gradients
from helpers import np_log_softmax, np_sigmoid, run


RNG = np.random.default_rng(0)
X = RNG.standard_normal((3, 5)) * 3
# keep finite differences away from the kinks at 0 (and 6 for relu6)
X_KINKFREE = np.where(np.abs(X) < 0.1, 0.5, X) + np.where(np.abs(X - 6) < 0.1, 0.5, 0)
X_KINKFREE[0, :3] = [6.5, 7.0, 5.5]

ACTIVATIONS = [
    ("relu", tf.nn.relu, lambda x: np.maximum(x, 0)),
    ("relu6", tf.nn.relu6, lambda x: np.clip(x, 0, 6)),
    ("elu", tf.nn.elu, lambda x: np.where(x > 0, x, np.exp(x) - 1)),
    ("leaky_relu", tf.nn.leaky_relu, lambda x: np.where(x > 0, x, 0.2 * x)),
    ("sigmoid", tf.nn.sigmoid, np_sigmoid),
    ("tanh", tf.nn.tanh, np.tanh),
    ("softplus", tf.nn.softplus, lambda x: np.log1p(np.exp(x))),
]


@pytest.mark.parametrize("name,fn,ref", ACTIVATIONS, ids=[a[0] for a in ACTIVATIONS])
def test_activation_forward_dtype_and_gradient(name, fn, ref):
    x32 = X_KINKFREE.astype(np.float32)
    y = fn(tf.constant(x32))
    out = run(y)
    assert out.dtype == np.float32 and y.dtype == tf.float32
    np.testing.assert_allclose(out, ref(X_KINKFREE), rtol=1e-5, atol=1e-6)
    check_gradients(fn, [X_KINKFREE])


def test_activation_names_root_aliases_and_errors():
    x = tf.constant([1.0, -2.0])
    assert tf.nn.relu(x).name == "Relu:0"
    assert tf.sigmoid(x).name == "Sigmoid:0" and tf.tanh(x, name="t").name == "t:0"
    assert tf.sigmoid is tf.nn.sigmoid and tf.tanh is tf.nn.tanh
    np.testing.assert_allclose(run(tf.nn.leaky_relu(x, alpha=0.1)), [1.0, -0.2], rtol=1e-6)
    with pytest.raises(TypeError, match="DataType int32 not in list of allowed values"):
        tf.nn.relu(tf.constant([1, 2]))
    # stable for large |x|: no overflow, exact limits
    big = np.array([-1000.0, 1000.0], np.float32)
    np.testing.assert_array_equal(run(tf.sigmoid(big)), [0.0, 1.0])
    np.testing.assert_array_equal(run(tf.nn.softplus(big)), [0.0, 1000.0])


@pytest.mark.parametrize("fn,ref", [(tf.nn.softmax, lambda x, a: np.exp(np_log_softmax(x, a))),
                                    (tf.nn.log_softmax, np_log_softmax)], ids=["softmax", "log_softmax"])
def test_softmax_family_axes_rank3_and_gradients(fn, ref):
    x = RNG.standard_normal((2, 3, 4))
    for axis in (None, -1, 1, 0):
        out = run(fn(tf.constant(x.astype(np.float32)), axis=axis))
        assert out.dtype == np.float32
        np.testing.assert_allclose(out, ref(x, -1 if axis is None else axis), rtol=1e-5, atol=1e-6)
        check_gradients(lambda t, axis=axis: fn(t, axis=axis), [x])
    # large logits do not overflow (log-sum-exp)
    big = np.array([[1000.0, 1001.0, 999.0]], np.float32)
    np.testing.assert_allclose(run(fn(big)), ref(big.astype(np.float64), -1), rtol=1e-5)
    np.testing.assert_allclose(run(fn(tf.constant(x), dim=1)), ref(x, 1), rtol=1e-10)
    with pytest.raises(ValueError, match="dim 3 must be in the range"):
        fn(tf.constant(x), axis=3)


LOGITS = RNG.standard_normal((4, 5))
PROBS = np.exp(np_log_softmax(RNG.standard_normal((4, 5))))


def test_softmax_xent_v2_forward_and_gradients_wrt_both():
    loss = tf.nn.softmax_cross_entropy_with_logits_v2(labels=PROBS.astype(np.float32),
                                                      logits=LOGITS.astype(np.float32))
    out = run(loss)
    assert out.dtype == np.float32 and loss.shape.as_list() == [4]
    np.testing.assert_allclose(out, -(PROBS * np_log_softmax(LOGITS)).sum(-1), rtol=1e-5)
    check_gradients(lambda labels, logits: tf.nn.softmax_cross_entropy_with_logits_v2(labels=labels, logits=logits),
                    [PROBS, LOGITS])


def test_softmax_xent_v1_labels_get_no_gradient_and_axis():
    labels = tf.constant(PROBS)
    logits = tf.constant(LOGITS)
    loss = tf.nn.softmax_cross_entropy_with_logits(labels=labels, logits=logits)
    g_labels, g_logits = tf.gradients(loss, [labels, logits])
    assert g_labels is None
    np.testing.assert_allclose(run(g_logits), np.exp(np_log_softmax(LOGITS)) - PROBS, rtol=1e-10)
    check_gradients(lambda lg: tf.nn.softmax_cross_entropy_with_logits(labels=PROBS, logits=lg), [LOGITS])
    # axis 0 on the transposed problem gives the same losses; rank 3 works too
    out = run(tf.nn.softmax_cross_entropy_with_logits(labels=PROBS.T, logits=LOGITS.T, dim=0))
    np.testing.assert_allclose(out, -(PROBS * np_log_softmax(LOGITS)).sum(-1), rtol=1e-10)
    x3, p3 = RNG.standard_normal((2, 3, 4)), np.full((2, 3, 4), 1 / 3)  # labels sum to 1 along axis 1
    check_gradients(lambda a, b: tf.nn.softmax_cross_entropy_with_logits_v2(labels=b, logits=a, axis=1), [x3, p3])
    with pytest.raises(ValueError, match="named arguments"):
        tf.nn.softmax_cross_entropy_with_logits(PROBS, LOGITS)


@pytest.mark.parametrize("label_dtype", [np.int32, np.int64])
def test_sparse_softmax_xent_forward_gradient_and_dtype(label_dtype):
    labels = np.array([0, 4, 2, 1], dtype=label_dtype)
    loss = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=LOGITS.astype(np.float32))
    assert loss.name == "SparseSoftmaxCrossEntropyWithLogits/SparseSoftmaxCrossEntropyWithLogits:0"
    out = run(loss)
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, -np_log_softmax(LOGITS)[np.arange(4), labels], rtol=1e-5)
    check_gradients(lambda lg: tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=lg), [LOGITS])
    # rank 3 logits with rank 2 labels
    l3 = RNG.standard_normal((2, 3, 4))
    lab3 = np.array([[0, 1, 3], [2, 2, 0]], label_dtype)
    check_gradients(lambda lg: tf.nn.sparse_softmax_cross_entropy_with_logits(labels=lab3, logits=lg), [l3])


def test_sparse_softmax_xent_errors():
    logits = tf.placeholder(tf.float32, [None, 10])
    labels = tf.placeholder(tf.int32, [None])
    loss = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match=r"Received a label value of 10 which is outside the valid range of \[0, 10\)"
                                 r"\.  Label values: 1 10 3") as exc:
            sess.run(loss, {logits: np.zeros((3, 10)), labels: [1, 10, 3]})
        assert "SparseSoftmaxCrossEntropyWithLogits" in str(exc.value)
        with pytest.raises(tf.errors.InvalidArgumentError, match="label value of -1"):
            sess.run(loss, {logits: np.zeros((2, 10)), labels: [-1, 0]})
    with pytest.raises(ValueError, match=r"Rank mismatch: Rank of labels \(received 2\) should equal rank of "
                                         r"logits minus 1 \(received 2\)"):
        tf.nn.sparse_softmax_cross_entropy_with_logits(labels=tf.constant([[1]]), logits=tf.zeros_like(logits))
    with pytest.raises(ValueError, match="Shape mismatch"):
        tf.nn.sparse_softmax_cross_entropy_with_logits(labels=[1, 2, 3], logits=np.zeros((2, 4), np.float32))
    with pytest.raises(TypeError, match="DataType float32 not in list of allowed values: int32, int64"):
        tf.nn.sparse_softmax_cross_entropy_with_logits(labels=[1.0], logits=np.zeros((1, 4), np.float32))


def test_sigmoid_xent_forward_and_gradients():
    z = RNG.uniform(0, 1, (3, 4))
    x = RNG.standard_normal((3, 4)) * 4
    out = run(tf.nn.sigmoid_cross_entropy_with_logits(labels=z.astype(np.float32), logits=x.astype(np.float32)))
    ref = -(z * np.log(np_sigmoid(x)) + (1 - z) * np.log(1 - np_sigmoid(x)))
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-6)
    check_gradients(lambda z, x: tf.nn.sigmoid_cross_entropy_with_logits(labels=z, logits=x), [z, x])
    big = run(tf.nn.sigmoid_cross_entropy_with_logits(labels=[1.0, 0.0], logits=[-200.0, 200.0]))
    np.testing.assert_allclose(big, [200.0, 200.0])
    with pytest.raises(ValueError, match="must have the same shape"):
        tf.nn.sigmoid_cross_entropy_with_logits(labels=np.zeros(3, np.float32), logits=np.zeros(4, np.float32))


# -- bias_add / xw_plus_b / l2_loss ---------------------------------------------
def test_bias_add_forward_gradients_formats_and_errors():
    v4, b = RNG.standard_normal((2, 3, 4, 5)), RNG.standard_normal(5)
    out = run(tf.nn.bias_add(v4.astype(np.float32), b.astype(np.float32)))
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, v4 + b, rtol=1e-5, atol=1e-6)
    check_gradients(tf.nn.bias_add, [v4, b])
    check_gradients(tf.nn.bias_add, [RNG.standard_normal((3, 2)), RNG.standard_normal(2)])
    vc = RNG.standard_normal((2, 5, 3, 3))
    np.testing.assert_allclose(run(tf.nn.bias_add(vc, b, data_format="NCHW")), vc + b[:, None, None])
    check_gradients(lambda v, b: tf.nn.bias_add(v, b, data_format="NCHW"), [vc, b])
    assert tf.nn.bias_add(tf.constant(v4), tf.constant(b)).name == "BiasAdd_2:0"
    with pytest.raises(ValueError, match="Dimensions must be equal, but are 5 and 4"):
        tf.nn.bias_add(tf.constant(v4), tf.constant(np.zeros(4)))
    with pytest.raises(ValueError, match="Shape must be at least rank 2 but is rank 1"):
        tf.nn.bias_add(tf.constant(b), tf.constant(b))


def test_xw_plus_b_and_l2_loss():
    x, w, b = RNG.standard_normal((3, 4)), RNG.standard_normal((4, 2)), RNG.standard_normal(2)
    y = tf.nn.xw_plus_b(x, w, b, name="fc")
    assert y.name == "fc:0"
    np.testing.assert_allclose(run(y), x @ w + b, rtol=1e-10)
    check_gradients(tf.nn.xw_plus_b, [x, w, b])
    l2 = tf.nn.l2_loss(tf.constant(x.astype(np.float32)))
    out = run(l2)
    assert l2.shape.as_list() == [] and out.dtype == np.float32
    np.testing.assert_allclose(out, (x ** 2).sum() / 2, rtol=1e-5)
    check_gradients(tf.nn.l2_loss, [x])


# -- dropout --------------------------------------------------------------------
def test_dropout_mask_is_shared_by_gradient_and_scaled():
    x = tf.constant(RNG.standard_normal((200, 50)).astype(np.float32) + 3)
    y = tf.nn.dropout(x, keep_prob=0.8, seed=7)
    assert y.dtype == tf.float32 and y.name == "dropout:0"
    g = tf.gradients(tf.reduce_sum(y * y), x)[0]
    with tf.Session() as sess:
        xv, yv, gv = sess.run([x, y, g])
        yv2 = sess.run(y)
    mask = yv / xv
    kept = mask != 0
    np.testing.assert_allclose(mask[kept], 1 / 0.8, rtol=1e-5)
    assert abs(kept.mean() - 0.8) < 0.02
    np.testing.assert_allclose(gv, 2 * yv * mask, rtol=1e-4)  # d(y^2)/dx = 2 y * mask, with the same mask
    assert not np.array_equal(yv, yv2)  # a new mask every run
    with tf.Session() as sess:  # a fixed op seed gives the same stream in every session
        np.testing.assert_array_equal(sess.run(y), yv)


def test_dropout_fixed_mask_gradient_matches_finite_differences():
    # With the mask fed back through a second, deterministic graph, dx = grad * mask exactly.
    x = RNG.standard_normal((4, 6))
    with tf.Graph().as_default():
        tf.set_random_seed(3)
        y = tf.nn.dropout(tf.constant(x), rate=0.5)
        mask = run(y) / x
    check_gradients(lambda t: t * tf.constant(mask), [x])  # oracle for the mask product
    with tf.Graph().as_default():
        tf.set_random_seed(3)
        xt = tf.constant(x)
        y = tf.nn.dropout(xt, rate=0.5)
        w = RNG.standard_normal((4, 6))
        g = tf.gradients(tf.reduce_sum(y * w), xt)[0]
        yv, gv = run([y, g])
    np.testing.assert_allclose(yv / x, mask, rtol=1e-12)  # graph seed + op count: same mask
    np.testing.assert_allclose(gv, w * mask, rtol=1e-12)


def test_dropout_placeholder_keep_prob_noise_shape_and_errors():
    x = tf.placeholder(tf.float32, [None, 30])
    keep = tf.placeholder(tf.float32, [])
    y = tf.nn.dropout(x, keep, noise_shape=[1, 30], seed=1)
    xv = np.ones((5, 30), np.float32)
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(y, {x: xv, keep: 1.0}), xv)
        out = sess.run(y, {x: xv, keep: 0.5})
    assert set(np.unique(out)) <= {0.0, 2.0}
    assert (out == out[0]).all()  # noise_shape [1, 30]: one mask row shared by the batch
    with pytest.raises(ValueError, match="Cannot specify both 'rate' and 'keep_prob'"):
        tf.nn.dropout(x, keep_prob=0.5, rate=0.5)
    with pytest.raises(ValueError, match="You must provide a rate to dropout"):
        tf.nn.dropout(x)
    with pytest.raises(ValueError, match=r"rate must be a scalar tensor or a float in the range \[0, 1\), got 1"):
        tf.nn.dropout(x, keep_prob=0.0)
    with pytest.raises(ValueError, match="x has to be a floating point tensor"):
        tf.nn.dropout(tf.constant([1, 2]), rate=0.5)


# -- moments / embedding_lookup / in_top_k --------------------------------------
def test_moments_forward_and_gradients():
    x = RNG.standard_normal((4, 3, 2))
    mean, var = tf.nn.moments(tf.constant(x.astype(np.float32)), axes=[0, 1])
    m, v = run([mean, var])
    assert m.dtype == np.float32 and mean.shape.as_list() == [2]
    np.testing.assert_allclose(m, x.mean((0, 1)), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(v, x.var((0, 1)), rtol=1e-5)
    check_gradients(lambda t: tf.nn.moments(t, [0, 1])[0], [x])
    check_gradients(lambda t: tf.nn.moments(t, [0, 2], keep_dims=True)[1], [x])
    assert tf.nn.moments(tf.constant(x), [1], keepdims=True)[0].shape.as_list() == [4, 1, 2]


def test_embedding_lookup_forward_gradient_and_errors():
    params = RNG.standard_normal((6, 3))
    ids = np.array([[0, 5], [2, 2]], np.int32)
    out = tf.nn.embedding_lookup(tf.constant(params), ids)
    assert out.shape.as_list() == [2, 2, 3] and out.name == "embedding_lookup:0"
    np.testing.assert_array_equal(run(out), params[ids])
    check_gradients(lambda p: tf.nn.embedding_lookup([p], ids), [params])  # repeated id 2 accumulates
    bad = tf.nn.embedding_lookup(tf.constant(params), tf.constant([1, 6]))
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"indices\[1\] = 6 is not in \[0, 6\)"):
        run(bad)


def test_in_top_k_matches_numpy_with_ties():
    preds = np.array([[0.1, 0.9, 0.5, 0.5], [0.3, 0.2, 0.1, 0.0], [0.5, 0.5, 0.5, 0.5]], np.float32)
    targets = np.array([2, 0, 3], np.int32)
    out = run(tf.nn.in_top_k(preds, targets, 2))
    assert out.dtype == np.bool_
    np.testing.assert_array_equal(out, [True, True, True])  # 0.5 ties 0.5: both in top 2
    np.testing.assert_array_equal(run(tf.nn.in_top_k(preds, targets, 1)), [False, True, True])
    np.testing.assert_array_equal(run(tf.nn.in_top_k(preds, np.array([7, 1, 0], np.int64), 4)), [False, True, True])
