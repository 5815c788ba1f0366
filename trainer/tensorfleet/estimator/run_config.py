"""`tf.estimator.RunConfig`: where an Estimator runs, read from `TF_CONFIG` with TF 1.15's rules.

The first thing `Estimator.__init__` looks at: it decides the role (`task_type`, `task_id`,
`is_chief`), the session master (`grpc://<own address>` in a cluster, '' locally), the ps count
for `replica_device_setter`, and the default `session_config` whose `device_filters` keep a
trainer talking to the ps tasks and itself only. Checkpoint and logging cadence live here too.
Values, defaults and error messages follow TF 1.15's `run_config.py`; `environment` is the
TF_CONFIG field that tf.contrib.learn exposed (the operator writes "cloud"). Beyond TF: a sparse
cluster (`{"worker": {"1": "host:port"}}`, JSON's string indices) is accepted.
"""
from __future__ import annotations

import copy
import json
import os

from .. import tf_logging as logging
from ..config import ConfigProto
from ..distributed.cluster import ClusterSpec

__all__ = ["RunConfig", "TaskType"]

_USE_DEFAULT = object()
_SAVE_CKPT_ERR = "`save_checkpoints_steps` and `save_checkpoints_secs` cannot be both set."
_REPLACEABLE = ["model_dir", "tf_random_seed", "save_summary_steps", "save_checkpoints_steps",
                "save_checkpoints_secs", "session_config", "keep_checkpoint_max", "keep_checkpoint_every_n_hours",
                "log_step_count_steps", "train_distribute", "device_fn", "protocol", "eval_distribute",
                "experimental_distribute", "experimental_max_worker_delay_secs", "session_creation_timeout_secs"]


class TaskType:
    MASTER = "master"
    PS = "ps"
    WORKER = "worker"
    CHIEF = "chief"
    EVALUATOR = "evaluator"


def _cluster_from_json(cluster) -> ClusterSpec:
    if not isinstance(cluster, dict):
        raise ValueError(f"TF_CONFIG: 'cluster' must be an object of job name -> addresses, got {cluster!r}")
    fixed = {}
    for job, tasks in cluster.items():
        if isinstance(tasks, dict):
            try:
                tasks = {int(k): v for k, v in tasks.items()}
            except ValueError:
                raise ValueError(f"TF_CONFIG: cluster job {job!r} has a non-integer task index") from None
        fixed[job] = tasks
    return ClusterSpec(fixed)


def _validate_task_type_and_task_id(cluster_spec, task_env, chief_task_type):
    if chief_task_type not in cluster_spec.jobs:
        raise ValueError(f'If "cluster" is set in TF_CONFIG, it must have one "{chief_task_type}" node.')
    if cluster_spec.num_tasks(chief_task_type) > 1:
        raise ValueError(f'The "cluster" in TF_CONFIG must have only one "{chief_task_type}" node.')
    task_type = task_env.get("type")
    task_id = task_env.get("index")
    if not task_type:
        raise ValueError('If "cluster" is set in TF_CONFIG, task type must be set.')
    if task_id is None:
        raise ValueError('If "cluster" is set in TF_CONFIG, task index must be set.')
    task_id = int(task_id)
    if task_id < 0:
        raise ValueError("Task index must be non-negative number.")
    if task_type == TaskType.EVALUATOR:
        return task_type, task_id
    if task_type not in cluster_spec.jobs:
        raise ValueError(f"{task_type} is not a valid task_type in the cluster_spec:\n{cluster_spec}\n\n"
                         "Note that these values may be coming from the TF_CONFIG environment variable.")
    if task_id not in cluster_spec.task_indices(task_type):
        raise ValueError(f"{task_id} is not a valid task_id for task_type {task_type} in the cluster_spec:\n"
                         f"{cluster_spec}\n\nNote that these values may be coming from the TF_CONFIG environment "
                         "variable.")
    return task_type, task_id


def _session_master(cluster_spec, task_type, task_id, tf_config):
    if "session_master" in tf_config:
        return tf_config["session_master"]
    jobs = cluster_spec.jobs
    if len(jobs) == 1 and cluster_spec.num_tasks(jobs[0]) == 1:
        return ""
    return "grpc://" + cluster_spec.task_address(task_type, task_id)


