"""Desired children of a TFJob: pods, headless services, TF_CONFIG, the RPC-token
Secret and the gang-scheduling PodGroup.

Second step of the pure core (no I/O): given a validated ``JobSpec`` (from
``spec.py``) it returns plain manifests that the shell (``apply.py``) creates verbatim.
Names are deterministic (``<job>-<type>-<index>``), so re-creating is
idempotent. TF_CONFIG is byte-for-byte Kubeflow's (Go's compact JSON, cluster
keys sorted, ``"environment":"cloud"``).
"""
from __future__ import annotations

import base64
import copy
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, overload

from . import api
from .api import ReplicaType, RestartPolicy
from .spec import InvalidSpec, JobSpec, ReplicaSpec


@dataclass(frozen=True)
class ChildOptions:
    """Operator-wide settings that shape the children."""
    api_group: str = api.DEFAULT_GROUP
    cluster_domain: str = ''        # $CUSTOM_CLUSTER_DOMAIN: address suffix after .svc
    gang_scheduler: str | None = None   # 'volcano' | 'scheduler-plugins' | None
    metrics_port: int = api.DEFAULT_TRAINER_METRICS_PORT
    # a succeeded job's still-running pods are deleted (cleanPodPolicy: Running) only this long after its
    # completion: a ps that ends by itself once the workers have ended is kept, Succeeded (job_end.py)
    clean_pod_grace_seconds: float = api.DEFAULT_CLEAN_POD_GRACE_SECONDS

    @property
    def api_version(self) -> str:
        return f'{self.api_group}/{api.VERSION}'


def child_name(job: str, rtype: ReplicaType, index: int) -> str:
    return f'{job}-{rtype.lower}-{index}'


def secret_name(job: str) -> str:
    return job + api.RPC_TOKEN_SECRET_SUFFIX


def is_master_role(job: JobSpec, rtype: ReplicaType, index: int) -> bool:
    """Kubeflow's IsMasterRole: the chief, or worker 0 when there is no chief."""
    if job.chief_type is not None:
        return rtype is job.chief_type
    return rtype is ReplicaType.WORKER and index == 0


def selector_labels(job: str, rtype: ReplicaType, index: int) -> dict[str, str]:
    """The labels a child's service selects its pod by (Kubeflow's four)."""
    return {
        api.KUBEFLOW_LABEL_PREFIX + api.OPERATOR_NAME: api.OPERATOR_NAME_VALUE,
        api.KUBEFLOW_LABEL_PREFIX + api.JOB_NAME: job,
        api.KUBEFLOW_LABEL_PREFIX + api.REPLICA_TYPE: rtype.lower,
        api.KUBEFLOW_LABEL_PREFIX + api.REPLICA_INDEX: str(index),
    }


def child_labels(job: JobSpec, rtype: ReplicaType, index: int) -> dict[str, str]:
    """Selector labels plus job-role, under both the Kubeflow and the tensorfleet prefix."""
    values = {
        api.OPERATOR_NAME: api.OPERATOR_NAME_VALUE,
        api.JOB_NAME: job.name,
        api.REPLICA_TYPE: rtype.lower,
        api.REPLICA_INDEX: str(index),
    }
    if is_master_role(job, rtype, index):
        values[api.JOB_ROLE] = api.JOB_ROLE_MASTER
    return {prefix + key: value for prefix in api.LABEL_PREFIXES for key, value in values.items()}


def owner_reference(job: JobSpec, opts: ChildOptions) -> dict[str, Any]:
    return {'apiVersion': opts.api_version, 'kind': api.KIND, 'name': job.name, 'uid': job.uid,
            'controller': True, 'blockOwnerDeletion': True}


def replica_address(job: JobSpec, rtype: ReplicaType, index: int, port: int, domain: str) -> str:
    host = f'{child_name(job.name, rtype, index)}.{job.namespace}.svc'
    if domain:
        host += '.' + domain.strip('.')
    return f'{host}:{port}'


