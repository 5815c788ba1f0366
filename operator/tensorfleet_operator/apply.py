"""Plan -> API calls: the shell's hands.

``controller.py`` reads a TFJob and its children, calls the pure
``core.plan.reconcile`` and gives the plan to :meth:`Applier.apply`, which
writes it through ``kubeclient.py`` in this order: the status (only the changed
fields, merge patch to ``/status``), the plan's events, the PodGroup, the
RPC-token Secret, services and pods (409 AlreadyExists is success; pods are
built and sent :data:`core.api.POD_CREATE_BATCH` at a time), deletions (404 is
success), then events for what was actually created or deleted. A create the API
server refuses as invalid (400 BadRequest, 422 Invalid: the object itself, so the
spec, is at fault; not 403/409/429, which can pass) stops the creating and raises
:class:`ChildRefused`, which the controller turns into ``Failed``/``InvalidSpec``
naming the field (no retry until the spec changes). What it has
made for a job (Secret, PodGroup) is remembered in that job's
:class:`JobMemory`, owned by the controller's entry for the job, so it is
forgotten with the job.
"""
from __future__ import annotations

import asyncio
import datetime
import enum
import logging
import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .core import api, children
from .core.api import ReplicaType
from .core.conditions import parse_timestamp, timestamp
from .core.observe import controller_uid
from .core.plan import Event, Plan
from .core.spec import InvalidSpec
from .kubeclient import ApiError, KubeClient, object_path
from .metrics import OperatorMetrics

logger = logging.getLogger('tensorfleet_operator')
COMPONENT = 'tensorfleet-operator'


REFUSED_STATUSES = (400, 422)     # the object is at fault: retrying the same spec cannot help


class ChildRefused(Exception):
    """The API server refused to create a child as invalid: ``invalid`` names the TFJob's field."""

    def __init__(self, invalid: InvalidSpec) -> None:
        super().__init__(str(invalid))
        self.invalid = invalid


def refusal(plural: str, obj: dict[str, Any], err: ApiError) -> InvalidSpec:
    """The TFJob field behind a refused child: the first cause's field of the API's Status
    (``metadata.labels`` of a pod is the replica template's), and the API server's own message."""
    meta = obj.get('metadata') or {}
    rtype = (meta.get('labels') or {}).get(api.KUBEFLOW_LABEL_PREFIX + api.REPLICA_TYPE, '')
    rkey = next((t.value for t in ReplicaType if t.lower == rtype), rtype)
    template = f'spec.tfReplicaSpecs.{rkey}.template'
    details = err.body.get('details') if isinstance(err.body, dict) else None
    causes = details.get('causes') if isinstance(details, dict) else None
    cause = next((c.get('field') for c in causes or [] if isinstance(c, dict) and c.get('field')), None)
    if plural == 'pods':
        field = f'{template}.{cause}' if cause and cause.startswith(('metadata.', 'spec.')) else template
    else:        # a Service is made of the job's name and the tensorflow container's ports
        field = 'metadata.name' if cause and cause.startswith('metadata.') else f'{template}.spec.containers'
    kind = 'pod' if plural == 'pods' else 'service'
    return InvalidSpec(field, f"the API server refused {kind} {meta.get('name')} (HTTP {err.status}): {err.message}")


class Outcome(enum.Enum):
    APPLIED = 'applied'
    JOB_GONE = 'job-gone'        # the TFJob vanished while its status was written
    JOB_DELETED = 'job-deleted'  # ttlSecondsAfterFinished: this operator deleted it


@dataclass
class JobMemory:
    """What this operator made for one job (by the job's uid): asked for once, not every reconcile."""
    uid: str = ''
    secret: bool = False
    pod_group: bool = False
    pod_group_gone: bool = False
    last_error: str | None = None

    def of(self, uid: str) -> JobMemory:
        """This memory, reset if it was about an earlier job of the same name."""
        if uid != self.uid:
            self.uid, self.secret, self.pod_group, self.pod_group_gone, self.last_error = uid, False, False, False, None
        return self


