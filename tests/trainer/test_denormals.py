"""Denormals in a step are zero, as TF's CPU kernels make them (x86-64); the user's numpy between steps keeps them.

Oracle: what TF's executor does (every CPU kernel runs under `port::ScopedFlushDenormal`: DAZ and FTZ). The
values below are what real TensorFlow (2.15.1, `tf.compat.v1` graph mode, x86-64) returned for the same
graphs: 1e-38 * 0.5 -> 0, 2e-39 + 0.0 -> 0, sqrt(2e-39) -> 0, 1e-30 * 0.5 -> 5e-31, float64 1e-308 * 0.5 and
3e-310 * 0.5 -> 0, a variable 1e-38 assigned its half -> 0, and a fed 2e-39 fetched back through `identity`
-> 2e-39 (passed through, not computed); numpy outside the session still gives 5e-39.
"""
import platform
import queue
import sys
import threading

import numpy as np
import pytest

import tensorfleet as tf

pytestmark = pytest.mark.skipif(sys.platform != "linux" or platform.machine() != "x86_64",
                                reason="denormals are flushed on x86-64 Linux only (glibc's fesetmode)")

TINY32 = np.float32(1e-38)        # normal: float32's smallest normal is 1.18e-38
DENORMAL32 = np.float32(2e-39)


def _numpy_keeps_denormals():
    return float(TINY32 * np.float32(0.5)) != 0.0 and float(np.sqrt(DENORMAL32)) != 0.0


def test_kernels_flush_denormal_inputs_and_results_to_zero_as_tf():
    x = tf.placeholder(tf.float32, [4])
    xd = tf.placeholder(tf.float64, [2])
    with tf.Session() as sess:
        half, plus0, root, back = sess.run([x * 0.5, x + 0.0, tf.sqrt(x), tf.identity(x)],
                                           {x: np.array([1e-38, 2e-39, 1e-30, 1.0], np.float32)})
        half64 = sess.run(xd * 0.5, {xd: np.array([1e-308, 3e-310])})
    np.testing.assert_array_equal(half, np.array([0, 0, 5e-31, 0.5], np.float32))
    np.testing.assert_array_equal(plus0, np.array([0, 0, 1e-30, 1.0], np.float32))
    np.testing.assert_array_equal(root, np.array([0, 0, 1e-15, 1.0], np.float32))
    np.testing.assert_array_equal(back, np.array([1e-38, 2e-39, 1e-30, 1.0], np.float32))  # passed through
    np.testing.assert_array_equal(half64, [0.0, 0.0])


def test_a_variable_update_through_the_denormal_range_ends_at_zero():
    v = tf.Variable(np.full(3, 1e-38, np.float32))
    halve = tf.assign(v, v * 0.5)
    with tf.Session() as sess:
        sess.run(v.initializer)
        np.testing.assert_array_equal(sess.run(halve), np.zeros(3, np.float32))


def test_numpy_between_steps_keeps_denormals_even_after_a_failing_step():
    assert _numpy_keeps_denormals()
    x = tf.placeholder(tf.float32, [2])
    checked = tf.debugging.check_numerics(x * 0.5, "bad")
    with tf.Session() as sess:
        sess.run(checked, {x: [1e-38, 1.0]})
        assert _numpy_keeps_denormals()
        with pytest.raises(tf.errors.InvalidArgumentError):
            sess.run(checked, {x: [np.nan, 1.0]})
    assert _numpy_keeps_denormals()


def test_concurrent_branches_of_a_step_all_flush_and_threads_made_later_keep_denormals():
    """Independent large branches with inter-op threads run concurrently: every branch flushes; a thread
    made after the session keeps numpy's denormals. (The pool's threads are made inside the first step and
    inherit its mode; the test below proves a pool flushes by itself.)"""
    n = 1 << 20   # large outputs: worth a pool thread (executor.plan.LARGE_ELEMENTWISE)
    x = tf.placeholder(tf.float32, [n])
    branches = [tf.sqrt(x * (1.0 + i)) for i in range(4)]
    with tf.Session(config=tf.ConfigProto(inter_op_parallelism_threads=2)) as sess:
        for _ in range(3):   # the first run measures the branches; the next ones run them concurrently
            got = sess.run(branches, {x: np.full(n, 2e-39, np.float32)})
            for arr in got:
                assert not arr.any()
        (plan,) = sess._plans.values()
        assert plan.concurrent
    seen = []
    t = threading.Thread(target=lambda: seen.append(_numpy_keeps_denormals()))
    t.start()
    t.join()
    assert seen == [True] and _numpy_keeps_denormals()


def test_an_inter_op_pool_made_outside_any_step_flushes_in_its_threads():
    """A pool's threads set the kernels' state themselves (a thread made inside a step would inherit it)."""
    from tensorfleet.executor.thread_pools import WorkerPool

    pool = WorkerPool("denormal-test", 2)
    results = queue.SimpleQueue()
    try:
        for _ in range(4):
            pool.submit(lambda: results.put(float(TINY32 * np.float32(0.5))))
        assert [results.get(timeout=10) for _ in range(4)] == [0.0] * 4
    finally:
        pool.shutdown()
    assert _numpy_keeps_denormals()


def test_a_step_inside_a_step_leaves_the_outer_step_flushing():
    """A py_func that runs another session (as TF, the py_func runs under the step's floating-point state)."""
    inner_x = tf.placeholder(tf.float32, [])
    inner_sess = tf.Session()
    inner = inner_x * 1.0

    def body(v):
        inner_sess.run(inner, {inner_x: 1.0})
        return v

    x = tf.placeholder(tf.float32, [2])
    (through,) = tf.py_func(body, [x], [tf.float32])
    after = through * 0.5
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(after, {x: [1e-38, 1.0]}), np.array([0.0, 0.5], np.float32))
    inner_sess.close()
    assert _numpy_keeps_denormals()


def test_a_rounding_mode_the_user_set_between_steps_survives_the_next_step():
    import ctypes
    import ctypes.util

    libm = ctypes.CDLL(ctypes.util.find_library("m"))
    fe_upward, before = 0x800, libm.fegetround()
    x = tf.placeholder(tf.float32, [])
    doubled = x * 2.0
    with tf.Session() as sess:
        sess.run(doubled, {x: 1.0})          # this thread's mode seen once already
        assert libm.fesetround(fe_upward) == 0
        try:
            sess.run(doubled, {x: 1.0})
            assert libm.fegetround() == fe_upward
        finally:
            libm.fesetround(before)
    assert _numpy_keeps_denormals()
