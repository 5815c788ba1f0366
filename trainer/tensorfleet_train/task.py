"""This process's task, read from `TF_CONFIG` exactly as the operator writes it.

First step of the flow (cli.py -> task.py -> startup.py -> roles): `task_from_environ()` validates
TF_CONFIG and returns a `Task` (cluster, type, index, whether it is the chief, which peers it needs).
No TF_CONFIG means a single process (the operator sets none for a job with one pod): type `worker`,
index 0, chief, no cluster.

Rules (TF 1.15 / Kubeflow): the chief is the `chief` (or legacy `master`) task; in a cluster without
one, worker 0. The evaluator is not part of the training cluster (TF runs no server for it); ps and
worker tasks never wait for or connect to it.
"""
from __future__ import annotations

import dataclasses
import json
from typing import Mapping, Optional

from .exit_codes import ExitCode, LauncherExit

ROLES = ("chief", "master", "ps", "worker", "evaluator")
TRAINING_JOBS = ("chief", "master", "ps", "worker")   # the jobs that run a server


@dataclasses.dataclass(frozen=True)
class Task:
    type: str                         # chief, master, ps, worker, evaluator
    index: int
    cluster: dict                     # job -> [host:port], as in TF_CONFIG; {} for a single process
    rpc_layer: str = "grpc"

    @property
    def is_distributed(self) -> bool:
        return bool(self.training_cluster())

    @property
    def is_chief(self) -> bool:
        if self.type in ("chief", "master"):
            return True
        if self.type != "worker":
            return False
        has_chief = any(self.cluster.get(j) for j in ("chief", "master"))
        return self.index == 0 and not has_chief

    @property
    def num_replicas(self) -> int:
        """The tasks that compute gradients (chief/master and workers): SyncReplicasOptimizer's
        `total_num_replicas`; 1 for a single process."""
        return max(1, sum(len(self.cluster.get(job) or []) for job in ("chief", "master", "worker")))

    @property
    def chief_job(self) -> Optional[str]:
        """The job the chief belongs to (`chief`, `master` or `worker`), None without a cluster."""
        for job in ("chief", "master"):
            if self.cluster.get(job):
                return job
        return "worker" if self.cluster.get("worker") else None

    @property
    def address(self) -> Optional[str]:
        addresses = self.cluster.get(self.type) or []
        return addresses[self.index] if self.index < len(addresses) else None

    @property
    def name(self) -> str:
        return f"{self.type}:{self.index}"

    def training_cluster(self) -> dict:
        """The cluster the servers form: every job except the evaluator."""
        return {job: list(addrs) for job, addrs in self.cluster.items() if job in TRAINING_JOBS and addrs}

    def peers_needed(self) -> dict:
        """Peers (`job:index` -> `host:port`) this task connects to before it trains.

        Training tasks (chief/worker) need every ps task (the variables live there), or, in a
        worker-only cluster, the chief (worker 0 holds the variables). A ps serves and needs no one (a
        restarted ps must not wait for workers that have finished); the evaluator reads checkpoints.
        """
        if self.type in ("ps", "evaluator") or not self.is_distributed:
            return {}
        if self.cluster.get("ps"):
            return {f"ps:{i}": a for i, a in enumerate(self.cluster["ps"])}
        if self.is_chief:
            return {}
        job = self.chief_job
        return {f"{job}:0": self.cluster[job][0]}

    def peers_all(self) -> dict:
        """Every other task of the training cluster (`--wait-for all`); none for the evaluator."""
        if self.type == "evaluator":
            return {}
        return {f"{job}:{i}": address for job, addresses in sorted(self.training_cluster().items())
                for i, address in enumerate(addresses) if (job, i) != (self.type, self.index)}


def _bad(message: str) -> LauncherExit:
    return LauncherExit(ExitCode.INVALID_TF_CONFIG, f"invalid TF_CONFIG: {message}")


def _check_address(job: str, i: int, address) -> str:
    if not isinstance(address, str) or ":" not in address:
        raise _bad(f"cluster.{job}[{i}] must be a 'host:port' string, got {address!r}")
    host, _, port = address.rpartition(":")
    if not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise _bad(f"cluster.{job}[{i}] must be 'host:port' with a port 1-65535, got {address!r}")
    return address


def _parse_cluster(cluster_doc) -> dict:
    if not isinstance(cluster_doc, dict):
        raise _bad("cluster must be an object of job -> list of 'host:port'")
    cluster = {}
    for job, addresses in cluster_doc.items():
        if job not in ROLES:
            raise _bad(f"cluster has an unknown job {job!r} (expected one of {', '.join(ROLES)})")
        if isinstance(addresses, dict):   # TF's sparse form {"0": "host:port"}
            try:
                indexed = {int(k): v for k, v in addresses.items()}
            except ValueError:
                raise _bad(f"cluster.{job} has a non-integer task index") from None
            if sorted(indexed) != list(range(len(indexed))):
                raise _bad(f"cluster.{job} task indices must be 0..n-1, got {sorted(indexed)}")
            addresses = [indexed[i] for i in range(len(indexed))]
        if not isinstance(addresses, list):
            raise _bad(f"cluster.{job} must be a list of 'host:port', got {type(addresses).__name__}")
        cluster[job] = [_check_address(job, i, a) for i, a in enumerate(addresses)]
    return cluster


def _parse_task(task_doc) -> tuple:
    if not isinstance(task_doc, dict):
        raise _bad("task must be an object with 'type' and 'index'")
    task_type = task_doc.get("type")
    if not isinstance(task_type, str) or task_type.lower() not in ROLES:
        raise _bad(f"task.type must be one of {', '.join(ROLES)}, got {task_type!r}")
    index = task_doc.get("index", 0)
    if isinstance(index, str) and index.isdigit():
        index = int(index)
    if not isinstance(index, int) or isinstance(index, bool) or index < 0:
        raise _bad(f"task.index must be a non-negative integer, got {index!r}")
    return task_type.lower(), index


def parse_tf_config(raw: str) -> Task:
    """A `Task` from TF_CONFIG's JSON text; a clear `LauncherExit(INVALID_TF_CONFIG)` naming the field."""
    try:
        doc = json.loads(raw)
    except ValueError as e:
        raise _bad(f"not valid JSON ({e})") from None
    if not isinstance(doc, dict):
        raise _bad(f"must be a JSON object, got {type(doc).__name__}")
    cluster = _parse_cluster(doc.get("cluster", {}))
    rpc_layer = str(doc.get("rpc_layer") or "grpc")
    if doc.get("task") is None and not cluster:
        return Task("worker", 0, {}, rpc_layer)
    task_type, index = _parse_task(doc.get("task"))
    if cluster:
        tasks = cluster.get(task_type, [])
        if index >= len(tasks):
            raise _bad(f"task {task_type}:{index} is not in cluster.{task_type} ({len(tasks)} task(s))")
        if task_type != "evaluator" and not any(cluster.get(j) for j in ("chief", "master", "worker")):
            raise _bad("the cluster has no chief, master or worker task to train")
    elif task_type != "evaluator" and (task_type != "worker" or index != 0):
        raise _bad(f"task {task_type}:{index} needs a cluster")
    return Task(task_type, index, cluster, rpc_layer)


def task_from_environ(environ: Mapping[str, str]) -> Task:
    """The task of this process: TF_CONFIG's, or a single process (worker 0, the chief) without it."""
    raw = environ.get("TF_CONFIG", "").strip()
    if not raw:
        return Task("worker", 0, {})
    return parse_tf_config(raw)
