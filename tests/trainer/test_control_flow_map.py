"""tf.map_fn / tf.scan / tf.foldl / tf.foldr on top of tf.while_loop: numpy oracles and finite differences."""
import numpy as np
import pytest

import tensorfleet as tf
from gradcheck import check_gradients, vjp
from helpers import run

RS = np.random.RandomState(7)


def test_map_fn_matches_numpy_and_keeps_static_shape():
    x = tf.placeholder(tf.float32, [5, 3])
    y = tf.map_fn(lambda r: tf.reduce_sum(r * r) + r, x)
    assert y.shape.as_list() == [5, 3]
    xv = RS.randn(5, 3).astype(np.float32)
    np.testing.assert_allclose(run(y, feed={x: xv}), (xv * xv).sum(1, keepdims=True) + xv, rtol=1e-5)


def test_map_fn_structures_and_dtype():
    a = tf.constant([1, 2, 3])
    b = tf.constant([10.0, 20.0, 30.0])
    out = tf.map_fn(lambda t: (t[0] * 2, t[1] + tf.cast(t[0], tf.float32)), (a, b))
    scal = tf.map_fn(lambda t: tf.cast(t[0], tf.float32) * t[1], (a, b), dtype=tf.float32)
    empty = tf.map_fn(lambda r: r * 2.0, tf.zeros([0, 2]))
    v_out, v_scal, v_empty = run(out, scal, empty)
    np.testing.assert_array_equal(v_out[0], [2, 4, 6])
    np.testing.assert_allclose(v_out[1], [11.0, 22.0, 33.0])
    np.testing.assert_allclose(v_scal, [10.0, 40.0, 90.0])
    assert v_empty.shape[0] == 0
    with pytest.raises(TypeError, match="dtype"):
        tf.map_fn(lambda t: tf.cast(t, tf.float32), tf.constant([1, 2]))


def test_scan_matches_numpy_forward_reverse_and_with_initializer():
    x = tf.placeholder(tf.float32, [4, 2])
    xv = RS.randn(4, 2).astype(np.float32)
    cum = tf.scan(lambda a, r: a + r, x)
    rev = tf.scan(lambda a, r: a + r, x, reverse=True)
    init = tf.scan(lambda a, r: a * 0.5 + r, x, initializer=tf.ones([2]))
    pair = tf.scan(lambda a, r: (a[0] + 1.0, a[1] * r), x, initializer=(tf.zeros([2]), tf.ones([2])))
    v = run(cum, rev, init, pair, feed={x: xv})
    np.testing.assert_allclose(v[0], np.cumsum(xv, 0), rtol=1e-5)
    np.testing.assert_allclose(v[1], np.cumsum(xv[::-1], 0)[::-1], rtol=1e-5)
    ref, a = [], np.ones(2, np.float32)
    for r in xv:
        a = a * 0.5 + r
        ref.append(a)
    np.testing.assert_allclose(v[2], np.array(ref), rtol=1e-5)
    np.testing.assert_allclose(v[3][0], np.arange(1, 5)[:, None] * np.ones((4, 2)))
    np.testing.assert_allclose(v[3][1], np.cumprod(xv, 0), rtol=1e-5)


def test_foldl_foldr_match_python_reduce():
    x = tf.constant([1.0, 2.0, 3.0, 4.0])
    sub_l = tf.foldl(lambda a, e: a - e, x)
    sub_r = tf.foldr(lambda a, e: a - e, x)
    init_l = tf.foldl(lambda a, e: a * 10 + e, x, initializer=tf.constant(0.0))
    init_r = tf.foldr(lambda a, e: a * 10 + e, x, initializer=tf.constant(0.0))
    assert run(sub_l, sub_r, init_l, init_r) == [1 - 2 - 3 - 4, 4 - 3 - 2 - 1, 1234.0, 4321.0]


def test_map_fn_gradient_matches_finite_differences():
    check_gradients(lambda x, w: tf.map_fn(lambda r: tf.tanh(tf.reduce_sum(r * w) * r), x),
                    [RS.randn(3, 2), RS.randn(2)])


def test_scan_gradient_matches_finite_differences():
    check_gradients(lambda x: tf.scan(lambda a, r: tf.sin(a) * r + r, x), [RS.randn(4, 2)])
    check_gradients(lambda x, h: tf.scan(lambda a, r: a * r, x, initializer=h, reverse=True),
                    [RS.randn(3, 2), RS.randn(2)])


def test_fold_gradients_match_finite_differences():
    check_gradients(lambda x: tf.foldl(lambda a, e: a * tf.cos(e), x), [RS.randn(4, 3)])
    check_gradients(lambda x, h: tf.foldr(lambda a, e: a * e + h, x, initializer=h), [RS.randn(3, 2), RS.randn(2)])


def test_accumulator_ops_gradients_to_second_order():
    """LoopAccumulatorWrite and its gradient op LoopAccumulatorWriteGrad, checked through `vjp` outside a loop."""
    from tensorfleet.ops.functional_map_ops import _accumulator_write

    def write(acc, v):
        return _accumulator_write(acc, 1, v, tf.constant(3))
    check_gradients(write, [RS.randn(3, 2), RS.randn(2)])
    check_gradients(vjp(write), [RS.randn(3, 2), RS.randn(2), RS.randn(3, 2)])
    check_gradients(vjp(write, wrt=1), [RS.randn(3, 2), RS.randn(2), RS.randn(3, 2)])


def test_map_fn_gradient_keeps_no_accumulator_copies_per_iteration():
    """The accumulators' values are never read by the gradient: WhileGrad keeps only their shapes per iteration."""
    x = tf.placeholder(tf.float64, [6, 2])
    y = tf.map_fn(lambda r: tf.sin(r) * 2.0, x)
    g = tf.gradients(tf.reduce_sum(y), x)[0]
    (while_grad,) = [op for op in tf.get_default_graph().get_operations() if op.type == "WhileGrad"]
    assert while_grad.get_attr("shape_only") == (1,)  # loop vars: (i, accumulator)
    xv = RS.randn(6, 2)
    np.testing.assert_allclose(run(g, feed={x: xv}), 2.0 * np.cos(xv), rtol=1e-12)
