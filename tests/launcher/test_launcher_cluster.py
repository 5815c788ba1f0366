"""tensorfleet-train in a cluster: 1 ps + 2 workers, worker-only, SIGTERM, a lost ps, as real processes.

Needs the distributed runtime (`tf.train.Server`, issue 10); skipped with that reason where this
tensorfleet has none. Every task runs on 127.0.0.1 ports reserved by the test; handshakes are the
launcher's own log lines.
"""
import json
import signal
import time

import pytest
import tensorfleet as tf
from launcher_helpers import free_ports, tf_config
from tensorfleet_train.exit_codes import ExitCode

pytestmark = pytest.mark.skipif(not hasattr(tf.train, "Server"),
                                reason="needs the distributed runtime (tf.train.Server, issue 10)")

DIGITS = ["--data", "digits", "--log-format", "json"]


def _event(name):
    return lambda line: line.startswith("{") and json.loads(line).get("event") == name


def test_ps_and_two_workers_started_before_it_train_and_all_exit_0(launcher, tmp_path):
    ps, w0, w1 = free_ports(3)
    cluster = {"ps": [f"127.0.0.1:{ps}"], "worker": [f"127.0.0.1:{w0}", f"127.0.0.1:{w1}"]}
    args = ["--model", "mnist-mlp", "--steps", "400", "--log-every", "50", *DIGITS]
    chief = launcher([*args, "--checkpoint-dir", str(tmp_path / "ckpt")], tf_config=tf_config(cluster, "worker", 0))
    other = launcher(args, tf_config=tf_config(cluster, "worker", 1))
    for worker in (chief, other):   # both wait for the ps, which is not there yet
        assert json.loads(worker.wait_for(_event("peer_missing")))["peer"] == "ps:0"
    ps_proc = launcher(args, tf_config=tf_config(cluster, "ps", 0))
    assert chief.wait() == 0, chief.output
    assert other.wait() == 0, other.output
    assert ps_proc.wait() == 0, ps_proc.output   # released by the chief once both workers finished
    assert chief.events("peer_ready")[0]["peer"] == "ps:0" and other.events("peer_ready")[0]["peer"] == "ps:0"
    assert chief.events("initialized") and not other.events("initialized")
    assert other.events("done")[0]["local_steps"] > 0 and chief.events("done")[0]["local_steps"] > 0
    test = chief.events("test")[0]
    assert test["global_step"] >= 400 and test["accuracy"] >= 0.9, test
    assert chief.events("workers_finished")[0]["finished"] == 1 and chief.events("ps_released")
    assert all(d["role"] == "worker" and d["index"] == 1 for d in other.events("progress"))


def test_worker_only_cluster_shares_the_chiefs_variables(launcher):
    w0, w1 = free_ports(2)
    cluster = {"worker": [f"127.0.0.1:{w0}", f"127.0.0.1:{w1}"]}
    args = ["--model", "mnist-softmax", "--steps", "300", "--log-every", "50", *DIGITS]
    other = launcher(args, tf_config=tf_config(cluster, "worker", 1))
    assert json.loads(other.wait_for(_event("peer_missing")))["peer"] == "worker:0"
    chief = launcher(args, tf_config=tf_config(cluster, "worker", 0))
    assert chief.wait() == 0, chief.output
    assert other.wait() == 0, other.output
    # worker 1 trains the variables held by worker 0: it finishes at the same global step
    assert other.events("done")[0]["global_step"] >= 300 and chief.events("test")[0]["accuracy"] >= 0.85


def test_sigterm_in_a_cluster_chief_checkpoints_ps_exits_143(launcher, tmp_path):
    ps, chief_port, w0 = free_ports(3)
    cluster = {"ps": [f"127.0.0.1:{ps}"], "chief": [f"127.0.0.1:{chief_port}"], "worker": [f"127.0.0.1:{w0}"]}
    args = ["--model", "mnist-mlp", "--steps", "100000000", "--log-every", "5", "--save-checkpoint-steps", "0", *DIGITS]
    ps_proc = launcher(args, tf_config=tf_config(cluster, "ps", 0))
    chief = launcher([*args, "--checkpoint-dir", str(tmp_path)], tf_config=tf_config(cluster, "chief", 0))
    worker = launcher(args, tf_config=tf_config(cluster, "worker", 0))
    chief.wait_for(_event("progress"))
    worker.wait_for(_event("progress"))
    for proc in (chief, worker):
        proc.signal(signal.SIGTERM)
    assert chief.wait() == 143 and worker.wait() == 143
    saved = chief.events("checkpoint")
    assert len(saved) == 1 and tf.train.latest_checkpoint(str(tmp_path)) == saved[0]["path"]
    assert not worker.events("checkpoint")
    ps_proc.signal(signal.SIGTERM)
    assert ps_proc.wait() == 143


def test_lost_ps_exits_ps_unavailable_after_the_recovery_budget(launcher, tmp_path):
    ps, w0 = free_ports(2)
    cluster = {"ps": [f"127.0.0.1:{ps}"], "worker": [f"127.0.0.1:{w0}"]}
    args = ["--model", "mnist-mlp", "--steps", "100000000", "--log-every", "5", "--save-checkpoint-steps", "20",
            "--recovery-timeout", "3", *DIGITS]
    ps_proc = launcher(args, tf_config=tf_config(cluster, "ps", 0))
    chief = launcher([*args, "--checkpoint-dir", str(tmp_path)], tf_config=tf_config(cluster, "worker", 0))
    chief.wait_for(_event("checkpoint"))
    ps_proc.popen.kill()
    assert ps_proc.wait() == -signal.SIGKILL
    assert chief.wait() == ExitCode.PS_UNAVAILABLE, chief.output
    lost = chief.events("peer_lost")[0]
    assert "UnavailableError" in lost["msg"] and "/job:ps" in lost["msg"]
    assert "recovery: 1 peer(s) still unreachable after 3 s: ps:0" in chief.events("exit")[-1]["msg"]


