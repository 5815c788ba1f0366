"""tf.layers: variable names/scopes/reuse like TF, glorot-uniform defaults, forward vs numpy (conv2d_transpose
against a transposed convolution written as a scatter-add), its gradients by finite differences, the layer
classes (variables shared across calls, Dropout and BatchNormalization objects), a small CNN trains."""
import math

import numpy as np
import pytest

import tensorfleet as tf
from gradcheck import numeric_grad
from helpers import assert_training_lowers_loss, init_and_run


def test_dense_names_shapes_and_forward():
    x = tf.placeholder(tf.float32, [None, 4], name="x")
    h = tf.layers.dense(x, 3, activation=tf.nn.relu)
    y = tf.layers.dense(h, 2)
    assert h.name == "dense/Relu:0" and y.name == "dense_1/BiasAdd:0"
    assert h.shape.as_list() == [None, 3] and y.dtype == tf.float32
    names = [v.name for v in tf.global_variables()]
    assert names == ["dense/kernel:0", "dense/bias:0", "dense_1/kernel:0", "dense_1/bias:0"]
    assert [v.name for v in tf.trainable_variables()] == names
    k0, b0, k1, b1 = tf.global_variables()
    xv = np.random.default_rng(0).standard_normal((5, 4)).astype(np.float32)
    hv, yv, k0v, b0v, k1v, b1v = init_and_run([h, y, k0, b0, k1, b1], {x: xv})
    np.testing.assert_array_equal(b0v, 0)
    ref_h = np.maximum(xv @ k0v + b0v, 0)
    np.testing.assert_allclose(hv, ref_h, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(yv, ref_h @ k1v + b1v, rtol=1e-5, atol=1e-6)


def test_dense_glorot_uniform_default_and_seed():
    tf.set_random_seed(42)
    tf.layers.dense(tf.placeholder(tf.float32, [None, 300]), 100, name="big")
    kernel = tf.global_variables()[0]
    k1 = init_and_run(kernel)
    with tf.Session() as sess:  # graph seed set: the same draw in every session
        sess.run(tf.global_variables_initializer())
        k2 = sess.run(kernel)
    np.testing.assert_array_equal(k1, k2)
    limit = math.sqrt(6 / (300 + 100))
    assert k1.dtype == np.float32 and np.abs(k1).max() <= limit
    assert abs(k1.std() - limit / math.sqrt(3)) < 0.01 and abs(k1.mean()) < 0.01


def test_dense_custom_initializers_reuse_scopes_and_trainable():
    x = tf.placeholder(tf.float32, [None, 2])
    ones = lambda shape, dtype=tf.float32, partition_info=None: tf.constant(np.ones(shape, np.float32))  # noqa: E731
    y1 = tf.layers.dense(x, 3, kernel_initializer=ones, bias_initializer=ones, name="fc")
    y2 = tf.layers.dense(x, 3, name="fc", reuse=True)
    assert len(tf.global_variables()) == 2
    out1, out2 = init_and_run([y1, y2], {x: [[1.0, 2.0]]})
    np.testing.assert_allclose(out1, [[4.0, 4.0, 4.0]])
    np.testing.assert_allclose(out2, out1)
    with pytest.raises(ValueError, match="Variable fc/kernel already exists"):
        tf.layers.dense(x, 3, name="fc")
    with tf.variable_scope("outer"):
        tf.layers.dense(x, 1, use_bias=False, trainable=False)
    assert tf.global_variables()[-1].name == "outer/dense/kernel:0"
    assert "outer/dense/kernel:0" not in [v.name for v in tf.trainable_variables()]
    with pytest.raises(ValueError, match="The last dimension of the inputs to `Dense` should be defined"):
        tf.layers.dense(tf.placeholder(tf.float32, [None, None]), 2)


def test_conv2d_and_pooling_layers():
    x = tf.placeholder(tf.float32, [None, 9, 9, 2])
    c = tf.layers.conv2d(x, 4, 3, strides=2, padding="same", activation=tf.nn.relu)
    assert c.name == "conv2d/Relu:0" and c.shape.as_list() == [None, 5, 5, 4]
    kernel, bias = tf.global_variables()
    assert (kernel.name, bias.name) == ("conv2d/kernel:0", "conv2d/bias:0")
    assert kernel.shape.as_list() == [3, 3, 2, 4] and bias.shape.as_list() == [4]
    v = tf.layers.conv2d(x, 3, (2, 3), name="c2")
    assert v.shape.as_list() == [None, 8, 7, 3] and v.name == "c2/BiasAdd:0"
    p = tf.layers.max_pooling2d(c, 2, 2)
    a = tf.layers.average_pooling2d(c, (2, 2), 2, padding="same")
    assert p.name == "max_pooling2d/MaxPool:0" and p.shape.as_list() == [None, 2, 2, 4]
    assert a.name == "average_pooling2d/AvgPool:0" and a.shape.as_list() == [None, 3, 3, 4]
    f = tf.layers.flatten(a)
    assert f.shape.as_list() == [None, 36]
    xv = np.random.default_rng(1).standard_normal((2, 9, 9, 2)).astype(np.float32)
    cv, pv, fv, kv, bv = init_and_run([c, p, f, kernel, bias], {x: xv})
    ref = _init_free_conv(xv, kv, 2) + bv
    np.testing.assert_allclose(cv, np.maximum(ref, 0), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(pv, cv[:, :4, :4].reshape(2, 2, 2, 2, 2, 4).max(axis=(2, 4)), rtol=1e-6)
    assert fv.shape == (2, 36)
    with pytest.raises(ValueError, match="padding"):
        tf.layers.conv2d(x, 1, 1, padding="full")


def _init_free_conv(x, k, s):
    """Naive SAME conv (pad 1 each side for k=3, s=2 on 9x9)."""
    xp = np.pad(x, ((0, 0), (1, 1), (1, 1), (0, 0)))
    out = np.zeros((x.shape[0], 5, 5, k.shape[3]))
    for i in range(5):
        for j in range(5):
            out[:, i, j] = np.tensordot(xp[:, i * s:i * s + 3, j * s:j * s + 3, :], k, axes=([1, 2, 3], [0, 1, 2]))
    return out


def test_flatten_gradient_and_dropout_layer_training_flag():
    x = tf.constant(np.arange(24, dtype=np.float32).reshape(2, 3, 4))
    f = tf.layers.flatten(x)
    g = tf.gradients(tf.reduce_sum(f * f), x)[0]
    fv, gv = init_and_run([f, g])
    np.testing.assert_array_equal(fv, np.arange(24).reshape(2, 12))
    np.testing.assert_array_equal(gv, 2 * np.arange(24).reshape(2, 3, 4))
    ones = tf.constant(np.ones((100, 100), np.float32))
    np.testing.assert_array_equal(init_and_run(tf.layers.dropout(ones, 0.5)), 1.0)
    dropped = init_and_run(tf.layers.dropout(ones, 0.5, training=True, seed=1))
    assert set(np.unique(dropped)) == {0.0, 2.0}
    training = tf.placeholder(tf.bool, [])
    d = tf.layers.dropout(ones, rate=0.25, training=training)
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(d, {training: False}), 1.0)
        on = sess.run(d, {training: True})
    assert abs((on == 0).mean() - 0.25) < 0.03 and np.allclose(on[on != 0], 1 / 0.75)


def test_mnist_style_cnn_trains():
    rng = np.random.default_rng(0)
    tf.set_random_seed(0)
    x = tf.placeholder(tf.float32, [None, 28, 28, 1])
    y = tf.placeholder(tf.int64, [None])
    h = tf.layers.conv2d(x, 8, 5, padding="same", activation=tf.nn.relu)
    h = tf.layers.max_pooling2d(h, 2, 2)
    h = tf.layers.conv2d(h, 16, 5, padding="same", activation=tf.nn.relu)
    h = tf.layers.max_pooling2d(h, 2, 2)
    logits = tf.layers.dense(tf.layers.flatten(h), 10)
    loss = tf.reduce_sum(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits)) * 0.05
    grads = tf.gradients(loss, tf.trainable_variables())
    step = [tf.assign_sub(v, 0.05 * g) for v, g in zip(tf.trainable_variables(), grads)]
    xv = rng.uniform(0, 1, (20, 28, 28, 1)).astype(np.float32)
    yv = rng.integers(0, 10, 20)
    assert_training_lowers_loss(loss, step, {x: xv, y: yv}, steps=8)


