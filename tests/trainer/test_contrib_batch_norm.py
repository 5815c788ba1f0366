"""tf.contrib.layers.batch_norm: TF 1.15's variables (scale=False by default), update ops and their collection,
in-place updates (updates_collections=None), is_training as a bool or a tensor, and the moving statistics
against numpy (the fused kernel's Bessel-corrected variance for rank-2/4 inputs, the biased one otherwise)."""
import numpy as np
import pytest

import tensorfleet as tf

bn = tf.contrib.layers.batch_norm
RNG = np.random.default_rng(0)


def _names(variables):
    return [v.name for v in variables]


def _moving_reference(batches, decay, axes, bessel):
    """numpy: the moving mean/variance after one update per batch, from mean 0 / variance 1."""
    mean, var = 0.0, 1.0
    for b in batches:
        n = np.prod([b.shape[a] for a in axes])
        bm, bv = b.mean(axis=axes), b.var(axis=axes)
        if bessel:
            bv = bv * n / (n - 1)
        mean = mean - (mean - bm) * (1 - decay)
        var = var - (var - bv) * (1 - decay)
    return mean, var


def test_variables_names_defaults_and_update_ops():
    x = tf.placeholder(tf.float32, [None, 4, 4, 3])
    y = bn(x)
    assert _names(tf.global_variables()) == ["BatchNorm/beta:0", "BatchNorm/moving_mean:0",
                                             "BatchNorm/moving_variance:0"]  # scale=False: no gamma
    assert _names(tf.model_variables()) == _names(tf.global_variables())
    assert _names(tf.trainable_variables()) == ["BatchNorm/beta:0"]
    updates = tf.get_collection(tf.GraphKeys.UPDATE_OPS)
    assert [u.op.name for u in updates] == ["BatchNorm/AssignMovingAvg", "BatchNorm/AssignMovingAvg_1"]
    bn(x, scale=True, scope="scaled", activation_fn=tf.nn.relu, variables_collections=["bn_vars"])
    # the core layer path creates gamma before beta, as TF's BatchNormalization layer does
    assert _names(tf.get_collection("bn_vars")) == ["scaled/gamma:0", "scaled/beta:0", "scaled/moving_mean:0",
                                                    "scaled/moving_variance:0"]
    bn(tf.placeholder(tf.float32, [None, 3]), scale=True, scope="dense")  # the fused function: beta first
    assert _names(tf.global_variables())[-4:] == ["dense/beta:0", "dense/gamma:0", "dense/moving_mean:0",
                                                  "dense/moving_variance:0"]
    assert y.shape.as_list() == [None, 4, 4, 3]