def _scrape(port) -> dict:
    import urllib.request

    from prometheus_client.parser import text_string_to_metric_families

    body = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=30).read().decode()
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for fam in text_string_to_metric_families(body) for s in fam.samples}


def _total(scrape, name, **labels):
    return sum(v for (n, lab), v in scrape.items() if n == name and all((k, v2) in lab for k, v2 in labels.items()))


def test_metrics_of_every_task_move_during_training(launcher):
    from tensorfleet import metrics

    ps, w0, w1 = free_ports(3)
    cluster = {"ps": [f"127.0.0.1:{ps}"], "worker": [f"127.0.0.1:{w0}", f"127.0.0.1:{w1}"]}
    args = ["--model", "mnist-mlp", "--steps", "100000000", "--log-every", "20", *DIGITS]
    env = {"TENSORFLEET_JOB_NAME": "dist-mnist"}
    procs = {"ps": launcher(args, tf_config=tf_config(cluster, "ps", 0), env=env),
             "worker:0": launcher(args, tf_config=tf_config(cluster, "worker", 0), env=env),
             "worker:1": launcher(args, tf_config=tf_config(cluster, "worker", 1), env=env)}
    ports = {name: json.loads(p.wait_for(_event("metrics_serving")))["port"] for name, p in procs.items()}
    for name in ("worker:0", "worker:1"):
        procs[name].wait_for(_event("progress"))
    first = {name: _scrape(port) for name, port in ports.items()}
    for name in ("worker:0", "worker:1"):   # a progress line past the scraped step: this worker stepped since
        last = max(procs[name].events("progress")[-1]["global_step"],
                   _total(first[name], "tensorfleet_train_global_step"))
        procs[name].wait_for(lambda line, g=last: _event("progress")(line) and json.loads(line)["global_step"] > g)
    second = {name: _scrape(port) for name, port in ports.items()}
    # the ps holds every variable of the model (and the launcher's finished-workers counter): their exact bytes,
    # reported once a second
    from tensorfleet_train import models

    with tf.Graph().as_default():
        models.build("mnist-mlp", 64, None)
        tf.Variable(0, trainable=False, name="tensorfleet_workers_done")
        expected = sum(v.dtype.size * v.get_shape().num_elements() for v in tf.global_variables())
    ps_me = {"job_name": "dist-mnist", "replica_type": "ps", "replica_index": "0"}
    ps_bytes, deadline = None, time.monotonic() + 60
    while hasattr(metrics, "TrainerMetrics") and ps_bytes != expected and time.monotonic() < deadline:
        ps_bytes = _total(_scrape(ports["ps"]), "tensorfleet_ps_variable_bytes", **ps_me)
        time.sleep(0.2)
    for proc in procs.values():
        proc.signal(signal.SIGTERM)
    assert [proc.wait() for proc in procs.values()] == [143, 143, 143]
    runs = "tensorfleet_executor_runs_total"
    assert _total(second["ps"], runs) > _total(first["ps"], runs) > 0   # the ps runs the workers' partitions
    if not hasattr(metrics, "TrainerMetrics"):
        return
    assert ps_bytes == expected
    for name, index in (("worker:0", "0"), ("worker:1", "1")):
        me = {"job_name": "dist-mnist", "replica_type": "worker", "replica_index": index}
        for series in ("tensorfleet_train_steps_total", "tensorfleet_train_examples_total",
                       "tensorfleet_train_global_step"):
            assert _total(second[name], series, **me) > _total(first[name], series, **me) > 0, (name, series)
        assert _total(second[name], "tensorfleet_train_examples_per_second", **me) > 0


def test_restarted_ps_is_restored_from_the_chiefs_checkpoint(launcher, tmp_path):
    # with the bulk path on (the default): the runtime's client must notice the ps's new process (new bulk
    # port and local socket) and reconnect
    ps, w0 = free_ports(2)
    cluster = {"ps": [f"127.0.0.1:{ps}"], "worker": [f"127.0.0.1:{w0}"]}
    env: dict = {}
    args = ["--model", "mnist-mlp", "--steps", "100000000", "--log-every", "5", "--save-checkpoint-steps", "20",
            "--recovery-timeout", "60", *DIGITS]
    ps_proc = launcher(args, tf_config=tf_config(cluster, "ps", 0), env=env)
    chief = launcher([*args, "--checkpoint-dir", str(tmp_path)], tf_config=tf_config(cluster, "worker", 0), env=env)
    chief.wait_for(_event("checkpoint"))
    ps_proc.popen.kill()
    assert ps_proc.wait() == -signal.SIGKILL
    chief.wait_for(_event("peer_lost"))
    ps_again = launcher(args, tf_config=tf_config(cluster, "ps", 0), env=env)   # the pod, recreated
    restored = json.loads(chief.wait_for(_event("restored")))
    checkpoint_step = int(restored["path"].rsplit("-", 1)[1])

    def resumed(line):
        return _event("training")(line) and json.loads(line)["global_step"] > 0

    assert json.loads(chief.wait_for(resumed))["global_step"] == checkpoint_step > 0   # not from scratch
    chief.wait_for(lambda line: _event("progress")(line) and json.loads(line)["global_step"] > checkpoint_step + 5)
    for proc in (chief, ps_again):
        proc.signal(signal.SIGTERM)
    assert chief.wait() == 143 and ps_again.wait() == 143
