"""A released ps that does not join (ps_lifetime.end_released_process): its process ends with the release's status.

- the TF1 "done queue" idiom (the ps's main thread dequeues one token per worker instead of `server.join()`): a
  worker dies before its token, the grace period ends, the release stops the ps; the dequeue ends the process
  with SystemExit(0) (its `finally` runs), not a CancelledError traceback and status 1;
- the same idiom when every worker sends its token: every process exits 0, the last token's step too, whose
  reply the exiting ps still sends;
- servers released in a process that hosts others (tests) never end it.
"""
import threading
import time


import tensorfleet as tf
from life_procs import spec
from tensorfleet.distributed import shutdown


def test_a_done_queue_ps_stopped_by_the_release_exits_0(procs, tmp_path):
    cluster = spec(workers=2)
    go = tmp_path / "go"
    env = {"TENSORFLEET_PS_RELEASE_GRACE_SECONDS": "2", "GO_FILE": str(go)}
    ps = procs(cluster, "ps", 0, "done_queue", env=env)
    chief = procs(cluster, "worker", 0, "done_queue", env=env)
    dying = procs(cluster, "worker", 1, "done_queue_die", env=env)
    ps.wait_for("^PS WAITING")    # the ps dequeues ...
    assert dying.wait() == 9, dying.output   # ... a worker died before its token ...
    go.touch()                    # ... and the chief sends its token and ends (releases)
    assert chief.wait() == 0, chief.output
    assert ps.wait(60) == 0, ps.output
    assert "ps got done token 0" in ps.output and "PS-FINALLY" in ps.output, ps.output
    assert "no end report from /job:worker/replica:0/task:1" in ps.output, ps.output
    assert "Traceback" not in ps.output and "CancelledError" not in ps.output, ps.output


def test_a_done_queue_ps_whose_workers_all_send_their_token_exits_0(procs):
    cluster = spec(workers=2)
    env = {"TENSORFLEET_PS_RELEASE_GRACE_SECONDS": "10"}
    ps = procs(cluster, "ps", 0, "done_queue", env=env)
    workers = [procs(cluster, "worker", i, "done_queue", env=env) for i in range(2)]
    for w in workers:
        assert w.wait() == 0, w.output
        assert "TOKEN SENT" in w.output
    assert ps.wait(60) == 0, ps.output
    assert "Traceback" not in ps.output, ps.output


def test_a_done_queue_ps_ending_at_the_last_token_sends_that_steps_reply_first(procs):
    """The last token's dequeue returns and the ps's script exits at once, while the step that enqueued it is
    still making and sending its reply (64 MB): the process waits for the reply (server._drain_at_exit)."""
    cluster = spec(workers=1)
    ps = procs(cluster, "ps", 0, "done_queue")
    worker = procs(cluster, "worker", 0, "done_queue_big")
    assert worker.wait() == 0, worker.output
    assert "TOKEN SENT %s" % float(1 << 24) in worker.output, worker.output
    assert ps.wait(60) == 0, ps.output
    assert "ps got done token 0" in ps.output and "PS END" in ps.output, ps.output


def test_a_ps_released_in_a_process_with_other_servers_does_not_end_it(monkeypatch):
    monkeypatch.setenv("TENSORFLEET_PS_RELEASE_GRACE_SECONDS", "0.2")
    cluster = spec(workers=1)
    ps = tf.train.Server(cluster, job_name="ps", task_index=0)
    chief = tf.train.Server(cluster, job_name="worker", task_index=0)
    try:
        shutdown.release_cluster(chief)
        deadline = time.monotonic() + 30
        while not ps.is_stopped and time.monotonic() < deadline:
            time.sleep(0.05)
        assert ps.is_stopped and ps.exit_code == 0
        assert not ps.released_exit
        time.sleep(0.5)   # nothing is raised in this (the main) thread
        assert not [t for t in threading.enumerate() if t.name.startswith("tf-released-exit")]
    finally:
        chief.stop()
        ps.stop()
