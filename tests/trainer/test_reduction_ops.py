"""Reductions, argmax/argmin, comparisons, where and clipping: forward vs numpy, shapes, dtypes, gradients."""
import numpy as np
import pytest

import tensorfleet as tf
from gradcheck import check_gradients
from helpers import run

RNG = np.random.default_rng(1)
X = RNG.standard_normal((2, 3, 4))


REDUCTIONS = [(tf.reduce_sum, np.sum), (tf.reduce_mean, np.mean), (tf.reduce_max, np.max), (tf.reduce_min, np.min),
              (tf.reduce_prod, np.prod)]
AXES = [None, 0, -1, [0, 2], (1, -1), []]


@pytest.mark.parametrize("tf_fn,np_fn", REDUCTIONS, ids=lambda f: getattr(f, "__name__", "f"))
@pytest.mark.parametrize("axis", AXES, ids=str)
@pytest.mark.parametrize("keepdims", [False, True])
def test_reduction_forward_shape_and_gradient(tf_fn, np_fn, axis, keepdims):
    np_axis = tuple(axis) if isinstance(axis, list) else axis
    out = tf_fn(tf.constant(X), axis=axis, keepdims=keepdims)
    ref = np_fn(X, axis=np_axis, keepdims=keepdims)
    assert out.shape.as_list() == list(np.shape(ref))
    np.testing.assert_allclose(run(out), ref, rtol=1e-12)
    check_gradients(lambda x: tf_fn(x, axis=axis, keepdims=keepdims), [X], rtol=1e-5)


def test_reduction_aliases_names_and_unknown_dims():
    x = tf.placeholder(tf.float32, [None, 3])
    s = tf.reduce_sum(x, reduction_indices=[1], keep_dims=True)
    m = tf.reduce_mean(x, 0)
    assert (s.op.name, m.op.name) == ("Sum", "Mean")
    assert s.shape.as_list() == [None, 1] and m.shape.as_list() == [3]
    xv = np.arange(6, dtype=np.float32).reshape(2, 3)
    sv, mv = run(s, m, feed={x: xv})
    assert mv.dtype == np.float32
    np.testing.assert_allclose(sv, xv.sum(1, keepdims=True))
    g, = tf.gradients(tf.reduce_mean(x * x), [x])
    np.testing.assert_allclose(run(g, feed={x: xv}), 2 * xv / 6, rtol=1e-6)
    with pytest.raises(ValueError, match="Invalid reduction dimension 2"):
        tf.reduce_sum(x, axis=2)
    with pytest.raises(ValueError, match="Cannot specify both"):
        tf.reduce_sum(x, axis=0, reduction_indices=0)


def test_int_and_bool_reductions_keep_dtype():
    a = tf.constant([[1, -2, 3], [4, 5, -7]], tf.int32)
    outs = run(tf.reduce_sum(a), tf.reduce_mean(a, 1), tf.reduce_prod(a, 0), tf.reduce_max(a))
    assert all(o.dtype == np.int32 for o in outs)
    assert outs[0] == 4 and outs[3] == 5
    np.testing.assert_array_equal(outs[1], [0, 0])  # 2 // 3 and -2 / 3 truncate toward zero, as TF
    np.testing.assert_array_equal(outs[2], [4, -10, -21])
    b = tf.constant([[True, False], [True, True]])
    anys, alls = run(tf.reduce_any(b, 1), tf.reduce_all(b, 1))
    np.testing.assert_array_equal(anys, [True, True])
    np.testing.assert_array_equal(alls, [False, True])
    with pytest.raises(TypeError, match="bool"):
        tf.reduce_any(a)


def test_max_reduction_ties_split_gradient_equally():
    """TF's rule: the gradient is divided between all tied maxima."""
    x = tf.constant([[1.0, 3.0, 3.0], [2.0, 2.0, 2.0]])
    g, = tf.gradients(tf.reduce_sum(tf.reduce_max(x, axis=1)), [x])
    np.testing.assert_allclose(run(g), [[0, 0.5, 0.5], [1 / 3, 1 / 3, 1 / 3]], rtol=1e-6)


def test_prod_gradient_with_zeros():
    x = np.array([[0.0, 2.0, 3.0], [0.0, 0.0, 5.0], [1.0, 2.0, 4.0]])
    t = tf.constant(x)
    g, = tf.gradients(tf.reduce_sum(tf.reduce_prod(t, 1)), [t])
    np.testing.assert_allclose(run(g), [[6, 0, 0], [0, 0, 0], [8, 4, 2]])


def test_logsumexp_and_count_nonzero():
    x = np.array([[1.0, 2.0, 1000.0], [-1.0, 0.0, 1.0]])
    ref = np.log(np.sum(np.exp(x - x.max(1, keepdims=True)), 1)) + x.max(1)
    np.testing.assert_allclose(run(tf.reduce_logsumexp(tf.constant(x), 1)), ref)
    check_gradients(lambda a: tf.reduce_logsumexp(a, axis=-1, keepdims=True), [X[0]])
    c = tf.count_nonzero(tf.constant([[0, 1, 2], [0, 0, 3]]), axis=1)
    assert c.dtype == tf.int64
    np.testing.assert_array_equal(run(c), [2, 1])


@pytest.mark.parametrize("fn,np_fn", [(tf.argmax, np.argmax), (tf.argmin, np.argmin)])
def test_argmax_argmin(fn, np_fn):
    for axis in (0, 1, -1):
        out = fn(tf.constant(X), axis)
        assert out.dtype == tf.int64 and out.op.type in ("ArgMax", "ArgMin")
        r = run(out)
        assert r.dtype == np.int64
        np.testing.assert_array_equal(r, np_fn(X, axis))
    np.testing.assert_array_equal(run(fn(tf.constant(X), dimension=2, output_type=tf.int32)), np_fn(X, 2))
    assert fn(tf.constant(X), dimension=2, output_type=tf.int32).dtype == tf.int32
    np.testing.assert_array_equal(run(fn(tf.constant(X))), np_fn(X, 0))  # TF1 default axis 0


