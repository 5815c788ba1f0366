"""Observed pods -> per-index views, replica counters and the success rule.

Part of the pure core (no I/O), used by ``plan.py``. A :class:`PodView` is what
the operator needs to know about one child pod: its replica type and index,
phase, in-place restarts, and the last exit code and reason of its
``tensorflow`` container (``OOMKilled``, ``Unschedulable``, ``ImagePullBackOff``...).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from . import api
from .api import ReplicaType, RestartPolicy, SuccessPolicy
from .spec import JobSpec

TERMINATING = 'Terminating'
_TYPES = {t.lower: t for t in ReplicaType}


@dataclass(frozen=True)
class PodView:
    name: str
    uid: str
    rtype: ReplicaType
    index: int
    phase: str                 # Pending|Running|Succeeded|Failed|Unknown|Terminating
    restarts: int              # sum of container restartCounts (in-place restarts)
    exit_code: int | None      # tensorflow container, last termination
    reason: str | None         # abnormal waiting/termination/scheduling reason
    message: str | None
    tf_exit_code_zero: bool    # tensorflow container terminated with 0 (sidecars may still run)


def controller_uid(obj: dict[str, Any]) -> str | None:
    for ref in (obj.get('metadata') or {}).get('ownerReferences') or []:
        if ref.get('controller'):
            return ref.get('uid')
    return None


def _tf_container_status(pod_status: dict[str, Any]) -> dict[str, Any] | None:
    statuses = pod_status.get('containerStatuses') or []
    for cs in statuses:
        if cs.get('name') == api.CONTAINER_NAME:
            return cs
    return statuses[0] if statuses else None


def observe_pod(pod: dict[str, Any]) -> PodView | None:
    """Summarise a child pod; None if it does not carry our replica labels."""
    meta = pod.get('metadata') or {}
    labels = meta.get('labels') or {}
    rtype = _TYPES.get(labels.get(api.KUBEFLOW_LABEL_PREFIX + api.REPLICA_TYPE, ''))
    try:
        index = int(labels.get(api.KUBEFLOW_LABEL_PREFIX + api.REPLICA_INDEX, ''))
    except ValueError:
        return None
    if rtype is None:
        return None
    status = pod.get('status') or {}
    phase = status.get('phase') or 'Pending'
    if meta.get('deletionTimestamp'):
        phase = TERMINATING
    if not isinstance(phase, str):
        phase = 'Unknown'
    restarts = sum(cs.get('restartCount') for cs in status.get('containerStatuses') or []
                   if isinstance(cs.get('restartCount'), int))
    exit_code = reason = message = None
    tf_zero = False
    tf = _tf_container_status(status)
    if tf:
        state, last = tf.get('state') or {}, tf.get('lastState') or {}
        terminated = state.get('terminated') or last.get('terminated')
        if terminated:
            exit_code = terminated.get('exitCode')
            if not isinstance(exit_code, int) or isinstance(exit_code, bool):
                exit_code = None
            reason = terminated.get('reason')
            message = terminated.get('message')
            tf_zero = bool(state.get('terminated')) and exit_code == 0
        waiting = state.get('waiting')
        if waiting and waiting.get('reason') not in (None, 'ContainerCreating', 'PodInitializing'):
            reason, message = waiting.get('reason'), waiting.get('message')
    for cond in status.get('conditions') or []:
        if cond.get('type') == 'PodScheduled' and cond.get('status') == 'False' and cond.get('reason'):
            reason, message = cond.get('reason'), cond.get('message')
    if status.get('reason') and phase == 'Failed':   # Evicted, DeadlineExceeded, NodeLost...
        reason, message = status.get('reason'), status.get('message')
    return PodView(name=meta.get('name', ''), uid=meta.get('uid', ''), rtype=rtype, index=index,
                   phase=phase, restarts=restarts, exit_code=exit_code, reason=reason, message=message,
                   tf_exit_code_zero=tf_zero)


def is_retryable(policy: RestartPolicy, exit_code: int | None) -> bool:
    """Should a pod in phase Failed be recreated (True) or fail the job (False)?"""
    if policy in (RestartPolicy.ALWAYS, RestartPolicy.ON_FAILURE):
        return True
    if policy is RestartPolicy.EXIT_CODE:
        # No exit code (evicted, node lost): retryable, like Kubeflow's 0xbeef sentinel.
        return exit_code is None or exit_code >= api.EXIT_CODE_RETRYABLE_MIN or exit_code < 0
    return False


def replica_counts(entries: list[dict[str, Any]]) -> dict[str, int]:
    """Kubeflow's counters plus ``pending`` and ``restarts`` from the per-index entries."""
    counts = {'active': 0, 'succeeded': 0, 'failed': 0, 'pending': 0, 'restarts': 0}
    for entry in entries:
        phase = entry.get('phase')
        if phase == 'Running':
            counts['active'] += 1
        elif phase == 'Succeeded':
            counts['succeeded'] += 1
        elif phase == 'Failed':
            counts['failed'] += 1
        elif phase == 'Pending':
            counts['pending'] += 1
        counts['restarts'] += int(entry.get('restarts') or 0)
    return counts


def succeeded(job: JobSpec, views: dict[tuple[ReplicaType, int], PodView]) -> str | None:
    """The success rule; returns a message saying why the job succeeded, or None.

    With a Chief/Master: every chief pod succeeded. Without: worker 0 succeeded
    (its ``tensorflow`` container exited 0) or every worker succeeded; with
    ``successPolicy: AllWorkers`` every worker must have succeeded. PS and
    evaluator never count.
    """
    def done(rtype: ReplicaType, index: int) -> bool:
        view = views.get((rtype, index))
        return view is not None and (view.phase == 'Succeeded' or view.tf_exit_code_zero)

    chief = job.chief_type
    if chief is not None:
        n = job.replicas[chief].replicas
        if n > 0 and all(done(chief, i) for i in range(n)):
            return f'all {chief.value} replicas succeeded'
        if n > 0:
            return None
    workers = job.replicas.get(ReplicaType.WORKER)
    if workers is None or workers.replicas == 0:
        return None
    if all(done(ReplicaType.WORKER, i) for i in range(workers.replicas)):
        return 'all Worker replicas succeeded'
    if job.success_policy is SuccessPolicy.DEFAULT and done(ReplicaType.WORKER, 0):
        return 'Worker 0 succeeded'
    return None


def is_running(job: JobSpec, views: dict[tuple[ReplicaType, int], PodView]) -> bool:
    """Kubeflow's Running rule: a chief pod runs, or (no chief) any worker pod runs."""
    rtype = job.chief_type or ReplicaType.WORKER
    return any(v.phase == 'Running' for (t, _), v in views.items() if t is rtype)
