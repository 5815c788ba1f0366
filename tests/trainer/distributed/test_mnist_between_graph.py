"""The proof run: examples/distributed/mnist_replica.py as 1 ps + 2 worker processes on 127.0.0.1,
async between-graph replication through plain Sessions (the chief initialises, the other worker waits
on report_uninitialized_variables), reaching at least 95% on the 10,000 MNIST test images."""
import json
import os
import subprocess
import sys

import pytest

from dist_cluster import ROOT, free_ports, task_env

pytestmark = pytest.mark.slow
EXAMPLE = os.path.join(ROOT, "examples", "distributed", "mnist_replica.py")


def test_mnist_mlp_1ps_2workers_async_reaches_95_percent(full_mnist_dir):
    p0, p1, p2 = free_ports(3)
    hosts = [f"--ps_hosts=127.0.0.1:{p0}", f"--worker_hosts=127.0.0.1:{p1},127.0.0.1:{p2}", "--train_steps=600"]
    env = task_env({"TENSORFLEET_DATA_DIR": os.path.dirname(full_mnist_dir)} if full_mnist_dir else None)
    procs = {}
    try:
        for job, index in (("ps", 0), ("worker", 1), ("worker", 0)):  # the non-chief starts before the chief
            procs[(job, index)] = subprocess.Popen(
                [sys.executable, EXAMPLE, *hosts, f"--job_name={job}", f"--task_index={index}"],
                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
        out0, _ = procs[("worker", 0)].communicate(timeout=400)
        out1, _ = procs[("worker", 1)].communicate(timeout=120)
    finally:
        for p in procs.values():
            if p.poll() is None:
                p.kill()
            p.wait(10)
    assert procs[("worker", 0)].returncode == 0, out0
    assert procs[("worker", 1)].returncode == 0, out1
    assert "waiting for the chief" in out1 or "global step" in out1
    result = json.loads(out0.strip().splitlines()[-1])
    assert result["global_step"] == 1200, out0
    assert result["test_accuracy"] >= 0.95, out0


def test_mnist_mlp_from_tf_config_as_the_operator_writes_it(full_mnist_dir):
    """Chief + ps + worker, each told its place only by TF_CONFIG in Kubeflow's format."""
    pc, pp, pw = free_ports(3)
    cluster = {"chief": [f"127.0.0.1:{pc}"], "ps": [f"127.0.0.1:{pp}"], "worker": [f"127.0.0.1:{pw}"]}
    procs = {}
    try:
        for job in ("ps", "worker", "chief"):
            tf_config = json.dumps({"cluster": cluster, "task": {"type": job, "index": 0}, "environment": "cloud"})
            procs[job] = subprocess.Popen([sys.executable, EXAMPLE, "--train_steps=400"], stdout=subprocess.PIPE,
                                          stderr=subprocess.STDOUT, text=True,
                                          env=task_env({"TF_CONFIG": tf_config}))
        out_chief, _ = procs["chief"].communicate(timeout=400)
        out_worker, _ = procs["worker"].communicate(timeout=120)
    finally:
        for p in procs.values():
            if p.poll() is None:
                p.kill()
            p.wait(10)
    assert procs["chief"].returncode == 0, out_chief
    assert procs["worker"].returncode == 0, out_worker
    result = json.loads(out_chief.strip().splitlines()[-1])
    assert result["global_step"] == 800 and result["test_accuracy"] >= 0.93, out_chief