def test_dense_on_rank3_inputs_matches_numpy_and_has_gradients():
    x = tf.placeholder(tf.float32, [None, 3, 4])
    y = tf.layers.dense(x, 2, activation=tf.nn.tanh)
    assert y.shape.as_list() == [None, 3, 2]
    kernel, bias = tf.global_variables()
    g = tf.gradients(tf.reduce_sum(y), kernel)[0]
    xv = np.random.default_rng(3).standard_normal((5, 3, 4)).astype(np.float32)
    yv, kv, bv, gv = init_and_run([y, kernel, bias, g], {x: xv})
    np.testing.assert_allclose(yv, np.tanh(xv @ kv + bv), rtol=1e-5, atol=1e-6)
    ref_g = np.einsum("nti,ntj->ij", xv, 1 - np.tanh(xv @ kv + bv) ** 2)
    np.testing.assert_allclose(gv, ref_g, rtol=1e-4, atol=1e-5)


def test_regularizers_and_channels_first_flatten():
    x = tf.placeholder(tf.float32, [None, 3])
    y = tf.layers.dense(x, 2, kernel_regularizer=tf.nn.l2_loss, activity_regularizer=tf.nn.l2_loss,
                        kernel_initializer=lambda shape, dtype=tf.float32, partition_info=None:
                        tf.constant(np.ones(shape, np.float32)))
    losses = tf.get_collection(tf.GraphKeys.REGULARIZATION_LOSSES)
    assert len(losses) == 2
    kernel_l2, act_l2 = init_and_run(losses, {x: [[1.0, 0.0, 0.0]]})
    assert kernel_l2 == 3.0 and act_l2 == 1.0  # sum(1^2 * 6) / 2 and sum([1, 1]^2) / 2
    del y
    v = np.arange(12, dtype=np.float32).reshape(1, 3, 2, 2)  # NCHW
    out = init_and_run(tf.layers.flatten(v, data_format="channels_first"))
    np.testing.assert_array_equal(out, v.transpose(0, 2, 3, 1).reshape(1, 12))


