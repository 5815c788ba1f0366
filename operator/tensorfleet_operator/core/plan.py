"""The reconcile decision: (TFJob, observed children, now) -> a :class:`Plan`.

The heart of the pure core, and the only thing the shell (``controller.py``) calls. It takes
the job body, the pods and services that carry the job's label, and the clock,
and returns what to create and delete, the new ``status``, the events to post
(one per real change: they are derived from old-vs-new status) and when to look
again (deadline, TTL). It does no I/O, so running it twice on the same input
gives the same plan, and re-applying a plan is safe.

Order of decisions: managedBy -> spec validation (``InvalidSpec``) -> finished
jobs (cleanPodPolicy, TTL) -> suspend/resume -> deadline -> per-index pod
handling (create, restart by policy, backoffLimit) -> success/failure ->
Running/Restarting.
"""
from __future__ import annotations

import copy
import datetime
from dataclasses import dataclass, field
from typing import Any

from . import api, children, job_end
from .api import ConditionType as C, ReplicaType, TerminalReason
from .children import ChildOptions
from .conditions import get_condition, is_finished, is_true, parse_timestamp, set_condition, timestamp
from .entries import carry_pod_restarts, entries_of, retire_pod_state, sanitize_status, \
    set_pod_state
from .spec import InvalidSpec, JobSpec, parse_job, spec_hash
from .observe import FAILED, PENDING, RUNNING, SUCCEEDED, TERMINATING, PodView, controller_uid, is_retryable, \
    is_running, observe_pod, replica_counts, replica_of, succeeded

MANAGED_BY = ('', 'kubeflow.org/training-operator', 'tensorfleet.io/operator')
BLOCKED_RETRY_SECONDS = 5.0


@dataclass(frozen=True)
class Event:
    type: str      # Normal | Warning
    reason: str
    message: str


@dataclass
class Plan:
    status: dict[str, Any]                      # the whole new status
    create_pods: children.PodManifests = field(default_factory=children.PodManifests)   # built on demand
    create_services: list[dict[str, Any]] = field(default_factory=list)
    delete_pods: list[str] = field(default_factory=list)
    delete_services: list[str] = field(default_factory=list)
    ensure_secret: bool = False                 # create the RPC-token Secret if missing
    pod_group: dict[str, Any] | None = None     # create (before any pod) if missing
    delete_pod_group: bool = False
    delete_job: bool = False                    # ttlSecondsAfterFinished expired
    job: JobSpec | None = None                  # the parsed spec (None if invalid): apply needs no re-parse
    events: list[Event] = field(default_factory=list)
    requeue_after: float | None = None          # seconds until the next timed check
    cleanup_pending: bool = False               # finished, and cleanPodPolicy waits for pods still ending
    transitions: list[tuple[str, Any]] = field(default_factory=list)   # for metrics

    def requeue(self, seconds: float) -> None:
        seconds = max(seconds, 0.0)
        self.requeue_after = seconds if self.requeue_after is None else min(self.requeue_after, seconds)


@dataclass
class _Observed:
    pods: dict[str, PodView]           # own pods by name
    services: set[str]                 # own services by name
    blocked: set[str]                  # names held by objects of another owner
    raw_pods: dict[str, dict[str, Any]]


def _observe(uid: str, pods: list[dict[str, Any]], services: list[dict[str, Any]],
             job: JobSpec | None) -> _Observed:
    obs = _Observed({}, set(), set(), {})
    policies = {t: r.restart_policy for t, r in job.replicas.items()} if job else {}
    for pod in pods:
        meta = pod.get('metadata') if isinstance(pod, dict) else None
        name = meta.get('name') if isinstance(meta, dict) else None
        if not isinstance(name, str) or not name:
            continue
        try:
            replica = replica_of(pod) if controller_uid(pod) == uid else None
            view = observe_pod(pod, policies.get(replica[0])) if replica else None
        except (TypeError, AttributeError, ValueError):    # unreadable: treat it as not ours
            view = None
        if view is None:
            obs.blocked.add('pod/' + name)
        else:
            obs.pods[name] = view
            obs.raw_pods[name] = pod
    for svc in services:
        meta = svc.get('metadata') if isinstance(svc, dict) else None
        name = meta.get('name') if isinstance(meta, dict) else None
        if not isinstance(name, str) or not name:
            continue
        try:
            ours = controller_uid(svc) == uid
        except (TypeError, AttributeError):
            ours = False
        if ours:
            obs.services.add(name)
        else:
            obs.blocked.add('service/' + name)
    return obs


