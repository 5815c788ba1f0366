"""Helpers shared by the trainer tests: running fetches in a fresh Session, numpy reference functions, and
forked children (a restart that costs no interpreter start: tensorfleet is already imported).

Gradient oracles live in `gradcheck.py`. Both modules are importable from any test module because
`tests/trainer/conftest.py` puts this folder on sys.path.
"""
import os
import signal
import time

import numpy as np

import tensorfleet as tf


def fork_child(body):
    """Runs body(write_fd) in a forked child (exit 0, or 3 if it raised); -> (pid, read_fd). The child never
    returns into pytest."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # child
        code = 0
        try:
            os.close(r)
            body(w)
        except BaseException:  # noqa: BLE001 - the parent sees the exit code
            code = 3
        finally:
            os._exit(code)
    os.close(w)
    return pid, r


def wait_child(pid, timeout=120.0) -> int:
    """The child's wait status; SIGKILLs it and fails if it did not end within `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return status
        time.sleep(0.01)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    raise AssertionError(f"child {pid} did not finish in {timeout} s")


def run(*fetches, feed=None):
    """Runs `fetches` in a new Session on the default graph: the value for one fetch, else a list of values."""
    with tf.Session() as sess:
        out = sess.run(list(fetches), feed)
    return out[0] if len(out) == 1 else out


def init_and_run(fetches, feed=None):
    """Like `run(fetches, feed=feed)`, after running `tf.global_variables_initializer()` in the same Session."""
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        return sess.run(fetches, feed)


def assert_training_lowers_loss(loss, step, feed, steps):
    """Initializes the variables, runs `step` `steps` times on `feed`, asserts `loss` went down."""
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        first = sess.run(loss, feed)
        for _ in range(steps):
            sess.run(step, feed)
        last = sess.run(loss, feed)
    assert last < first, (first, last)


# -- numpy references ---------------------------------------------------------
def np_sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def np_log_softmax(x, axis=-1):
    m = x.max(axis=axis, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(axis=axis, keepdims=True))


def np_softmax(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)
