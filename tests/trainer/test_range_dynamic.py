"""`tf.range` with computed start/limit/delta (TF's Range op: scalar inputs, a dynamic length), its TF 1.15
length rule and errors, and dynamic_rnn with a sequence length computed in the graph."""
import numpy as np
import pytest

import tensorfleet as tf
from helpers import run


def test_static_range_names_dtype_and_values_as_tf():
    r = tf.range(2, 11, 3)
    assert r.shape.as_list() == [3] and r.dtype == tf.int32
    assert [t.op.name for t in r.op.inputs] == ["range/start", "range/limit", "range/delta"]
    np.testing.assert_array_equal(run(r), np.arange(2, 11, 3))
    assert tf.range(1, 4.0).dtype == tf.float32  # the widest of int32 < int64 < float32 < float64
    assert tf.range(tf.constant(3, tf.int64)).dtype == tf.int64
    assert tf.range(3, dtype=tf.float64).dtype == tf.float64
    np.testing.assert_array_equal(run(tf.range(10, 1, -3)), [10, 7, 4])


def test_float_range_accumulates_like_tf_115s_kernel():
    """TF 1.15's RangeOp adds delta to a running value in the output dtype (not start + i * delta)."""
    want, val = [], np.float32(0.0)
    for _ in range(10):
        want.append(val)
        val = np.float32(val + np.float32(0.1))
    np.testing.assert_array_equal(run(tf.range(0.0, 1.0, 0.1)), np.array(want, np.float32))


def test_start_past_limit_is_an_error_not_an_empty_range():
    with pytest.raises(ValueError, match="Requires start <= limit when delta > 0: 5/2"):
        tf.range(5, 2)
    with pytest.raises(ValueError, match="Requires delta != 0"):
        tf.range(0, 5, 0)
    n = tf.placeholder(tf.int32, [])
    r = tf.range(5, n)
    with tf.Session() as sess, pytest.raises(tf.errors.InvalidArgumentError, match="5/2") as e:
        sess.run(r, {n: 2})
    assert e.value.op is r.op


def test_computed_limit_start_and_delta():
    x = tf.placeholder(tf.float32, [None, 3])
    n = tf.shape(x)[0]
    r = tf.range(n)
    assert r.shape.as_list() == [None]
    odd = tf.range(1, 2 * n, 2)
    down = tf.range(n, -1, -tf.constant(2))
    with tf.Session() as sess:
        got = sess.run([r, odd, down], {x: np.zeros((5, 3), np.float32)})
    np.testing.assert_array_equal(got[0], np.arange(5))
    np.testing.assert_array_equal(got[1], np.arange(1, 10, 2))
    np.testing.assert_array_equal(got[2], np.arange(5, -1, -2))
    with pytest.raises(ValueError, match="limit must be a scalar"):
        tf.range(tf.constant([1, 2]))


def test_dynamic_rnn_with_a_computed_sequence_length_and_the_last_relevant_output():
    """The popular pattern: length from the zero padding, then the output at length - 1 of each sequence via
    tf.range(batch) * max_len + (length - 1). For a GRU cell that output is dynamic_rnn's final state."""
    rng = np.random.RandomState(0)
    xs = rng.rand(3, 6, 2).astype(np.float32) + 0.1
    xs[0, 4:] = 0.0
    xs[2, 2:] = 0.0
    x = tf.placeholder(tf.float32, [None, None, 2])
    length = tf.cast(tf.reduce_sum(tf.sign(tf.reduce_max(tf.abs(x), 2)), 1), tf.int32)
    out, state = tf.nn.dynamic_rnn(tf.nn.rnn_cell.GRUCell(4), x, sequence_length=length, dtype=tf.float32)
    batch, max_len = tf.shape(out)[0], tf.shape(out)[1]
    index = tf.range(0, batch) * max_len + (length - 1)
    last = tf.gather(tf.reshape(out, [-1, 4]), index)
    loss = tf.reduce_sum(tf.square(last))
    grads = tf.gradients(loss, tf.trainable_variables())
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        got_len, got_last, got_state, got_grads = sess.run([length, last, state, grads], {x: xs})
    np.testing.assert_array_equal(got_len, [4, 6, 2])
    np.testing.assert_allclose(got_last, got_state, rtol=1e-6)
    assert all(np.isfinite(g).all() and np.abs(g).sum() > 0 for g in got_grads)
