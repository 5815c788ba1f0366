"""A session that can never be created fails in bounded time (train/monitored_session.py, startup_wait.py).

- a MonitoredTrainingSession worker started after the released ps stopped: its first session creation is bounded
  by TENSORFLEET_STARTUP_SECONDS and the process exits 1 with the UnavailableError naming the ps (TF's
  _RecoverableSession retried it without end: the worker hung forever); a session that worked before still
  recovers as in TF (test_cluster_shutdown.py: a ps killed and restarted mid-run);
- the error for an unreachable `grpc://` target says its address once.
"""
import re
import time

import pytest

import tensorfleet as tf
from life_procs import spec
from dist_cluster import free_ports


def test_a_monitored_session_worker_started_after_the_ps_stopped_exits_1_in_bounded_time(procs):
    cluster = spec(workers=2)
    env = {"TENSORFLEET_PS_RELEASE_GRACE_SECONDS": "1", "STEPS": "10"}
    ps = procs(cluster, "ps", 0, env=env)
    chief = procs(cluster, "worker", 0, "mts", env=env)
    assert chief.wait() == 0, chief.output
    assert ps.wait(60) == 0, ps.output   # worker 1 never came: the grace period ended, the ps is gone
    started = time.monotonic()
    late = procs(cluster, "worker", 1, "mts", env={**env, "TENSORFLEET_STARTUP_SECONDS": "3"})
    assert late.wait(45) == 1, late.output
    assert time.monotonic() - started < 40
    ps_address = cluster["ps"][0]
    assert re.search(rf"UnavailableError: Task /job:ps/replica:0/task:0 at {ps_address} is unavailable",
                     late.output), late.output


def test_an_unreachable_target_is_named_once():
    address = f"127.0.0.1:{free_ports(1)[0]}"   # nothing listens there
    config = tf.ConfigProto(operation_timeout_in_ms=300)
    with pytest.raises(tf.errors.UnavailableError) as e:
        tf.Session(f"grpc://{address}", config=config)
    assert e.value.message.startswith(f"The task at {address} is unavailable: "), e.value.message
    assert f"at {address} at {address}" not in e.value.message, e.value.message
