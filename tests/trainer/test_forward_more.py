"""Forward coverage gaps (ops no other test ran: Rank on an unknown rank, IsVariableInitialized), tf.errors
classes/codes, and feed errors: a wrong dtype or shape names the placeholder and both dtypes/shapes."""
import numpy as np
import pytest

import tensorfleet as tf
from tensorfleet import errors


def test_rank_op_on_an_unknown_rank_placeholder():
    x = tf.placeholder(tf.float32, None, name="x")
    r = tf.rank(x)
    assert r.op.type == "Rank" and r.dtype == tf.int32 and r.shape == ()
    with tf.Session() as sess:
        for shape in [(), (3,), (2, 1, 4)]:
            out = sess.run(r, {x: np.zeros(shape, np.float32)})
            assert out == np.ndim(np.zeros(shape)) and out.dtype == np.int32
    assert tf.rank(tf.zeros([2, 3])).op.type == "Const"  # static rank folds to a constant, like TF


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


# -- tf.errors ------------------------------------------------------------------
TF_CODES = [
    ("CancelledError", "CANCELLED", 1), ("UnknownError", "UNKNOWN", 2), ("InvalidArgumentError", "INVALID_ARGUMENT", 3),
    ("DeadlineExceededError", "DEADLINE_EXCEEDED", 4), ("NotFoundError", "NOT_FOUND", 5),
    ("AlreadyExistsError", "ALREADY_EXISTS", 6), ("PermissionDeniedError", "PERMISSION_DENIED", 7),
    ("ResourceExhaustedError", "RESOURCE_EXHAUSTED", 8), ("FailedPreconditionError", "FAILED_PRECONDITION", 9),
    ("AbortedError", "ABORTED", 10), ("OutOfRangeError", "OUT_OF_RANGE", 11),
    ("UnimplementedError", "UNIMPLEMENTED", 12), ("InternalError", "INTERNAL", 13),
    ("UnavailableError", "UNAVAILABLE", 14), ("DataLossError", "DATA_LOSS", 15),
    ("UnauthenticatedError", "UNAUTHENTICATED", 16),
]


@pytest.mark.parametrize("name,const,code", TF_CODES, ids=[c[0] for c in TF_CODES])
def test_error_classes_have_tf_codes_and_round_trip(name, const, code):
    cls = getattr(tf.errors, name)
    assert issubclass(cls, tf.errors.OpError) and cls.error_code == code
    assert getattr(tf.errors, const) == code
    assert errors.exception_type_from_error_code(code) is cls
    assert errors.error_code_from_exception_type(cls) == code
    e = cls(None, None, "boom")
    assert e.error_code == code and e.message == "boom" and str(e) == "boom" and e.op is None and e.node_def is None
    with pytest.raises(tf.errors.OpError, match="boom"):
        raise e


# -- feeds: wrong dtype / shape --------------------------------------------------
def test_feeding_a_non_integral_float_into_an_int_placeholder_names_it_and_both_dtypes():
    x = tf.placeholder(tf.int32, [2], name="ids")
    with tf.Session() as sess:
        with pytest.raises(TypeError) as info:
            sess.run(x, {x: 1.5})
        msg = str(info.value)
        assert "1.5" in msg and "'ids:0'" in msg and "int32" in msg and "(2,)" in msg
        with pytest.raises(TypeError, match=r"dtype float64 and shape \(2,\) for Tensor 'ids:0', which has dtype "
                                            r"int32 and shape '\(2,\)'"):
            sess.run(x, {x: [1.5, 2.0]})
        # integral floats and bools convert, as in TF
        np.testing.assert_array_equal(sess.run(x, {x: np.array([1.0, 2.0])}), [1, 2])
        np.testing.assert_array_equal(sess.run(x, {x: [True, False]}), [1, 0])


def test_feeding_a_string_into_a_float_placeholder_names_it_and_the_dtype():
    f = tf.placeholder(tf.float32, [None, 3], name="feat")
    with tf.Session() as sess:
        with pytest.raises(TypeError) as info:
            sess.run(f, {f: "abc"})
        msg = str(info.value)
        assert "'feat:0'" in msg and "float32" in msg and "'abc'" in msg and "(?, 3)" in msg
        with pytest.raises(TypeError, match=r"'feat:0'.*float32"):
            sess.run(f, {f: [["a", "b", "c"]]})


def test_feeding_a_wrong_shape_names_the_placeholder_and_both_shapes():
    f = tf.placeholder(tf.float32, [None, 3], name="feat")
    x = tf.placeholder(tf.int32, [2], name="ids")
    with tf.Session() as sess:
        with pytest.raises(ValueError, match=r"shape \(2, 4\) for Tensor 'feat:0', which has shape '\(\?, 3\)'"):
            sess.run(f, {f: np.zeros((2, 4), np.float32)})
        # the fast path (an ndarray of the right dtype) and the converting path say the same
        with pytest.raises(ValueError, match=r"shape \(2, 4\) for Tensor 'feat:0', which has shape '\(\?, 3\)'"):
            sess.run(f, {f: np.zeros((2, 4))})
        with pytest.raises(ValueError, match=r"shape \(3,\) for Tensor 'ids:0', which has shape '\(2,\)'"):
            sess.run(x, {x: [1, 2, 3]})


def test_feeding_an_out_of_range_python_int_into_int32_is_a_type_error():
    x = tf.placeholder(tf.int32, [], name="n")
    with tf.Session() as sess:
        with pytest.raises(TypeError, match=r"1099511627776.*int32"):
            sess.run(x, {x: 2 ** 40})
        u = tf.placeholder(tf.uint8, [2], name="pixels")
        with pytest.raises(TypeError, match=r"'pixels:0'.*uint8"):
            sess.run(u, {u: [-1, 300]})
        np.testing.assert_array_equal(sess.run(u, {u: [0, 255]}), [0, 255])


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
