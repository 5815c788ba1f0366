"""Training progress for ``status.progress``: whose metrics to read, what they say, what to write.

Pure (no I/O, no clock: the caller passes ``now``). The shell's ``progress.py`` polls on a
timer; after each reconcile the controller asks :func:`progress_target` which pod's metrics
endpoint tells the job's progress (the chief, else worker 0: TF's rule for the chief), the
poller scrapes it over HTTP, parses the Prometheus text with prometheus_client's parser
(a shell library, so the samples come in as plain tuples), and hands the samples to
:func:`read_progress`; :func:`progress_patch` says what to write to ``status.progress``
(None: nothing changed, so nothing is written). The series are the trainer's
(docs/metrics.md, "Trainer metrics"). A job shorter than the polling interval would end with a stale
progress, or none: so when the chief's (else worker 0's) container has ended, :func:`final_progress` reads
the last progress the trainer left as its termination message (``{"progress": {"globalStep": ...}}``).
"""
from __future__ import annotations

import datetime
import json
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from . import api
from .api import ReplicaType
from .conditions import is_finished, is_true, timestamp
from .observe import RUNNING, replica_of

GLOBAL_STEP = 'tensorfleet_train_global_step'
TARGET_STEPS = 'tensorfleet_train_target_steps'
LOSS = 'tensorfleet_train_loss'
EXAMPLES_PER_SECOND = 'tensorfleet_train_examples_per_second'
SERIES = (GLOBAL_STEP, TARGET_STEPS, LOSS, EXAMPLES_PER_SECOND)
FIELDS = ('globalStep', 'totalSteps', 'loss', 'examplesPerSecond')
LOSS_DIGITS = 6            # significant digits kept: a loss that moves only in the noise is no change
RATE_DIGITS = 3

Sample = tuple[str, Mapping[str, str], float]      # (name, labels, value), as a text parser yields them


@dataclass(frozen=True)
class Target:
    """The pod whose metrics endpoint tells the job's progress."""
    pod: str
    host: str                  # the pod's IP
    port: int
    replica_type: str          # as in the pod's labels and the trainer's replica_type label: chief, worker
    replica_index: int

    @property
    def url(self) -> str:
        host = f'[{self.host}]' if ':' in self.host else self.host
        return f'http://{host}:{self.port}/metrics'


@dataclass(frozen=True)
class Progress:
    global_step: int
    total_steps: int | None = None
    loss: float | None = None
    examples_per_second: float | None = None


def _metrics_port(pod: dict[str, Any], default_port: int) -> int:
    """The port the operator declared (tf-metrics on the tensorflow container) or injected."""
    for container in (pod.get('spec') or {}).get('containers') or []:
        if not isinstance(container, dict) or container.get('name') != api.CONTAINER_NAME:
            continue
        for p in container.get('ports') or []:
            if isinstance(p, dict) and p.get('name') == api.METRICS_PORT_NAME \
                    and isinstance(p.get('containerPort'), int):
                return int(p['containerPort'])
        for e in container.get('env') or []:
            if isinstance(e, dict) and e.get('name') == api.ENV_METRICS_PORT and str(e.get('value', '')).isdigit():
                return int(e['value'])
    return default_port


def progress_target(replica_types: Iterable[ReplicaType], status: dict[str, Any], pods: list[dict[str, Any]],
                    default_port: int) -> Target | None:
    """The running chief's (else worker 0's) metrics endpoint, or None when there is nothing to read:
    the job is finished or suspended, or that pod is not Running with an IP yet."""
    conds = status.get('conditions') or []
    if is_finished(conds) or is_true(conds, api.ConditionType.SUSPENDED):
        return None
    want = _progress_replica(replica_types)
    if want is None:
        return None
    for pod in pods:
        meta, pstatus = pod.get('metadata') or {}, pod.get('status') or {}
        ip = pstatus.get('podIP')
        if replica_of(pod) != want or meta.get('deletionTimestamp') or pstatus.get('phase') != RUNNING:
            continue
        if isinstance(ip, str) and ip:
            return Target(pod=str(meta.get('name', '')), host=ip, port=_metrics_port(pod, default_port),
                          replica_type=want[0].lower, replica_index=0)
    return None


MAX_MESSAGE_BYTES = 4096      # the kubelet keeps no more of a termination message


