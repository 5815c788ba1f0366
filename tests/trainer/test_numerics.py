"""TF's numeric checks (check_numerics, verify_tensor_all_finite, add_check_numerics_ops) and quiet kernels.

Oracle: TF 1.15's CheckNumerics kernel message "<message> : Tensor had NaN values" (also "Inf", "Inf and
NaN"), its gradient (the incoming gradient, itself checked) and numpy's own NaN/Inf results.
"""
import warnings

import numpy as np
import pytest

import tensorfleet as tf
from gradcheck import check_gradients


def test_check_numerics_passes_finite_values_through():
    x = tf.placeholder(tf.float32, [3])
    y = tf.debugging.check_numerics(x, "x is bad")
    assert y.op.type == "CheckNumerics" and y.shape.as_list() == [3]
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(y, {x: [1.0, -2.0, 3.5]}), [1.0, -2.0, 3.5])


@pytest.mark.parametrize("value,status", [([1.0, np.nan], "NaN"), ([np.inf, 1.0], "Inf"),
                                          ([-np.inf, np.nan], "Inf and NaN")])
@pytest.mark.parametrize("dtype", [tf.float16, tf.float32, tf.float64])
def test_check_numerics_raises_tf_message_naming_the_node(value, status, dtype):
    x = tf.placeholder(dtype, [2])
    y = tf.check_numerics(x * 2, "scaled x", name="guard")
    with tf.Session() as sess, pytest.raises(tf.errors.InvalidArgumentError) as info:
        sess.run(y, {x: value})
    assert str(info.value).startswith(f"scaled x : Tensor had {status} values")
    assert "[[node guard]]" in str(info.value)
    assert info.value.op is y.op


def test_check_numerics_accepts_floats_only():
    with pytest.raises(TypeError, match="DataType int32 not in list of allowed values"):
        tf.check_numerics(tf.constant([1, 2]), "ints")


def test_check_numerics_gradient_passes_through_and_is_checked():
    x = tf.placeholder(tf.float32, [3])
    y = tf.check_numerics(x * x, "square")
    (gx,) = tf.gradients(tf.reduce_sum(y), [x])
    v = np.array([1.0, -2.0, 0.5], np.float32)
    with tf.Session() as sess:
        np.testing.assert_allclose(sess.run(gx, {x: v}), 2 * v)  # d/dx sum(x^2)
    # an Inf in the incoming gradient is reported with TF's gradient message
    scale = tf.placeholder(tf.float32, [])
    (gx2,) = tf.gradients(tf.reduce_sum(y) * scale, [x])
    with tf.Session() as sess, pytest.raises(tf.errors.InvalidArgumentError,
                                             match=r"^Not a number \(NaN\) or infinity \(Inf\) values detected "
                                                   r"in gradient\. square : Tensor had Inf values"):
        sess.run(gx2, {x: v, scale: np.inf})


def test_check_numerics_gradient_by_finite_differences():
    rng = np.random.default_rng(0)
    check_gradients(lambda x: tf.check_numerics(tf.sin(x) * x, "guard") * 3.0, [rng.normal(size=(3, 4))])


def test_verify_tensor_all_finite_and_assert_all_finite():
    x = tf.placeholder(tf.float64, [2])
    y = tf.verify_tensor_all_finite(x, "x must be finite")
    z = tf.debugging.assert_all_finite(x, msg="same check")
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(y, {x: [1.0, 2.0]}), [1.0, 2.0])
        with pytest.raises(tf.errors.InvalidArgumentError, match="^x must be finite : Tensor had NaN values"):
            sess.run(y, {x: [np.nan, 2.0]})
        with pytest.raises(tf.errors.InvalidArgumentError, match="^same check : Tensor had Inf values"):
            sess.run(z, {x: [np.inf, 2.0]})


def test_add_check_numerics_ops_names_the_op_and_output():
    x = tf.placeholder(tf.float32, [2], name="x")
    logx = tf.log(x, name="logx")
    out = tf.reduce_sum(logx, name="total")
    check = tf.add_check_numerics_ops()
    with tf.Session() as sess:
        total, _ = sess.run([out, check], {x: [1.0, np.e]})
        assert total == pytest.approx(1.0)
        with pytest.raises(tf.errors.InvalidArgumentError, match="^logx:0 : Tensor had NaN values"):
            sess.run([out, check], {x: [-1.0, 1.0]})
        with pytest.raises(tf.errors.InvalidArgumentError, match="^logx:0 : Tensor had Inf values"):
            sess.run([out, check], {x: [0.0, 1.0]})


def test_kernels_make_nan_and_inf_silently_and_numpy_state_is_restored():
    x = tf.placeholder(tf.float32, [3])
    y = tf.log(x) + 1.0 / x + tf.sqrt(x)
    before = np.geterr()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # any RuntimeWarning fails the test
        with tf.Session() as sess:
            got = sess.run(y, {x: [-1.0, 0.0, 1.0]})
        with np.errstate(all="ignore"):
            want = np.log(np.float32([-1, 0, 1])) + 1 / np.float32([-1, 0, 1]) + np.sqrt(np.float32([-1, 0, 1]))
    np.testing.assert_array_equal(got, want)  # nan, nan (-inf + inf), 2
    assert np.geterr() == before


def test_numpy_state_is_restored_after_a_failing_step():
    x = tf.placeholder(tf.float32, [1])
    y = tf.check_numerics(x, "bad")
    with np.errstate(divide="raise", over="warn"), tf.Session() as sess:
        state = np.geterr()
        with pytest.raises(tf.errors.InvalidArgumentError):
            sess.run(y, {x: [np.nan]})
        assert np.geterr() == state


def test_kernels_on_inter_op_pool_threads_are_quiet_too():
    n = 320  # n**3 multiply-adds: above the executor's offload threshold (executor.OFFLOAD_MIN_COST = 2**24)
    big = np.full((n, n), 1e30, np.float32)  # overflows: numpy would warn "overflow encountered in matmul"
    a = tf.placeholder(tf.float32, [n, n])
    b = tf.placeholder(tf.float32, [n, n])
    outs = [tf.matmul(a, b), tf.matmul(b, a), tf.matmul(a, a), tf.matmul(b, b)]  # independent: run in parallel
    config = tf.ConfigProto(inter_op_parallelism_threads=2, use_per_session_threads=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with tf.Session(config=config) as sess:
            for _ in range(5):
                got = sess.run(outs, {a: big, b: big})
    assert all(np.isinf(g).all() for g in got)
