"""Spec defaulting and validation: a TFJob body in, a typed ``JobSpec`` out.

First step of the pure reconcile core (no I/O, no kopf). ``parse_job`` applies
Kubeflow's defaults (replicas 1, restartPolicy Never, case-normalised replica
keys, ``tfjob-port`` 2222) and checks what the CRD schema cannot: a Worker or
Chief exists, at most one chief, a ``tensorflow`` container in every template,
child names that fit a DNS label, and what the API server would refuse on every
pod (``metadata_rules.py``: pod-template label keys and values, annotation keys
and size; the job name as the value of the children's job-name label). Problems raise :class:`InvalidSpec`, whose
``field`` is the path of the offending field, so the job can end ``Failed`` with
reason ``InvalidSpec`` and a message that points at the fix.
"""
from __future__ import annotations

import copy
import hashlib
import json
import re
from dataclasses import dataclass, field
from enum import Enum
from fractions import Fraction
from typing import Any

from . import api, metadata_rules
from .api import CleanPodPolicy, ReplicaType, RestartPolicy, SuccessPolicy

_KEYS = {t.value.lower(): t for t in ReplicaType}


class InvalidSpec(ValueError):
    """A spec the operator cannot run; ``field`` is the path of the culprit."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f'{field}: {message}')
        self.field = field
        self.message = message


@dataclass(frozen=True)
class ReplicaSpec:
    type: ReplicaType
    replicas: int
    restart_policy: RestartPolicy
    template: dict[str, Any]   # defaulted deep copy (tfjob-port added)
    port: int                  # the tensorflow container's tfjob-port
    gpus: int                  # nvidia.com/gpu limit of the tensorflow container


@dataclass(frozen=True)
class SchedulingPolicy:
    min_available: int | None = None
    queue: str | None = None
    priority_class: str | None = None
    schedule_timeout_seconds: int | None = None
    min_resources: dict[str, Any] | None = None


@dataclass(frozen=True)
class RunPolicy:
    clean_pod_policy: CleanPodPolicy = api.DEFAULT_CLEAN_POD_POLICY
    ttl_seconds_after_finished: int | None = None
    active_deadline_seconds: int | None = None
    backoff_limit: int | None = None
    scheduling: SchedulingPolicy = field(default_factory=SchedulingPolicy)
    suspend: bool = False


@dataclass(frozen=True)
class JobSpec:
    name: str
    namespace: str
    uid: str
    replicas: dict[ReplicaType, ReplicaSpec]   # in api.REPLICA_ORDER
    run_policy: RunPolicy
    success_policy: SuccessPolicy
    spec_hash: str

    @property
    def chief_type(self) -> ReplicaType | None:
        for rtype in (ReplicaType.CHIEF, ReplicaType.MASTER):
            if rtype in self.replicas:
                return rtype
        return None

    @property
    def total_replicas(self) -> int:
        return sum(r.replicas for r in self.replicas.values())

    @property
    def is_distributed(self) -> bool:
        """Kubeflow's rule: TF_CONFIG is set unless the job has exactly one pod."""
        return self.total_replicas != 1


def spec_hash(spec: dict[str, Any] | None) -> str:
    """A stable digest of the spec: a failed invalid job is retried only when it changes."""
    raw = json.dumps(spec or {}, sort_keys=True, separators=(',', ':'), default=str)
    return hashlib.sha256(raw.encode()).hexdigest()[:16]


def _int_field(value: Any, path: str, minimum: int, default: int | None) -> int | None:
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidSpec(path, f'must be an integer, got {value!r}')
    if value < minimum:
        raise InvalidSpec(path, f'must be >= {minimum}, got {value}')
    return value


def _enum_field(enum: type[Enum], value: Any, path: str, default: Any) -> Any:
    if value is None:
        return default
    try:
        return enum(value)
    except ValueError:
        allowed = ', '.join(repr(e.value) for e in enum)
        raise InvalidSpec(path, f'must be one of {allowed}, got {value!r}') from None


