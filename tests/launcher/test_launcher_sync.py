"""tensorfleet-train --sync-replicas: the built-in models through tf.train.SyncReplicasOptimizer, as real processes.

The end-to-end tests need `tf.train.SyncReplicasOptimizer` (issue 11) and are skipped with that reason where
this tensorfleet has none. The oracle is TF 1.15's documented behaviour: only the chief's queue runner
applies updates, one per global step, each from `replicas_to_aggregate` gradients, so the job stops at
`--steps` (at most one step past it: a replica may hold a token from the queue's initial ones) and
every task exits 0.
"""
import json
import signal

from launcher_helpers import free_ports, tf_config
from tensorfleet_train.exit_codes import ExitCode

DIGITS = ["--data", "digits", "--log-format", "json"]


def test_single_process_sync_replicas_trains_to_exactly_the_target_step(launcher, tmp_path):
    proc = launcher(["--model", "mnist-softmax", "--steps", "150", "--log-every", "50", "--sync-replicas",
                     "--checkpoint-dir", str(tmp_path), *DIGITS])
    assert proc.wait() == 0, proc.output
    sync = proc.events("sync_replicas")[0]
    assert (sync["replicas_to_aggregate"], sync["total_num_replicas"]) == (1, 1)
    test = proc.events("test")[0]
    assert 150 <= test["global_step"] <= 151 and test["accuracy"] > 0.85, test
    assert proc.events("done")[0]["local_steps"] >= test["global_step"]   # a gradient for every update


def test_sync_metrics_time_every_step_at_the_barrier_and_sigterm_stops_it(launcher):
    """One observation of the barrier wait per step (the token dequeue timed apart from the gradients), the
    stale counter served from the start; SIGTERM stops the chief and its queue runner (143)."""
    from test_launcher_processes import _event, _scrape

    proc = launcher(["--model", "mnist-softmax", "--steps", "100000000", "--log-every", "5", "--sync-replicas",
                     *DIGITS], env={"TENSORFLEET_JOB_NAME": "sync-job"})
    port = json.loads(proc.wait_for(_event("metrics_serving")))["port"]
    first = json.loads(proc.wait_for(_event("progress")))["global_step"]
    proc.wait_for(lambda line: _event("progress")(line) and json.loads(line)["global_step"] > first)
    before, scraped, after = _scrape(port), _scrape(port), _scrape(port)   # back to back
    proc.signal(signal.SIGTERM)
    assert proc.wait() == ExitCode.SIGTERM, proc.output
    me = (("job_name", "sync-job"), ("replica_index", "0"), ("replica_type", "worker"))
    steps = scraped[("tensorfleet_train_steps_total", me)]
    assert steps > first
    # training goes on while a scrape reads one metric after the other: the two counts may differ by one step in
    # progress plus the steps made during the scrape (at most those made from the scrape before to the one after)
    during = after[("tensorfleet_train_steps_total", me)] - before[("tensorfleet_train_steps_total", me)]
    assert abs(scraped[("tensorfleet_sync_barrier_wait_seconds_count", me)] - steps) <= 1 + during
    assert scraped[("tensorfleet_sync_barrier_wait_seconds_sum", me)] >= 0
    assert ("tensorfleet_sync_stale_gradients_dropped_total", me) in scraped


def test_chief_ps_two_workers_sync_stop_at_the_target_step_and_release_the_ps(launcher, tmp_path):
    ps, chief_port, w0, w1 = free_ports(4)
    cluster = {"ps": [f"127.0.0.1:{ps}"], "chief": [f"127.0.0.1:{chief_port}"],
               "worker": [f"127.0.0.1:{w0}", f"127.0.0.1:{w1}"]}
    args = ["--model", "mnist-mlp", "--steps", "200", "--log-every", "50", "--sync-replicas",
            "--replicas-to-aggregate", "3", *DIGITS]
    ps_proc = launcher(args, tf_config=tf_config(cluster, "ps", 0))
    chief = launcher([*args, "--checkpoint-dir", str(tmp_path)], tf_config=tf_config(cluster, "chief", 0))
    workers = [launcher(args, tf_config=tf_config(cluster, "worker", i)) for i in range(2)]
    assert chief.wait() == 0, chief.output
    for worker in workers:
        assert worker.wait() == 0, worker.output
    assert ps_proc.wait() == 0, ps_proc.output
    for proc in (chief, *workers):
        sync = proc.events("sync_replicas")[0]
        assert (sync["replicas_to_aggregate"], sync["total_num_replicas"]) == (3, 3)
        assert 200 <= proc.events("done")[0]["global_step"] <= 201    # one update a global step, no race
    test = chief.events("test")[0]
    assert 200 <= test["global_step"] <= 201 and test["accuracy"] > 0.85, test
    # every global step took 3 gradients: the three tasks pushed at least 3 per update together
    assert sum(p.events("done")[0]["local_steps"] for p in (chief, *workers)) >= 3 * test["global_step"]
    assert json.loads((tmp_path / "training_complete.json").read_text())["global_step"] == test["global_step"]


def test_backup_worker_gradients_are_dropped_and_counted(launcher, tmp_path):
    """2 of 3 replicas aggregated (one backup worker): every push is either taken (TF's take_grad averages all
    the gradients accumulated once there are at least 2: 2 or 3 a global step), dropped as stale (the chief's
    final count, from the optimizer) or still in the accumulators at the end (fewer than 2: at most one)."""
    ps, chief_port, w0, w1 = free_ports(4)
    cluster = {"ps": [f"127.0.0.1:{ps}"], "chief": [f"127.0.0.1:{chief_port}"],
               "worker": [f"127.0.0.1:{w0}", f"127.0.0.1:{w1}"]}
    args = ["--model", "mnist-softmax", "--steps", "150", "--log-every", "25", "--sync-replicas",
            "--replicas-to-aggregate", "2", *DIGITS]
    ps_proc = launcher(args, tf_config=tf_config(cluster, "ps", 0))
    chief = launcher(args, tf_config=tf_config(cluster, "chief", 0))
    workers = [launcher(args, tf_config=tf_config(cluster, "worker", i)) for i in range(2)]
    for proc in (chief, *workers, ps_proc):
        assert proc.wait() == 0, proc.output
    done = chief.events("done")[0]
    pushes = sum(p.events("done")[0]["local_steps"] for p in (chief, *workers))
    steps = done["global_step"]
    assert 2 * steps <= pushes - done["stale_gradients"] <= 3 * steps + 1, (pushes, done)