def cluster_spec(job: JobSpec, domain: str = '') -> dict[str, list[str]]:
    """{type: [addresses]} for every replica type, evaluator included (Kubeflow since #1146)."""
    cluster = {}
    for rtype, rspec in job.replicas.items():
        cluster[rtype.lower] = [replica_address(job, rtype, i, rspec.port, domain)
                                for i in range(rspec.replicas)]
    return dict(sorted(cluster.items()))


def cluster_json(job: JobSpec, domain: str = '') -> str:
    """The ``cluster`` part of TF_CONFIG as compact JSON (the same for every pod of the job)."""
    return json.dumps(cluster_spec(job, domain), separators=(',', ':'))


def tf_config(job: JobSpec, rtype: ReplicaType, index: int, domain: str = '', cluster: str | None = None) -> str:
    """TF_CONFIG exactly as Kubeflow's genTFConfigJSONStr writes it (Go's compact JSON, this key
    order). ``cluster``: :func:`cluster_json` computed once for the job (it lists every task)."""
    if cluster is None:
        cluster = cluster_json(job, domain)
    return f'{{"cluster":{cluster},"task":{{"type":"{rtype.lower}","index":{index}}},"environment":"cloud"}}'


def check_size(job: JobSpec, opts: ChildOptions) -> None:
    """Reject a job whose TF_CONFIG would come near the API server's object size limit."""
    if not job.is_distributed:
        return
    size = len(tf_config(job, ReplicaType.WORKER, job.total_replicas, opts.cluster_domain))
    if size > api.MAX_TF_CONFIG_BYTES:
        raise InvalidSpec('spec.tfReplicaSpecs', f'TF_CONFIG would be {size} bytes per pod (at most '
                          f'{api.MAX_TF_CONFIG_BYTES}): fewer replicas or a shorter job name or namespace')


def _stringify_quantities(container: dict[str, Any]) -> None:
    """Resource quantities must be strings for the API client (``nvidia.com/gpu: 1``)."""
    resources = container.get('resources')
    if not isinstance(resources, dict):
        return
    for kind in ('limits', 'requests'):
        values = resources.get(kind)
        if isinstance(values, dict):
            resources[kind] = {k: (v if isinstance(v, str) else str(v)) for k, v in values.items()}


def _set_env(env: list[dict[str, Any]], name: str, entry: dict[str, Any], override: bool) -> None:
    """Set ``name`` once: with ``override`` every user entry of that name goes (the later of two
    duplicates would win at run time); without, a user entry is kept as it is."""
    found = [i for i, existing in enumerate(env) if isinstance(existing, dict) and existing.get('name') == name]
    if not found:
        env.append(entry)
    elif override:
        env[found[0]] = entry
        for i in reversed(found[1:]):
            del env[i]


def _env_value(env: list[dict[str, Any]], name: str) -> str | None:
    for entry in env:
        if isinstance(entry, dict) and entry.get('name') == name and isinstance(entry.get('value'), str):
            return entry['value']
    return None


def _metrics_port(pod_spec: dict[str, Any], container: dict[str, Any], env: list[dict[str, Any]],
                  opts: ChildOptions) -> tuple[int, bool]:
    """The trainer's metrics port and whether to declare it: the user's (a port named tf-metrics, or
    their TENSORFLEET_METRICS_PORT), else the operator's default moved up past every port any
    container of the pod declares (they share one network namespace)."""
    used = {p.get('containerPort') for c in pod_spec.get('containers') or [] if isinstance(c, dict)
            for p in c.get('ports') or [] if isinstance(p, dict)}
    for p in container.get('ports') or []:
        if isinstance(p, dict) and p.get('name') == api.METRICS_PORT_NAME:
            return int(p['containerPort']), False
    user = _env_value(env, api.ENV_METRICS_PORT)
    if user is not None and user.isdigit():
        return int(user), int(user) not in used
    port = opts.metrics_port
    while port in used:
        port += 1
    return port, True


