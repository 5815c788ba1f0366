"""tf.searchsorted, tf.unravel_index, tf.histogram_fixed_width(_bins), tf.bincount, tf.confusion_matrix and
tf.batch_gather (ops/search_histogram_ops.py).

Oracles: numpy (np.searchsorted per row, np.unravel_index, a bin loop written here, fancy indexing), TF 1.15's
docstring examples verbatim, and central finite differences for batch_gather's gradient.
"""
import numpy as np
import pytest

import tensorfleet as tf
from gradcheck import check_gradients
from helpers import run

RNG = np.random.default_rng(3)


# -- searchsorted -------------------------------------------------------------------------------------------
def test_searchsorted_matches_tf_docs_and_numpy_per_row():
    seq = [[0, 3, 9, 9, 10], [1, 2, 3, 4, 5]]
    values = [[2, 4, 9], [0, 2, 6]]
    assert run(tf.searchsorted(seq, values, side="left")).tolist() == [[1, 2, 2], [0, 1, 5]]
    assert run(tf.searchsorted(seq, values, side="right")).tolist() == [[1, 2, 4], [0, 2, 5]]
    seq3 = np.sort(RNG.integers(0, 6, (2, 3, 7)), axis=-1).astype(np.float32)  # repeated entries
    vals = RNG.integers(-1, 8, (2, 3, 4)).astype(np.float32)
    for side in ("left", "right"):
        t = tf.searchsorted(seq3, vals, side=side, out_type=tf.int64)
        got = run(t)
        assert t.shape.as_list() == [2, 3, 4] and got.dtype == np.int64
        want = np.stack([np.searchsorted(s, v, side=side) for s, v in zip(seq3.reshape(6, 7), vals.reshape(6, 4))])
        np.testing.assert_array_equal(got, want.reshape(2, 3, 4))
    assert run(tf.searchsorted([1.0, 2.0, 3.0], [2.5, 0.0])).dtype == np.int32
    assert tf.searchsorted([1.0, 2.0], [1.5]).op.type == "Reshape"
    names = {op.type for op in tf.get_default_graph().get_operations()}
    assert {"LowerBound", "UpperBound"} <= names


def test_searchsorted_errors():
    with pytest.raises(ValueError, match="side must be either 'right' or 'left'.  Saw: middle."):
        tf.searchsorted([1, 2], [1], side="middle")
    with pytest.raises(TypeError, match="parameter 'out_type' has DataType float32"):
        tf.searchsorted([1, 2], [1], out_type=tf.float32)
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"Leading dim_size of both tensors must match(.|\n)*node LowerBound"):
        run(tf.searchsorted(np.zeros((2, 3)), np.zeros((3, 1))))


# -- unravel_index ---------------------------------------------------------------------------------------------
def test_unravel_index_matches_tf_docs_numpy_and_errors():
    t = tf.unravel_index([2, 5, 7], [3, 3])
    assert run(t).tolist() == [[0, 1, 2], [2, 2, 1]] and t.shape.as_list() == [2, 3]
    assert t.op.name == "UnravelIndex" and t.dtype == tf.int32
    dims = [4, 3, 5]
    flat = RNG.integers(0, 60, 9)
    got = run(tf.unravel_index(tf.constant(flat, tf.int64), dims))
    np.testing.assert_array_equal(got, np.stack(np.unravel_index(flat, dims)))
    assert got.dtype == np.int64
    scalar = tf.unravel_index(37, dims)
    assert scalar.shape.as_list() == [3] and run(scalar).tolist() == list(np.unravel_index(37, dims))
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"index is out of bound as with dims(.|\n)*node bad_unravel"):
        run(tf.unravel_index([3, 60], dims, name="bad_unravel"))
    with pytest.raises(TypeError, match="parameter 'indices' has DataType float32"):
        tf.unravel_index([1.0], dims)
    with pytest.raises(ValueError, match="Shape must be rank 1 but is rank 2"):
        tf.unravel_index([1], [[3, 3]])


# -- histograms --------------------------------------------------------------------------------------------------
def np_bins(values, lo, hi, nbins):
    out = []
    for v in np.asarray(values, np.float64).reshape(-1):
        b = int(np.floor((v - lo) / (hi - lo) * nbins))
        out.append(min(max(b, 0), nbins - 1))
    return np.array(out)


