"""The proof runs of issue 11's training-loop styles: 1 ps + N workers as real processes on 127.0.0.1,
the TF1 example scripts of examples/distributed/ (only the import changed), each reaching at least 95% on
the 10,000 MNIST test images: Supervisor style and MonitoredTrainingSession style, each synchronous
(SyncReplicasOptimizer, replicas_to_aggregate=2) and asynchronous; backup workers (3 workers, 2 aggregated)
finishing; a non-chief started 5 s before its chief.

Oracle: the MNIST test labels (accuracy), the global step the scripts were told to stop at, and the
SyncReplicasOptimizer's bookkeeping (every applied step consumed `replicas_to_aggregate` gradients)."""
import json
import os
import signal
import subprocess
import sys
import time

import pytest

from dist_cluster import ROOT, free_ports, task_env

pytestmark = pytest.mark.slow
SUPERVISOR = os.path.join(ROOT, "examples", "distributed", "mnist_sync_replicas.py")
MONITORED = os.path.join(ROOT, "examples", "distributed", "mnist_monitored_replica.py")
# global steps (a sync step averages 2 batches of 100); 300/600 left too little margin (0.949999 once)
SYNC_STEPS, ASYNC_STEPS = 450, 1000
SYNC_LR = "--learning_rate=0.8"  # (async: the scripts' 0.5)


def _last_json(out: str) -> dict:
    return json.loads([line for line in out.strip().splitlines() if line.startswith("{")][-1])


