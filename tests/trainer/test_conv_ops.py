"""tf.nn.conv2d / max_pool / avg_pool: forward vs naive loop references, TF shapes, gradients vs finite differences."""
import math

import numpy as np
import pytest

import tensorfleet as tf
from gradcheck import check_gradients
from helpers import assert_training_lowers_loss, run


# -- naive references (independent of the im2col kernels) ---------------------
def _out_and_pad(size, k, s, d, padding):
    eff = (k - 1) * d + 1
    if padding == "VALID":
        return math.ceil((size - eff + 1) / s), 0
    out = math.ceil(size / s)
    return out, max((out - 1) * s + eff - size, 0) // 2


def ref_conv2d(x, f, strides, padding, dilations=(1, 1)):
    n, h, w, c = x.shape
    kh, kw, _, o = f.shape
    (sh, sw), (dh, dw) = strides, dilations
    oh, pt = _out_and_pad(h, kh, sh, dh, padding)
    ow, pl = _out_and_pad(w, kw, sw, dw, padding)
    out = np.zeros((n, oh, ow, o), dtype=np.float64)
    for i in range(oh):
        for j in range(ow):
            for di in range(kh):
                for dj in range(kw):
                    r, q = i * sh + di * dh - pt, j * sw + dj * dw - pl
                    if 0 <= r < h and 0 <= q < w:
                        out[:, i, j, :] += x[:, r, q, :].astype(np.float64) @ f[di, dj].astype(np.float64)
    return out


def ref_pool(x, k, s, padding, kind):
    n, h, w, c = x.shape
    oh, pt = _out_and_pad(h, k[0], s[0], 1, padding)
    ow, pl = _out_and_pad(w, k[1], s[1], 1, padding)
    out = np.zeros((n, oh, ow, c))
    for i in range(oh):
        for j in range(ow):
            r0, q0 = i * s[0] - pt, j * s[1] - pl
            win = x[:, max(r0, 0):min(r0 + k[0], h), max(q0, 0):min(q0 + k[1], w), :]
            out[:, i, j, :] = win.max(axis=(1, 2)) if kind == "max" else win.mean(axis=(1, 2))
    return out


CONV_CASES = [  # (input shape, filter hw, strides, padding, dilations)
    ((2, 7, 7, 3), (3, 3), (1, 1), "SAME", (1, 1)),
    ((2, 7, 6, 3), (3, 3), (2, 2), "SAME", (1, 1)),
    ((1, 8, 8, 2), (2, 2), (2, 2), "SAME", (1, 1)),
    ((1, 8, 7, 2), (4, 3), (3, 2), "SAME", (1, 1)),   # odd total padding on both dims
    ((2, 7, 7, 3), (3, 3), (1, 1), "VALID", (1, 1)),
    ((2, 8, 9, 1), (3, 2), (2, 3), "VALID", (1, 1)),
    ((1, 9, 9, 2), (3, 3), (1, 1), "SAME", (2, 2)),
    ((1, 9, 8, 2), (2, 3), (1, 1), "VALID", (2, 1)),
]


@pytest.mark.parametrize("shape,k,s,padding,d", CONV_CASES)
def test_conv2d_forward_matches_naive_loops(shape, k, s, padding, d):
    rng = np.random.default_rng(0)
    x = rng.standard_normal(shape).astype(np.float32)
    f = rng.standard_normal(k + (shape[3], 4)).astype(np.float32)
    y = tf.nn.conv2d(tf.constant(x), tf.constant(f), strides=[1, *s, 1], padding=padding, dilations=[1, *d, 1])
    out = run(y)
    ref = ref_conv2d(x, f, s, padding, d)
    assert out.dtype == np.float32 and out.shape == ref.shape
    assert tuple(y.shape.as_list()) == ref.shape
    np.testing.assert_allclose(out, ref, rtol=1e-4, atol=1e-4)