def _job_ref(body: dict[str, Any]) -> str:
    meta = body.get('metadata') or {}
    return f"{meta.get('namespace', 'default')}/{meta.get('name', '')}"


def _finish(plan: Plan, ctype: C, reason: TerminalReason, message: str, now: datetime.datetime,
            event_type: str, event_reason: str) -> None:
    status = plan.status
    cond_reason = api.REASON_SUCCEEDED if ctype is C.SUCCEEDED else reason.value
    status['conditions'] = set_condition(status.get('conditions') or [], ctype, True, cond_reason, message, now)
    status['completionTime'] = timestamp(now)
    status['reason'] = reason.value
    status['message'] = message
    plan.events.append(Event(event_type, event_reason, message))
    plan.transitions.append(('succeeded' if ctype is C.SUCCEEDED else 'failed', reason.value))


def _invalid(plan: Plan, body: dict[str, Any], err: InvalidSpec, obs: _Observed, now: datetime.datetime,
             opts: ChildOptions) -> Plan:
    status = plan.status
    digest = spec_hash(body.get('spec'))
    if is_finished(status.get('conditions') or []) and status.get('reason') != TerminalReason.INVALID_SPEC.value:
        # The job ended before its spec was broken: it stays as it ended (no second terminal
        # condition, its finished pods kept); only the TTL, if still readable, still applies.
        spec = body.get('spec')
        run_policy = spec.get('runPolicy') if isinstance(spec, dict) else None
        ttl = run_policy.get('ttlSecondsAfterFinished') if isinstance(run_policy, dict) else None
        job_end.ttl(plan, ttl if isinstance(ttl, int) and not isinstance(ttl, bool) and ttl >= 0 else None, now)
        return plan
    if status.get('reason') == TerminalReason.INVALID_SPEC.value and status.get('observedSpecHash') == digest:
        job_end.finished(plan, None, obs, now, opts)      # already reported; not retried until the spec changes
        return plan
    conds = status.get('conditions') or []
    if get_condition(conds, C.CREATED) is None:
        conds = set_condition(conds, C.CREATED, True, api.REASON_CREATED,
                              f'TFJob {_job_ref(body)} is created.', now)
    # An invalid spec ends the job even if it ran before: the operator cannot reason about it.
    conds = [c for c in conds if c.get('type') != C.FAILED.value]
    status['conditions'] = conds
    status['observedSpecHash'] = digest
    _finish(plan, C.FAILED, TerminalReason.INVALID_SPEC, f'invalid spec: {err}', now, 'Warning',
            TerminalReason.INVALID_SPEC.value)
    job_end.finished(plan, None, obs, now, opts)
    return plan


def _suspend(plan: Plan, job: JobSpec, obs: _Observed, now: datetime.datetime, gang: bool) -> None:
    status = plan.status
    job_end.delete_children(plan, obs)
    plan.delete_pod_group = gang
    conds = status.get('conditions') or []
    if not is_true(conds, C.SUSPENDED):
        msg = f'TFJob {job.namespace}/{job.name} is suspended.'
        conds = set_condition(conds, C.SUSPENDED, True, api.REASON_SUSPENDED, msg, now)
        if is_true(conds, C.RUNNING):
            conds = set_condition(conds, C.RUNNING, False, api.REASON_SUSPENDED, msg, now)
        status['conditions'] = conds
        status.pop('startTime', None)
        plan.events.append(Event('Normal', api.REASON_SUSPENDED, msg))
    for rtype, rspec in job.replicas.items():
        entries = entries_of(status, rtype, rspec.replicas)
        for e in entries:      # pods deleted by suspension are not restarts (theirs are kept)
            if e.get('podUID') and e.get('podUID') != e.get('restartedPodUID'):
                carry_pod_restarts(e)
            e.pop('podUID', None)
            view = obs.pods.get(children.child_name(job.name, rtype, e['index']))
            e['phase'] = SUCCEEDED if view is not None and view.phase == SUCCEEDED else 'Suspended'
        status.setdefault('replicaStatuses', {})[rtype.value] = {**replica_counts(entries), 'replicas': entries}


def _untouchable(body: dict[str, Any]) -> bool:
    """Jobs the operator leaves alone: managed by another controller (e.g. MultiKueue), or being
    deleted (foreground or orphan cascade: recreating children would fight the garbage collector,
    and Kubeflow skips such jobs too)."""
    spec = body.get('spec')
    run_policy = (spec.get('runPolicy') if isinstance(spec, dict) else None) or {}
    if isinstance(run_policy, dict) and run_policy.get('managedBy') not in (None, *MANAGED_BY):
        return True
    return bool((body.get('metadata') or {}).get('deletionTimestamp'))


