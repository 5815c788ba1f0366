"""A vector's values as a set (ops/set_ops.py): tf.unique, tf.unique_with_counts and tf.setdiff1d against TF 1.15's
docstring examples."""
import tensorfleet as tf
from helpers import run


def test_unique_matches_tf_docs():
    # TF docstring: x = [1, 1, 2, 4, 4, 4, 7, 8, 8] -> y = [1, 2, 4, 7, 8], idx = [0, 0, 1, 2, 2, 2, 3, 4, 4]
    y, idx, count = run(tf.unique_with_counts(tf.constant([1, 1, 2, 4, 4, 4, 7, 8, 8])))
    assert y.tolist() == [1, 2, 4, 7, 8] and idx.tolist() == [0, 0, 1, 2, 2, 2, 3, 4, 4]
    assert count.tolist() == [2, 1, 3, 1, 2]
    y, idx = run(tf.unique(tf.constant([5, 3, 5, 1])))  # first-occurrence order, not sorted
    assert y.tolist() == [5, 3, 1] and idx.tolist() == [0, 1, 0, 2]


def test_setdiff1d_matches_tf_docs():
    out, idx = run(tf.setdiff1d([1, 2, 3, 4, 5, 6], [1, 3, 5]))  # TF docstring
    assert out.tolist() == [2, 4, 6] and idx.tolist() == [1, 3, 5]
