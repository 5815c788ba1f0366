"""A job's start and end as TensorFlow's, with real processes on 127.0.0.1 (replica_script.py: a TF1 script in the
style of mnist_replica.py / dist-mnist, import changed only).

- a ps whose script falls through after `server.join()`: every task exits 0 and the ps never runs worker code;
- a worker still running its last steps (and its final evaluation) seconds after the chief ended exits 0;
  the ps serves it until it has ended;
- a worker killed with SIGKILL holds the released ps no longer than the grace period;
- a session opened on a master whose process has not started yet (and 5 s before the ps starts) succeeds,
  and the master logs TF's "CreateSession still waiting for response from worker" line meanwhile;
- the whole end, 20 times over, every process exiting 0.
"""
import os
import re
import signal
import sys
import time

import pytest

from dist_cluster import HERE
from life_procs import OutputProc, spec as cluster_spec

SCRIPT = os.path.join(HERE, "replica_script.py")


class Task(OutputProc):
    """One task process of replica_script.py."""

    WAIT = 120

    def __init__(self, spec, job, index, *flags, env=None):
        super().__init__([sys.executable, SCRIPT, "--ps_hosts=" + ",".join(spec["ps"]),
                          "--worker_hosts=" + ",".join(spec["worker"]), f"--job_name={job}", f"--task_index={index}",
                          *flags], env)


@pytest.fixture
def tasks(started):
    return lambda *args, **kwargs: started(Task(*args, **kwargs))


def _final_loss(task) -> float:
    m = re.search(r"^FINAL step=(\d+) loss=([\d.e+-]+)", task.output, re.M)
    assert m, task.output
    return float(m.group(2))


def _start_job(tasks, steps=60, straggle=0.0):
    spec = cluster_spec(2)
    ps = tasks(spec, "ps", 0)
    workers = [tasks(spec, "worker", 0, f"--train_steps={steps}"),
               tasks(spec, "worker", 1, f"--train_steps={steps}", f"--extra_seconds={straggle}")]
    return ps, workers


def _end_job(ps, workers):
    for w in workers:
        assert w.wait() == 0, w.output
        assert "FINAL" in w.output
    assert ps.wait() == 0, ps.output
    assert "Initializing session" not in ps.output, ps.output   # join() never handed control back


def _run_job(tasks, steps=60):
    ps, workers = _start_job(tasks, steps)
    _end_job(ps, workers)
    return ps, workers


def test_ps_that_falls_through_after_join_exits_0_and_runs_no_worker_code(tasks):
    ps, workers = _run_job(tasks)
    for w in workers:
        assert _final_loss(w) < 1.0, w.output   # trained (the loss starts at about 0.85 + 0.25)


def test_a_straggler_finishes_its_last_steps_after_the_chief_ended(tasks):
    spec = cluster_spec(2)
    ps = tasks(spec, "ps", 0)
    chief = tasks(spec, "worker", 0, "--train_steps=60")
    straggler = tasks(spec, "worker", 1, "--train_steps=60", "--extra_seconds=3")
    assert chief.wait() == 0, chief.output
    assert straggler.wait() == 0, straggler.output   # no OutOfRangeError / UnavailableError from a vanished ps
    assert "FINAL" in straggler.output
    assert ps.wait() == 0, ps.output
    # the ps outlived the straggler's extra steps and final evaluation (FINAL: after its last call to the ps); its
    # process then reports its end at exit and may still be exiting when the ps ends (0.85 s at load average 10)
    assert ps.ended_at >= straggler.time_of("^FINAL"), "the ps stopped before the straggler had ended"