def reconcile(body: dict[str, Any], pods: list[dict[str, Any]], services: list[dict[str, Any]],
              now: datetime.datetime, opts: ChildOptions | None = None, refused: InvalidSpec | None = None) -> Plan:
    """Decide everything for one TFJob. Pure: the same input gives the same plan.

    ``pods`` and ``services`` are the objects carrying the job's label, as plain dicts (the API
    server's JSON, or pod-like dicts with ``metadata`` and ``status`` from a local runner).
    ``refused``: the API server refused a child of this very spec as invalid (the shell saw a
    400/422 on a create): the job fails as ``InvalidSpec`` just as if the core had found it.
    """
    opts = opts or ChildOptions()
    gang = bool(opts.gang_scheduler)
    if not isinstance(body.get('metadata'), dict):
        body = {**body, 'metadata': {}}
    if _untouchable(body):
        return Plan(status=copy.deepcopy(body.get('status') or {}))
    plan = Plan(status=sanitize_status(body.get('status')))
    status = plan.status
    uid = body['metadata'].get('uid') or ''
    try:
        job = parse_job(body)
        children.check_size(job, opts)
        if refused is not None:
            raise refused
    except InvalidSpec as err:
        return _invalid(plan, body, err, _observe(uid, pods, services, None), now, opts)
    obs = _observe(uid, pods, services, job)
    if status.get('reason') == TerminalReason.INVALID_SPEC.value:
        if status.get('observedSpecHash') == job.spec_hash:
            job_end.finished(plan, None, obs, now, opts)   # refused by the API server; the spec is unchanged
            return plan
        status.clear()      # the spec was fixed: start over (the old failure was about a different spec)
    plan.job = job
    if is_finished(status.get('conditions') or []):
        job_end.finished(plan, job, obs, now, opts)
        return plan
    _created(plan, body, job, now)
    if job.run_policy.suspend:
        _suspend(plan, job, obs, now, gang)
        return plan
    _resumed(plan, job, now)
    if _past_deadline(plan, job, now):
        job_end.finished(plan, job, obs, now, opts)
        return plan
    _pods_and_services(plan, job, obs, now, opts)
    return plan


def _created(plan: Plan, body: dict[str, Any], job: JobSpec, now: datetime.datetime) -> None:
    """The Created condition, once, with the warnings about the spec's spelling."""
    conds = plan.status.get('conditions') or []
    if get_condition(conds, C.CREATED) is None:
        conds = set_condition(conds, C.CREATED, True, api.REASON_CREATED,
                              f'TFJob {job.namespace}/{job.name} is created.', now)
        plan.transitions.append(('created', None))
        for key in (body['spec'].get('tfReplicaSpecs') or {}):
            canonical = next(t.value for t in job.replicas if t.value.lower() == str(key).lower())
            if key != canonical:         # accepted, but kubectl's printer columns read the canonical key
                plan.events.append(Event('Warning', 'NonCanonicalReplicaKey',
                                         f'spec.tfReplicaSpecs.{key}: write {canonical!r}; kubectl get tfjobs '
                                         f'shows the {canonical} column from that exact key'))
        for rtype, rspec in job.replicas.items():     # Kubeflow's warning, once per job
            if rspec.template['spec'].get('restartPolicy') is not None:
                plan.events.append(Event('Warning', 'SetPodTemplateRestartPolicy',
                                         f'spec.tfReplicaSpecs.{rtype.value}.template.spec.restartPolicy is '
                                         f'ignored; the replica restartPolicy {rspec.restart_policy.value} applies'))
    plan.status['conditions'] = conds


def _resumed(plan: Plan, job: JobSpec, now: datetime.datetime) -> None:
    status = plan.status
    if is_true(status['conditions'], C.SUSPENDED):
        msg = f'TFJob {job.namespace}/{job.name} is resumed.'
        status['conditions'] = set_condition(status['conditions'], C.SUSPENDED, False, api.REASON_RESUMED, msg, now)
        status['startTime'] = timestamp(now)
        plan.events.append(Event('Normal', api.REASON_RESUMED, msg))
    status.setdefault('startTime', timestamp(now))


def _past_deadline(plan: Plan, job: JobSpec, now: datetime.datetime) -> bool:
    """activeDeadlineSeconds from startTime: fail the job when it is past, else look again then."""
    deadline = job.run_policy.active_deadline_seconds
    if deadline is None:
        return False
    start = parse_timestamp(plan.status['startTime']) or now
    left = (start + datetime.timedelta(seconds=deadline) - now).total_seconds()
    if left > 0:
        plan.requeue(left)
        return False
    _finish(plan, C.FAILED, TerminalReason.DEADLINE_EXCEEDED,
            f'TFJob {job.namespace}/{job.name} ran longer than activeDeadlineSeconds={deadline}.', now, 'Warning',
            TerminalReason.DEADLINE_EXCEEDED.value)
    return True


