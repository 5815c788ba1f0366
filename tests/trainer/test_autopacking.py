"""Autopacking (TF's `convert_to_tensor` of lists and tuples holding tensors, `array_ops._autopacking_*`):
values against numpy, names and dtype rules against TF 1.15's documented behaviour."""
import numpy as np
import pytest

import tensorfleet as tf
from helpers import init_and_run, run


def test_nested_lists_of_tensors_reduce_as_the_stacked_array():
    vals = np.arange(1, 5, dtype=np.float32)
    t1, t2, t3, t4 = (tf.constant(v) for v in vals)
    packed = tf.convert_to_tensor([[t1, t2], [t3, t4]])
    assert packed.name == "packed:0"  # TF's default name; inner levels by index, as TF's helper names them
    assert [t.op.name for t in packed.op.inputs] == ["packed/0", "packed/1"]
    total = tf.reduce_sum([[t1, t2], [t3, t4]])
    rows = tf.reduce_sum([[t1, t2], [t3, t4]], axis=1)
    assert run(total) == vals.sum()
    np.testing.assert_array_equal(run(rows), vals.reshape(2, 2).sum(1))
    assert total.op.inputs[0].op.type == "Pack"


def test_python_numbers_and_numpy_arrays_beside_tensors_take_the_tensors_dtype():
    t = tf.constant([1.0, 2.0], dtype=tf.float64)
    packed = tf.convert_to_tensor([t, [3, 4], np.array([5.0, 6.0], np.float32)])
    assert packed.dtype == tf.float64 and packed.shape.as_list() == [3, 2]
    np.testing.assert_array_equal(run(packed), [[1, 2], [3, 4], [5, 6]])
    # a non-tensor element becomes a constant named by its index; the inner list's scope took "packed/1" first
    # (the names real TF gives this graph: Const, packed/1_1, packed/2, packed)
    assert [t.op.name for t in packed.op.inputs] == ["Const", "packed/1_1", "packed/2"]


def test_a_value_the_tensors_dtype_cannot_hold_raises_tfs_type_error():
    i = tf.constant(3)
    with pytest.raises(TypeError, match="Expected int32, got 2.5"):
        tf.convert_to_tensor([i, 2.5])


def test_tensors_of_two_dtypes_raise_unless_a_dtype_is_asked_for():
    i, f = tf.constant(3), tf.constant(1.5)
    with pytest.raises(TypeError, match="Cannot convert a list containing a tensor of dtype float32 to int32"):
        tf.convert_to_tensor([i, f])
    asked = tf.convert_to_tensor([i, f], dtype=tf.float32)  # TF casts every tensor to the asked dtype first
    assert asked.dtype == tf.float32
    np.testing.assert_array_equal(run(asked), [3.0, 1.5])


def test_variables_pack_and_gradients_flow_through_the_pack():
    v = tf.Variable(2.0)
    x = tf.constant(3.0)
    y = tf.reduce_sum(tf.convert_to_tensor([[v * x, x], (v, 1.0)]))  # lists and tuples alike
    dv, dx = tf.gradients(y, [v, x])
    got = init_and_run([y, dv, dx])
    assert got == [2 * 3 + 3 + 2 + 1, 3 + 1, 2 + 1]


def test_binary_ops_and_ops_taking_tensors_pack_list_operands():
    t = tf.constant(2.0)
    np.testing.assert_array_equal(run([t, 3.0] * tf.constant(2.0)), [4.0, 6.0])
    np.testing.assert_array_equal(run(tf.concat([[t, 1.0], [5.0, t]], 0)), [2, 1, 5, 2])
    np.testing.assert_array_equal(run(tf.reshape([t, t, t, t], [2, 2])), [[2, 2], [2, 2]])


def test_lists_without_tensors_stay_constants():
    c = tf.convert_to_tensor([[1, 2], [3, 4]])
    assert c.op.type == "Const" and c.dtype == tf.int32
    assert tf.convert_to_tensor((1.0, 2.0)).op.type == "Const"


def test_placeholder_elements_pack_with_their_fed_values():
    a = tf.placeholder(tf.float32, [])
    b = tf.placeholder(tf.float32, [])
    m = tf.convert_to_tensor([[a, 0.0], [0.0, b]], name="diag")
    assert m.name == "diag:0" and m.shape.as_list() == [2, 2]
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(m, {a: 2.0, b: 3.0}), [[2, 0], [0, 3]])