CMP = [(tf.equal, np.equal), (tf.not_equal, np.not_equal), (tf.less, np.less), (tf.less_equal, np.less_equal),
       (tf.greater, np.greater), (tf.greater_equal, np.greater_equal)]


@pytest.mark.parametrize("fn,np_fn", CMP, ids=lambda f: getattr(f, "__name__", "f"))
def test_comparisons_broadcast_to_bool(fn, np_fn):
    a = np.array([[1, 2, 3], [3, 2, 1]], np.int32)
    b = np.array([2, 2, 2], np.int32)
    out = fn(tf.constant(a), tf.constant(b))
    assert out.dtype == tf.bool and out.shape.as_list() == [2, 3]
    np.testing.assert_array_equal(run(out), np_fn(a, b))
    assert run(fn(tf.constant(1.5), 1.5)) == np_fn(1.5, 1.5)


def test_equal_on_bool_and_is_nan_family():
    a = tf.constant([True, False])
    np.testing.assert_array_equal(run(tf.equal(a, True)), [True, False])
    v = tf.constant([1.0, np.nan, np.inf])
    nan, inf, fin = run(tf.is_nan(v), tf.is_inf(v), tf.is_finite(v))
    np.testing.assert_array_equal(nan, [0, 1, 0])
    np.testing.assert_array_equal(inf, [0, 0, 1])
    np.testing.assert_array_equal(fin, [1, 0, 0])


def test_where_select_forms_and_gradient():
    c = np.array([[True, False, True], [False, True, False]])
    x, y = RNG.standard_normal((2, 3)), RNG.standard_normal((2, 3))
    out = tf.where(tf.constant(c), tf.constant(x), tf.constant(y))
    assert out.op.type == "Select"
    np.testing.assert_allclose(run(out), np.where(c, x, y))
    row = np.array([True, False])
    np.testing.assert_allclose(run(tf.where(tf.constant(row), x, y)), np.where(row[:, None], x, y))
    check_gradients(lambda a, b: tf.where(tf.constant(c), a, b), [x, y])
    check_gradients(lambda a, b: tf.where(tf.constant(row), a, b), [x, y])
    with pytest.raises(ValueError):
        tf.where(tf.constant([True, False, True]), tf.zeros([2, 3]), tf.zeros([2, 3]))
    with pytest.raises(ValueError):
        tf.where(tf.constant(c), tf.zeros([2, 3]), tf.zeros([3]))
    check_gradients(lambda a, b: tf.where_v2(tf.constant(c), a, b), [x[0], y[:, :1]])


def test_where_coordinates_int64():
    c = np.array([[True, False], [False, True], [True, True]])
    out = tf.where(tf.constant(c))
    assert out.dtype == tf.int64 and out.shape.as_list() == [None, 2]
    r = run(out)
    assert r.dtype == np.int64
    np.testing.assert_array_equal(r, np.argwhere(c))


def test_clip_by_value_forward_and_gradient():
    x = np.array([-2.0, -0.5, 0.3, 1.7])
    out = tf.clip_by_value(tf.constant(x), -1.0, 1.0)
    assert out.op.name == "clip_by_value"
    np.testing.assert_allclose(run(out), np.clip(x, -1, 1))
    check_gradients(lambda a: tf.clip_by_value(a, -1.0, 1.0), [x])
    check_gradients(lambda a, lo, hi: tf.clip_by_value(a, lo, hi), [x, np.array(-0.8), np.array(0.9)])
    with pytest.raises(ValueError, match="incompatible"):
        tf.clip_by_value(tf.zeros([3]), tf.zeros([2, 3]), 1.0)


def test_clip_by_norm_and_global_norm():
    t = np.array([[3.0, 4.0], [6.0, 8.0]])
    np.testing.assert_allclose(run(tf.clip_by_norm(tf.constant(t), 5.0)), t * 5 / np.linalg.norm(t))
    np.testing.assert_allclose(run(tf.clip_by_norm(tf.constant(t), 5.0, axes=[1])), [[3, 4], [3, 4]])
    np.testing.assert_allclose(run(tf.clip_by_norm(tf.zeros([2]), 1.0)), [0, 0])
    check_gradients(lambda a: tf.clip_by_norm(a, 1.0), [t / 3])
    a, b = np.array([3.0, 4.0]), np.array([[12.0]])
    gn = tf.global_norm([tf.constant(a), None, tf.constant(b)])
    assert gn.op.name == "global_norm/global_norm"
    assert run(gn) == pytest.approx(13.0)
    clipped, norm = tf.clip_by_global_norm([tf.constant(a), None, tf.constant(b)], 6.5)
    assert clipped[1] is None
    c0, c2, n = run(clipped[0], clipped[2], norm)
    np.testing.assert_allclose(c0, a / 2)
    np.testing.assert_allclose(c2, b / 2)
    assert n == pytest.approx(13.0)
    unclipped, _ = tf.clip_by_global_norm([tf.constant(a)], 100.0)
    np.testing.assert_allclose(run(unclipped[0]), a)
    nan, _ = tf.clip_by_global_norm([tf.constant([np.inf, 1.0])], 1.0)
    assert np.isnan(run(nan[0])).all()
    check_gradients(lambda u, v: tf.clip_by_global_norm([u, v], 1.0)[0][0], [a / 4, b / 4])
