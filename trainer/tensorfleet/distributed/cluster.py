"""`tf.train.ClusterSpec`: the jobs of a training cluster and the address of every task.

The first thing a distributed script builds (from TF_CONFIG via `resolver`, or
from command-line host lists); `Server` binds its own task's address from it,
the master places nodes on its tasks and `replica_device_setter` counts its ps
tasks. TF 1.15's constructors, methods and error messages.
"""
from __future__ import annotations

from .protos import cluster_pb2

ClusterDef = cluster_pb2.ClusterDef
JobDef = cluster_pb2.JobDef


class ClusterSpec:
    """Jobs -> {task index: "host:port"}; built from a dict of lists, a dict of dicts, a ClusterSpec or a ClusterDef."""

    def __init__(self, cluster):
        if isinstance(cluster, dict):
            self._cluster_spec = {}
            for job_name, tasks in cluster.items():
                if not isinstance(job_name, str):
                    raise TypeError(f"Job name {job_name!r} must be bytes or unicode")
                self._cluster_spec[job_name] = _task_dict(job_name, tasks)
        elif isinstance(cluster, ClusterDef):
            self._cluster_spec = {}
            for job_def in cluster.job:
                if job_def.name in self._cluster_spec:
                    raise ValueError(f"Duplicate job name in cluster_def: {job_def.name!r}")
                self._cluster_spec[job_def.name] = {int(i): a for i, a in job_def.tasks.items()}
        elif isinstance(cluster, ClusterSpec):
            self._cluster_spec = {job: dict(tasks) for job, tasks in cluster._cluster_spec.items()}
        else:
            raise TypeError("`cluster` must be a dictionary mapping one or more job names to lists of network "
                            "addresses, or a `ClusterDef` protocol buffer")
        self._cluster_def = self._make_cluster_def()

    def _make_cluster_def(self) -> ClusterDef:
        cd = ClusterDef()
        for job_name in sorted(self._cluster_spec):
            job = cd.job.add(name=job_name)
            for index, address in sorted(self._cluster_spec[job_name].items()):
                job.tasks[index] = address
        return cd

    # -- TF's API ----------------------------------------------------------------------------
    def __bool__(self):
        return bool(self._cluster_spec)

    def __eq__(self, other):
        return isinstance(other, ClusterSpec) and self._cluster_spec == other._cluster_spec

    def __ne__(self, other):
        return not self == other

    __hash__ = None  # type: ignore[assignment]  # mutable-looking like TF's (it defines __eq__ only)

    def __str__(self):
        key_values = self.as_dict()
        return "ClusterSpec({" + ", ".join(f"{k!r}: {key_values[k]!r}" for k in sorted(key_values)) + "})"

    __repr__ = __str__

    def as_dict(self) -> dict:
        """{job: [addresses]} for dense task indices 0..n-1, else {job: {index: address}}."""
        out: dict = {}
        for job, tasks in self._cluster_spec.items():
            indices = sorted(tasks)
            if indices == list(range(len(indices))):
                out[job] = [tasks[i] for i in indices]
            else:
                out[job] = {i: tasks[i] for i in indices}
        return out

    def as_cluster_def(self) -> ClusterDef:
        return self._cluster_def

    @property
    def jobs(self) -> list:
        return list(self._cluster_spec.keys())

    def _job(self, job_name: str) -> dict:
        try:
            return self._cluster_spec[job_name]
        except KeyError:
            raise ValueError(f"No such job in cluster: {job_name!r}") from None

    def num_tasks(self, job_name: str) -> int:
        return len(self._job(job_name))

    def task_indices(self, job_name: str) -> list:
        return sorted(self._job(job_name))

    def task_address(self, job_name: str, task_index: int) -> str:
        job = self._job(job_name)
        try:
            return job[task_index]
        except KeyError:
            raise ValueError(f"No such task index in job {job_name!r}: {task_index}") from None

    def job_tasks(self, job_name: str) -> list:
        """The addresses of a job's tasks by index, None for the gaps of a sparse job."""
        job = self._job(job_name)
        if not job:
            return []
        return [job.get(i) for i in range(max(job) + 1)]

    # -- helpers for the runtime -------------------------------------------------------------
    def tasks(self) -> list:
        """[(job, index, address)] sorted by job then index."""
        return [(job, i, a) for job in sorted(self._cluster_spec) for i, a in sorted(self._cluster_spec[job].items())]

    def with_address(self, job_name: str, task_index: int, address: str) -> "ClusterSpec":
        """A copy with one task's address replaced (a server that bound port 0 reports its real port)."""
        spec = ClusterSpec(self)
        spec._cluster_spec[job_name][task_index] = address
        spec._cluster_def = spec._make_cluster_def()
        return spec


def _task_dict(job_name: str, tasks) -> dict:
    if isinstance(tasks, (list, tuple)):
        out = dict(enumerate(tasks))
    elif isinstance(tasks, dict):
        out = {}
        for index, address in tasks.items():
            if not isinstance(index, int) or isinstance(index, bool):
                raise TypeError(f"Task index must be an integer (job {job_name!r}, got {index!r})")
            out[index] = address
    else:
        raise TypeError(f"The tasks for job {job_name!r} must be a list or a dictionary from integers to "
                        f"strings, got {type(tasks).__name__}")
    for index, address in out.items():
        if not isinstance(address, str):
            raise TypeError(f"Task address of job {job_name!r} task {index} must be a string, got {address!r}")
        if index < 0:
            raise ValueError(f"Task index of job {job_name!r} must be non-negative, got {index}")
    return out


def server_def_parts(server_or_cluster_def, job_name, task_index, protocol) -> tuple:
    """(cluster, job_name, task_index, protocol) of a `tf.train.Server`'s arguments, with TF's inference rules:
    the job and the task are inferred only when there is exactly one possibility."""
    if isinstance(server_or_cluster_def, cluster_pb2.ServerDef):
        sd = server_or_cluster_def
        cluster = ClusterSpec(sd.cluster)
        job_name = job_name if job_name is not None else (sd.job_name or None)
        task_index = task_index if task_index is not None else sd.task_index
        protocol = protocol or sd.protocol or "grpc"
    else:
        cluster = ClusterSpec(server_or_cluster_def)
        protocol = protocol or "grpc"
    if not cluster:
        raise ValueError("The cluster of a Server must have at least one job")
    if job_name is None:
        if len(cluster.jobs) != 1:
            raise ValueError("Must specify an explicit `job_name`.")
        job_name = cluster.jobs[0]
    if job_name not in cluster.jobs:
        raise ValueError(f"Job {job_name!r} is not in the cluster (jobs: {sorted(cluster.jobs)})")
    if task_index is None:
        indices = cluster.task_indices(job_name)
        if len(indices) != 1:
            raise ValueError("Must specify an explicit `task_index`.")
        task_index = indices[0]
    cluster.task_address(job_name, task_index)  # ValueError naming the job if the task is missing
    return cluster, job_name, int(task_index), protocol
