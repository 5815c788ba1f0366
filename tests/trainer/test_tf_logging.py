"""`tf.logging` (TF 1.15's names and levels on the stdlib `logging`; logger `tensorfleet`).

Oracle: the stdlib level values TF documents (DEBUG=10 ... FATAL=50), TF's `INFO:<logger>:msg` format and its
per-call-site `log_every_n` / `log_first_n` counting.
"""
import logging
import subprocess
import sys

import pytest

import tensorfleet as tf


@pytest.fixture
def restore_level():
    logger = tf.logging.get_logger()
    old = logger.level
    yield logger
    logger.setLevel(old)


def test_levels_are_the_stdlib_ones():
    assert (tf.logging.DEBUG, tf.logging.INFO, tf.logging.WARN, tf.logging.ERROR, tf.logging.FATAL) == \
        (10, 20, 30, 40, 50)
    assert tf.logging.get_logger().name == "tensorfleet"


def test_set_verbosity_filters_and_messages_are_formatted(restore_level, caplog):
    caplog.set_level(logging.DEBUG, logger="root")
    tf.logging.set_verbosity(tf.logging.INFO)
    assert tf.logging.get_verbosity() == tf.logging.INFO
    tf.logging.debug("hidden %d", 1)
    tf.logging.info("step %d loss %.2f", 3, 0.5)
    tf.logging.warn("old name")
    tf.logging.warning("new name")
    tf.logging.error("bad")
    tf.logging.fatal("worse")
    tf.logging.log(tf.logging.INFO, "via log %s", "x")
    tf.logging.vlog(tf.logging.DEBUG, "vlog hidden")
    got = [(r.name, r.levelno, r.getMessage()) for r in caplog.records]
    assert got == [("tensorfleet", 20, "step 3 loss 0.50"), ("tensorfleet", 30, "old name"),
                   ("tensorfleet", 30, "new name"), ("tensorfleet", 40, "bad"), ("tensorfleet", 50, "worse"),
                   ("tensorfleet", 20, "via log x")]
    assert caplog.records[0].filename == "test_tf_logging.py"  # the caller, not tf_logging.py
    caplog.clear()
    tf.logging.set_verbosity(tf.logging.ERROR)
    tf.logging.warning("dropped")
    tf.logging.error("kept")
    assert [r.getMessage() for r in caplog.records] == ["kept"]


def test_log_every_n_first_n_and_if_count_per_call_site(restore_level, caplog):
    caplog.set_level(logging.DEBUG, logger="root")
    tf.logging.set_verbosity(tf.logging.INFO)
    for i in range(7):
        tf.logging.log_every_n(tf.logging.INFO, "every %d", 3, i)
        tf.logging.log_first_n(tf.logging.INFO, "first %d", 2, i)
        tf.logging.log_if(tf.logging.INFO, "if %d", i == 4, i)
    msgs = [r.getMessage() for r in caplog.records]
    assert [m for m in msgs if m.startswith("every")] == ["every 0", "every 3", "every 6"]
    assert [m for m in msgs if m.startswith("first")] == ["first 0", "first 1"]
    assert [m for m in msgs if m.startswith("if")] == ["if 4"]


def test_a_program_logs_to_stderr_in_tf_format():
    code = ("import tensorfleet as tf\n"
            "tf.logging.info('not shown')\n"
            "tf.logging.set_verbosity(tf.logging.INFO)\n"
            "tf.logging.info('Step %d', 7)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and out.stdout == ""
    assert out.stderr.splitlines() == ["INFO:tensorfleet:Step 7"]