def _global_id(cluster_spec, task_type, task_id, chief_task_type):
    """0 for the chief, then the other jobs alphabetically (ps last), tasks by index (TF's order)."""
    order = [chief_task_type] + [t for t in sorted(cluster_spec.jobs) if t not in (chief_task_type, TaskType.PS)]
    if TaskType.PS in cluster_spec.jobs:
        order.append(TaskType.PS)
    next_id = 0
    for t in order:
        if t == task_type:
            return next_id + task_id
        next_id += len(cluster_spec.job_tasks(t))
    raise RuntimeError(f"Internal Error: `task_type` ({task_type}) is not in cluster_spec ({cluster_spec}).")


def _count(cluster_spec, *jobs) -> int:
    d = cluster_spec.as_dict()
    return sum(len(d.get(j, [])) for j in jobs)


class RunConfig:
    """`tf.estimator.RunConfig(model_dir=None, tf_random_seed=None, save_summary_steps=100,
    save_checkpoints_steps=<default>, save_checkpoints_secs=<default: 600>, session_config=None,
    keep_checkpoint_max=5, keep_checkpoint_every_n_hours=10000, log_step_count_steps=100, ...)`."""

    def __init__(self, model_dir=None, tf_random_seed=None, save_summary_steps=100,
                 save_checkpoints_steps=_USE_DEFAULT, save_checkpoints_secs=_USE_DEFAULT, session_config=None,
                 keep_checkpoint_max=5, keep_checkpoint_every_n_hours=10000, log_step_count_steps=100,
                 train_distribute=None, device_fn=None, protocol=None, eval_distribute=None,
                 experimental_distribute=None, experimental_max_worker_delay_secs=None,
                 session_creation_timeout_secs=7200):
        if save_checkpoints_steps is _USE_DEFAULT and save_checkpoints_secs is _USE_DEFAULT:
            save_checkpoints_steps, save_checkpoints_secs = None, 600
        elif save_checkpoints_secs is _USE_DEFAULT:
            save_checkpoints_secs = None
        elif save_checkpoints_steps is _USE_DEFAULT:
            save_checkpoints_steps = None
        elif save_checkpoints_steps is not None and save_checkpoints_secs is not None:
            raise ValueError(_SAVE_CKPT_ERR)
        if train_distribute is not None or eval_distribute is not None or experimental_distribute is not None:
            raise NotImplementedError("RunConfig: distribution strategies (train_distribute, eval_distribute, "
                                      "experimental_distribute) are not supported; use TF_CONFIG's ps/worker cluster")
        raw = os.environ.get("TF_CONFIG", "{}") or "{}"
        try:
            tf_config = json.loads(raw)
        except ValueError as e:
            raise ValueError(f"TF_CONFIG is not valid JSON: {e}") from None
        if not isinstance(tf_config, dict):
            raise ValueError("TF_CONFIG must be a JSON object")
        if tf_config:
            logging.info("TF_CONFIG environment variable: %s", tf_config)
        model_dir = _get_model_dir(tf_config, os.fspath(model_dir) if model_dir is not None else None)
        RunConfig._replace(self, allowed=_REPLACEABLE, model_dir=model_dir, tf_random_seed=tf_random_seed,
                           save_summary_steps=save_summary_steps, save_checkpoints_steps=save_checkpoints_steps,
                           save_checkpoints_secs=save_checkpoints_secs, session_config=session_config,
                           keep_checkpoint_max=keep_checkpoint_max,
                           keep_checkpoint_every_n_hours=keep_checkpoint_every_n_hours,
                           log_step_count_steps=log_step_count_steps, train_distribute=None, device_fn=device_fn,
                           protocol=protocol, eval_distribute=None, experimental_distribute=None,
                           experimental_max_worker_delay_secs=experimental_max_worker_delay_secs,
                           session_creation_timeout_secs=session_creation_timeout_secs)
        self._environment = tf_config.get("environment", "local")
        self._init_distributed_setting(tf_config)
        if not self._session_config and self._cluster_spec:
            self._session_config = self._default_session_config_distributed()

    def _default_session_config_distributed(self):
        """TF's per-role `device_filters`: a trainer sees the ps tasks and itself; a ps sees every trainer."""
        t = self._task_type
        if t == TaskType.MASTER:
            filters = ["/job:ps", "/job:master"]
        elif t == TaskType.CHIEF:
            filters = ["/job:ps", "/job:chief"]
        elif t == TaskType.WORKER:
            filters = ["/job:ps", f"/job:worker/task:{self._task_id}"]
        elif t == TaskType.PS:
            filters = ["/job:ps", "/job:worker", "/job:chief", "/job:master"]
        else:
            return None
        return ConfigProto(allow_soft_placement=True, device_filters=filters)

    def _init_distributed_setting(self, tf_config):
        service = tf_config.get("service")
        if service is not None and not isinstance(service, dict):
            raise TypeError(f'If "service" is set in TF_CONFIG, it must be a dict. Given {type(service)}')
        self._service = service
        self._cluster_spec = _cluster_from_json(tf_config.get("cluster", {}))
        task_env = tf_config.get("task", {}) or {}
        if self._cluster_spec and TaskType.MASTER in self._cluster_spec.jobs:
            return self._init_with_master(tf_config, task_env)
        if self._cluster_spec:
            self._task_type, self._task_id = _validate_task_type_and_task_id(self._cluster_spec, task_env,
                                                                             TaskType.CHIEF)
            self._evaluation_master = (tf_config.get("eval_session_master", "")
                                       if self._task_type == TaskType.EVALUATOR else "")
            if self._task_type != TaskType.EVALUATOR:
                self._master = _session_master(self._cluster_spec, self._task_type, self._task_id, tf_config)
                self._num_ps_replicas = _count(self._cluster_spec, TaskType.PS)
                self._num_worker_replicas = _count(self._cluster_spec, TaskType.WORKER, TaskType.CHIEF)
                self._global_id_in_cluster = _global_id(self._cluster_spec, self._task_type, self._task_id,
                                                        TaskType.CHIEF)
            else:   # the evaluator is not part of the training cluster
                self._cluster_spec = ClusterSpec({})
                self._master = ""
                self._num_ps_replicas = 0
                self._num_worker_replicas = 0
                self._global_id_in_cluster = None
            self._is_chief = self._task_type == TaskType.CHIEF
        else:
            self._task_type = task_env.get("type", TaskType.WORKER)
            self._task_id = int(task_env.get("index", 0))
            self._global_id_in_cluster = 0
            if self._task_type != TaskType.WORKER:
                raise ValueError('If "cluster" is not set in TF_CONFIG, task type must be WORKER.')
            if self._task_id != 0:
                raise ValueError('If "cluster" is not set in TF_CONFIG, task index must be 0.')
            self._master = tf_config.get("session_master", "")
            self._evaluation_master = tf_config.get("eval_session_master", "")
            self._is_chief = True
            self._num_ps_replicas = 0
            self._num_worker_replicas = 1

    def _init_with_master(self, tf_config, task_env):
        """A legacy cluster with a `master` job (instead of `chief`)."""
        if TaskType.CHIEF in self._cluster_spec.jobs:
            raise ValueError("If `master` node exists in `cluster`, job `chief` is not supported.")
        self._task_type, self._task_id = _validate_task_type_and_task_id(self._cluster_spec, task_env,
                                                                         TaskType.MASTER)
        if self._task_type == TaskType.EVALUATOR:
            raise ValueError("If `master` node exists in `cluster`, task_type `evaluator` is not supported.")
        self._global_id_in_cluster = _global_id(self._cluster_spec, self._task_type, self._task_id,
                                                TaskType.MASTER)
        self._master = _session_master(self._cluster_spec, self._task_type, self._task_id, tf_config)
        self._evaluation_master = ""
        self._num_ps_replicas = _count(self._cluster_spec, TaskType.PS)
        self._num_worker_replicas = _count(self._cluster_spec, TaskType.WORKER, TaskType.MASTER)
        self._is_chief = self._task_type == TaskType.MASTER

    # -- properties (TF's) ---------------------------------------------------------------------
    cluster_spec = property(lambda self: self._cluster_spec)
    device_fn = property(lambda self: self._device_fn)
    evaluation_master = property(lambda self: self._evaluation_master)
    is_chief = property(lambda self: self._is_chief)
    master = property(lambda self: self._master)
    num_ps_replicas = property(lambda self: self._num_ps_replicas)
    num_worker_replicas = property(lambda self: self._num_worker_replicas)
    task_id = property(lambda self: self._task_id)
    task_type = property(lambda self: self._task_type)
    global_id_in_cluster = property(lambda self: self._global_id_in_cluster)
    environment = property(lambda self: self._environment)
    experimental_max_worker_delay_secs = property(lambda self: self._experimental_max_worker_delay_secs)
    tf_random_seed = property(lambda self: self._tf_random_seed)
    save_summary_steps = property(lambda self: self._save_summary_steps)
    save_checkpoints_secs = property(lambda self: self._save_checkpoints_secs)
    save_checkpoints_steps = property(lambda self: self._save_checkpoints_steps)
    session_config = property(lambda self: self._session_config)
    session_creation_timeout_secs = property(lambda self: self._session_creation_timeout_secs)
    keep_checkpoint_max = property(lambda self: self._keep_checkpoint_max)
    keep_checkpoint_every_n_hours = property(lambda self: self._keep_checkpoint_every_n_hours)
    log_step_count_steps = property(lambda self: self._log_step_count_steps)
    model_dir = property(lambda self: self._model_dir)
    service = property(lambda self: self._service)
    train_distribute = property(lambda self: None)
    eval_distribute = property(lambda self: None)
    protocol = property(lambda self: self._protocol)

    def replace(self, **kwargs) -> "RunConfig":
        """A copy with some of the replaceable properties changed (TF's list and checks)."""
        return RunConfig._replace(copy.deepcopy(self), allowed=_REPLACEABLE, **kwargs)

    @staticmethod
    def _replace(config, allowed, **kwargs):
        for key, value in kwargs.items():
            if key not in allowed:
                raise ValueError(f"Replacing {key} is not supported. Allowed properties are {allowed}.")
            setattr(config, "_" + key, value)
        _validate_save_ckpt(config, kwargs.keys())
        _validate_properties(config)
        return config

    def __repr__(self):
        fields = ("model_dir", "task_type", "task_id", "master", "is_chief", "num_ps_replicas",
                  "num_worker_replicas", "save_checkpoints_steps", "save_checkpoints_secs")
        return "RunConfig(" + ", ".join(f"{f}={getattr(self, f)!r}" for f in fields) + ")"


