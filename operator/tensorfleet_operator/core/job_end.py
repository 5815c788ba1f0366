"""A finished job's children and lifetime: cleanPodPolicy (with its grace), the PodGroup, ttlSecondsAfterFinished.

Part of the pure core, called by ``plan.reconcile`` (and for suspension, which deletes every child the same
way). Kubeflow deletes a succeeded job's still-running pods at once under ``cleanPodPolicy: Running``. But a
Tensorfleet ps ends by itself once every worker has ended (the trainer's release rule), and a worker may still be
in its last steps or its final evaluation when the chief succeeds. So a succeeded job's running pods are deleted
only ``ChildOptions.clean_pod_grace_seconds`` (default 10) after its completion: those that end meanwhile stay,
Succeeded with their logs, and the plan says to look again at the end of the grace (``Plan.cleanup_pending``).
A failed job's pods, and every child under ``cleanPodPolicy: All``, go at once.
"""
from __future__ import annotations

import datetime
from typing import TYPE_CHECKING, Any

from .api import CleanPodPolicy, TerminalReason
from .conditions import parse_timestamp
from .entries import mark_cleaned_up, settle_finished_job
from .observe import PENDING, RUNNING, TERMINATING, PodView

if TYPE_CHECKING:      # plan.py imports this module
    from .children import ChildOptions
    from .spec import JobSpec

UNFINISHED_PHASES = (RUNNING, PENDING, 'Unknown')


def delete_children(plan: Any, obs: Any, only_phases: tuple[str, ...] | None = None) -> list[PodView]:
    """Delete the pods (and their services) in ``only_phases`` (all if None); return the pods' views."""
    deleted = []
    for name, view in obs.pods.items():
        if view.phase == TERMINATING:
            continue
        if only_phases is not None and view.phase not in only_phases:
            continue
        plan.delete_pods.append(name)
        deleted.append(view)
        if name in obs.services:
            plan.delete_services.append(name)
    if only_phases is None:
        plan.delete_services.extend(sorted(obs.services - set(plan.delete_services)))
    return deleted


def _grace_left(status: dict[str, Any], grace: float, now: datetime.datetime) -> float:
    """Seconds of the clean-up grace still to run for a succeeded job (0 for any other)."""
    done = parse_timestamp(status.get('completionTime'))
    if grace <= 0 or done is None or status.get('reason') != TerminalReason.SUCCEEDED.value:
        return 0.0
    return max(0.0, (done + datetime.timedelta(seconds=grace) - now).total_seconds())


def finished(plan: Any, job: JobSpec | None, obs: Any, now: datetime.datetime, opts: ChildOptions) -> None:
    """A finished job: settle its replica entries, apply cleanPodPolicy, drop the PodGroup, and
    time the TTL. ``cleanPodPolicy: Running`` deletes only replicas that have not finished (by the
    container rule of ``observe.py``, not by a pod phase that may still say Running), after the grace."""
    status = plan.status
    settle_finished_job(status, obs.pods, status.get('reason') == TerminalReason.SUCCEEDED.value)
    policy = job.run_policy.clean_pod_policy if job else CleanPodPolicy.ALL
    if status.get('reason') in (TerminalReason.DEADLINE_EXCEEDED.value, TerminalReason.INVALID_SPEC.value):
        policy = CleanPodPolicy.ALL    # Kubeflow deletes everything on deadline; invalid specs leave nothing
    deleted: list[PodView] = []
    if policy is CleanPodPolicy.ALL:
        deleted = delete_children(plan, obs)
    elif policy is CleanPodPolicy.RUNNING:
        unfinished = any(v.phase in UNFINISHED_PHASES for v in obs.pods.values())
        left = _grace_left(status, opts.clean_pod_grace_seconds, now) if unfinished else 0.0
        if left > 0:
            plan.cleanup_pending = True
            plan.requeue(left)
        else:
            deleted = delete_children(plan, obs, only_phases=UNFINISHED_PHASES)
    mark_cleaned_up(status, deleted, policy.value)
    plan.delete_pod_group = bool(opts.gang_scheduler)
    ttl(plan, job.run_policy.ttl_seconds_after_finished if job else None, now)


def ttl(plan: Any, seconds: int | None, now: datetime.datetime) -> None:
    """ttlSecondsAfterFinished: delete the job ``seconds`` after completionTime, or look again then."""
    done = parse_timestamp(plan.status.get('completionTime'))
    if seconds is None or done is None:
        return
    left = (done + datetime.timedelta(seconds=seconds) - now).total_seconds()
    if left <= 0:
        plan.delete_job = True
    else:
        plan.requeue(left)
