"""Run-time checks and printing (ops/check_ops.py): tf.Assert and tf.assert_* (at run time, gating through
control dependencies, and at graph-build time for constants and known ranks), tf.assert_near, tf.assert_rank_in,
tf.assert_variables_initialized and tf.Print.

Oracles: TF 1.15's documented semantics, assertion contracts (static ValueError naming the tensor, run-time
InvalidArgumentError, FailedPreconditionError for an uninitialized variable) and message formats, and central
finite differences (gradcheck) for Print's gradient.
"""
import numpy as np
import pytest

import tensorfleet as tf
from gradcheck import check_gradients
from helpers import run

RNG = np.random.default_rng(7)


# -- Assert / assert_* --------------------------------------------------------
def test_assert_equal_raises_at_run_time_with_tfs_message_and_gates_via_control_dependencies():
    x = tf.placeholder(tf.int32, [None], name="x")
    y = tf.constant([1, 2, 3, 4], name="y")
    check = tf.assert_equal(x, y, message="labels")
    assert isinstance(check, tf.Operation)
    with tf.control_dependencies([check]):
        out = tf.identity(x * 2)
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(out, {x: [1, 2, 3, 4]}), [2, 4, 6, 8])
        with pytest.raises(tf.errors.InvalidArgumentError) as e:
            sess.run(out, {x: [1, 2, 3, 5]})
    assert str(e.value).startswith("assertion failed: [labels] [Condition x == y did not hold element-wise:] "
                                   "[x (x:0) = ] [1 2 3...] [y (y:0) = ] [1 2 3...]")


def test_binary_and_sign_asserts_and_summarize():
    x = tf.placeholder(tf.float32, [2])
    ops = {"less": tf.assert_less(x, 2.0), "less_equal": tf.assert_less_equal(x, 2.0),
           "greater": tf.assert_greater(x, 0.0), "greater_equal": tf.assert_greater_equal(x, 0.0),
           "positive": tf.assert_positive(x), "non_negative": tf.assert_non_negative(x),
           "negative": tf.assert_negative(-x), "none_equal": tf.assert_none_equal(x, 1.0)}
    cases = {(0.5, 1.5): {"less", "less_equal", "greater", "greater_equal", "positive", "non_negative", "negative",
                          "none_equal"},
             (0.0, 2.0): {"less_equal", "greater_equal", "non_negative", "none_equal"},
             (1.0, -1.0): {"less", "less_equal"}}
    with tf.Session() as sess:
        for value, passing in cases.items():
            for name, op in ops.items():
                if name in passing:
                    sess.run(op, {x: value})
                else:
                    with pytest.raises(tf.errors.InvalidArgumentError, match="assertion failed"):
                        sess.run(op, {x: value})
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"\[Condition x > 0 did not hold element-wise:\] "
                                                                 r"\[x \(Placeholder:0\) = \] \[0.5 -1\]"):
            sess.run(ops["positive"], {x: [0.5, -1.0]})
        a = tf.Assert(tf.reduce_all(x > 0), ["x has", x, "and", 7], summarize=1)
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"^assertion failed: \[x has\] \[-1\.\.\.\] "
                                                                 r"\[and\] \[7\]"):
            sess.run(a, {x: [-1.0, 2.0]})


def test_static_asserts_fail_at_graph_build_time_like_tf():
    with pytest.raises(tf.errors.InvalidArgumentError, match="Condition x == y did not hold"):
        tf.assert_equal(tf.constant([1, 2]), tf.constant([1, 3]))
    tf.assert_equal(tf.constant([1, 2]), [1, 2])
    with pytest.raises(ValueError, match=r"Tensor p:0 must have rank 3.  Received rank 2, shape \(\?, 4\)"):
        tf.assert_rank(tf.placeholder(tf.float32, [None, 4], name="p"), 3)
    assert tf.assert_rank(tf.placeholder(tf.float32, [None, 4]), 2).type == "NoOp"
    u = tf.placeholder(tf.float32)
    dyn = tf.assert_rank(u, 2)
    dyn_least = tf.assert_rank_at_least(u, 1)
    with tf.Session() as sess:
        sess.run([dyn, dyn_least], {u: np.zeros((2, 3))})
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"must have rank\] \[2\] \[Received shape: \] "
                                                                 r"\[2 3 4\]"):
            sess.run(dyn, {u: np.zeros((2, 3, 4))})


