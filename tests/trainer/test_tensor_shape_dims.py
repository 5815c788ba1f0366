"""TF1's dimension idioms on `TensorShape.__getitem__`: `x.get_shape()[1].value`, `int(x.get_shape()[1])`.

Oracle: TF 1.15's documented behaviour (a known `Dimension` has `.value` and converts with `int()`); the
runtime keeps treating known dims as plain ints and unknown dims as None.
"""
import numpy as np
import pytest

import tensorfleet as tf


def test_known_dim_has_value_and_int_conversion():
    x = tf.placeholder(tf.float32, [None, 784, 3])
    d = x.get_shape()[1]
    assert d.value == 784 and type(d.value) is int
    assert int(d) == 784 and type(int(d)) is int
    assert d == 784 and isinstance(d, int)
    assert x.get_shape()[-1].value == 3 and x.shape[2].value == 3
    assert repr(d) == "784" and str(d) == "784"
    assert hash(d) == hash(784) and {d: 1}[784] == 1


def test_arithmetic_on_known_dims_gives_plain_ints():
    x = tf.placeholder(tf.float32, [None, 4, 5])
    a, b = x.shape[1], x.shape[2]
    for v in (a * b, a + 1, b - a, a // 2, -a, 2 * a, abs(a)):
        assert type(v) is int
    assert a * b == 20 and a + 1 == 5
    assert np.zeros((a, b)).shape == (4, 5)
    assert list(range(a)) == [0, 1, 2, 3]


def test_unknown_dims_stay_none():
    x = tf.placeholder(tf.float32, [None, 3])
    assert x.get_shape()[0] is None
    assert tf.placeholder(tf.float32).get_shape()[0] is None
    with pytest.raises(AttributeError):
        _ = x.get_shape()[0].value  # TF1 gives None here; we keep `is None` semantics instead


def test_dims_list_keeps_dimension_objects_and_slices_stay_shapes():
    x = tf.placeholder(tf.float32, [None, 7])
    dims = x.get_shape().dims
    assert isinstance(dims[1], tf.Dimension) and dims[1].value == 7 and dims[0].value is None
    assert isinstance(x.shape[1:], tf.TensorShape) and x.shape[1:].as_list() == [7]
    assert x.shape.as_list() == [None, 7] and all(type(d) in (int, type(None)) for d in x.shape.as_list())


def test_tf1_program_sizes_a_weight_from_the_input_shape():
    x = tf.placeholder(tf.float32, [None, 6])
    n_in = x.get_shape()[1].value
    W = tf.Variable(tf.ones([n_in, int(x.get_shape()[1]) // 2]))
    y = tf.matmul(x, W)
    assert y.shape.as_list() == [None, 3]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        out = sess.run(y, {x: np.arange(12, dtype=np.float32).reshape(2, 6)})
    np.testing.assert_allclose(out, np.arange(12, dtype=np.float32).reshape(2, 6) @ np.ones((6, 3)))
