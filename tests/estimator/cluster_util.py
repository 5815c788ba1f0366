"""Starting a chief/ps/worker/evaluator cluster of real processes on 127.0.0.1 for the estimator tests."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time

from loopback_ports import free_ports  # noqa: F401 (re-exported: the test modules import it from here)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))



def operator_cluster(counts: dict) -> dict:
    """{type: [addresses]} as the operator writes it (evaluator included), on free loopback ports."""
    ports = iter(free_ports(sum(counts.values())))
    return {t: [f"127.0.0.1:{next(ports)}" for _ in range(n)] for t, n in sorted(counts.items())}


def tf_config(cluster, task_type, index):
    return json.dumps({"cluster": cluster, "task": {"type": task_type, "index": index}, "environment": "cloud"})


def start(argv, cluster, task_type, index, log_dir, extra_env=None):
    env = dict(os.environ)
    env.update({"TF_CONFIG": tf_config(cluster, task_type, index), "OPENBLAS_NUM_THREADS": "1",
                "PYTHONPATH": os.pathsep.join([os.path.join(ROOT, "trainer"), env.get("PYTHONPATH", "")])})
    env.update(extra_env or {})
    log = open(os.path.join(log_dir, f"{task_type}-{index}.log"), "w")
    proc = subprocess.Popen([sys.executable] + argv, env=env, stdout=log, stderr=subprocess.STDOUT, cwd=ROOT,
                            start_new_session=True)
    proc.log_path = log.name  # type: ignore[attr-defined]
    log.close()
    return proc


def wait_all(procs, timeout):
    deadline = time.monotonic() + timeout
    for p in procs:
        remaining = max(0.1, deadline - time.monotonic())
        try:
            p.wait(remaining)
        except subprocess.TimeoutExpired:
            return False
    return True


def kill_all(procs):
    for p in procs:
        if p.poll() is None:
            try:
                os.killpg(p.pid, 9)
            except ProcessLookupError:
                pass
            p.wait(10)


def read_log(p):
    with open(p.log_path) as f:
        return f.read()