def test_training_output_and_moving_statistics_rank4_bessel():
    x = tf.placeholder(tf.float32, [None, 3, 3, 2])
    y = bn(x, decay=0.9, scale=True, param_initializers={"gamma": tf.constant_initializer(2.0),
                                                         "beta": tf.constant_initializer(0.5)})
    mm, mv = tf.get_collection(tf.GraphKeys.MODEL_VARIABLES)[2:]
    update = tf.group(*tf.get_collection(tf.GraphKeys.UPDATE_OPS))
    batches = [RNG.standard_normal((4, 3, 3, 2)).astype(np.float32) * (i + 1) + i for i in range(3)]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for b in batches:
            yv, _ = sess.run([y, update], {x: b})
        mmv, mvv = sess.run([mm, mv])
    b = batches[-1]
    ref = 2.0 * (b - b.mean(axis=(0, 1, 2))) / np.sqrt(b.var(axis=(0, 1, 2)) + 1e-3) + 0.5
    np.testing.assert_allclose(yv, ref, rtol=1e-4, atol=1e-4)
    want_mean, want_var = _moving_reference(batches, 0.9, (0, 1, 2), bessel=True)
    np.testing.assert_allclose(mmv, want_mean, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(mvv, want_var, rtol=1e-5, atol=1e-6)


def test_non_fused_rank3_uses_the_biased_variance_and_inference_the_moving_stats():
    x = tf.placeholder(tf.float32, [None, 5, 2])
    y = bn(x, decay=0.5, updates_collections=None)  # in place: the output depends on the updates
    infer = bn(x, decay=0.5, is_training=False, scope="BatchNorm", reuse=True)
    assert tf.get_collection(tf.GraphKeys.UPDATE_OPS) == []
    mm, mv = tf.global_variables()[1:]
    batch = RNG.standard_normal((3, 5, 2)).astype(np.float32) * 3 + 2
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(y, {x: batch})
        mmv, mvv = sess.run([mm, mv])
        iv = sess.run(infer, {x: batch})
    want_mean, want_var = _moving_reference([batch], 0.5, (0, 1), bessel=False)
    np.testing.assert_allclose(mmv, want_mean, rtol=1e-5)
    np.testing.assert_allclose(mvv, want_var, rtol=1e-5)
    np.testing.assert_allclose(iv, (batch - mmv) / np.sqrt(mvv + 1e-3), rtol=1e-4, atol=1e-5)


def test_rank2_fused_in_place_and_fused_false_biased():
    x = tf.placeholder(tf.float32, [None, 3])
    y = bn(x, decay=0.0, updates_collections=None, scope="fused")  # decay 0: the moving stats = the batch's
    z = bn(x, decay=0.0, fused=False, updates_collections=None, scope="plain")
    batch = RNG.standard_normal((6, 3)).astype(np.float32)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run([y, z], {x: batch})
        fused_var, plain_var = sess.run([tf.global_variables()[2], tf.global_variables()[5]])
    np.testing.assert_allclose(fused_var, batch.var(axis=0) * 6 / 5, rtol=1e-5)
    np.testing.assert_allclose(plain_var, batch.var(axis=0), rtol=1e-5)


def test_is_training_tensor_decides_at_run_time_and_nchw():
    x = tf.placeholder(tf.float32, [None, 2, 3, 3])
    training = tf.placeholder(tf.bool, [])
    y = bn(x, is_training=training, data_format="NCHW", decay=0.5, updates_collections=None)
    mm, mv = tf.global_variables()[1:]
    assert mm.shape.as_list() == [2]
    batch = RNG.standard_normal((4, 2, 3, 3)).astype(np.float32) + 5
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        frozen = sess.run(y, {x: batch, training: False})  # moving stats (0, 1), no update
        np.testing.assert_allclose(sess.run(mm), [0, 0])
        trained = sess.run(y, {x: batch, training: True})
        mmv = sess.run(mm)
    np.testing.assert_allclose(frozen, batch / np.sqrt(1 + 1e-3), rtol=1e-4)
    m = batch.mean(axis=(0, 2, 3), keepdims=True)
    np.testing.assert_allclose(trained, (batch - m) / np.sqrt(batch.var(axis=(0, 2, 3), keepdims=True) + 1e-3),
                               rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(mmv, 0.5 * m.ravel(), rtol=1e-5)


def test_is_training_false_has_no_update_ops_and_errors():
    x = tf.placeholder(tf.float32, [None, 3])
    bn(x, is_training=False)
    bn(x, is_training=tf.constant(False))  # a constant tensor is folded like TF's utils.constant_value
    assert tf.get_collection(tf.GraphKeys.UPDATE_OPS) == []
    with pytest.raises(ValueError, match="data_format has to be either NCHW or NHWC"):
        bn(x, data_format="NWC")
    with pytest.raises(ValueError, match="has undefined rank"):
        bn(tf.placeholder(tf.float32))
    with pytest.raises(NotImplementedError, match="batch_norm: zero_debias_moving_mean is not supported"):
        bn(x, zero_debias_moving_mean=True)
    with pytest.raises(NotImplementedError, match="batch_norm: renorm is not supported"):
        bn(x, renorm=True)


def test_batch_norm_as_normalizer_trains_with_update_ops():
    x = tf.placeholder(tf.float32, [None, 4])
    target = tf.placeholder(tf.float32, [None, 1])
    h = tf.contrib.layers.fully_connected(x, 8, normalizer_fn=bn, normalizer_params={"decay": 0.9, "scale": True})
    out = tf.contrib.layers.fully_connected(h, 1, activation_fn=None)
    loss = tf.reduce_mean(tf.square(out - target))
    with tf.control_dependencies(tf.get_collection(tf.GraphKeys.UPDATE_OPS)):
        step = tf.train.AdamOptimizer(0.05).minimize(loss)
    xs = RNG.standard_normal((64, 4)).astype(np.float32)
    ys = (xs @ np.array([[1.0], [-2.0], [0.5], [3.0]], np.float32)) ** 2 / 4
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        first = sess.run(loss, {x: xs, target: ys})
        for _ in range(150):
            sess.run(step, {x: xs, target: ys})
        last, moving_mean = sess.run([loss, tf.get_collection(tf.GraphKeys.MODEL_VARIABLES)[4]], {x: xs, target: ys})
    assert last < 0.2 * first, (first, last)
    assert np.abs(moving_mean).sum() > 0  # the update ops ran with the train op