def test_conv2d_tf_reference_values_and_shapes():
    # TF: 4x4 image 1..16, 2x2 ones filter, stride 2 SAME -> window sums
    x = np.arange(1, 17, dtype=np.float32).reshape(1, 4, 4, 1)
    y = tf.nn.conv2d(x, np.ones((2, 2, 1, 1), np.float32), [1, 2, 2, 1], "SAME")
    np.testing.assert_array_equal(run(y)[0, :, :, 0], [[14, 22], [46, 54]])
    # 5x5, 2x2 stride 2 SAME: out 3x3, the single pad row/col goes after (bottom/right)
    x5 = np.arange(25, dtype=np.float32).reshape(1, 5, 5, 1)
    y5 = run(tf.nn.conv2d(x5, np.ones((2, 2, 1, 1), np.float32), [1, 2, 2, 1], "SAME"))[0, :, :, 0]
    np.testing.assert_array_equal(y5[2], [20 + 21, 22 + 23, 24])
    np.testing.assert_array_equal(y5[:, 2], [4 + 9, 14 + 19, 24])
    shapes = {  # (H, k, s, padding) -> TF output size
        (28, 5, 1, "SAME"): 28, (28, 5, 2, "SAME"): 14, (28, 5, 1, "VALID"): 24, (28, 5, 2, "VALID"): 12,
        (7, 3, 2, "VALID"): 3, (7, 3, 2, "SAME"): 4, (8, 3, 3, "SAME"): 3, (8, 3, 3, "VALID"): 2,
    }
    for (h, k, s, p), want in shapes.items():
        t = tf.nn.conv2d(tf.placeholder(tf.float32, [None, h, h, 2]), np.zeros((k, k, 2, 5), np.float32),
                         [1, s, s, 1], p)
        assert t.shape.as_list() == [None, want, want, 5], (h, k, s, p)


def test_conv2d_strides_forms_and_errors():
    x = tf.placeholder(tf.float32, [1, 6, 6, 2])
    f = np.zeros((3, 3, 2, 4), np.float32)
    assert tf.nn.conv2d(x, f, 2, "SAME").shape.as_list() == [1, 3, 3, 4]
    assert tf.nn.conv2d(x, f, [2, 1], "VALID").shape.as_list() == [1, 2, 4, 4]
    assert tf.nn.conv2d(x, filters=f, strides=[1, 1, 1, 1], padding="VALID").name == "Conv2D_2:0"
    with pytest.raises(ValueError, match="Dimensions must be equal, but are 2 and 3"):
        tf.nn.conv2d(x, np.zeros((3, 3, 3, 4), np.float32), [1, 1, 1, 1], "SAME")
    with pytest.raises(ValueError, match="Shape must be rank 4 but is rank 3"):
        tf.nn.conv2d(tf.placeholder(tf.float32, [6, 6, 2]), f, [1, 1, 1, 1], "SAME")
    with pytest.raises(ValueError, match="not in the list of allowed values"):
        tf.nn.conv2d(x, f, [1, 1, 1, 1], "same")
    with pytest.raises(ValueError, match="strides in the batch and depth"):
        tf.nn.conv2d(x, f, [2, 1, 1, 1], "SAME")
    with pytest.raises(ValueError, match="Negative dimension size"):
        tf.nn.conv2d(x, np.zeros((7, 7, 2, 4), np.float32), [1, 1, 1, 1], "VALID")
    with pytest.raises(ValueError, match="should be of length 1, 2 or 4 but was 3"):
        tf.nn.conv2d(x, f, [1, 1, 1], "SAME")


def test_conv2d_float64_and_explicit_padding_and_nchw():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 6, 5, 3))
    f = rng.standard_normal((3, 2, 3, 2))
    out = run(tf.nn.conv2d(x, f, [1, 1, 1, 1], [[0, 0], [1, 1], [0, 1], [0, 0]]))
    xp = np.pad(x, ((0, 0), (1, 1), (0, 1), (0, 0)))
    assert out.dtype == np.float64
    np.testing.assert_allclose(out, ref_conv2d(xp, f, (1, 1), "VALID"), rtol=1e-10)
    nchw = run(tf.nn.conv2d(x.transpose(0, 3, 1, 2), f, [1, 1, 2, 2], "SAME", data_format="NCHW"))
    np.testing.assert_allclose(nchw.transpose(0, 2, 3, 1), ref_conv2d(x, f, (2, 2), "SAME"), rtol=1e-10)