_QUANTITY = re.compile(r'^([+-]?(?:\d+\.?\d*|\.\d+))(?:[eE]([+-]?\d+))?(m|k|M|G|T|P|E|Ki|Mi|Gi|Ti|Pi|Ei)?$')
_SUFFIX: dict[str | None, int | Fraction] = {
    None: 1, 'm': Fraction(1, 1000), 'k': 10**3, 'M': 10**6, 'G': 10**9, 'T': 10**12, 'P': 10**15,
           'E': 10**18, 'Ki': 2**10, 'Mi': 2**20, 'Gi': 2**30, 'Ti': 2**40, 'Pi': 2**50, 'Ei': 2**60}


def parse_quantity(raw: Any) -> Fraction:
    """A Kubernetes resource quantity (``2``, ``2.0``, ``2000m``, ``1Gi``, ``1e3``) as an exact number."""
    if isinstance(raw, bool):
        raise ValueError(f'not a quantity: {raw!r}')
    if isinstance(raw, int):
        return Fraction(raw)
    if isinstance(raw, float):
        return Fraction(str(raw))
    match = _QUANTITY.match(str(raw).strip())
    if not match:
        raise ValueError(f'not a quantity: {raw!r}')
    number, exponent, suffix = match.groups()
    if exponent is not None and suffix is not None:
        raise ValueError(f'not a quantity: {raw!r}')
    value = Fraction(number) * _SUFFIX[suffix]
    return value * Fraction(10) ** int(exponent) if exponent is not None else value


def _gpu_count(container: dict[str, Any], path: str) -> int:
    limits = ((container.get('resources') or {}).get('limits') or {})
    raw = limits.get(api.GPU_RESOURCE)
    if raw is None:
        return 0
    field_path = f'{path}.resources.limits[{api.GPU_RESOURCE}]'
    try:
        count = parse_quantity(raw)
    except ValueError:
        raise InvalidSpec(field_path, f'must be a Kubernetes quantity, got {raw!r}') from None
    if count.denominator != 1:
        raise InvalidSpec(field_path, f'must be a whole number of GPUs, got {raw!r}')
    if count < 0:
        raise InvalidSpec(field_path, 'must not be negative')
    return int(count)


def _port_number(p: Any, ppath: str) -> int:
    if not isinstance(p, dict):
        raise InvalidSpec(ppath, 'must be an object')
    number = _int_field(p.get('containerPort'), f'{ppath}.containerPort', 1, None)
    if number is None or number > 65535:
        raise InvalidSpec(f'{ppath}.containerPort', 'must be a port number (1-65535)')
    return number


def _tf_port(tf: dict[str, Any], cpath: str) -> int:
    """The tensorflow container's port: the one named tfjob-port, else a user port already on the
    default number (reused, never doubled), else the default, added. Ports must be unique."""
    ports = tf.setdefault('ports', [])
    if not isinstance(ports, list):
        raise InvalidSpec(f'{cpath}.ports', 'must be a list')
    port = None
    seen_numbers: dict[int, str] = {}
    seen_names: dict[str, str] = {}
    for j, p in enumerate(ports):
        ppath = f'{cpath}.ports[{j}]'
        number = _port_number(p, ppath)
        if number in seen_numbers:
            raise InvalidSpec(f'{ppath}.containerPort', f'{number} is also {seen_numbers[number]}; '
                              'each port of the tensorflow container needs its own number (Service ports)')
        seen_numbers[number] = f'{cpath}.ports[{j}]'
        name = p.get('name')
        if name and name in seen_names:
            raise InvalidSpec(f'{ppath}.name', f'{name!r} is also {seen_names[name]}')
        if name:
            seen_names[name] = ppath
        if name == api.PORT_NAME:
            port = number
    if port is None:
        port = api.DEFAULT_PORT
        if port not in seen_numbers:
            ports.append({'name': api.PORT_NAME, 'containerPort': port})
    return port


def _check_template_metadata(meta: Any, path: str) -> None:
    """What the API server checks on every pod's metadata that comes from the template."""
    if meta is None:
        return
    if not isinstance(meta, dict):
        raise InvalidSpec(f'{path}.metadata', 'must be an object')
    for key, problem in (('labels', metadata_rules.labels_problem(meta.get('labels') or {})),
                         ('annotations', metadata_rules.annotations_problem(meta.get('annotations') or {},
                                                                           api.OPERATOR_ANNOTATION_BYTES))):
        if problem:
            raise InvalidSpec(f'{path}.metadata.{key}', f'{problem} (the API server would refuse every pod)')


