"""Scans and sorting (ops/scan_sort_ops.py): tf.nn.top_k, tf.cumsum / tf.cumprod, tf.sort and tf.argsort.

Oracles: numpy (np.argsort, np.cumsum, np.sort), TF 1.15's documented semantics (top_k's ties, cumsum's
exclusive / reverse example), and central finite differences (gradcheck) for every gradient, top_k's to the
second order (through TakeAlongLastAxis / PutAlongLastAxis).
"""
import numpy as np
import pytest

import tensorfleet as tf
from gradcheck import check_gradients, vjp
from helpers import init_and_run, run

RNG = np.random.default_rng(7)


def test_sort_and_argsort_match_numpy():
    x = np.array([[3.0, 1.0, 2.0], [0.5, -1.0, 4.0]])
    np.testing.assert_array_equal(run(tf.sort(x)), np.sort(x, axis=-1))
    np.testing.assert_array_equal(run(tf.sort(x, direction="DESCENDING")), -np.sort(-x, axis=-1))
    np.testing.assert_array_equal(run(tf.argsort(x)), np.argsort(x, axis=-1, kind="stable"))


# -- top_k --------------------------------------------------------------------
def test_top_k_forward_ties_shapes_and_gradient_to_the_values_positions():
    x = np.array([[1, 3, 3, 2, 5], [4, 4, 4, 0, -1]], dtype=np.float32)
    v, i = tf.nn.top_k(tf.constant(x), k=3)
    assert v.shape.as_list() == [2, 3] and i.dtype is tf.int32
    vv, ii = init_and_run([v, i])
    want_i = np.argsort(-x, axis=-1, kind="stable")[:, :3]  # TF: equal values, lower index first
    np.testing.assert_array_equal(ii, want_i)
    np.testing.assert_array_equal(vv, np.take_along_axis(x, want_i, -1))
    v8, i8 = init_and_run(list(tf.math.top_k(tf.constant(np.array([3, 250, 7], np.uint8)), 2)))
    np.testing.assert_array_equal(i8, [1, 2])
    with pytest.raises(ValueError, match="at least k columns"):
        tf.nn.top_k(tf.constant(x), 6)
    xs = RNG.permutation(24).reshape(2, 3, 4).astype(np.float64)  # distinct values: top_k is smooth there
    check_gradients(lambda t: tf.nn.top_k(t, 2)[0] * 1.5, [xs])
    # second order: the gradient graph is PutAlongLastAxis (whose gradient is TakeAlongLastAxis) ...
    check_gradients(vjp(lambda t: tf.nn.top_k(t, 2)[0]), [xs, RNG.standard_normal((2, 3, 2))])
    # ... and differentiating that again goes through TakeAlongLastAxis (gradient: PutAlongLastAxis)
    def vjp2(x, g, h):
        first = tf.gradients(tf.nn.top_k(x, 2)[0], [x], grad_ys=g)[0]
        return tf.gradients(first, [g], grad_ys=h)[0]
    check_gradients(vjp2, [xs, RNG.standard_normal((2, 3, 2)), RNG.standard_normal((2, 3, 4))])


# -- cumsum / cumprod ---------------------------------------------------------
def _np_scan(fn, x, axis, exclusive, reverse, ident):
    y = np.flip(x, axis) if reverse else x
    out = fn(y, axis=axis)
    if exclusive:
        pad = np.full_like(np.take(out, [0], axis=axis), ident)
        out = np.concatenate([pad, np.take(out, np.arange(out.shape[axis] - 1), axis=axis)], axis=axis)
    return np.flip(out, axis) if reverse else out


@pytest.mark.parametrize("exclusive", [False, True])
@pytest.mark.parametrize("reverse", [False, True])
def test_cumsum_cumprod_forward_and_gradients(exclusive, reverse):
    x = RNG.uniform(0.5, 1.5, (3, 4))
    for axis in (0, 1, -1):
        got_s, got_p = init_and_run([tf.cumsum(tf.constant(x), axis, exclusive=exclusive, reverse=reverse),
                             tf.cumprod(tf.constant(x), axis, exclusive=exclusive, reverse=reverse)])
        np.testing.assert_allclose(got_s, _np_scan(np.cumsum, x, axis % 2, exclusive, reverse, 0), rtol=1e-12)
        np.testing.assert_allclose(got_p, _np_scan(np.cumprod, x, axis % 2, exclusive, reverse, 1), rtol=1e-12)
    check_gradients(lambda t: tf.cumsum(t, 1, exclusive=exclusive, reverse=reverse), [x])
    check_gradients(lambda t: tf.cumprod(t, 0, exclusive=exclusive, reverse=reverse), [x])
    # TF's documented example
    assert init_and_run(tf.cumsum([1, 2, 3], exclusive=True, reverse=True)).tolist() == [5, 3, 0]
    assert init_and_run(tf.cumsum(tf.constant([1, 2, 3], tf.int32))).dtype == np.int32