def _tensorflow_env(job: JobSpec, rspec: ReplicaSpec, index: int, pod_spec: dict[str, Any],
                    container: dict[str, Any], opts: ChildOptions, cluster: str | None) -> None:
    env = container.setdefault('env', [])
    if job.is_distributed:
        # Operator-provided TF_CONFIG replaces every user one (Kubeflow appends; the later wins at runtime).
        value = tf_config(job, rspec.type, index, opts.cluster_domain, cluster)
        _set_env(env, api.ENV_TF_CONFIG, {'name': api.ENV_TF_CONFIG, 'value': value}, override=True)
    if rspec.type is ReplicaType.PS:
        devices: str | None = ''
    elif rspec.gpus > 0:
        devices = ','.join(str(i) for i in range(rspec.gpus))
    else:
        devices = None
    if devices is not None:   # the user's own setting is never touched
        _set_env(env, api.ENV_CUDA_VISIBLE_DEVICES, {'name': api.ENV_CUDA_VISIBLE_DEVICES, 'value': devices},
                 override=False)
    metrics_port, declare = _metrics_port(pod_spec, container, env, opts)
    _set_env(env, api.ENV_METRICS_PORT, {'name': api.ENV_METRICS_PORT, 'value': str(metrics_port)},
             override=False)
    _set_env(env, api.ENV_RPC_TOKEN, {
        'name': api.ENV_RPC_TOKEN,
        'valueFrom': {'secretKeyRef': {'name': secret_name(job.name), 'key': api.RPC_TOKEN_KEY}},
    }, override=True)
    if declare:
        container.setdefault('ports', []).append({'name': api.METRICS_PORT_NAME, 'containerPort': metrics_port})


def desired_pod(job: JobSpec, rtype: ReplicaType, index: int, opts: ChildOptions,
                cluster: str | None = None) -> dict[str, Any]:
    """The pod manifest of one replica (``cluster``: :func:`cluster_json`, to compute it once)."""
    rspec = job.replicas[rtype]
    template = copy.deepcopy(rspec.template)
    meta = template.get('metadata') or {}
    pod_spec = template['spec']
    labels = dict(meta.get('labels') or {})
    labels.update(child_labels(job, rtype, index))
    annotations = dict(meta.get('annotations') or {})
    pod_spec['restartPolicy'] = ('Never' if rspec.restart_policy is RestartPolicy.EXIT_CODE
                                 else rspec.restart_policy.value)
    for container in pod_spec['containers']:
        _stringify_quantities(container)
    for container in pod_spec['containers']:
        if container.get('name') == api.CONTAINER_NAME:
            _tensorflow_env(job, rspec, index, pod_spec, container, opts, cluster)
            break
    if opts.gang_scheduler:
        pod_spec.setdefault('schedulerName', api.SCHEDULER_NAMES[opts.gang_scheduler])
        if opts.gang_scheduler == api.GANG_VOLCANO:
            annotations[api.VOLCANO_GROUP_ANNOTATION] = job.name
            annotations[api.VOLCANO_TASK_ANNOTATION] = rtype.lower
        else:
            labels[api.SCHEDULER_PLUGINS_GROUP_LABEL] = job.name
        if job.run_policy.scheduling.priority_class:
            pod_spec.setdefault('priorityClassName', job.run_policy.scheduling.priority_class)
    pod_meta: dict[str, Any] = {
        'name': child_name(job.name, rtype, index),
        'namespace': job.namespace,
        'labels': labels,
        'ownerReferences': [owner_reference(job, opts)],
    }
    if annotations:
        pod_meta['annotations'] = annotations
    return {'apiVersion': 'v1', 'kind': 'Pod', 'metadata': pod_meta, 'spec': pod_spec}


def desired_service(job: JobSpec, rtype: ReplicaType, index: int, opts: ChildOptions) -> dict[str, Any]:
    """Headless service of one replica: its DNS name is the TF_CONFIG address."""
    rspec = job.replicas[rtype]
    tf = next(c for c in rspec.template['spec']['containers'] if c.get('name') == api.CONTAINER_NAME)
    ports = [{'name': p['name'], 'port': p['containerPort'], 'targetPort': p['containerPort']}
             for p in tf.get('ports') or [] if isinstance(p, dict) and p.get('name') and p.get('containerPort')]
    return {
        'apiVersion': 'v1',
        'kind': 'Service',
        'metadata': {
            'name': child_name(job.name, rtype, index),
            'namespace': job.namespace,
            'labels': child_labels(job, rtype, index),
            'ownerReferences': [owner_reference(job, opts)],
        },
        'spec': {'clusterIP': 'None', 'selector': selector_labels(job.name, rtype, index), 'ports': ports},
    }