def _failure_message(view: PodView, why: str) -> str:
    detail = f'exit code {view.exit_code}' if view.exit_code is not None else 'no exit code'
    if view.reason:
        detail += f', reason {view.reason}'
    return f'pod {view.name} failed ({detail}); {why}'


@dataclass
class _Pass:
    """One pass over a running job's replica indices: what was seen and what it calls for."""
    job: JobSpec
    obs: _Observed
    opts: ChildOptions
    views: dict[tuple[ReplicaType, int], PodView] = field(default_factory=dict)
    desired: set[str] = field(default_factory=set)
    entries: dict[ReplicaType, list[dict[str, Any]]] = field(default_factory=dict)
    permanent: list[tuple[TerminalReason, str]] = field(default_factory=list)
    to_restart: list[tuple[dict[str, Any], PodView]] = field(default_factory=list)
    in_place: int = 0


def _index_without_pod(plan: Plan, p: _Pass, rtype: ReplicaType, entry: dict[str, Any], name: str) -> None:
    """No pod of ours for this index: create it (a vanished one counts as a restart)."""
    earlier = entry.get('earlierPodRestarts', 0)
    if entry.get('podUID'):
        retire_pod_state(entry)
    if 'pod/' + name in p.obs.blocked:
        entry['phase'] = PENDING
        set_pod_state(entry, None, 'NameTaken', f'a pod named {name} belongs to another owner')
        plan.requeue(BLOCKED_RETRY_SECONDS)
    else:
        set_pod_state(entry, None, None, None)
        if entry.get('podUID') and entry.get('podUID') != entry.get('restartedPodUID'):
            carry_pod_restarts(entry)
            earlier = entry.get('earlierPodRestarts', 0)
            entry['recreations'] += 1      # it vanished (evicted, deleted by hand...)
            plan.events.append(Event('Warning', api.REASON_RESTARTING, f'pod {name} disappeared; recreating it'))
            plan.transitions.append(('restarted', rtype.value))
        entry.pop('podUID', None)
        entry.pop('restartedPodUID', None)
        entry['phase'] = PENDING
        plan.create_pods.add(rtype, entry['index'])
    entry['restarts'] = entry['recreations'] + earlier


def _index_with_pod(p: _Pass, rtype: ReplicaType, entry: dict[str, Any], view: PodView) -> None:
    """The index's pod as observed; a replica that finished Failed is restarted or fails the job."""
    p.views[(rtype, entry['index'])] = view
    if entry.get('podUID') and entry['podUID'] != view.uid:
        retire_pod_state(entry)      # replaced without this operator seeing the gap
    entry['podUID'] = view.uid
    entry['phase'] = view.phase
    # A pod already restarted (its delete not yet seen) had its restarts carried over.
    current = 0 if view.uid == entry.get('restartedPodUID') else view.restarts
    entry['restarts'] = entry['recreations'] + entry.get('earlierPodRestarts', 0) + current
    p.in_place += current
    set_pod_state(entry, view.exit_code, view.reason, view.message)
    if view.phase != FAILED:        # finished Failed: by the container rule, not status.phase
        return
    policy = p.job.replicas[rtype].restart_policy
    if is_retryable(policy, view.exit_code):
        p.to_restart.append((entry, view))
    else:
        why = TerminalReason.PERMANENT_EXIT_CODE if policy is api.RestartPolicy.EXIT_CODE \
            else TerminalReason.REPLICA_FAILED
        p.permanent.append((why, _failure_message(view, f'restartPolicy {policy.value} does not retry it')))


def _restart(plan: Plan, p: _Pass, now: datetime.datetime) -> str | None:
    """Delete the pods to restart, counting each once, within backoffLimit; the backoff failure, if any."""
    ref = f'{p.job.namespace}/{p.job.name}'
    restarts = p.in_place + sum(e['recreations'] + e.get('earlierPodRestarts', 0)
                                for es in p.entries.values() for e in es)
    limit = p.job.run_policy.backoff_limit
    backoff_msg = None
    for entry, view in p.to_restart:
        if entry.get('restartedPodUID') == view.uid:       # counted already; the delete is re-sent
            plan.delete_pods.append(view.name)
            continue
        if limit is not None and restarts >= limit:
            backoff_msg = _failure_message(view, f'backoffLimit {limit} reached after {restarts} restart(s)')
            break
        carry_pod_restarts(entry)
        entry['recreations'] += 1
        entry['restarts'] += 1
        entry['restartedPodUID'] = view.uid
        restarts += 1
        plan.delete_pods.append(view.name)
        msg = _failure_message(view, 'restarting it')
        plan.status['conditions'] = set_condition(plan.status['conditions'], C.RESTARTING, True,
                                                  api.REASON_RESTARTING, f'TFJob {ref} is restarting: {msg}', now)
        plan.events.append(Event('Warning', api.REASON_RESTARTING, msg))
        plan.transitions.append(('restarted', view.rtype.value))
    if backoff_msg is None and limit is not None and restarts > limit:
        backoff_msg = f'{restarts} restart(s) exceed backoffLimit {limit}'
    plan.status['restarts'] = restarts
    return backoff_msg


