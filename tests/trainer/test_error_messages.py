"""Errors that name the op, node or fed tensor (issue 9, item 8), against TF 1.15's messages, and tf.errors' classes
with TF's codes.

TF 1.15 references: the CPU integer Div/FloorDiv/Mod kernels fail with "Integer division by zero";
MatMul's op def names its inputs `a`/`b` (BatchMatMulV2's `x`/`y`) and its kernel reports
"Matrix size-incompatible: In[0]: [2,3], In[1]: [4,5]" / "In[0] is not a matrix. Instead it has shape [3]";
Fill's shape function refuses negative constant dims ("Fill dimensions must be >= 0") and its kernel
negative fed dims (TensorShapeUtils::MakeShape: "Dimension -1 must be >= 0").
"""
import numpy as np
import pytest

import tensorfleet as tf
from tensorfleet import errors
from tensorfleet.session import FeedValueError


@pytest.mark.parametrize("dtype,value", [(tf.int64, 2 ** 70), (tf.int64, -(2 ** 70)), (tf.int64, [1, 2 ** 70]),
                                         (tf.int32, 2 ** 40), (tf.uint8, -1), (tf.int32, 1.5)])
def test_unrepresentable_feed_names_the_placeholder(dtype, value):
    p = tf.placeholder(dtype, None, name="counts")
    with tf.Session() as sess, pytest.raises(tf.errors.InvalidArgumentError) as info:
        sess.run(tf.identity(p), {p: value})
    assert f"for Tensor 'counts:0', which has dtype {dtype.name}" in str(info.value)
    assert f"not representable as {dtype.name}" in str(info.value)
    assert info.value.op is p.op
    assert isinstance(info.value, TypeError) and isinstance(info.value, FeedValueError)  # as before, too


def test_largest_int64_still_feeds():
    p = tf.placeholder(tf.int64, [2])
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(tf.identity(p), {p: [2 ** 63 - 1, -(2 ** 63)]}),
                                      np.array([2 ** 63 - 1, -(2 ** 63)], np.int64))


@pytest.mark.parametrize("fn", [tf.div, tf.floordiv, tf.mod, tf.floormod, lambda a, b, name: tf.identity(a // b,
                                                                                                           name)])
@pytest.mark.parametrize("dtype", [tf.int32, tf.int64])
def test_integer_division_by_zero_names_the_node(fn, dtype):
    a = tf.placeholder(dtype, [2])
    b = tf.placeholder(dtype, [2])
    out = fn(a, b, name="ratio")
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(out, {a: [7, -7], b: [2, 2]}).shape, (2,))
        with pytest.raises(tf.errors.InvalidArgumentError) as info:
            sess.run(out, {a: [7, 8], b: [2, 0]})
    assert str(info.value).startswith("Integer division by zero")
    assert info.value.op is not None and f"[[node {info.value.op.name}]]" in str(info.value)


@pytest.mark.parametrize("make,name", [(lambda: tf.zeros([-1, 3]), "zeros"), (lambda: tf.ones([2, -4], name="o"), "o"),
                                       (lambda: tf.zeros(tf.constant([-1, 3])), "zeros"),
                                       (lambda: tf.fill([-1, 3], 0.5), "Fill")])
def test_negative_static_dimension_is_tf_fill_error(make, name):
    with pytest.raises(ValueError, match=rf"^Fill dimensions must be >= 0, got dims \[.*\] for '{name}' "
                                         r"\(op: 'Fill'\)"):
        make()


def test_negative_fed_dimension_names_the_node():
    dims = tf.placeholder(tf.int32, [2])
    z = tf.zeros(dims, name="buffer")
    with tf.Session() as sess:
        assert sess.run(z, {dims: [2, 3]}).shape == (2, 3)
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"^Dimension -1 must be >= 0 .*\n.*\[\[node "
                                                                r"buffer\]\]"):
            sess.run(z, {dims: [-1, 3]})


def test_matmul_names_its_inputs_a_and_b_as_tf():
    with pytest.raises(TypeError, match="^Input 'b' of 'MatMul' Op has type float64 that does not match type "
                                        "float32 of argument 'a'.$"):
        tf.matmul(tf.zeros([2, 3]), tf.zeros([3, 4], tf.float64))
    with pytest.raises(ValueError, match="rank 2 but is rank 1 for 'a' of 'MatMul'"):
        tf.matmul(tf.zeros([3]), tf.zeros([3, 4]))
    with pytest.raises(TypeError, match="^Input 'y' of 'BatchMatMulV2' Op has type float64 that does not match "
                                        "type float32 of argument 'x'.$"):
        tf.matmul(tf.zeros([2, 2, 3]), tf.zeros([2, 3, 4], tf.float64))


def test_matmul_runtime_shape_errors_are_tf_messages():
    x = tf.placeholder(tf.float32, [None, None])
    y = tf.placeholder(tf.float32, [None, None])
    mm = tf.matmul(x, y, transpose_b=True, name="mm")
    u = tf.placeholder(tf.float32)
    mu = tf.matmul(u, y, name="mu")
    with tf.Session() as sess:
        np.testing.assert_allclose(sess.run(mm, {x: np.ones((2, 3)), y: np.full((4, 3), 2.0)}), np.full((2, 4), 6.0))
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match=r"^Matrix size-incompatible: In\[0\]: \[2,3\], In\[1\]: \[4,5\]\n\t \[\[node mm\]\]"):
            sess.run(mm, {x: np.zeros((2, 3)), y: np.zeros((4, 5))})
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match=r"^In\[0\] is not a matrix. Instead it has shape \[3\]\n\t \[\[node mu\]\]"):
            sess.run(mu, {u: np.zeros(3), y: np.zeros((3, 2))})


# -- tf.errors: TF's classes and codes ------------------------------------------
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