@pytest.mark.parametrize("shape,k,s,padding,d", CONV_CASES[:7])
def test_conv2d_gradients_finite_differences(shape, k, s, padding, d):
    rng = np.random.default_rng(1)
    x = rng.standard_normal(shape[:3] + (2,))
    f = rng.standard_normal(k + (2, 3))
    check_gradients(lambda x, f: tf.nn.conv2d(x, f, [1, *s, 1], padding, dilations=[1, *d, 1]), [x, f],
                    rtol=1e-5, atol=1e-6)


def test_conv2d_gradient_with_unknown_batch_uses_runtime_shape():
    rng = np.random.default_rng(2)
    xv, fv = rng.standard_normal((3, 5, 5, 2)).astype(np.float32), rng.standard_normal((3, 3, 2, 4)).astype(np.float32)
    x = tf.placeholder(tf.float32, [None, 5, 5, 2])
    y = tf.nn.conv2d(x, tf.constant(fv), [1, 2, 2, 1], "SAME")
    gx = tf.gradients(tf.reduce_sum(y), x)[0]
    g = run(gx, feed={x: xv})
    # d sum(conv)/dx[p] = sum of filter taps that touch p (all output channels)
    ref = np.zeros_like(xv, dtype=np.float64)
    for i in range(3):
        for j in range(3):
            r, q = i * 2 - 1, j * 2 - 1
            for di in range(3):
                for dj in range(3):
                    if 0 <= r + di < 5 and 0 <= q + dj < 5:
                        ref[:, r + di, q + dj, :] += fv[di, dj].sum(axis=1)
    assert g.dtype == np.float32 and g.shape == xv.shape
    np.testing.assert_allclose(g, ref, rtol=1e-5, atol=1e-5)


def test_conv2d_backprop_ops_and_transpose():
    rng = np.random.default_rng(4)
    f = rng.standard_normal((3, 3, 2, 4))
    g = rng.standard_normal((1, 3, 3, 4))
    # conv2d_transpose is the adjoint of conv2d: <conv(x), g> == <x, conv_t(g)>
    x = rng.standard_normal((1, 6, 5, 2))
    y = tf.nn.conv2d(x, f, [1, 2, 2, 1], "SAME")
    xt = tf.nn.conv2d_transpose(g, f, [1, 6, 5, 2], [1, 2, 2, 1], "SAME")
    yv, xtv = run([y, xt])
    np.testing.assert_allclose((yv * g).sum(), (x * xtv).sum(), rtol=1e-10)
    assert xt.shape.as_list() == [1, 6, 5, 2]
    gf = run(tf.nn.conv2d_backprop_filter(x, [3, 3, 2, 4], g, [1, 2, 2, 1], "SAME"))
    gi = run(tf.nn.conv2d_backprop_input([1, 6, 5, 2], f, g, [1, 2, 2, 1], "SAME"))
    np.testing.assert_allclose(gi, xtv)
    # d<conv(x, f), g>/df computed by the naive reference column by column
    eps = 1e-6
    num = np.zeros_like(f)
    for idx in np.ndindex(f.shape):
        fp = f.copy()
        fp[idx] += eps
        num[idx] = ((ref_conv2d(x, fp, (2, 2), "SAME") - ref_conv2d(x, f, (2, 2), "SAME")) * g).sum() / eps
    np.testing.assert_allclose(gf, num, rtol=1e-4, atol=1e-4)


def test_conv2d_transpose_and_backprop_gradients():
    rng = np.random.default_rng(5)
    g, f = rng.standard_normal((1, 3, 3, 2)), rng.standard_normal((2, 2, 3, 2))
    check_gradients(lambda g, f: tf.nn.conv2d_transpose(g, f, [1, 5, 6, 3], [1, 2, 2, 1], "SAME"), [g, f])
    x = rng.standard_normal((1, 5, 4, 2))
    gy = rng.standard_normal((1, 3, 2, 3))
    check_gradients(lambda x, gy: tf.nn.conv2d_backprop_filter(x, [3, 3, 2, 3], gy, [1, 2, 2, 1], "SAME"), [x, gy])


