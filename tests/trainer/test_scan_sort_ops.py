"""Scans and sorting (ops/scan_sort_ops.py): tf.sort and tf.argsort against numpy."""
import numpy as np

import tensorfleet as tf
from helpers import run


def test_sort_and_argsort_match_numpy():
    x = np.array([[3.0, 1.0, 2.0], [0.5, -1.0, 4.0]])
    np.testing.assert_array_equal(run(tf.sort(x)), np.sort(x, axis=-1))
    np.testing.assert_array_equal(run(tf.sort(x, direction="DESCENDING")), -np.sort(-x, axis=-1))
    np.testing.assert_array_equal(run(tf.argsort(x)), np.argsort(x, axis=-1, kind="stable"))
