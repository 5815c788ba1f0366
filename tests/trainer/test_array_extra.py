"""tf.unique, scatter_nd, sort/argsort, roll, meshgrid, confusion_matrix, bincount, ... against numpy;
the gradient of scatter_nd by finite differences."""
import time

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
        return s.run(t)


def test_unique_matches_tf_docs():
    # TF docstring: x = [1, 1, 2, 4, 4, 4, 7, 8, 8] -> y = [1, 2, 4, 7, 8], idx = [0, 0, 1, 2, 2, 2, 3, 4, 4]
    y, idx, count = run(tf.unique_with_counts(tf.constant([1, 1, 2, 4, 4, 4, 7, 8, 8])))
    assert y.tolist() == [1, 2, 4, 7, 8] and idx.tolist() == [0, 0, 1, 2, 2, 2, 3, 4, 4]
    assert count.tolist() == [2, 1, 3, 1, 2]
    y, idx = run(tf.unique(tf.constant([5, 3, 5, 1])))  # first-occurrence order, not sorted
    assert y.tolist() == [5, 3, 1] and idx.tolist() == [0, 1, 0, 2]


def test_scatter_nd_family_matches_tf_docs_and_gradient():
    # TF docstring: indices [[4], [3], [1], [7]], updates [9, 10, 11, 12], shape [8] -> [0, 11, 0, 10, 9, 0, 0, 12]
    got = run(tf.scatter_nd([[4], [3], [1], [7]], tf.constant([9, 10, 11, 12]), [8]))
    assert got.tolist() == [0, 11, 0, 10, 9, 0, 0, 12]
    t = tf.constant([1.0, 2.0, 3.0, 4.0])
    assert run(tf.tensor_scatter_nd_add(t, [[1], [1]], [10.0, 5.0])).tolist() == [1, 17, 3, 4]
    assert run(tf.tensor_scatter_nd_update(t, [[0], [3]], [-1.0, -4.0])).tolist() == [-1, 2, 3, -4]
    assert run(tf.tensor_scatter_nd_sub(t, [[2]], [3.0])).tolist() == [1, 2, 0, 4]
    upd = np.random.RandomState(1).randn(3, 2)
    check_gradients(lambda u: tf.scatter_nd([[0], [2], [0]], u, [4, 2]), [upd])


def test_sort_argsort_roll_meshgrid():
    x = np.array([[3.0, 1.0, 2.0], [0.5, -1.0, 4.0]])
    np.testing.assert_array_equal(run(tf.sort(x)), np.sort(x, axis=-1))
    np.testing.assert_array_equal(run(tf.sort(x, direction="DESCENDING")), -np.sort(-x, axis=-1))
    np.testing.assert_array_equal(run(tf.argsort(x)), np.argsort(x, axis=-1, kind="stable"))
    np.testing.assert_array_equal(run(tf.roll(tf.constant(x), 1, 1)), np.roll(x, 1, 1))
    np.testing.assert_array_equal(run(tf.roll(tf.constant(x), [-1, 2], [0, 1])), np.roll(x, [-1, 2], [0, 1]))
    a, b = np.arange(3), np.arange(4) * 10
    for indexing in ("xy", "ij"):
        got = run(tf.meshgrid(a, b, indexing=indexing))
        for g, r in zip(got, np.meshgrid(a, b, indexing=indexing), strict=True):
            np.testing.assert_array_equal(g, r)


def test_counts_sets_and_division():
    labels, preds = np.array([1, 2, 4]), np.array([2, 2, 4])
    ref = np.zeros((5, 5), np.int32)
    for lb, p in zip(labels, preds, strict=True):
        ref[lb, p] += 1
    np.testing.assert_array_equal(run(tf.confusion_matrix(labels, preds)), ref)  # TF docstring's example
    np.testing.assert_array_equal(run(tf.bincount(tf.constant([1, 1, 3]), minlength=5)), [0, 2, 0, 1, 0])
    np.testing.assert_allclose(run(tf.bincount(tf.constant([0, 0, 2]), weights=tf.constant([0.5, 1.0, 2.0]))),
                               [1.5, 0.0, 2.0])
    out, idx = run(tf.setdiff1d([1, 2, 3, 4, 5, 6], [1, 3, 5]))  # TF docstring
    assert out.tolist() == [2, 4, 6] and idx.tolist() == [1, 3, 5]
    assert run(tf.invert_permutation([3, 4, 0, 2, 1])).tolist() == [2, 4, 3, 0, 1]  # TF docstring
    x, y = np.array([7, -7, 7, -7]), np.array([2, 2, -2, -2])
    np.testing.assert_array_equal(run(tf.truncatediv(x, y)), np.trunc(x / y).astype(int))
    np.testing.assert_array_equal(run(tf.truncatemod(x, y)), np.fmod(x, y))


def test_shape_helpers_and_timestamp():
    assert [s.tolist() for s in run(tf.shape_n([tf.zeros([2, 3]), tf.zeros([4])]))] == [[2, 3], [4]]
    assert tf.broadcast_static_shape(tf.TensorShape([1, 3]), tf.TensorShape([2, 1])).as_list() == [2, 3]
    assert run(tf.broadcast_dynamic_shape([1, 3], [2, 1])).tolist() == [2, 3]
    assert tf.get_static_value(tf.constant([1, 2])).tolist() == [1, 2]
    assert tf.get_static_value(tf.shape(tf.zeros([2, 3]))).tolist() == [2, 3]
    assert tf.get_static_value(tf.placeholder(tf.float32)) is None
    p = tf.placeholder(tf.float32, [None, None])
    assert tf.ensure_shape(p, [None, 3]).shape.as_list() == [None, 3]
    with pytest.raises(ValueError, match="not compatible"):
        tf.ensure_shape(tf.zeros([2]), [3])
    before = time.time()
    assert before - 1 <= run(tf.timestamp()) <= time.time() + 1
