"""tf.layers.conv2d_transpose / Conv2DTranspose and the TF1 layer classes, against a numpy oracle (transposed
convolution written as a scatter-add) and finite differences for the gradients."""
import numpy as np
import pytest

import tensorfleet as tf
from gradcheck import numeric_grad


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


@pytest.fixture(autouse=True)
def _graph():
    with tf.Graph().as_default():
        yield


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