def _progress_replica(replica_types: Iterable[ReplicaType]) -> tuple[ReplicaType, int] | None:
    """The replica whose progress is the job's: the chief (TF's rule), else worker 0."""
    types = set(replica_types)
    chief = next((t for t in (ReplicaType.CHIEF, ReplicaType.MASTER) if t in types), None)
    want = (chief, 0) if chief is not None else (ReplicaType.WORKER, 0)
    return want if want[0] in types else None


def _number(value: Any) -> float | None:
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    return float(value) if ok else None


def parse_termination_progress(message: Any) -> Progress | None:
    """The progress a trainer's termination message holds, or None (not ours, malformed, too long)."""
    if not isinstance(message, str) or not message or len(message) > MAX_MESSAGE_BYTES:
        return None
    try:
        doc = json.loads(message)
    except ValueError:
        return None
    fields = doc.get('progress') if isinstance(doc, dict) else None
    if not isinstance(fields, dict):
        return None
    step, total = _number(fields.get('globalStep')), _number(fields.get('totalSteps'))
    loss, rate = _number(fields.get('loss')), _number(fields.get('examplesPerSecond'))
    if step is None or step < 0:
        return None
    return Progress(global_step=int(step), total_steps=int(total) if total is not None and total > 0 else None,
                    loss=loss, examples_per_second=rate if rate is not None and rate >= 0 else None)


def final_progress(replica_types: Iterable[ReplicaType], pods: list[dict[str, Any]]) -> Progress | None:
    """The last progress of the job's progress replica once its container has ended (its termination message),
    else None. The newest of its pods' ended containers counts (a restarted one's current run first)."""
    want = _progress_replica(replica_types)
    if want is None:
        return None
    for pod in pods:
        if replica_of(pod) != want:
            continue
        for cs in (pod.get('status') or {}).get('containerStatuses') or []:
            if not isinstance(cs, dict) or cs.get('name') != api.CONTAINER_NAME:
                continue
            terminated = (cs.get('state') or {}).get('terminated')
            if isinstance(terminated, dict):
                progress = parse_termination_progress(terminated.get('message'))
                if progress is not None:
                    return progress
    return None


def read_progress(samples: Iterable[Sample], target: Target) -> Progress | None:
    """The progress the target's samples say (its own replica's series), or None without a global step."""
    values: dict[str, float] = {}
    for name, labels, value in samples:
        if name not in SERIES or name in values or not math.isfinite(value):
            continue
        if labels.get('replica_type', target.replica_type) != target.replica_type:
            continue
        if labels.get('replica_index', str(target.replica_index)) != str(target.replica_index):
            continue
        values[name] = value
    if GLOBAL_STEP not in values or values[GLOBAL_STEP] < 0:
        return None
    total = values.get(TARGET_STEPS)
    rate = values.get(EXAMPLES_PER_SECOND)
    return Progress(global_step=int(values[GLOBAL_STEP]),
                    total_steps=int(total) if total is not None and total > 0 else None,
                    loss=values.get(LOSS),
                    examples_per_second=rate if rate is not None and rate >= 0 else None)


def _significant(value: float, digits: int) -> float:
    return float(f'{value:.{digits}g}')


def progress_fields(progress: Progress) -> dict[str, Any]:
    """``status.progress`` without its time stamp: the values a change is judged on."""
    fields: dict[str, Any] = {'globalStep': progress.global_step}
    if progress.total_steps is not None:
        fields['totalSteps'] = progress.total_steps
    if progress.loss is not None:
        fields['loss'] = _significant(progress.loss, LOSS_DIGITS)
    if progress.examples_per_second is not None:
        fields['examplesPerSecond'] = _significant(progress.examples_per_second, RATE_DIGITS)
    return fields


def progress_patch(old: Any, progress: Progress, now: datetime.datetime) -> dict[str, Any] | None:
    """The merge patch for ``status.progress`` (a field gone becomes None), or None when the values
    are those already stored: then nothing is written, not even a new ``lastUpdateTime``."""
    old = old if isinstance(old, dict) else {}
    new = progress_fields(progress)
    if {k: old.get(k) for k in FIELDS if k in old} == new:
        return None
    patch: dict[str, Any] = {k: None for k in FIELDS if k in old and k not in new}
    patch.update(new)
    patch['lastUpdateTime'] = timestamp(now)
    return patch


def apply_patch(old: Any, patch: dict[str, Any]) -> dict[str, Any]:
    """``status.progress`` after the merge patch (what the API server stores)."""
    out = dict(old) if isinstance(old, dict) else {}
    for key, value in patch.items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = value
    return out
