"""Value lifetimes in a run: TF1 ref reads, snapshots, buffer reuse that never leaks.

The sequential executor drops values after their last reader, and kernels may
then reuse a dead buffer (`kernels.ownership.owns`) and update variables in place
(`ResourceStore.exclusive`). These tests pin down that nothing a user or another
reader can see is ever changed underneath them.
"""
import numpy as np
import pytest

import tensorfleet as tf
from tensorfleet.executor import sequential


@pytest.fixture(autouse=True, params=[True, False], ids=["compiled", "loop"])
def sequential_mode(request, monkeypatch):
    """Every test runs twice: sequential plans compiled to straight-line code from their second run, and not."""
    monkeypatch.setattr(sequential, "COMPILE", request.param)
    return request.param


def test_variable_read_under_control_dependency_sees_the_update():
    v = tf.Variable(1.0, name="v")
    before = v * 1.0
    inc = tf.assign_add(v, 10.0)
    with tf.control_dependencies([inc]):
        after = tf.identity(v)
    with tf.Session() as sess:
        sess.run(v.initializer)
        b, a = sess.run([before, after])
    assert (b, a) == (1.0, 11.0)  # the read waits for its consumer's control input (TF1 ref semantics)


def test_fetched_variable_is_a_snapshot_not_changed_by_the_update_in_the_same_run():
    w = tf.Variable(np.ones((3, 2), np.float32), name="w")
    loss = tf.reduce_sum(w * w)
    train = tf.train.GradientDescentOptimizer(0.25).minimize(loss)
    with tf.Session() as sess:
        sess.run(w.initializer)
        w_before, _ = sess.run([w, train])
        w_after = sess.run(w)
    np.testing.assert_array_equal(w_before, np.ones((3, 2)))
    np.testing.assert_allclose(w_after, np.ones((3, 2)) * 0.5)  # w - 0.25 * 2w
    w_before[0, 0] = 42.0  # the user's copy is theirs
    np.testing.assert_allclose(w_after, np.ones((3, 2)) * 0.5)


def test_sgd_updates_in_place_when_no_reader_holds_the_variable():
    x = tf.placeholder(tf.float32, [None, 4])
    w = tf.Variable(np.full((4, 3), 0.1, np.float32), name="w")
    loss = tf.reduce_mean(tf.nn.relu(tf.matmul(x, w) + 1.0))
    train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
    feed = {x: np.ones((5, 4), np.float32)}
    with tf.Session() as sess:
        sess.run(w.initializer)
        sess.run(train, feed)
        store = sess._resources.variables
        address = store["w"].ctypes.data  # (holding the array itself would make it shared)
        sess.run(train, feed)
        # Updated in place: no allocation per step. (A new array is made while the old one is
        # alive, so a functional update could not reuse the address.)
        assert store["w"].ctypes.data == address
        assert not store["w"].flags.writeable  # and frozen again for readers
        # every step subtracts lr * d(mean relu(xw+1))/dw = 0.1 * 5/(5*3) = 1/30
        np.testing.assert_allclose(sess.run(w), np.full((4, 3), 0.1 - 2 / 30), rtol=1e-6)


def test_kernels_never_write_into_fed_or_fetched_arrays():
    x = tf.placeholder(tf.float32, [2, 3])
    h = x + 1.0
    r = tf.nn.relu(h)
    y = tf.nn.relu(r - 2.0)
    fed = np.array([[-1.0, 0.5, 2.0], [3.0, -4.0, 0.0]], np.float32)
    kept = fed.copy()
    with tf.Session() as sess:
        h_val, y_val = sess.run([h, y], {x: fed})
    np.testing.assert_array_equal(fed, kept)
    np.testing.assert_array_equal(h_val, kept + 1.0)  # fetched h was not rectified in place by relu
    np.testing.assert_array_equal(y_val, np.maximum(np.maximum(kept + 1.0, 0) - 2.0, 0))


def test_traced_runs_never_write_into_a_value_that_is_fetched():
    """The loops that keep every value (traces, several devices, concurrent runs) must not let a kernel own
    an input its slot still holds (Python 3.12+ releases a temporary argument tuple during the call)."""
    x = tf.placeholder(tf.float32, [2, 2])
    h = x - 1.0
    z = tf.nn.relu(h) * 2.0
    xv = np.array([[0.0, 2.0], [3.0, -1.0]], np.float32)
    with tf.Session() as sess:
        for _ in range(3):
            meta = tf.RunMetadata()
            hv, zv = sess.run([h, z], {x: xv}, options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE),
                              run_metadata=meta)
            np.testing.assert_array_equal(hv, xv - 1.0)
            np.testing.assert_array_equal(zv, np.maximum(xv - 1.0, 0) * 2.0)


def test_initialized_value_chains_variable_initialization():
    tf.set_random_seed(3)
    w = tf.Variable(tf.random_normal([3]), name="w")
    initial = w.initialized_value()
    assert initial.name == "w/initialized_value:0"
    w2 = tf.Variable(initial * 2.0, name="w2")
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())  # one run: w2's init reads w's initial value
        wv, w2v = sess.run([w, w2])
        np.testing.assert_allclose(w2v, 2 * wv, rtol=1e-6)
        sess.run(tf.assign(w, [1.0, 2.0, 3.0]))
        sess.run(w2.initializer)  # w is initialized now: its current value is used
        np.testing.assert_allclose(sess.run(w2), [2.0, 4.0, 6.0])


def test_ownership_counts_hold_on_this_interpreter():
    """The executor's import-time check found `owns` and `exclusive` right (CPython 3.10-3.13 are tested)."""
    import sys

    from tensorfleet.kernels import ownership

    assert ownership.enabled(), f"in-place kernels were turned off on Python {sys.version}"


def test_a_miscounted_ownership_turns_in_place_kernels_off(monkeypatch):
    """As if an interpreter counted one reference fewer: the check sees a shared array read as owned."""
    from tensorfleet.kernels import ownership

    monkeypatch.setattr(ownership, "in_place", True)
    monkeypatch.setattr(ownership, "_OWNED_REFS", ownership._OWNED_REFS + 1)
    sequential._check_ownership()
    assert not ownership.enabled()
    # and with ownership off, kernels allocate: a fetched pre-activation is not rectified in place, values still right
    x = tf.placeholder(tf.float32, [2, 2])
    h = x - 1.0
    y = tf.nn.relu(h)
    xv = np.array([[0.0, 2.0], [3.0, -1.0]], np.float32)
    with tf.Session() as sess:
        for _ in range(3):
            np.testing.assert_array_equal(sess.run(y, {x: xv}), np.maximum(xv - 1.0, 0))
            hv, yv = sess.run([h, y], {x: xv})
            np.testing.assert_array_equal(hv, xv - 1.0)