def _default_template(template: Any, path: str) -> tuple[dict[str, Any], int, int]:
    """Validate a pod template; return the defaulted copy, the port and the GPU count."""
    if not isinstance(template, dict):
        raise InvalidSpec(path, 'a pod template is required')
    _check_template_metadata(template.get('metadata'), path)
    template = copy.deepcopy(template)
    pod_spec = template.get('spec')
    if not isinstance(pod_spec, dict):
        raise InvalidSpec(f'{path}.spec', 'a pod spec is required')
    containers = pod_spec.get('containers')
    if not isinstance(containers, list) or not containers:
        raise InvalidSpec(f'{path}.spec.containers', 'at least one container is required')
    tf_index = None
    for i, container in enumerate(containers):
        cpath = f'{path}.spec.containers[{i}]'
        if not isinstance(container, dict):
            raise InvalidSpec(cpath, 'must be an object')
        if not container.get('image'):
            raise InvalidSpec(f'{cpath}.image', 'every container needs an image')
        if container.get('name') == api.CONTAINER_NAME and tf_index is None:
            tf_index = i
    if tf_index is None:
        raise InvalidSpec(f'{path}.spec.containers',
                          f'one container must be named {api.CONTAINER_NAME!r} (it gets TF_CONFIG)')
    tf = containers[tf_index]
    cpath = f'{path}.spec.containers[{tf_index}]'
    port = _tf_port(tf, cpath)
    return template, port, _gpu_count(tf, cpath)


def _parse_replica(rpath: str, key: Any, rspec: Any) -> ReplicaSpec:
    rtype = _KEYS.get(str(key).lower())
    if rtype is None:
        raise InvalidSpec(rpath, 'unknown replica type; use Chief, Master, PS, Worker or Evaluator')
    if not isinstance(rspec, dict):
        raise InvalidSpec(rpath, 'must be an object')
    replicas = _int_field(rspec.get('replicas'), f'{rpath}.replicas', 0, api.DEFAULT_REPLICAS) or 0
    policy = _enum_field(RestartPolicy, rspec.get('restartPolicy'), f'{rpath}.restartPolicy',
                         api.DEFAULT_RESTART_POLICY)
    template, port, gpus = _default_template(rspec.get('template'), f'{rpath}.template')
    return ReplicaSpec(rtype, replicas, policy, template, port, gpus)


def _parse_replicas(raw: Any) -> dict[ReplicaType, ReplicaSpec]:
    path = 'spec.tfReplicaSpecs'
    if not isinstance(raw, dict) or not raw:
        raise InvalidSpec(path, 'at least one replica type (Chief, PS, Worker, Evaluator) is required')
    found: dict[ReplicaType, ReplicaSpec] = {}
    for key, rspec in raw.items():
        replica = _parse_replica(f'{path}.{key}', key, rspec)
        if replica.type in found:
            raise InvalidSpec(f'{path}.{key}', f'{replica.type.value} is given twice (keys are case-insensitive)')
        found[replica.type] = replica
    if ReplicaType.CHIEF in found and ReplicaType.MASTER in found:
        raise InvalidSpec(f'{path}.Master', 'Chief and Master are the same role; give only one')
    for rtype in (ReplicaType.CHIEF, ReplicaType.MASTER, ReplicaType.EVALUATOR):
        if rtype in found and found[rtype].replicas > 1:
            raise InvalidSpec(f'{path}.{rtype.value}.replicas',
                              f'TensorFlow allows at most one {rtype.lower}, got {found[rtype].replicas}')
    total = sum(r.replicas for r in found.values())
    if total > api.MAX_REPLICAS_PER_JOB:
        raise InvalidSpec(path, f'{total} replicas in all; a job may have at most {api.MAX_REPLICAS_PER_JOB} '
                          '(every pod lists every task in TF_CONFIG)')
    trainers = [t for t in found if t.is_chief or t is ReplicaType.WORKER]
    if not any(found[t].replicas > 0 for t in trainers):
        raise InvalidSpec(path, 'a Worker or Chief replica is required (ps and evaluator only serve them)')
    return {t: found[t] for t in api.REPLICA_ORDER if t in found}