# -- Print --------------------------------------------------------------------
def test_print_is_an_identity_that_writes_to_stderr_and_its_gradient(capfd):
    x = tf.placeholder(tf.float32, [4])
    p = tf.Print(x, [x, "n", tf.size(x), tf.constant(0.1, tf.float64)], message="x is: ")
    once = tf.Print(x, [x], message="once ", first_n=1, summarize=10)
    with tf.Session() as sess:
        for _ in range(2):
            out, _ = sess.run([p * 2.0, once], {x: [1.5, 2, 3, 4]})
    np.testing.assert_array_equal(out, [3, 4, 6, 8])
    err = capfd.readouterr().err.splitlines()
    assert err.count("x is: [1.5 2 3...][n][4][0.1]") == 2 and err.count("once [1.5 2 3 4]") == 1
    check_gradients(lambda t: tf.Print(t, [t], "") * t, [RNG.standard_normal(3)])


# -- assert_near / assert_rank_in / assert_variables_initialized -----------------------------------------------
def test_assert_near_tolerances_and_message():
    x = np.array([1.0, 2.0, 3.0], np.float32)
    run(tf.assert_near(x, x + 5e-7))  # within 10 * eps(float32) * |y| + 10 * eps
    run(tf.debugging.assert_near(x, x + 0.05, rtol=0.0, atol=0.1))
    op = tf.assert_near(x, x + 0.05, message="too far")
    assert op.type == "Assert" and op.name.startswith("assert_near")
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"too far(.|\n)*x and y not equal to tolerance rtol"):
        run(op)
    with pytest.raises(tf.errors.InvalidArgumentError):
        run(tf.assert_near(np.float64(1.0), np.float64(1.0 + 1e-12), rtol=0.0, atol=1e-13))
    with pytest.raises(ValueError):  # TF: np.finfo of an integer dtype
        tf.assert_near([1, 2], [1, 2])


def test_assert_rank_in_static_and_dynamic():
    x = tf.constant(np.zeros((2, 3)))
    assert tf.assert_rank_in(x, [1, 2]).type == "NoOp"
    with pytest.raises(ValueError, match=r"Tensor Const(_\d+)?:0 must have rank in \(1, 3\).  Received rank 2"):
        tf.debugging.assert_rank_in(x, (1, 3), message="wanted")
    p = tf.placeholder(tf.float32)
    check = tf.assert_rank_in(p, [0, 2])
    with tf.Session() as s:
        s.run(check, {p: np.zeros((2, 2))})
        s.run(check, {p: 1.0})
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"must have rank in(.|\n)*\[2 2 2\]"):
            s.run(check, {p: np.zeros((2, 2, 2))})
    with pytest.raises(TypeError, match="must be of type <dtype: 'int32'>"):
        tf.assert_rank_in(x, [tf.constant(2, tf.int64)])
    with pytest.raises(ValueError, match="Rank must be a scalar."):
        tf.assert_rank_in(x, [[2]])


def test_assert_variables_initialized():
    assert tf.assert_variables_initialized() is None
    a = tf.Variable(np.zeros((2, 3)), name="a")
    b = tf.Variable(1.0, name="b")
    check = tf.assert_variables_initialized()
    only_a = tf.assert_variables_initialized([a])
    with tf.Session() as s:
        with pytest.raises(tf.errors.FailedPreconditionError, match="uninitialized value a"):
            s.run(only_a)
        s.run(a.initializer)
        assert s.run(only_a) == 2
        with pytest.raises(tf.errors.FailedPreconditionError, match="uninitialized value b"):
            s.run(check)
        s.run(b.initializer)
        assert s.run(check).tolist() == [2, 0]
