"""tf.TensorArray carried through tf.while_loop (the TF1 idiom for dynamic loops): numpy oracles for values,
finite differences for gradients, TF's errors for writes out of range."""
import numpy as np
import pytest

import tensorfleet as tf
from gradcheck import check_gradients
from helpers import run

RS = np.random.RandomState(11)


def _running_products(x, h0):
    """out[t] = h_t with h_t = tanh(h_{t-1} * x[t]): a TensorArray written in a while loop, stacked."""
    n = tf.shape(x)[0]
    xs = tf.TensorArray(x.dtype, size=n).unstack(x)
    out = tf.TensorArray(x.dtype, size=n)

    def body(t, h, out):
        h = tf.tanh(h * xs.read(t))
        return t + 1, h, out.write(t, h)
    _, _, out = tf.while_loop(lambda t, h, out: t < n, body, [0, h0, out])
    y = out.stack()
    y.set_shape(x.shape)  # the size is dynamic (tf.shape), so the static shape is given, as TF users do
    return y


def test_tensor_array_in_a_while_loop_matches_numpy():
    x = tf.placeholder(tf.float32, [5, 3])
    y = _running_products(x, tf.ones([3]))
    xv = RS.randn(5, 3).astype(np.float32)
    ref, h = [], np.ones(3, np.float32)
    for r in xv:
        h = np.tanh(h * r)
        ref.append(h)
    np.testing.assert_allclose(run(y, feed={x: xv}), np.array(ref), rtol=1e-5)


def test_tensor_array_gradient_matches_finite_differences():
    check_gradients(lambda x, h: _running_products(x, h), [RS.randn(4, 2), RS.randn(2)])


def test_dynamic_size_grows_and_size_read_gather():
    ta = tf.TensorArray(tf.float32, size=0, dynamic_size=True)
    _, ta = tf.while_loop(lambda i, ta: i < 4, lambda i, ta: (i + 1, ta.write(i, tf.cast(i, tf.float32) * 2.0)),
                          [0, ta])
    fixed = tf.TensorArray(tf.int32, size=3).write(1, 7)
    v_stack, v_size, v_read, v_gather, v_fixed, v_fixed_size = run(
        ta.stack(), ta.size(), ta.read(2), ta.gather([3, 0]), fixed.stack(), fixed.size())
    np.testing.assert_allclose(v_stack, [0.0, 2.0, 4.0, 6.0])
    assert v_size == 4 and v_read == 4.0
    np.testing.assert_allclose(v_gather, [6.0, 0.0])
    np.testing.assert_array_equal(v_fixed, [0, 7, 0])
    assert v_fixed_size == 3


def test_writes_out_of_range_and_bad_shapes_are_errors():
    with pytest.raises(tf.errors.InvalidArgumentError, match="index 3 but the array size is 3"):
        run(tf.TensorArray(tf.float32, size=3).write(3, 1.0).stack())
    with pytest.raises(ValueError, match="Inconsistent shapes"):
        tf.TensorArray(tf.float32, size=2, element_shape=[2]).write(0, [1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="Size must be provided"):
        tf.TensorArray(tf.float32)


def test_scatter_concat_and_cond_returning_a_tensor_array():
    ta = tf.TensorArray(tf.float32, size=4).scatter([3, 0], [[1.0, 2.0], [3.0, 4.0]])
    p = tf.placeholder(tf.bool, [])
    picked = tf.cond(p, lambda: ta.write(1, [9.0, 9.0]), lambda: ta)
    assert isinstance(picked, tf.TensorArray)
    with tf.Session() as s:
        np.testing.assert_allclose(s.run(ta.stack()), [[3, 4], [0, 0], [0, 0], [1, 2]])
        np.testing.assert_allclose(s.run(ta.concat()), [3, 4, 0, 0, 0, 0, 1, 2])
        np.testing.assert_allclose(s.run(picked.stack(), {p: True})[1], [9, 9])
        np.testing.assert_allclose(s.run(picked.read(1), {p: False}), [0, 0])