def test_dense_layer_object_shares_its_variables_across_calls():
    """tf.layers.Dense (TF 1.15): one kernel/bias per object, created on the first call; oracle: numpy."""
    a = tf.placeholder(tf.float32, [None, 3])
    b = tf.placeholder(tf.float32, [None, 3])
    layer = tf.layers.Dense(2, activation=tf.nn.relu, kernel_initializer=tf.constant_initializer(0.5),
                            bias_initializer=tf.constant_initializer(-1.0))
    assert not layer.built and layer.trainable_variables == []
    ya, yb = layer(a), layer.apply(b)
    assert layer.built and layer.kernel.name == "dense/kernel:0" and layer.bias.name == "dense/bias:0"
    assert layer.trainable_variables == [layer.kernel, layer.bias] == tf.trainable_variables()
    assert yb.op.name.startswith("dense/")
    other = tf.layers.Dense(4, use_bias=False, name="head")
    yc = other(tf.reshape(ya, [-1, 1, 2]))  # rank-3 input: tensordot over the last axis
    assert other.kernel.name == "head/kernel:0" and other.bias is None and yc.shape.as_list() == [None, 1, 4]
    assert tf.layers.Dense(1)(a) is not None and len(tf.trainable_variables()) == 5  # dense_1/kernel, bias
    xa = np.array([[1, 2, 3], [-1, 0, 0]], np.float32)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        va, vb = sess.run([ya, yb], {a: xa, b: 2 * xa})
    np.testing.assert_allclose(va, np.maximum(xa @ np.full((3, 2), 0.5) - 1, 0), rtol=1e-6)
    np.testing.assert_allclose(vb, np.maximum(2 * xa @ np.full((3, 2), 0.5) - 1, 0), rtol=1e-6)
    with pytest.raises(ValueError, match="expected axis -1 of input shape to have value 3"):
        layer(tf.placeholder(tf.float32, [None, 4]))


# -- conv2d_transpose and the layer classes ----------------------------------
def deconv_reference(x, k, stride, padding):
    """NHWC transposed convolution: every input pixel scatters x[n,i,j,:] @ k[a,b,:,:].T into the output."""
    n, h, w, _ = x.shape
    kh, kw, f, _ = k.shape
    out_h = h * stride + max(kh - stride, 0) if padding == "valid" else h * stride
    out_w = w * stride + max(kw - stride, 0) if padding == "valid" else w * stride
    full = np.zeros((n, max((h - 1) * stride + kh, out_h) + kh, max((w - 1) * stride + kw, out_w) + kw, f))
    for i in range(h):
        for j in range(w):
            for a in range(kh):
                for b in range(kw):
                    full[:, i * stride + a, j * stride + b, :] += x[:, i, j, :] @ k[a, b].T
    top = max(kh - stride, 0) // 2 if padding == "same" else 0
    left = max(kw - stride, 0) // 2 if padding == "same" else 0
    return full[:, top:top + out_h, left:left + out_w, :]


@pytest.mark.parametrize("stride,padding,ksize", [(2, "same", 3), (2, "valid", 3), (1, "same", 3), (3, "valid", 2),
                                                  (2, "same", 4)])
