"""Observed pods -> per-index views, replica counters and the success rule.

Part of the pure core (no I/O), used by ``plan.py``. A :class:`PodView` is what
the operator needs to know about one child pod: its replica type and index,
the replica's phase, in-place restarts, and the last exit code and reason of its
``tensorflow`` container (``OOMKilled``, ``Unschedulable``, ``ImagePullBackOff``...).

The one rule for "this replica has finished" (:func:`container_finished`): the
``tensorflow`` container has terminated and the kubelet will not restart it in
place: under pod ``restartPolicy`` ``Never`` (the TFJob's ``Never`` and
``ExitCode``) any exit, under ``OnFailure`` exit 0, under ``Always`` never. A real
kubelet reports the terminated container first, while ``status.phase`` is still
``Running``, and the terminal phase only after the sandbox is gone (up to a second
later, or never before the pod is deleted); so the replica's phase
(:attr:`PodView.phase`) comes from the container when it has finished and from
``status.phase`` otherwise (a terminal phase without an exit code, such as an
eviction, still counts). Every decision in the core reads that phase, never the
pod's raw one (:attr:`PodView.pod_phase`).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from . import api
from .api import ReplicaType, RestartPolicy, SuccessPolicy
from .spec import JobSpec

TERMINATING = 'Terminating'
SUCCEEDED, FAILED, RUNNING, PENDING = 'Succeeded', 'Failed', 'Running', 'Pending'
FINISHED_PHASES = (SUCCEEDED, FAILED)
# The pod restartPolicy the kubelet applies for each replica restartPolicy (ExitCode: the operator restarts).
KUBELET_POLICY = {RestartPolicy.ALWAYS: 'Always', RestartPolicy.ON_FAILURE: 'OnFailure',
                  RestartPolicy.NEVER: 'Never', RestartPolicy.EXIT_CODE: 'Never'}
_TYPES = {t.lower: t for t in ReplicaType}


@dataclass(frozen=True)
class PodView:
    name: str
    uid: str
    rtype: ReplicaType
    index: int
    phase: str                 # the replica's: Pending|Running|Succeeded|Failed|Unknown|Terminating
    restarts: int              # sum of container restartCounts (in-place restarts)
    exit_code: int | None      # tensorflow container, last termination
    reason: str | None         # abnormal waiting/termination/scheduling reason
    message: str | None
    pod_phase: str = PENDING   # status.phase as written (lags the container; see the module doc)

    @property
    def finished(self) -> bool:
        """The replica has finished (Succeeded or Failed) by the module's rule."""
        return self.phase in FINISHED_PHASES


def container_finished(kubelet_policy: str, exit_code: int | None) -> bool:
    """Will the kubelet leave a terminated container with this exit code as it is?

    ``kubelet_policy`` is the pod's ``restartPolicy`` (``Always``, ``OnFailure`` or ``Never``).
    """
    if kubelet_policy == 'Always':
        return False
    if kubelet_policy == 'OnFailure':
        return exit_code == 0
    return True


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


def _container_state(tf: dict[str, Any] | None) -> tuple[int | None, str | None, str | None, bool]:
    """The tensorflow container's last exit code, its abnormal reason and message, and whether it
    is terminated now (not just last time, before an in-place restart)."""
    exit_code = reason = message = None
    now_terminated = False
    if not tf:
        return exit_code, reason, message, now_terminated
    state, last = tf.get('state') or {}, tf.get('lastState') or {}
    terminated = state.get('terminated') or last.get('terminated')
    if terminated:
        exit_code = terminated.get('exitCode')
        if not isinstance(exit_code, int) or isinstance(exit_code, bool):
            exit_code = None
        reason, message = terminated.get('reason'), terminated.get('message')
        now_terminated = bool(state.get('terminated'))
    waiting = state.get('waiting')
    if waiting and waiting.get('reason') not in (None, 'ContainerCreating', 'PodInitializing'):
        reason, message = waiting.get('reason'), waiting.get('message')
    return exit_code, reason, message, now_terminated


def _kubelet_policy(pod: dict[str, Any], restart_policy: RestartPolicy | None) -> str:
    """The pod's own restartPolicy (what the kubelet applies), else the replica's, else Never."""
    spec = pod.get('spec')
    own = spec.get('restartPolicy') if isinstance(spec, dict) else None
    if own in ('Always', 'OnFailure', 'Never'):
        return str(own)
    return KUBELET_POLICY[restart_policy] if restart_policy is not None else 'Never'


def replica_of(pod: dict[str, Any]) -> tuple[ReplicaType, int] | None:
    """The replica type and index a pod's labels say, or None if it carries none."""
    labels = (pod.get('metadata') or {}).get('labels') or {}
    rtype = _TYPES.get(labels.get(api.KUBEFLOW_LABEL_PREFIX + api.REPLICA_TYPE, ''))
    try:
        index = int(labels.get(api.KUBEFLOW_LABEL_PREFIX + api.REPLICA_INDEX, ''))
    except ValueError:
        return None
    return None if rtype is None else (rtype, index)


def observe_pod(pod: dict[str, Any], restart_policy: RestartPolicy | None = None) -> PodView | None:
    """Summarise a child pod; None if it does not carry our replica labels.

    ``restart_policy`` is the replica's (from the TFJob); it matters only for a pod whose
    manifest does not say its own ``spec.restartPolicy`` (e.g. a pod-like dict of a local runner).
    """
    replica = replica_of(pod)
    if replica is None:
        return None
    rtype, index = replica
    meta = pod.get('metadata') or {}
    status = pod.get('status') or {}
    pod_phase = status.get('phase') or PENDING
    if not isinstance(pod_phase, str):
        pod_phase = 'Unknown'
    restarts = sum(cs.get('restartCount') for cs in status.get('containerStatuses') or []
                   if isinstance(cs.get('restartCount'), int))
    exit_code, reason, message, now_terminated = _container_state(_tf_container_status(status))
    for cond in status.get('conditions') or []:
        if cond.get('type') == 'PodScheduled' and cond.get('status') == 'False' and cond.get('reason'):
            reason, message = cond.get('reason'), cond.get('message')
    if status.get('reason') and pod_phase == FAILED:   # Evicted, DeadlineExceeded, NodeLost...
        reason, message = status.get('reason'), status.get('message')
    if meta.get('deletionTimestamp'):
        phase = TERMINATING
    elif now_terminated and container_finished(_kubelet_policy(pod, restart_policy), exit_code):
        phase = SUCCEEDED if exit_code == 0 else FAILED     # whatever status.phase says yet
    else:
        phase = pod_phase
    return PodView(name=meta.get('name', ''), uid=meta.get('uid', ''), rtype=rtype, index=index,
                   phase=phase, restarts=restarts, exit_code=exit_code, reason=reason, message=message,
                   pod_phase=pod_phase)


def is_retryable(policy: RestartPolicy, exit_code: int | None) -> bool:
    """Should a replica that has finished Failed be recreated (True) or fail the job (False)?"""
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
    evaluator never count. "Succeeded" is the replica's phase: the ``tensorflow``
    container exited 0 and will not be restarted (sidecars may still run).
    """
    def done(rtype: ReplicaType, index: int) -> bool:
        view = views.get((rtype, index))
        return view is not None and view.phase == SUCCEEDED

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
    return any(v.phase == RUNNING for (t, _), v in views.items() if t is rtype)