# -- pooling ------------------------------------------------------------------
POOL_CASES = [  # (input shape, k, s, padding)
    ((2, 6, 6, 3), (2, 2), (2, 2), "VALID"),    # windows tile the input exactly
    ((1, 7, 5, 2), (2, 2), (2, 2), "VALID"),    # a last row and column no window reads: zero gradient
    ((2, 7, 7, 3), (2, 2), (2, 2), "SAME"),    # odd total padding: pad after only
    ((1, 7, 6, 2), (3, 3), (2, 2), "SAME"),
    ((1, 8, 7, 2), (3, 2), (1, 2), "SAME"),
    ((1, 7, 7, 2), (3, 3), (2, 2), "VALID"),
    ((1, 5, 5, 1), (4, 4), (3, 3), "SAME"),    # total padding 2 per dim, split 1/1
]


@pytest.mark.parametrize("shape,k,s,padding", POOL_CASES)
@pytest.mark.parametrize("kind", ["max", "avg"])
def test_pool_forward_matches_naive(shape, k, s, padding, kind):
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    fn = tf.nn.max_pool if kind == "max" else tf.nn.avg_pool
    y = fn(tf.constant(x), [1, *k, 1], [1, *s, 1], padding)
    out = run(y)
    ref = ref_pool(x, k, s, padding, kind)
    assert out.dtype == np.float32 and tuple(y.shape.as_list()) == ref.shape
    np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-6)


def test_avg_pool_same_divides_by_valid_count_like_tf():
    # TF: avg_pool of ones with SAME padding stays all ones (padding is not counted)
    out = run(tf.nn.avg_pool(np.ones((1, 3, 3, 1), np.float32), [1, 3, 3, 1], [1, 1, 1, 1], "SAME"))
    np.testing.assert_array_equal(out, np.ones((1, 3, 3, 1)))
    out = run(tf.nn.avg_pool(np.array([[1., 2.], [3., 4.]], np.float32).reshape(1, 2, 2, 1), 3, 1, "SAME"))
    np.testing.assert_allclose(out.ravel(), [2.5] * 4)
    # max_pool SAME never picks the padding, even for all-negative inputs
    out = run(tf.nn.max_pool(-np.ones((1, 3, 3, 1), np.float32), 2, 2, "SAME"))
    np.testing.assert_array_equal(out, -np.ones((1, 2, 2, 1)))


@pytest.mark.parametrize("shape,k,s,padding", POOL_CASES)
@pytest.mark.parametrize("kind", ["max", "avg"])
def test_pool_gradients_finite_differences(shape, k, s, padding, kind):
    # distinct values keep max-pool's argmax away from ties (finite differences need that)
    rng = np.random.default_rng(1)
    x = rng.permutation(np.prod(shape)).reshape(shape) * 0.1 + rng.uniform(0, 0.01, shape)
    fn = tf.nn.max_pool if kind == "max" else tf.nn.avg_pool
    check_gradients(lambda x: fn(x, [1, *k, 1], [1, *s, 1], padding), [x], eps=1e-4)


def test_max_pool_grad_ties_go_to_first_element_and_nchw():
    x = np.ones((1, 2, 2, 1), np.float32)
    xt = tf.constant(x)
    g = run(tf.gradients(tf.nn.max_pool(xt, 2, 2, "VALID"), xt)[0])
    np.testing.assert_array_equal(g.ravel(), [1, 0, 0, 0])
    v = np.random.default_rng(2).standard_normal((2, 3, 6, 5))
    out = run(tf.nn.max_pool(v, [1, 1, 2, 2], [1, 1, 2, 2], "SAME", data_format="NCHW"))
    np.testing.assert_allclose(out, ref_pool(v.transpose(0, 2, 3, 1), (2, 2), (2, 2), "SAME", "max")
                               .transpose(0, 3, 1, 2))