def test_conv2d_transpose_matches_scatter_add(stride, padding, ksize):
    rng = np.random.RandomState(0)
    x = rng.randn(2, 3, 4, 5).astype(np.float64)
    p = tf.placeholder(tf.float64, [None, 3, 4, 5])
    y = tf.layers.conv2d_transpose(p, 6, ksize, strides=stride, padding=padding, activation=None,
                                   bias_initializer=tf.constant_initializer(0.5))
    kernel = [v for v in tf.global_variables() if v.op.name == "conv2d_transpose/kernel"][0]
    bias = [v for v in tf.global_variables() if v.op.name == "conv2d_transpose/bias"][0]
    assert kernel.shape.as_list() == [ksize, ksize, 6, 5] and bias.shape.as_list() == [6]
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        out, kv = s.run([y, kernel], {p: x})
    ref = deconv_reference(x, kv, stride, padding) + 0.5
    assert y.shape.as_list() == [None] + list(ref.shape[1:])
    np.testing.assert_allclose(out, ref, rtol=1e-10, atol=1e-10)


def test_conv2d_transpose_gradients_by_finite_differences():
    rng = np.random.RandomState(1)
    x0 = rng.randn(1, 2, 3, 2)
    k0 = rng.randn(3, 3, 2, 2)
    p = tf.placeholder(tf.float64, [1, 2, 3, 2])
    y = tf.layers.conv2d_transpose(p, 2, 3, strides=2, padding="same",
                                   kernel_initializer=tf.constant_initializer(k0), use_bias=False)
    kernel = tf.trainable_variables()[0]
    w = tf.constant(rng.randn(1, 4, 6, 2))
    loss = tf.reduce_sum(y * w)
    gx, gk = tf.gradients(loss, [p, kernel])
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        gxv, gkv = s.run([gx, gk], {p: x0})
        wv = s.run(w)
    num_x = numeric_grad(lambda xv: float(np.sum(deconv_reference(xv, k0, 2, "same") * wv)), x0)
    num_k = numeric_grad(lambda kv: float(np.sum(deconv_reference(x0, kv, 2, "same") * wv)), k0)
    np.testing.assert_allclose(gxv, num_x, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(gkv, num_k, rtol=1e-6, atol=1e-8)


def test_layer_objects_share_variables_across_calls_with_tf_names():
    conv = tf.layers.Conv2D(4, 3, padding="same", name="enc")
    deconv = tf.layers.Conv2DTranspose(1, 3, strides=2, padding="same")
    pool = tf.layers.MaxPooling2D(2, 2)
    flat = tf.layers.Flatten()
    a = tf.placeholder(tf.float32, [None, 8, 8, 1])
    b = tf.placeholder(tf.float32, [None, 8, 8, 1])
    ya, yb = conv(a), conv(b)
    up = deconv(pool(ya))
    assert up.shape.as_list() == [None, 8, 8, 1]
    f = flat(pool(yb))
    assert f.shape.as_list() == [None, 4 * 4 * 4]
    names = sorted(v.op.name for v in tf.global_variables())
    assert names == ["conv2d_transpose/bias", "conv2d_transpose/kernel", "enc/bias", "enc/kernel"]
    assert [v.op.name for v in conv.trainable_variables] == ["enc/kernel", "enc/bias"]
    x = np.random.RandomState(0).rand(2, 8, 8, 1).astype(np.float32)
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        va, vb = s.run([ya, yb], {a: x, b: x})
    np.testing.assert_array_equal(va, vb)  # the same weights on both calls


def test_dropout_and_batch_norm_layer_objects():
    drop = tf.layers.Dropout(0.5, seed=1)
    bn = tf.layers.BatchNormalization(momentum=0.9)
    x = tf.constant(np.arange(12, dtype=np.float32).reshape(4, 3))
    assert drop(x, training=False).op.type == "Identity"
    y = bn(x, training=True)
    updates = tf.get_collection(tf.GraphKeys.UPDATE_OPS)
    assert len(updates) == 2
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        out, _ = s.run([y, updates])
        mm = s.run([v for v in bn.variables if v.op.name.endswith("moving_mean")][0])
    xv = np.arange(12, dtype=np.float32).reshape(4, 3)
    ref = (xv - xv.mean(0)) / np.sqrt(xv.var(0) + 1e-3)
    np.testing.assert_allclose(out, ref, rtol=1e-5)
    np.testing.assert_allclose(mm, 0.1 * xv.mean(0), rtol=1e-6)