def _replica_statuses(p: _Pass) -> dict[str, dict[str, Any]]:
    return {rtype.value: {**replica_counts(entries),
                          'labelSelector': {'matchLabels': {
                              api.JOB_NAME_LABEL: p.job.name,
                              api.KUBEFLOW_LABEL_PREFIX + api.REPLICA_TYPE: rtype.lower}},
                          'replicas': entries}
            for rtype, entries in p.entries.items()}


def _pods_and_services(plan: Plan, job: JobSpec, obs: _Observed, now: datetime.datetime,
                       opts: ChildOptions) -> None:
    status = plan.status
    plan.create_pods = children.PodManifests(job, opts)
    p = _Pass(job, obs, opts)
    for rtype, rspec in job.replicas.items():
        p.entries[rtype] = entries_of(status, rtype, rspec.replicas)
        for entry in p.entries[rtype]:
            name = children.child_name(job.name, rtype, entry['index'])
            p.desired.add(name)
            entry.setdefault('recreations', 0)
            view = obs.pods.get(name)
            if view is None:
                _index_without_pod(plan, p, rtype, entry, name)
            else:
                _index_with_pod(p, rtype, entry, view)
            if name not in obs.services and 'service/' + name not in obs.blocked:
                plan.create_services.append(children.desired_service(job, rtype, entry['index'], opts))

    # Scale-down and type removal: children past the spec are deleted.
    plan.delete_pods.extend(n for n, v in obs.pods.items() if n not in p.desired and v.phase != TERMINATING)
    plan.delete_services.extend(sorted(obs.services - p.desired))
    backoff_msg = _restart(plan, p, now)
    status['replicaStatuses'] = _replica_statuses(p)
    if plan.create_pods:
        plan.ensure_secret = True
        plan.pod_group = children.pod_group(job, opts)      # None without a gang scheduler
    if not status.get('allRunningTime') and all(e.get('phase') == RUNNING for es in p.entries.values() for e in es):
        status['allRunningTime'] = timestamp(now)
        plan.transitions.append(('all_running', None))
    _outcome(plan, p, backoff_msg, now)


def _outcome(plan: Plan, p: _Pass, backoff_msg: str | None, now: datetime.datetime) -> None:
    """Success, failure (permanent, then backoff) or Running, in Kubeflow's order."""
    status, job = plan.status, p.job
    ref = f'{job.namespace}/{job.name}'
    why_ok = succeeded(job, p.views)
    if why_ok is not None:
        for rs in status['replicaStatuses'].values():      # Kubeflow folds the still-active into succeeded
            rs['succeeded'] += rs['active']
            rs['active'] = 0
        _finish(plan, C.SUCCEEDED, TerminalReason.SUCCEEDED, f'TFJob {ref} successfully completed: {why_ok}.',
                now, 'Normal', api.REASON_SUCCEEDED)
    elif p.permanent:
        reason, msg = p.permanent[0]
        _finish(plan, C.FAILED, reason, msg, now, 'Warning', 'TFJobFailed')
    elif backoff_msg is not None:
        _finish(plan, C.FAILED, TerminalReason.BACKOFF_LIMIT_EXCEEDED, backoff_msg, now, 'Warning',
                TerminalReason.BACKOFF_LIMIT_EXCEEDED.value)
    if is_finished(status['conditions']):
        plan.create_pods.clear()
        plan.create_services.clear()
        plan.pod_group = None
        plan.ensure_secret = False
        plan.delete_pods.clear()
        plan.delete_services.clear()
        job_end.finished(plan, job, p.obs, now, p.opts)
        return
    if is_running(job, p.views) and not any(t == 'restarted' for t, _ in plan.transitions):
        status['conditions'] = set_condition(status['conditions'], C.RUNNING, True, api.REASON_RUNNING,
                                             f'TFJob {ref} is running.', now)
