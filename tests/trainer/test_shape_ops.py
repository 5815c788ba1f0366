"""Shapes and broadcasting (ops/shape_ops.py): tf.shape_n, tf.broadcast_static_shape, tf.broadcast_dynamic_shape,
tf.get_static_value and tf.ensure_shape against their TF 1.15 contracts."""
import pytest

import tensorfleet as tf
from helpers import run


def test_shape_helpers():
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
