"""The variables' state ops (ops/state_ops.py): tf.assign / assign_add / assign_sub, tf.is_variable_initialized
and tf.count_up_to.

Oracles: numpy arithmetic on the values, TF's documented contracts (an assign yields the new value, count_up_to
the value before each increment and OutOfRangeError at the limit).
"""
import numpy as np
import pytest

import tensorfleet as tf
from tensorfleet import op_registry


def test_count_up_to_counts_then_raises_out_of_range():
    c = tf.Variable(1, name="counter")
    t = tf.count_up_to(c, 3)
    c64 = tf.Variable(np.int64(0))
    t64 = c64.count_up_to(1)
    assert (t.op.type, t.op.name, t.dtype, t.shape.as_list()) == ("CountUpTo", "CountUpTo", tf.int32, [])
    assert t64.dtype == tf.int64 and op_registry.get_op_def("CountUpTo").updates_variables == ("var",)
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        assert [s.run(t), s.run(t)] == [1, 2]  # the value before each increment
        assert s.run(c) == 3
        with pytest.raises(tf.errors.OutOfRangeError, match=r"Reached limit of 3(.|\n)*node CountUpTo"):
            s.run(t)
        assert s.run(c) == 3
        assert s.run(t64) == 0
        with pytest.raises(tf.errors.OutOfRangeError, match="Reached limit of 1"):
            s.run(t64)
    with pytest.raises(TypeError, match="parameter 'ref' has DataType float32"):
        tf.count_up_to(tf.Variable(0.0), 3)
    with pytest.raises(ValueError, match="Shape must be rank 0 but is rank 1"):
        tf.count_up_to(tf.Variable([0]), 3)


def test_is_variable_initialized_before_and_after_init():
    v = tf.Variable(tf.ones([2]), name="v")
    w = tf.Variable(3.0, name="w")
    iv, iw = tf.is_variable_initialized(v), w.is_initialized()
    assert iv.op.type == "IsVariableInitialized" and iv.dtype == tf.bool and iv.shape == ()
    with tf.Session() as sess:
        assert sess.run([iv, iw]) == [False, False]
        sess.run(v.initializer)
        out = sess.run([iv, iw])
        assert out == [True, False] and isinstance(out[0], np.bool_)
        sess.run(tf.global_variables_initializer())
        assert sess.run([iv, iw]) == [True, True]


def test_assign_assign_add_assign_sub_values_and_dtypes():
    v = tf.Variable(np.array([1.0, 2.0], np.float32), name="v")
    n = tf.Variable(np.array([5, 7], np.int64), name="n")
    a, add, sub = tf.assign(v, [4.0, -1.0]), tf.assign_add(v, [0.5, 0.25]), tf.assign_sub(n, [2, 10])
    assert [t.op.type for t in (a, add, sub)] == ["Assign", "AssignAdd", "AssignSub"]
    assert a.dtype == tf.float32 and sub.dtype == tf.int64
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        out = sess.run(a)  # an assign yields the new value
        np.testing.assert_array_equal(out, [4.0, -1.0])
        np.testing.assert_array_equal(sess.run(add), [4.5, -0.75])
        np.testing.assert_array_equal(sess.run(add), [5.0, -0.5])
        out = sess.run(sub)
        assert out.dtype == np.int64
        np.testing.assert_array_equal(out, [3, -3])
        np.testing.assert_array_equal(sess.run(v), np.array([5.0, -0.5], np.float32))
    with pytest.raises(ValueError):
        tf.assign(v, [1.0, 2.0, 3.0])  # validate_shape: (3,) does not fit (2,)