def test_histograms_match_tf_docs_and_a_bin_loop():
    new_values = [-1.0, 0.0, 1.5, 2.0, 5.0, 15]
    hist = tf.histogram_fixed_width(new_values, [0.0, 5.0], nbins=5)
    assert run(hist).tolist() == [2, 1, 1, 0, 2] and hist.shape.as_list() == [5] and hist.dtype == tf.int32
    assert hist.op.name == "histogram_fixed_width" and hist.op.type == "HistogramFixedWidth"
    bins = tf.histogram_fixed_width_bins(new_values, [0.0, 5.0], nbins=5)
    assert run(bins).tolist() == [0, 0, 1, 2, 4, 4]
    values = RNG.uniform(-3, 13, (4, 25)).astype(np.float32)
    got_bins, got_hist = run(tf.histogram_fixed_width_bins(values, [0.0, 10.0], nbins=7),
                             tf.histogram_fixed_width(values, [0.0, 10.0], nbins=7, dtype=tf.int64))
    want = np_bins(values, 0.0, 10.0, 7)
    np.testing.assert_array_equal(got_bins, want.reshape(4, 25))
    np.testing.assert_array_equal(got_hist, np.bincount(want, minlength=7))
    assert got_hist.dtype == np.int64 and got_bins.dtype == np.int32
    ints = RNG.integers(-5, 30, 40)
    np.testing.assert_array_equal(run(tf.histogram_fixed_width(ints, [0, 20], nbins=4)),
                                  np.bincount(np_bins(ints, 0, 20, 4), minlength=4))


def test_histogram_errors():
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"value_range should satisfy value_range\[0\] < value_range\[1\], but got "
                             r"'\[5.0, 1.0\]'(.|\n)*node bad_hist"):
        run(tf.histogram_fixed_width([1.0], [5.0, 1.0], nbins=3, name="bad_hist"))
    nb = tf.placeholder(tf.int32, [])
    with pytest.raises(tf.errors.InvalidArgumentError, match="nbins should be a positive number, but got '0'"):
        with tf.Session() as s:
            s.run(tf.histogram_fixed_width([1.0], [0.0, 1.0], nbins=nb), {nb: 0})
    with pytest.raises(tf.errors.InvalidArgumentError, match="value_range should be a vector of 2 elements"):
        run(tf.histogram_fixed_width([1.0], [0.0, 1.0, 2.0]))
    with pytest.raises(TypeError, match="parameter 'dtype' has DataType float32"):
        tf.histogram_fixed_width([1.0], [0.0, 1.0], dtype=tf.float32)


# -- batch_gather ------------------------------------------------------------------------------------------------
def test_batch_gather_matches_numpy_and_gradient():
    params = RNG.standard_normal((2, 3, 4, 2))
    idx = np.array([[[3, 0], [1, 1], [2, 0]], [[0, 0], [3, 2], [1, 3]]])  # batch dims (2, 3), axis 2
    t = tf.batch_gather(params, idx)
    want = np.stack([np.stack([params[b, c][idx[b, c]] for c in range(3)]) for b in range(2)])
    assert t.shape.as_list() == [2, 3, 2, 2]
    np.testing.assert_array_equal(run(t), want)
    idx1 = np.array([[2, 0, 2], [1, 1, 0]])  # batch dim 0, gathered along axis 1
    np.testing.assert_array_equal(run(tf.batch_gather(params[:, :, 0, 0], idx1)),
                                  np.take_along_axis(params[:, :, 0, 0], idx1, axis=1))
    np.testing.assert_array_equal(run(tf.batch_gather(params[0, 0], [3, 1])), params[0, 0][[3, 1]])
    check_gradients(lambda p: tf.batch_gather(p, idx), [params])  # repeated indices accumulate
    with pytest.raises(ValueError, match="batch_gather does not allow indices with unknown shape."):
        tf.batch_gather(params, tf.placeholder(tf.int32))
    with pytest.raises(ValueError, match=r"batch_dims = 2 must be less than rank\(params\) = 2"):
        tf.batch_gather(params[0, 0], np.zeros((2, 2, 1), np.int32))


# -- bincount / confusion_matrix ----------------------------------------------------------------------------


def test_bincount_and_confusion_matrix_match_tf_docs():
    labels, preds = np.array([1, 2, 4]), np.array([2, 2, 4])
    ref = np.zeros((5, 5), np.int32)
    for lb, p in zip(labels, preds, strict=True):
        ref[lb, p] += 1
    np.testing.assert_array_equal(run(tf.confusion_matrix(labels, preds)), ref)  # TF docstring's example
    np.testing.assert_array_equal(run(tf.bincount(tf.constant([1, 1, 3]), minlength=5)), [0, 2, 0, 1, 0])
    np.testing.assert_allclose(run(tf.bincount(tf.constant([0, 0, 2]), weights=tf.constant([0.5, 1.0, 2.0]))),
                               [1.5, 0.0, 2.0])