def _validate_save_ckpt(config, keys):
    steps, secs = config._save_checkpoints_steps, config._save_checkpoints_secs
    if "save_checkpoints_steps" in keys and "save_checkpoints_secs" in keys:
        if steps is not None and secs is not None:
            raise ValueError(_SAVE_CKPT_ERR)
    elif "save_checkpoints_steps" in keys and steps is not None:
        config._save_checkpoints_secs = None
    elif "save_checkpoints_secs" in keys and secs is not None:
        config._save_checkpoints_steps = None


def _validate_properties(config):
    def check(name, cond, message):
        value = getattr(config, "_" + name)
        if value is not None and not cond(value):
            raise ValueError(message)

    check("model_dir", lambda d: d, "model_dir should be non-empty")
    check("save_summary_steps", lambda s: s >= 0, "save_summary_steps should be >= 0")
    check("save_checkpoints_steps", lambda s: s >= 0, "save_checkpoints_steps should be >= 0")
    check("save_checkpoints_secs", lambda s: s >= 0, "save_checkpoints_secs should be >= 0")
    check("session_config", lambda sc: isinstance(sc, ConfigProto), "session_config must be instance of ConfigProto")
    check("keep_checkpoint_max", lambda k: k >= 0, "keep_checkpoint_max should be >= 0")
    check("keep_checkpoint_every_n_hours", lambda k: k > 0, "keep_checkpoint_every_n_hours should be > 0")
    check("log_step_count_steps", lambda n: n > 0, "log_step_count_steps should be > 0")
    check("tf_random_seed", lambda s: isinstance(s, int), "tf_random_seed must be integer.")
    check("experimental_max_worker_delay_secs", lambda d: isinstance(d, int),
          "experimental_max_worker_delay_secs must be an integer if set.")
    check("session_creation_timeout_secs", lambda t: t > 0, "session_creation_timeout_secs should be > 0")
    check("device_fn", callable, 'device_fn must be callable with exactly one argument "op".')
    check("protocol", lambda p: p in (None, "grpc", "grpc+verbs"), "protocol should be grpc or grpc+verbs")


def _get_model_dir(tf_config, model_dir):
    if model_dir == "":
        raise ValueError("model_dir should be non-empty.")
    in_config = tf_config.get("model_dir")
    if in_config == "":
        raise ValueError("model_dir in TF_CONFIG should be non-empty.")
    if in_config:
        if model_dir and in_config != model_dir:
            raise ValueError("`model_dir` provided in RunConfig construct, if set, must have the same value as the "
                             f'model_dir in TF_CONFIG. model_dir: {model_dir}\nTF_CONFIG["model_dir"]: {in_config}.\n')
        logging.info("Using model_dir in TF_CONFIG: %s", in_config)
    return model_dir or in_config