def _parse_run_policy(raw: Any) -> RunPolicy:
    path = 'spec.runPolicy'
    if raw is None:
        return RunPolicy()
    if not isinstance(raw, dict):
        raise InvalidSpec(path, 'must be an object')
    sched_raw = raw.get('schedulingPolicy') or {}
    if not isinstance(sched_raw, dict):
        raise InvalidSpec(f'{path}.schedulingPolicy', 'must be an object')
    spath = f'{path}.schedulingPolicy'
    scheduling = SchedulingPolicy(
        min_available=_int_field(sched_raw.get('minAvailable'), f'{spath}.minAvailable', 1, None),
        queue=sched_raw.get('queue') or None,
        priority_class=sched_raw.get('priorityClass') or None,
        schedule_timeout_seconds=_int_field(sched_raw.get('scheduleTimeoutSeconds'),
                                            f'{spath}.scheduleTimeoutSeconds', 0, None),
        min_resources=sched_raw.get('minResources') or None,
    )
    suspend = raw.get('suspend', False)
    if not isinstance(suspend, bool):
        raise InvalidSpec(f'{path}.suspend', f'must be true or false, got {suspend!r}')
    return RunPolicy(
        clean_pod_policy=_enum_field(CleanPodPolicy, raw.get('cleanPodPolicy'), f'{path}.cleanPodPolicy',
                                     api.DEFAULT_CLEAN_POD_POLICY),
        ttl_seconds_after_finished=_int_field(raw.get('ttlSecondsAfterFinished'),
                                              f'{path}.ttlSecondsAfterFinished', 0, None),
        active_deadline_seconds=_int_field(raw.get('activeDeadlineSeconds'),
                                           f'{path}.activeDeadlineSeconds', 1, None),
        backoff_limit=_int_field(raw.get('backoffLimit'), f'{path}.backoffLimit', 0, None),
        scheduling=scheduling,
        suspend=suspend,
    )


def parse_job(body: dict[str, Any]) -> JobSpec:
    """Default and validate a TFJob body. Raises :class:`InvalidSpec`."""
    meta: dict[str, Any] = body['metadata'] if isinstance(body.get('metadata'), dict) else {}
    name: str = meta['name'] if isinstance(meta.get('name'), str) else ''
    if len(name) > metadata_rules.LABEL_VALUE_MAX:
        raise InvalidSpec('metadata.name', f'{len(name)} characters; at most {metadata_rules.LABEL_VALUE_MAX}: the '
                          f'name is the value of the label {api.JOB_NAME_LABEL} on every pod and service')
    if metadata_rules.dns1035_label_problem(name):
        raise InvalidSpec('metadata.name', f'{name!r} must be a DNS-1035 label (lowercase, starts with a letter)')
    spec = body.get('spec')
    if not isinstance(spec, dict):
        raise InvalidSpec('spec', 'must be an object')
    replicas = _parse_replicas(spec.get('tfReplicaSpecs'))
    for rtype, rspec in replicas.items():
        longest = f'{name}-{rtype.lower}-{max(rspec.replicas - 1, 0)}'
        if len(longest) > api.MAX_CHILD_NAME:
            raise InvalidSpec('metadata.name', f'child name {longest!r} is longer than '
                              f'{api.MAX_CHILD_NAME} characters; shorten the job name')
    if spec.get('enableDynamicWorker'):
        raise InvalidSpec('spec.enableDynamicWorker', 'dynamic workers are not supported')
    success = _enum_field(SuccessPolicy, spec.get('successPolicy'), 'spec.successPolicy',
                          SuccessPolicy.DEFAULT)
    run_policy = _parse_run_policy(spec.get('runPolicy'))
    total = sum(r.replicas for r in replicas.values())
    min_available = run_policy.scheduling.min_available
    if min_available is not None and min_available > total:
        raise InvalidSpec('spec.runPolicy.schedulingPolicy.minAvailable',
                          f'{min_available} is more than the job\'s {total} replicas: the gang could never be '
                          'scheduled')
    return JobSpec(
        name=name,
        namespace=str(meta.get('namespace') or 'default'),
        uid=str(meta.get('uid') or ''),
        replicas=replicas,
        run_policy=run_policy,
        success_policy=success,
        spec_hash=spec_hash(spec),
    )