def merge_diff(old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    """The JSON merge patch that turns ``old`` into ``new`` (removed keys become None)."""
    patch: dict[str, Any] = {key: None for key in old if key not in new}
    for key, value in new.items():
        if key in old and old[key] == value:
            continue
        if isinstance(value, dict) and isinstance(old.get(key), dict):
            sub = merge_diff(old[key], value)
            if sub:
                patch[key] = sub
        else:
            patch[key] = value
    return patch


def _names(names: list[str], limit: int = 10) -> str:
    shown = ', '.join(names[:limit])
    return shown + (f' and {len(names) - limit} more' if len(names) > limit else '')


def latest_condition(status: dict[str, Any]) -> str | None:
    conds = [c for c in status.get('conditions') or [] if c.get('status') == 'True']
    return conds[-1].get('type') if conds else None


class Applier:
    def __init__(self, group: str, gang_scheduler: str | None, opts: children.ChildOptions,
                 metrics: OperatorMetrics, instance: str) -> None:
        self.group, self.gang_scheduler, self.opts = group, gang_scheduler, opts
        self.metrics, self.instance = metrics, instance

    async def apply(self, client: KubeClient, body: dict[str, Any], plan: Plan, now: datetime.datetime,
                    memory: JobMemory) -> Outcome:
        """Write ``plan`` for the job ``body``. Raises if a child operation failed (after posting a
        Warning event once per distinct error), so the controller retries with backoff."""
        meta = body['metadata']
        namespace, name = meta.get('namespace', 'default'), meta['name']
        memory = memory.of(meta.get('uid', ''))
        if not await self._write_status(client, body, plan, now):
            return Outcome.JOB_GONE
        self.metrics.job_condition((namespace, name), latest_condition(plan.status))
        await self.post_events(client, body, plan.events)     # right after the status they describe
        events: list[Event] = []
        errors: list[str] = []
        await self._pod_group(client, namespace, name, plan, memory, events)
        pods_to_create: Sequence[dict[str, Any]] = plan.create_pods
        if plan.ensure_secret and not memory.secret and not await self._secret(client, plan, memory, errors):
            pods_to_create = []
        refused: list[InvalidSpec] = []
        svc_made = await self._create_all(client, 'services', namespace, plan.create_services, errors, refused)
        pods_made = [] if refused else await self._create_all(client, 'pods', namespace, pods_to_create, errors,
                                                               refused)
        self.metrics.pods_created.labels(namespace).inc(len(pods_made))
        self.metrics.services_created.labels(namespace).inc(len(svc_made))
        if refused:      # undo this pass (no event): the job fails with one InvalidSpec event
            gone = await self._delete_all(client, 'pods', namespace, pods_made, errors)
            await self._delete_all(client, 'services', namespace, svc_made, errors)
            self.metrics.pods_deleted.labels(namespace).inc(len(gone))
            raise ChildRefused(refused[0])
        pods_gone = await self._delete_all(client, 'pods', namespace, plan.delete_pods, errors)
        svcs_gone = await self._delete_all(client, 'services', namespace, plan.delete_services, errors)
        self.metrics.pods_deleted.labels(namespace).inc(len(pods_gone))
        for kind, verb, names in (('Service', 'Create', svc_made), ('Pod', 'Create', pods_made),
                                  ('Pod', 'Delete', pods_gone), ('Service', 'Delete', svcs_gone)):
            if names:
                events.append(Event('Normal', f'Successful{verb}{kind}', f'{verb}d {kind.lower()}(s) {_names(names)}'))
        message = '; '.join(errors)[:900] if errors else None
        if message is not None and memory.last_error != message:
            events.append(Event('Warning', 'FailedCreateOrDelete', message))
        memory.last_error = message
        await self.post_events(client, body, events)
        if errors:
            raise RuntimeError(f'{len(errors)} child operation(s) failed: {errors[0]}')
        if plan.delete_job:
            logger.info('TFJob %s/%s: ttlSecondsAfterFinished expired, deleting it', namespace, name)
            await client.delete(object_path(self.group, api.VERSION, api.PLURAL, namespace, name))
            return Outcome.JOB_DELETED
        return Outcome.APPLIED

    async def _write_status(self, client: KubeClient, body: dict[str, Any], plan: Plan,
                            now: datetime.datetime) -> bool:
        """Patch the changed status fields; False if the job is gone."""
        meta = body['metadata']
        namespace, name = meta.get('namespace', 'default'), meta['name']
        diff = merge_diff(body.get('status') or {}, plan.status)
        if not diff:
            return True
        try:
            await client.merge_patch(object_path(self.group, api.VERSION, api.PLURAL, namespace, name, 'status'),
                                     {'status': diff})
        except ApiError as e:
            if e.status == 404:
                return False
            raise
        created = parse_timestamp(meta.get('creationTimestamp'))
        self.metrics.transitions(namespace, plan.transitions, (now - created).total_seconds() if created else None)
        return True

    async def _pod_group(self, client: KubeClient, namespace: str, name: str, plan: Plan, memory: JobMemory,
                         events: list[Event]) -> None:
        group, version, plural = api.PODGROUP_API[self.gang_scheduler or api.GANG_VOLCANO]
        if plan.pod_group and not memory.pod_group:
            if await client.create(object_path(group, version, plural, namespace), plan.pod_group):
                events.append(Event('Normal', 'SuccessfulCreatePodGroup', f'Created PodGroup {name}'))
            memory.pod_group, memory.pod_group_gone = True, False
        if plan.delete_pod_group and not memory.pod_group_gone:
            if await client.delete(object_path(group, version, plural, namespace, name)):
                events.append(Event('Normal', 'SuccessfulDeletePodGroup', f'Deleted PodGroup {name}'))
            memory.pod_group, memory.pod_group_gone = False, True

    async def _secret(self, client: KubeClient, plan: Plan, memory: JobMemory, errors: list[str]) -> bool:
        """Make sure the job's RPC-token Secret is ours; False if pods must wait for it."""
        job = plan.job
        assert job is not None, 'a plan that creates pods carries its parsed job'
        secret = children.rpc_token_secret(job, secrets.token_urlsafe(32), self.opts)
        secret_name = secret['metadata']['name']
        if await client.create(object_path('', 'v1', 'secrets', job.namespace), secret):
            memory.secret = True
            return True
        existing = await client.get(object_path('', 'v1', 'secrets', job.namespace, secret_name))
        if existing is not None and controller_uid(existing) == job.uid:
            memory.secret = True      # ours: an earlier run (or operator) made it
            return True
        # Another owner's (a deleted job of the same name awaiting garbage collection), or gone
        # meanwhile: pods would read a stale token, then fail to start once it is collected.
        # Create no pod this pass; the retry creates the Secret.
        errors.append(f'secret {secret_name} belongs to another owner; waiting for it to be deleted before '
                      'creating pods')
        return False

    async def _create_all(self, client: KubeClient, plural: str, namespace: str,
                          bodies: Sequence[dict[str, Any]], errors: list[str],
                          refused: list[InvalidSpec]) -> list[str]:
        """Create in batches of ``api.POD_CREATE_BATCH``: a batch's manifests are built (pods carry
        the whole TF_CONFIG) only when it is sent, so memory does not grow with the job. A batch
        with a refused create (400/422) is the last one sent."""
        path = object_path('', 'v1', plural, namespace)

        async def one(obj: dict[str, Any]) -> str | None:
            try:
                return obj['metadata']['name'] if await client.create(path, obj) else None
            except ApiError as e:
                if e.status in REFUSED_STATUSES:
                    refused.append(refusal(plural, obj, e))
                else:
                    errors.append(f"create {plural[:-1]} {obj['metadata']['name']}: {e}")
                return None
        made: list[str] = []
        for start in range(0, len(bodies), api.POD_CREATE_BATCH):
            if refused:
                break
            batch = bodies[start:start + api.POD_CREATE_BATCH]
            made.extend(r for r in await asyncio.gather(*(one(b) for b in batch)) if r)
        return made

    async def _delete_all(self, client: KubeClient, plural: str, namespace: str, names: list[str],
                          errors: list[str]) -> list[str]:
        async def one(n: str) -> str | None:
            try:
                return n if await client.delete(object_path('', 'v1', plural, namespace, n)) else None
            except ApiError as e:
                errors.append(f'delete {plural[:-1]} {n}: {e}')
                return None
        results = await asyncio.gather(*(one(n) for n in dict.fromkeys(names)))
        return [r for r in results if r]

    async def post_events(self, client: KubeClient, body: dict[str, Any], events: list[Event]) -> None:
        if not events:
            return
        meta = body['metadata']
        namespace = meta.get('namespace', 'default')
        stamp = timestamp(datetime.datetime.now(datetime.timezone.utc))
        path = object_path('', 'v1', 'events', namespace)
        for ev in events:
            doc = {
                'apiVersion': 'v1', 'kind': 'Event',
                'metadata': {'generateName': meta['name'] + '.', 'namespace': namespace},
                'involvedObject': {'apiVersion': f'{self.group}/{api.VERSION}', 'kind': api.KIND,
                                   'name': meta['name'], 'namespace': namespace, 'uid': meta.get('uid')},
                'type': ev.type, 'reason': ev.reason, 'message': ev.message[:1024],
                'source': {'component': COMPONENT}, 'reportingComponent': COMPONENT,
                'reportingInstance': self.instance,
                'firstTimestamp': stamp, 'lastTimestamp': stamp, 'count': 1,
            }
            try:
                await client.create(path, doc)
            except ApiError as e:      # events are best effort
                logger.warning('could not post event %s on %s: %s', ev.reason, meta['name'], e)
