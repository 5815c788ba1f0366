"""Ops that reach outside the graph from the host (ops/host_ops.py): tf.py_func / tf.numpy_function against the
Python function itself, tf.timestamp against time.time()."""
import time

import numpy as np
import pytest

import tensorfleet as tf


def run(t, feed=None):
    with tf.Session() as s:
        return s.run(t, feed)


def test_py_func_runs_python_on_the_values():
    x = tf.placeholder(tf.float32, [None])
    y = tf.py_func(lambda a: (a * 2 + 1).astype(np.float32), [x], tf.float32)
    a, b = tf.py_func(lambda a: (a.sum(), np.int64(a.size)), [x], [tf.float32, tf.int64])
    s = tf.numpy_function(lambda a: np.array([b"n=%d" % a.size], dtype=object), [x], tf.string)
    with tf.Session() as sess:
        yv, av, bv, sv = sess.run([y, a, b, s], {x: [1.0, 2.0]})
    np.testing.assert_array_equal(yv, [3.0, 5.0])
    assert av == 3.0 and bv == 2 and sv.tolist() == [b"n=2"]
    bad = tf.py_func(lambda a: 1 / 0, [x], tf.float32)
    with pytest.raises(tf.errors.InvalidArgumentError, match="ZeroDivisionError"):
        run(bad, {x: [1.0]})


def test_timestamp_reads_the_clock():
    before = time.time()
    assert before - 1 <= run(tf.timestamp()) <= time.time() + 1