def test_a_worker_killed_by_sigkill_holds_the_released_ps_only_for_the_grace_period(tasks):
    spec = cluster_spec(2)
    env = {"TENSORFLEET_PS_RELEASE_GRACE_SECONDS": "3"}
    ps = tasks(spec, "ps", 0, env=env)
    chief = tasks(spec, "worker", 0, "--train_steps=60", env=env)
    straggler = tasks(spec, "worker", 1, "--train_steps=60", "--extra_seconds=600", env=env)
    assert chief.wait() == 0, chief.output
    released = time.monotonic()
    straggler.wait_for("Session initialization complete")
    straggler.popen.send_signal(signal.SIGKILL)
    assert straggler.wait() == -signal.SIGKILL
    assert ps.wait(60) == 0, ps.output
    assert ps.ended_at - released < 3 + 20, ps.output   # the grace period, plus a busy machine's slack
    assert "no end report from /job:worker/replica:0/task:1" in ps.output, ps.output


def test_a_session_opened_before_its_master_and_the_ps_start_succeeds(tasks):
    spec = cluster_spec(1)
    # mnist_replica's --existing_servers way: the script's session goes to its task's server in another
    # process, started only once the script is waiting for it (a handshake, not a sleep: on a busy machine a
    # process may take seconds to start); the ps starts once that server waits for it in turn
    client = tasks(spec, "worker", 0, "--train_steps=40", "--existing_servers")
    client.wait_for("CreateSession still waiting for the master at")
    time.sleep(1)   # and it keeps waiting: a retry or two against the closed port
    server = tasks(spec, "worker", 0, "--serve_only")
    server.wait_for("CreateSession still waiting for response from worker: /job:ps/replica:0/task:0")
    time.sleep(1)
    ps = tasks(spec, "ps", 0)
    assert client.wait() == 0, client.output
    assert _final_loss(client) < 1.0, client.output
    server.popen.send_signal(signal.SIGTERM)
    assert server.wait() == 0, server.output
    assert ps.popen.poll() is None   # no chief process of this cluster released it: it serves on, as in TF


@pytest.mark.parametrize("round_", range(5))
def test_the_end_of_a_job_twenty_times_every_process_exits_0(tasks, round_):
    # twenty short jobs in one test run: five rounds (spread over the suite's processes) of four at once; in
    # every second job worker 1 straggles 1 s past the chief's end
    jobs = [_start_job(tasks, steps=10, straggle=float(i % 2)) for i in range(4)]
    for ps, workers in jobs:
        _end_job(ps, workers)


def test_a_script_killed_under_the_launcher_is_reported_ended_by_the_launcher(tasks, started):
    """Worker 1's script dies by SIGKILL (no atexit): its launcher tells the ps, which then stops at once, long
    before the 60 s grace period."""
    import json

    spec = cluster_spec(2)
    env = {"TENSORFLEET_PS_RELEASE_GRACE_SECONDS": "60"}
    ps = tasks(spec, "ps", 0, env=env)
    chief = tasks(spec, "worker", 0, "--train_steps=40", env=env)
    tf_config = json.dumps({"cluster": spec, "task": {"type": "worker", "index": 1}})
    launcher = started(OutputProc(
        [sys.executable, "-m", "tensorfleet_train", "--wait-for", "none", "--", sys.executable, SCRIPT,
         "--ps_hosts=" + ",".join(spec["ps"]), "--worker_hosts=" + ",".join(spec["worker"]), "--job_name=worker",
         "--task_index=1", "--train_steps=40", "--extra_seconds=600"],
        env={**env, "TF_CONFIG": tf_config, "TENSORFLEET_METRICS_PORT": "-1"}))
    pid = int(launcher.wait_for(r"script_started .* pid=(\d+)").group(1))   # the script child
    launcher.wait_for("Session initialization complete")
    assert chief.wait() == 0, chief.output
    os.kill(pid, signal.SIGKILL)
    killed = time.monotonic()
    assert launcher.wait(60) == 137, launcher.output
    assert "reported_end" in launcher.output
    assert ps.wait(60) == 0, ps.output
    assert ps.ended_at - killed < 20, ps.output   # not the 60 s grace
    assert "no end report" not in ps.output
