"""Desired children of a TFJob: pods, headless services, TF_CONFIG, the RPC-token
Secret and the gang-scheduling PodGroup.

Second step of the pure core (no I/O): given a validated ``JobSpec`` (from
``spec.py``) it returns plain manifests that ``handlers.py`` creates verbatim.
Names are deterministic (``<job>-<type>-<index>``), so re-creating is
idempotent. TF_CONFIG is byte-for-byte Kubeflow's (Go's compact JSON, cluster
keys sorted, ``"environment":"cloud"``).
"""
from __future__ import annotations

import base64
import copy
import json
from dataclasses import dataclass
from typing import Any

from . import api
from .api import ReplicaType, RestartPolicy
from .spec import JobSpec, ReplicaSpec


@dataclass(frozen=True)
class ChildOptions:
    """Operator-wide settings that shape the children."""
    api_group: str = api.DEFAULT_GROUP
    cluster_domain: str = ''        # $CUSTOM_CLUSTER_DOMAIN: address suffix after .svc
    gang_scheduler: str | None = None   # 'volcano' | 'scheduler-plugins' | None
    metrics_port: int = api.DEFAULT_TRAINER_METRICS_PORT

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


def tf_config(job: JobSpec, rtype: ReplicaType, index: int, domain: str = '') -> str:
    """TF_CONFIG exactly as Kubeflow's genTFConfigJSONStr writes it."""
    doc = {'cluster': cluster_spec(job, domain),
           'task': {'type': rtype.lower, 'index': index},
           'environment': 'cloud'}
    return json.dumps(doc, separators=(',', ':'))


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
    for i, existing in enumerate(env):
        if existing.get('name') == name:
            if override:
                env[i] = entry
            return
    env.append(entry)


def _tensorflow_env(job: JobSpec, rspec: ReplicaSpec, index: int, container: dict[str, Any],
                    opts: ChildOptions) -> None:
    env = container.setdefault('env', [])
    if job.is_distributed:
        # Operator-provided TF_CONFIG replaces a user one (Kubeflow appends; the later wins at runtime).
        _set_env(env, api.ENV_TF_CONFIG,
                 {'name': api.ENV_TF_CONFIG, 'value': tf_config(job, rspec.type, index, opts.cluster_domain)},
                 override=True)
    if rspec.type is ReplicaType.PS:
        devices: str | None = ''
    elif rspec.gpus > 0:
        devices = ','.join(str(i) for i in range(rspec.gpus))
    else:
        devices = None
    if devices is not None:   # the user's own setting is never touched
        _set_env(env, api.ENV_CUDA_VISIBLE_DEVICES, {'name': api.ENV_CUDA_VISIBLE_DEVICES, 'value': devices},
                 override=False)
    _set_env(env, api.ENV_METRICS_PORT, {'name': api.ENV_METRICS_PORT, 'value': str(opts.metrics_port)},
             override=False)
    _set_env(env, api.ENV_RPC_TOKEN, {
        'name': api.ENV_RPC_TOKEN,
        'valueFrom': {'secretKeyRef': {'name': secret_name(job.name), 'key': api.RPC_TOKEN_KEY}},
    }, override=True)
    ports = container.setdefault('ports', [])
    if not any(p.get('name') == api.METRICS_PORT_NAME or p.get('containerPort') == opts.metrics_port
               for p in ports):
        ports.append({'name': api.METRICS_PORT_NAME, 'containerPort': opts.metrics_port})


def desired_pod(job: JobSpec, rtype: ReplicaType, index: int, opts: ChildOptions) -> dict[str, Any]:
    """The pod manifest of one replica."""
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
            _tensorflow_env(job, rspec, index, container, opts)
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


def desired_children(job: JobSpec, opts: ChildOptions) -> list[tuple[ReplicaType, int]]:
    """Every (type, index) the job should have, in creation order (ps first)."""
    return [(rtype, i) for rtype, rspec in job.replicas.items() for i in range(rspec.replicas)]


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
