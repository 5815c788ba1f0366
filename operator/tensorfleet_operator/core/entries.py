"""The per-index entries of ``status.replicaStatuses`` and their counters.

Part of the pure core (no I/O), used by ``plan.py``. Each replica index has one
entry: its phase (the replica's, by the "finished" rule of ``status.py``), the
pod's uid, its exit code/reason/message, the last pod's ones, and restart counts.
Also :func:`sanitize_status` (never trust a stored status) and
:func:`settle_finished_job`, which keeps a finished job's entries final and true.
"""
from __future__ import annotations

import copy
from typing import Any

from .api import ReplicaType
from .observe import FINISHED_PHASES, PodView, replica_counts


def sanitize_status(raw: Any) -> dict[str, Any]:
    """A deep copy of the stored status with anything malformed dropped (never trust input)."""
    if not isinstance(raw, dict):
        return {}
    status = copy.deepcopy(raw)
    status.pop('lastReconcileTime', None)
    for key in ('startTime', 'completionTime', 'allRunningTime', 'reason', 'message', 'observedSpecHash'):
        if key in status and not isinstance(status[key], str):
            del status[key]
    if not isinstance(status.get('restarts', 0), int):
        del status['restarts']
    conds = status.get('conditions')
    if conds is not None:
        status['conditions'] = [c for c in conds if isinstance(c, dict) and isinstance(c.get('type'), str)] \
            if isinstance(conds, list) else []
    replicas = status.get('replicaStatuses')
    if replicas is not None:
        clean = {}
        for rtype, rs in (replicas.items() if isinstance(replicas, dict) else ()):
            if not isinstance(rs, dict):
                continue
            entries = rs.get('replicas')
            rs['replicas'] = [e for e in entries if isinstance(e, dict) and isinstance(e.get('index'), int)
                              and all(isinstance(e.get(k, 0), int) and not isinstance(e.get(k, 0), bool)
                                      for k in ('recreations', 'restarts', 'earlierPodRestarts'))
                              and all(isinstance(e.get(k), str) for k in ('podUID', 'restartedPodUID') if k in e)] \
                if isinstance(entries, list) else []
            clean[rtype] = rs
        status['replicaStatuses'] = clean
    return status


def entries_of(status: dict[str, Any], rtype: ReplicaType, count: int) -> list[dict[str, Any]]:
    old = ((status.get('replicaStatuses') or {}).get(rtype.value) or {}).get('replicas') or []
    by_index = {e.get('index'): e for e in old if isinstance(e, dict)}
    return [copy.deepcopy(by_index.get(i, {'index': i})) for i in range(count)]


def carry_pod_restarts(entry: dict[str, Any]) -> None:
    """The index's pod is going away: keep its in-place (kubelet) restarts, as last counted in
    ``restarts``, in ``earlierPodRestarts``, so the index's and the job's restarts never go down."""
    earlier = entry.get('earlierPodRestarts', 0)
    last_in_place = entry.get('restarts', 0) - entry.get('recreations', 0) - earlier
    if last_in_place > 0:
        entry['earlierPodRestarts'] = earlier + last_in_place


POD_STATE_KEYS = ('exitCode', 'reason', 'message')
LAST_POD_STATE_KEYS = ('lastExitCode', 'lastReason', 'lastMessage')


def retire_pod_state(entry: dict[str, Any]) -> None:
    """The index's pod went away (restarted, vanished) or was replaced: its ``exitCode``,
    ``reason`` and ``message`` become ``lastExitCode``, ``lastReason`` and ``lastMessage``,
    together (a field the pod did not have is removed, never left from an older pod)."""
    if any(k in entry for k in POD_STATE_KEYS):
        for key, last in zip(POD_STATE_KEYS, LAST_POD_STATE_KEYS, strict=True):
            if key in entry:
                entry[last] = entry.pop(key)
            else:
                entry.pop(last, None)


def set_pod_state(entry: dict[str, Any], exit_code: int | None, reason: str | None,
                   message: str | None) -> None:
    """``exitCode``, ``reason`` and ``message`` describe the index's current pod only."""
    for key, value in zip(POD_STATE_KEYS, (exit_code, reason, message), strict=True):
        if value is None or value == '':
            entry.pop(key, None)
        else:
            entry[key] = value



CLEANED_UP_REASON = 'DeletedAtJobEnd'


def mark_cleaned_up(status: dict[str, Any], views: list[PodView], policy: str) -> None:
    """Pods still running when the job ended and deleted by ``cleanPodPolicy``: their entries keep
    the phase they ended the job with and say why their pod went away."""
    by_uid = {v.uid: v for v in views}
    for rs in (status.get('replicaStatuses') or {}).values():
        for entry in rs.get('replicas') or []:
            if entry.get('podUID') in by_uid and entry.get('phase') not in FINISHED_PHASES:
                entry['reason'] = CLEANED_UP_REASON
                entry['message'] = f'deleted by cleanPodPolicy {policy} when the job ended'


def settle_finished_job(status: dict[str, Any], views: dict[str, PodView], succeeded: bool) -> None:
    """After the job ended: a replica whose pod has since finished (its container exited after
    the job's end, or its terminal phase came late) is shown finished with its exit code; nothing
    that was shown finished changes. Counters follow (the job's success folds ``active`` into
    ``succeeded``, as Kubeflow does)."""
    by_uid = {v.uid: v for v in views.values()}
    for rs in (status.get('replicaStatuses') or {}).values():
        if not isinstance(rs, dict):
            continue
        entries = rs.get('replicas') or []
        changed = False
        for entry in entries:
            view = by_uid.get(entry.get('podUID'))
            if view is None or not view.finished or entry.get('phase') in FINISHED_PHASES:
                continue
            entry['phase'] = view.phase
            set_pod_state(entry, view.exit_code, view.reason, view.message)
            changed = True
        if changed:
            counts = replica_counts(entries)
            if succeeded:
                counts['succeeded'] += counts['active']
                counts['active'] = 0
            rs.update(counts)
