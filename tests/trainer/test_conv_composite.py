"""tf.nn.conv1d / max_pool1d / avg_pool1d / depthwise_conv2d / separable_conv2d (ops/conv_composite.py) and the
tf.layers objects built on them, against numpy loops; gradients by finite differences."""
import numpy as np
import pytest

import tensorfleet as tf
from gradcheck import check_gradients
from helpers import init_and_run as run


def conv1d_ref(x, f, stride, padding):
    n, w, _ = x.shape
    k = f.shape[0]
    if padding == "SAME":
        out_w = -(-w // stride)
        total = max((out_w - 1) * stride + k - w, 0)
        x = np.pad(x, [(0, 0), (total // 2, total - total // 2), (0, 0)])
    else:
        out_w = (w - k) // stride + 1
    return np.stack([np.einsum("nkc,kco->no", x[:, i * stride:i * stride + k], f) for i in range(out_w)], axis=1)


@pytest.mark.parametrize("stride,padding", [(1, "VALID"), (2, "SAME"), (1, "SAME"), (3, "VALID")])
def test_conv1d_matches_numpy_and_gradients(stride, padding):
    rng = np.random.RandomState(0)
    x, f = rng.randn(2, 9, 3), rng.randn(4, 3, 5)
    np.testing.assert_allclose(run(tf.nn.conv1d(tf.constant(x), tf.constant(f), stride, padding)),
                               conv1d_ref(x, f, stride, padding), rtol=1e-10, atol=1e-12)
    check_gradients(lambda a, b: tf.nn.conv1d(a, b, stride, padding), [x, f], rtol=1e-6, atol=1e-8)


def test_pool1d_matches_numpy():
    x = np.random.RandomState(1).randn(2, 8, 3)
    mx = run(tf.nn.max_pool1d(tf.constant(x), 2, 2, "VALID"))
    av = run(tf.nn.avg_pool1d(tf.constant(x), 2, 2, "VALID"))
    np.testing.assert_allclose(mx, x.reshape(2, 4, 2, 3).max(2))
    np.testing.assert_allclose(av, x.reshape(2, 4, 2, 3).mean(2))


def test_layers_conv1d_and_pooling_objects():
    x = tf.placeholder(tf.float64, [None, 10, 4])
    conv = tf.layers.Conv1D(6, 3, padding="same", activation=tf.nn.relu, name="c1")
    y = tf.layers.max_pooling1d(conv(x), 2, 2)
    z = tf.layers.AveragePooling1D(5, 5)(conv(x))
    assert y.shape.as_list() == [None, 5, 6] and z.shape.as_list() == [None, 2, 6]
    assert sorted(v.op.name for v in tf.global_variables()) == ["c1/bias", "c1/kernel"]
    kernel = tf.global_variables()[0] if tf.global_variables()[0].op.name == "c1/kernel" else tf.global_variables()[1]
    xv = np.random.RandomState(3).randn(2, 10, 4)
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        yv, kv = s.run([y, kernel], {x: xv})
    ref = np.maximum(conv1d_ref(xv, kv, 1, "SAME"), 0).reshape(2, 5, 2, 6).max(2)
    np.testing.assert_allclose(yv, ref, rtol=1e-10)


def depthwise_ref(x, f, stride, padding):
    c, m = f.shape[2], f.shape[3]
    outs = [conv2d_ref(x[..., i:i + 1], f[:, :, i:i + 1, :], stride, padding) for i in range(c)]
    return np.concatenate(outs, axis=3).reshape(outs[0].shape[:3] + (c * m,))


def conv2d_ref(x, f, stride, padding):
    kh, kw = f.shape[:2]
    n, h, w, _ = x.shape
    if padding == "SAME":
        oh, ow = -(-h // stride), -(-w // stride)
        ph, pw = max((oh - 1) * stride + kh - h, 0), max((ow - 1) * stride + kw - w, 0)
        x = np.pad(x, [(0, 0), (ph // 2, ph - ph // 2), (pw // 2, pw - pw // 2), (0, 0)])
    else:
        oh, ow = (h - kh) // stride + 1, (w - kw) // stride + 1
    out = np.zeros((n, oh, ow, f.shape[3]))
    for i in range(oh):
        for j in range(ow):
            out[:, i, j] = np.einsum("nhwc,hwco->no", x[:, i * stride:i * stride + kh, j * stride:j * stride + kw], f)
    return out


@pytest.mark.parametrize("stride,padding", [(1, "SAME"), (2, "VALID")])
def test_depthwise_and_separable_conv_match_numpy(stride, padding):
    rng = np.random.RandomState(4)
    x, dw, pw = rng.randn(2, 5, 5, 3), rng.randn(3, 3, 3, 2), rng.randn(1, 1, 6, 4)
    st = [1, stride, stride, 1]
    got = run(tf.nn.depthwise_conv2d(tf.constant(x), tf.constant(dw), st, padding))
    ref = depthwise_ref(x, dw, stride, padding)
    np.testing.assert_allclose(got, ref, rtol=1e-10, atol=1e-12)
    sep = run(tf.nn.separable_conv2d(tf.constant(x), tf.constant(dw), tf.constant(pw), st, padding))
    np.testing.assert_allclose(sep, np.einsum("nhwc,co->nhwo", ref, pw[0, 0]), rtol=1e-10, atol=1e-12)
    check_gradients(lambda a, b: tf.nn.depthwise_conv2d(a, b, st, padding), [x, dw], rtol=1e-6, atol=1e-8)


def test_layers_separable_conv2d_variables_and_values():
    x = tf.placeholder(tf.float64, [None, 5, 5, 3])
    y = tf.layers.separable_conv2d(x, 4, 3, padding="same", depth_multiplier=2)
    names = sorted(v.op.name for v in tf.global_variables())
    assert names == ["separable_conv2d/bias", "separable_conv2d/depthwise_kernel", "separable_conv2d/pointwise_kernel"]
    layer = tf.layers.SeparableConv2D(2, 3)
    assert layer(x).shape.as_list() == [None, 3, 3, 2]
    by_name = {v.op.name: v for v in tf.global_variables()}
    xv = np.random.RandomState(7).randn(2, 5, 5, 3)
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        yv, dw, pw = s.run([y, by_name["separable_conv2d/depthwise_kernel"],
                            by_name["separable_conv2d/pointwise_kernel"]], {x: xv})
    ref = np.einsum("nhwc,co->nhwo", depthwise_ref(xv, dw, 1, "SAME"), pw[0, 0])
    np.testing.assert_allclose(yv, ref, rtol=1e-10, atol=1e-12)