class PodManifests(Sequence[dict[str, Any]]):
    """The pods a plan creates, built on demand: a job's pods are never all in memory at once
    (each carries a TF_CONFIG listing every task). Index it, iterate it, or take slices
    (``apply.py`` sends :data:`api.POD_CREATE_BATCH` at a time); equal to a list of the same pods."""

    def __init__(self, job: JobSpec | None = None, opts: ChildOptions | None = None) -> None:
        self._job, self._opts = job, opts or ChildOptions()
        self._keys: list[tuple[ReplicaType, int]] = []
        self._cluster: str | None = None

    def add(self, rtype: ReplicaType, index: int) -> None:
        self._keys.append((rtype, index))

    def names(self) -> list[str]:
        assert self._job is not None or not self._keys
        return [child_name(self._job.name, t, i) for t, i in self._keys] if self._job else []

    def clear(self) -> None:
        self._keys.clear()

    def __len__(self) -> int:
        return len(self._keys)

    @overload
    def __getitem__(self, i: int) -> dict[str, Any]: ...

    @overload
    def __getitem__(self, i: slice) -> list[dict[str, Any]]: ...

    def __getitem__(self, i: int | slice) -> dict[str, Any] | list[dict[str, Any]]:
        if isinstance(i, slice):
            return [self._build(*key) for key in self._keys[i]]
        return self._build(*self._keys[i])

    def _build(self, rtype: ReplicaType, index: int) -> dict[str, Any]:
        assert self._job is not None
        if self._cluster is None:
            self._cluster = cluster_json(self._job, self._opts.cluster_domain)
        return desired_pod(self._job, rtype, index, self._opts, self._cluster)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, PodManifests):
            return self._job == other._job and self._keys == other._keys
        return isinstance(other, list) and list(self) == other

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f'PodManifests({self.names()!r})'


def rpc_token_secret(job: JobSpec, token: str, opts: ChildOptions) -> dict[str, Any]:
    """The per-job Secret the pods read TENSORFLEET_RPC_TOKEN from (owned by the job)."""
    return {
        'apiVersion': 'v1',
        'kind': 'Secret',
        'type': 'Opaque',
        'metadata': {
            'name': secret_name(job.name),
            'namespace': job.namespace,
            'labels': {api.KUBEFLOW_LABEL_PREFIX + api.JOB_NAME: job.name,
                       api.OWN_LABEL_PREFIX + api.JOB_NAME: job.name},
            'ownerReferences': [owner_reference(job, opts)],
        },
        'data': {api.RPC_TOKEN_KEY: base64.b64encode(token.encode()).decode()},
    }


def pod_group(job: JobSpec, opts: ChildOptions) -> dict[str, Any] | None:
    """The PodGroup for gang scheduling, or None without ``--gang-scheduler``."""
    if not opts.gang_scheduler:
        return None
    group, version, _ = api.PODGROUP_API[opts.gang_scheduler]
    sched = job.run_policy.scheduling
    spec: dict[str, Any] = {'minMember': sched.min_available or job.total_replicas}
    if opts.gang_scheduler == api.GANG_VOLCANO:
        spec['queue'] = sched.queue or 'default'
        if sched.priority_class:
            spec['priorityClassName'] = sched.priority_class
        if sched.min_resources:
            spec['minResources'] = sched.min_resources
    else:
        if sched.schedule_timeout_seconds is not None:
            spec['scheduleTimeoutSeconds'] = sched.schedule_timeout_seconds
        if sched.min_resources:
            spec['minResources'] = sched.min_resources
    return {
        'apiVersion': f'{group}/{version}',
        'kind': 'PodGroup',
        'metadata': {'name': job.name, 'namespace': job.namespace,
                     'ownerReferences': [owner_reference(job, opts)]},
        'spec': spec,
    }
