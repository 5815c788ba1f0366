"""A released ps and the end reports of restarted tasks (ps_lifetime.py): a report is about one process.

- `PsLifetime` on its own: a report counts only while the reporting incarnation is the task's latest; a new
  incarnation (a registered graph, a GetStatus, its own report) clears an older one's report; a late report
  from an earlier process is ignored; a report without incarnation (the launcher's) ends the latest one;
- with real processes: worker 1 crashes (its atexit report reaches the ps) and is restarted; the chief
  releases while the restarted worker 1 trains; the ps serves it until it has ended (it used to stop at
  once: the restarted worker died with OutOfRangeError).
"""
import threading

import pytest

from life_procs import spec
from tensorfleet.distributed.ps_lifetime import PsLifetime

W0, W1 = "/job:worker/replica:0/task:0", "/job:worker/replica:0/task:1"


def _lifetime():
    stopped = threading.Event()
    life = PsLifetime("/job:ps/replica:0/task:0", [W0, W1], lambda reason, code: stopped.set())
    return life, stopped


def test_a_new_incarnation_clears_the_end_report_of_the_old_one():
    life, _ = _lifetime()
    life.task_seen(W1, 11)
    life.task_ended(W1, 11)
    assert life.waiting_for == [W0]
    life.task_seen(W1, 22)          # restarted: its new process registers a graph / asks for the status
    assert life.waiting_for == [W0, W1]
    life.task_seen(W1, 11)          # a late call of the old process changes nothing
    life.task_ended(W1, 11)         # nor does a late report of it
    assert life.waiting_for == [W0, W1]
    life.task_ended(W1, 22)
    assert life.waiting_for == [W0]


def test_a_report_from_a_process_never_seen_is_the_latest_and_a_launcher_report_ends_the_latest():
    life, _ = _lifetime()
    life.task_seen(W0, 5)
    life.task_ended(W0, 6)          # a process the ps never saw (it made no call) reported: it is the latest
    assert life.waiting_for == [W1]
    life.task_seen(W0, 5)           # its predecessor is older: no change
    assert life.waiting_for == [W1]
    life.task_seen(W1, 7)
    life.task_ended(W1)             # the launcher, for its killed script: the latest known process ended
    assert life.waiting_for == []
    life.task_seen(W1, 7)           # a call of that same process that was still on its way
    assert life.waiting_for == []
    life.task_seen(W1, 8)           # a restart
    assert life.waiting_for == [W1]


def test_the_release_waits_for_the_restarted_task():
    life, stopped = _lifetime()
    life.task_ended(W0, 1)
    life.task_ended(W1, 2)
    life.task_seen(W1, 3)
    life.release("training finished", 0)
    assert not stopped.wait(0.3)
    life.task_ended(W1, 3)
    assert stopped.wait(10)


def test_a_restarted_worker_still_training_at_the_release_keeps_its_ps(procs, tmp_path):
    cluster = spec(workers=2)
    env = {"TENSORFLEET_PS_RELEASE_GRACE_SECONDS": "60"}
    ps = procs(cluster, "ps", 0, env=env)
    go = tmp_path / "go"
    chief = procs(cluster, "worker", 0, env={**env, "GO_FILE": str(go)})
    first = procs(cluster, "worker", 1, "crash", env=env)
    assert first.wait() == 1, first.output   # its atexit report reached the ps
    assert "RuntimeError: boom" in first.output
    second = procs(cluster, "worker", 1, "until_released", env=env)
    second.wait_for("^SESSION")
    go.touch()   # the chief ends (and releases) once the restarted worker 1 trains
    assert chief.wait() == 0, chief.output
    assert second.wait() == 0, second.output   # its last steps after the release: the ps still served it
    assert "TOLD" in second.output and "FINAL" in second.output
    assert ps.wait(60) == 0, ps.output
    # the ps outlived the restarted worker's training and final evaluation (its process then reports its end at
    # exit, and may still be exiting when the ps ends: seen 0.53 s later at load average 10)
    assert ps.ended_at >= second.time_of("^FINAL"), "the ps stopped before the restarted worker had ended"
    assert "no end report" not in ps.output, ps.output


def test_a_bad_release_grace_value_fails_the_ps_server_at_its_start(monkeypatch):
    import tensorfleet as tf

    monkeypatch.setenv("TENSORFLEET_PS_RELEASE_GRACE_SECONDS", "2m")
    with pytest.raises(ValueError, match="TENSORFLEET_PS_RELEASE_GRACE_SECONDS='2m' is not a number of seconds"):
        tf.train.Server(spec(workers=1), job_name="ps", task_index=0)
    monkeypatch.setenv("TENSORFLEET_PS_RELEASE_GRACE_SECONDS", "-1")
    with pytest.raises(ValueError, match="TENSORFLEET_PS_RELEASE_GRACE_SECONDS='-1' must be >= 0"):
        tf.train.Server(spec(workers=1), job_name="ps", task_index=0, start=False)


def test_a_ps_process_with_a_bad_release_grace_value_exits_1_at_once(procs):
    # it used to serve, and never stop once released (the value was read by the release's thread, which died)
    ps = procs(spec(workers=1), "ps", 0, env={"TENSORFLEET_PS_RELEASE_GRACE_SECONDS": "2m"})
    assert ps.wait(60) == 1, ps.output
    assert "ValueError: TENSORFLEET_PS_RELEASE_GRACE_SECONDS='2m' is not a number of seconds" in ps.output
    assert "UP ps" not in ps.output
