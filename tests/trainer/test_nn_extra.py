"""tf.nn.conv1d / pool1d / lrn and tf.layers.conv1d against numpy loops, gradients by finite differences."""
import numpy as np
import pytest

import tensorfleet as tf
from gradcheck import check_gradients


@pytest.fixture(autouse=True)
def _graph():
    with tf.Graph().as_default():
        yield


def run(t):
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        return s.run(t)


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
