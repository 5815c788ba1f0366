"""`tf.distribute.cluster_resolver.TFConfigClusterResolver`: the cluster from the TF_CONFIG variable.

How a pod finds its peers: the operator writes TF_CONFIG (Kubeflow's format:
{"cluster": {job: [host:port, ...]}, "task": {"type": job, "index": i},
"environment": "cloud"}, optionally "rpc_layer" and "session_master"); this reads it
lazily, as TF 1.15 does, so a changed variable is seen by the next call.
"""
from __future__ import annotations

import json
import os
from typing import Optional

from .cluster import ClusterSpec

_ENV = "TF_CONFIG"


def _load() -> dict:
    text = os.environ.get(_ENV, "")
    if not text.strip():
        return {}
    try:
        config = json.loads(text)
    except json.JSONDecodeError as e:
        raise ValueError(f"{_ENV} is not valid JSON: {e}") from None
    if not isinstance(config, dict):
        raise ValueError(f"{_ENV} must be a JSON object, got {type(config).__name__}")
    return config


class TFConfigClusterResolver:
    """Reads the cluster, this task and the RPC layer from TF_CONFIG."""

    def __init__(self, task_type: Optional[str] = None, task_id: Optional[int] = None,
                 rpc_layer: Optional[str] = None, environment: Optional[str] = None):
        self._task_type = task_type
        self._task_id = task_id
        self._rpc_layer = rpc_layer
        self._environment = environment

    @property
    def task_type(self) -> Optional[str]:
        if self._task_type is None:
            task = _load().get("task", {})
            return str(task["type"]) if "type" in task else None
        return self._task_type

    @task_type.setter
    def task_type(self, value) -> None:
        self._task_type = value

    @property
    def task_id(self) -> Optional[int]:
        if self._task_id is None:
            task = _load().get("task", {})
            return int(task["index"]) if "index" in task else None
        return self._task_id

    @task_id.setter
    def task_id(self, value) -> None:
        self._task_id = value

    @property
    def environment(self) -> str:
        return self._environment if self._environment is not None else _load().get("environment", "")

    @property
    def rpc_layer(self) -> Optional[str]:
        return self._rpc_layer if self._rpc_layer is not None else _load().get("rpc_layer")

    @rpc_layer.setter
    def rpc_layer(self, value) -> None:
        self._rpc_layer = value

    def cluster_spec(self) -> ClusterSpec:
        cluster = _load().get("cluster", {})
        if not isinstance(cluster, dict):
            raise ValueError(f"{_ENV}: 'cluster' must be an object of job name -> addresses")
        # sparse jobs arrive with string keys from JSON ({"worker": {"1": "addr"}})
        fixed = {job: ({int(k): v for k, v in tasks.items()} if isinstance(tasks, dict) else tasks)
                 for job, tasks in cluster.items()}
        return ClusterSpec(fixed)

    def master(self, task_type=None, task_id=None, rpc_layer=None) -> str:
        """`session_master` if set; '' for a single-task cluster; else rpc_layer://address of the task."""
        task_type = task_type if task_type is not None else self.task_type
        task_id = task_id if task_id is not None else self.task_id
        if task_type is not None and task_id is not None:
            spec = self.cluster_spec()
            address = spec.task_address(task_type, task_id)
            layer = rpc_layer or self.rpc_layer
            return f"{layer}://{address}" if layer else address
        config = _load()
        if "session_master" in config:
            return config["session_master"]
        return ""

    def num_accelerators(self, task_type=None, task_id=None, config_proto=None) -> dict:
        """{"GPU": n} for the GPUs this process sees (TF's local-device count), {} when none."""
        from ..devices import local_devices

        gpus = sum(1 for d in local_devices(config_proto) if d.device_type == "GPU")
        return {"GPU": gpus} if gpus else {}