class _Run:
    """One ps + `workers` worker processes of `script`; every process is killed at the end."""

    def __init__(self, script, workers, args, full_mnist_dir, tmp_path):
        ports = free_ports(workers + 1)
        self.hosts = [f"--ps_hosts=127.0.0.1:{ports[0]}",
                      "--worker_hosts=" + ",".join(f"127.0.0.1:{p}" for p in ports[1:])]
        self.script, self.args, self.tmp = script, list(args), tmp_path
        self.env = task_env({"PYTHONFAULTHANDLER": "1",
                             **({"TENSORFLEET_DATA_DIR": os.path.dirname(full_mnist_dir)} if full_mnist_dir else {})})
        self.procs: dict = {}

    def start(self, job, index, extra=()):
        log = open(self.tmp / f"{job}{index}.log", "w+")
        self.procs[(job, index)] = (subprocess.Popen(
            [sys.executable, "-u", self.script, *self.hosts, f"--job_name={job}", f"--task_index={index}",
             *self.args, *extra], stdout=log, stderr=subprocess.STDOUT, text=True, env=self.env), log)

    def output(self, job, index) -> str:
        log = self.procs[(job, index)][1]
        log.flush()
        with open(log.name) as f:
            return f.read()

    def wait_for_line(self, job, index, text, timeout=120):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            out = self.output(job, index)
            if text in out:
                return
            assert self.procs[(job, index)][0].poll() is None, out
            time.sleep(0.1)
        raise AssertionError(f"{job}:{index} never printed {text!r}: {self.output(job, index)}")

    def finish(self, workers, timeout=240) -> list:
        """Waits for every worker (chief first); returns their outputs; asserts they exited 0. A worker still
        running after `timeout` s is sent SIGABRT (faulthandler prints its threads' stacks into its log)."""
        outs = []
        deadline = time.monotonic() + timeout
        for i in range(workers):
            proc = self.procs[("worker", i)][0]
            try:
                proc.wait(max(1.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                for j in range(workers):
                    if self.procs[("worker", j)][0].poll() is None:
                        self.procs[("worker", j)][0].send_signal(signal.SIGABRT)
                time.sleep(2)
                logs = "\n".join(f"--- worker {j}:\n{self.output('worker', j)}" for j in range(workers))
                pytest.fail(f"worker {i} did not finish in {timeout} s:\n{logs}")
            out = self.output("worker", i)
            assert proc.returncode == 0, out
            outs.append(out)
        return outs

    def kill_all(self):
        for proc, log in self.procs.values():
            if proc.poll() is None:
                proc.kill()
            proc.wait(10)
            log.close()


@pytest.fixture
def mnist_run(full_mnist_dir, tmp_path):
    runs = []

    def make(script, workers, *args):
        run = _Run(script, workers, args, full_mnist_dir, tmp_path)
        runs.append(run)
        return run

    yield make
    for run in runs:
        run.kill_all()


def _train(mnist_run, script, workers, *args, non_chief_first=False):
    run = mnist_run(script, workers, *args)
    run.start("ps", 0)
    for i in range(1, workers):
        run.start("worker", i)
    if non_chief_first:  # the scenario itself: the chief starts only once the other worker waits for it
        run.wait_for_line("worker", 1, "Waiting for session to be initialized")
    run.start("worker", 0)
    return run.finish(workers)


def test_supervisor_style_sync_replicas_reaches_95_percent_with_the_non_chief_first(mnist_run):
    outs = _train(mnist_run, SUPERVISOR, 2, "--sync_replicas", SYNC_LR, f"--train_steps={SYNC_STEPS}",
                  non_chief_first=True)
    chief, other = _last_json(outs[0]), _last_json(outs[1])
    assert chief["sync"] and chief["test_accuracy"] >= 0.95, outs[0]
    assert chief["global_step"] in (SYNC_STEPS, SYNC_STEPS + 1), outs[0]
    assert "Waiting for session to be initialized" in outs[1]
    # every applied step took 2 gradients; the rest were dropped as stale or are still accumulated (< 2)
    pushed = chief["local_steps"] + other["local_steps"]
    assert 2 * chief["global_step"] + chief["stale_gradients"] <= pushed <= \
        2 * chief["global_step"] + chief["stale_gradients"] + 2 * 2, (outs[0], outs[1])


def test_monitored_training_session_style_sync_replicas_reaches_95_percent(mnist_run):
    outs = _train(mnist_run, MONITORED, 2, "--sync_replicas", SYNC_LR, f"--train_steps={SYNC_STEPS}")
    chief, other = _last_json(outs[0]), _last_json(outs[1])
    assert chief["sync"] and chief["test_accuracy"] >= 0.95, outs[0]
    assert chief["global_step"] == SYNC_STEPS, outs[0]  # StopAtStepHook: exactly the last step
    pushed = chief["local_steps"] + other["local_steps"]
    assert 2 * SYNC_STEPS + chief["stale_gradients"] <= pushed <= 2 * SYNC_STEPS + chief["stale_gradients"] + 4


def test_supervisor_style_async_reaches_95_percent(mnist_run):
    outs = _train(mnist_run, SUPERVISOR, 2, f"--train_steps={ASYNC_STEPS}")
    chief = _last_json(outs[0])
    assert not chief["sync"] and chief["test_accuracy"] >= 0.95, outs[0]
    assert chief["global_step"] >= ASYNC_STEPS, outs[0]


def test_monitored_training_session_style_async_reaches_95_percent(mnist_run):
    outs = _train(mnist_run, MONITORED, 2, f"--train_steps={ASYNC_STEPS}")
    chief, other = _last_json(outs[0]), _last_json(outs[1])
    assert not chief["sync"] and chief["test_accuracy"] >= 0.95, outs[0]
    assert chief["global_step"] >= ASYNC_STEPS, outs[0]
    assert chief["local_steps"] + other["local_steps"] >= ASYNC_STEPS  # every step applied, none dropped


def test_backup_workers_three_workers_two_aggregated_finish(mnist_run):
    steps = 100
    outs = _train(mnist_run, MONITORED, 3, "--sync_replicas", "--replicas_to_aggregate=2", SYNC_LR,
                  f"--train_steps={steps}")
    results = [_last_json(o) for o in outs]
    chief = results[0]
    # one step more when the chief's last run began two steps before the end and, given a token back by a
    # leaving worker, pushed a fresh gradient beside another worker's one step more (StopAtStepHook's rule)
    assert chief["global_step"] in (steps, steps + 1), outs[0]
    assert chief["test_accuracy"] >= 0.85, outs[0]
    pushed = sum(r["local_steps"] for r in results)
    # each step took 2 gradients, or 3 when the third arrived before the take; late ones were dropped
    assert 2 * steps + chief["stale_gradients"] <= pushed <= 3 * steps + chief["stale_gradients"] + 3 * 2, outs