def test_pool_errors_and_names():
    x = tf.placeholder(tf.float32, [None, 4, 4, 2])
    assert tf.nn.max_pool(x, 2, 2, "SAME").name == "MaxPool:0"
    assert tf.nn.avg_pool(x, [2, 2], [2, 2], "VALID", name="pool").name == "pool:0"
    with pytest.raises(ValueError, match="Pooling is not yet supported on the batch nor depth"):
        tf.nn.max_pool(x, [1, 2, 2, 2], [1, 1, 1, 1], "SAME")
    with pytest.raises(ValueError, match="not in the list of allowed values"):
        tf.nn.avg_pool(x, 2, 2, "FULL")
    with pytest.raises(ValueError, match="Negative dimension size"):
        tf.nn.max_pool(x, 5, 1, "VALID")


def test_small_cnn_step_trains():
    rng = np.random.default_rng(0)
    x = tf.placeholder(tf.float32, [None, 12, 12, 1])
    y = tf.placeholder(tf.int64, [None])
    w1 = tf.Variable((rng.standard_normal((3, 3, 1, 4)) * 0.3).astype(np.float32))
    w2 = tf.Variable((rng.standard_normal((6 * 6 * 4, 3)) * 0.1).astype(np.float32))
    h = tf.nn.max_pool(tf.nn.relu(tf.nn.conv2d(x, w1, [1, 1, 1, 1], "SAME")), 2, 2, "SAME")
    flat = tf.layers.flatten(h)
    loss = tf.reduce_sum(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=tf.matmul(flat, w2)))
    g1, g2 = tf.gradients(loss, [w1, w2])
    step = [tf.assign_sub(w1, 0.01 * g1), tf.assign_sub(w2, 0.01 * g2)]
    xv = rng.standard_normal((8, 12, 12, 1)).astype(np.float32)
    yv = rng.integers(0, 3, 8)
    assert_training_lowers_loss(loss, step, {x: xv, y: yv}, steps=20)


@pytest.mark.parametrize("fmt", ["NHWC", "NCHW"])
def test_conv_filter_gradient_reuses_the_forward_im2col_within_one_plan(fmt, monkeypatch):
    """A training step computes im2col once per conv; results equal the recomputing path; eval plans keep nothing."""
    from tensorfleet.kernels import conv_kernels

    rng = np.random.default_rng(5)
    shape = (2, 6, 5, 3) if fmt == "NHWC" else (2, 3, 6, 5)
    x = tf.placeholder(tf.float64, shape)
    w = tf.Variable(rng.standard_normal((3, 3, 3, 4)))
    y = tf.nn.conv2d(x, w, [1, 1, 1, 1], "SAME", data_format=fmt)
    loss = tf.reduce_sum(tf.square(y))
    (gw,) = tf.gradients(loss, [w])
    xv = rng.standard_normal(shape)
    calls = []
    real = conv_kernels._im2col
    monkeypatch.setattr(conv_kernels, "_im2col", lambda *a: calls.append(1) or real(*a))
    with tf.Session() as sess:
        sess.run(w.initializer)
        calls.clear()
        lv, gv = sess.run([loss, gw], {x: xv})          # forward and filter gradient in one plan
        assert len(calls) == 1
        calls.clear()
        yv = sess.run(y, {x: xv})                       # forward only: nothing handed over or kept
        assert len(calls) == 1 and sess._resources.handoff == {}
        gv_alone = sess.run(gw, {x: xv, y: yv})         # y fed: no forward conv in this plan, im2col recomputed
        assert len(calls) == 2
    np.testing.assert_allclose(gv, gv_alone, rtol=1e-12)
    # independent oracle: d/dw sum(conv(x, w)^2) by central finite differences on a few taps
    with tf.Session() as sess:
        sess.run(w.initializer)
        wv = sess.run(w)
        for idx in [(0, 0, 0, 0), (1, 2, 1, 3), (2, 1, 2, 2)]:
            def f(delta):
                sess.run(w.assign(wv + delta))
                return sess.run(loss, {x: xv})
            d = np.zeros_like(wv)
            d[idx] = 1e-6
            np.testing.assert_allclose(gv[idx], (f(d) - f(-d)) / 2e-6, rtol=1e-5)
