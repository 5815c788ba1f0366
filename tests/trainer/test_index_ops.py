"""Index-based array ops (ops/index_ops.py): tf.scatter_nd and tf.tensor_scatter_nd_* against TF 1.15's docstring
examples, with scatter_nd's gradient by finite differences, and tf.invert_permutation."""
import numpy as np

import tensorfleet as tf
from gradcheck import check_gradients
from helpers import run


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
