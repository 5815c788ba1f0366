"""Index-based array ops (ops/index_ops.py): tf.gather_nd (forward, TF's out-of-range error, gradient and its
gradient), tf.scatter_nd and tf.tensor_scatter_nd_*, tf.invert_permutation and tf.sequence_mask.

Oracles: numpy fancy indexing, TF 1.15's docstring examples, and central finite differences (gradcheck).
"""
import numpy as np
import pytest

import tensorfleet as tf
from gradcheck import check_gradients, vjp
from helpers import init_and_run, run

RNG = np.random.default_rng(7)


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


def test_invert_permutation_matches_tf_docs():
    assert run(tf.invert_permutation([3, 4, 0, 2, 1])).tolist() == [2, 4, 3, 0, 1]  # TF docstring


# -- gather_nd ----------------------------------------------------------------
def test_gather_nd_forward_errors_and_gradients():
    p = RNG.standard_normal((3, 4, 2))
    idx_full = np.array([[0, 1, 1], [2, 3, 0]])
    idx_rows = np.array([[[1], [0]], [[2], [2]]])
    idx_pairs = np.array([[0, 0], [2, 3], [0, 0]], dtype=np.int64)
    a, b, c = init_and_run([tf.gather_nd(p, idx_full), tf.gather_nd(p, idx_rows), tf.gather_nd(p, idx_pairs)])
    np.testing.assert_array_equal(a, p[idx_full[:, 0], idx_full[:, 1], idx_full[:, 2]])
    np.testing.assert_array_equal(b, p[idx_rows[..., 0]])
    np.testing.assert_array_equal(c, p[idx_pairs[:, 0], idx_pairs[:, 1]])
    assert tf.gather_nd(p, idx_rows).shape.as_list() == [2, 2, 4, 2]
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"indices\[1\] = \[3, 0\] does not index into "
                                                             r"param shape \[3,4,2\]"):
        init_and_run(tf.gather_nd(p, [[0, 0], [3, 0]]))
    check_gradients(lambda t: tf.gather_nd(t, idx_pairs), [p])  # repeated [0, 0] accumulates
    check_gradients(vjp(lambda t: tf.gather_nd(t, idx_pairs)), [p, RNG.standard_normal((3, 2))])  # GatherNdGrad


# -- sequence_mask ------------------------------------------------------------
def test_sequence_mask_matches_numpy():
    lengths = np.array([[1, 3], [0, 2]])
    m, m5, mf = init_and_run([tf.sequence_mask(lengths), tf.sequence_mask(lengths, 5),
                      tf.sequence_mask(tf.constant([2, 0]), maxlen=3, dtype=tf.float32)])
    np.testing.assert_array_equal(m, np.arange(3) < lengths[..., None])
    np.testing.assert_array_equal(m5, np.arange(5) < lengths[..., None])
    np.testing.assert_array_equal(mf, [[1, 1, 0], [0, 0, 0]])
    assert mf.dtype == np.float32 and m.dtype == np.bool_
    assert tf.sequence_mask(lengths, 5).shape.as_list() == [2, 2, 5]
    assert tf.sequence_mask(lengths).shape.as_list() == [2, 2, None]
