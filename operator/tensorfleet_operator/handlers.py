"""The kopf layer: watch TFJobs and their children, run the pure plan, apply it.

The only module that imports kopf. Flow of one reconcile (``Controller``):

1. a watch event on a TFJob, or on a pod/service carrying its job-name label,
   or a timer (deadline, TTL, error backoff) triggers the job's key;
2. triggers are coalesced per job: one reconcile at a time, one more if
   something changed meanwhile;
3. the reconcile reads the TFJob and lists its pods and services (server-side
   label selector), calls ``plan.reconcile`` and applies the plan: status
   first (only the changed fields, merge patch to ``/status``), then PodGroup,
   Secret, services and pods (409 AlreadyExists is success), deletions, and
   the plan's events;
4. the plan's ``requeue_after`` becomes an asyncio timer, so deadlines and
   TTLs fire even when nothing else happens.

With ``--peering`` (hot standby) the operator works only while kopf has not
paused it. kopf pauses a lower-priority operator by closing its watch streams
and stopping its daemons, but it knows nothing of the Controller's own timers
(deadline, TTL, error backoff) or of reconciles in flight. So the Controller
starts paused and runs only while a kopf daemon on the peering object runs
(``peering_holder``): kopf stops that daemon when it pauses the operator
(``Controller.pause``: timers and reconciles in flight are cancelled, triggers
are only remembered) and spawns it again after it resumes
(``Controller.resume``: every known job is reconciled).

Nothing here is persisted outside the TFJob's status, so an operator restart
simply reconciles every job again; deterministic names keep it duplicate-free.
"""
from __future__ import annotations

import asyncio
import datetime
import inspect
import logging
import secrets
import socket
import time
from dataclasses import dataclass, field
from collections.abc import Sequence
from typing import Any, Callable

import kopf

from . import api, children
from .conditions import parse_timestamp, timestamp
from .config import OperatorConfig
from .kubeclient import ApiError, Credentials, KubeClient, object_path
from .metrics import OperatorMetrics
from .plan import Event, Plan, reconcile
from .spec import parse_job, InvalidSpec
from .status import controller_uid

logger = logging.getLogger('tensorfleet_operator')
COMPONENT = 'tensorfleet-operator'
LoginFn = Callable[..., Any]


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


@dataclass
class _JobState:
    task: asyncio.Task[None] | None = None
    dirty: bool = False
    timer: asyncio.TimerHandle | None = None
    failures: int = 0
    last_error: str | None = None


@dataclass
class Controller:
    """Per-job coalescing of triggers, the reconcile, and the application of plans."""
    config: OperatorConfig
    metrics: OperatorMetrics = field(default_factory=OperatorMetrics)
    client: KubeClient | None = None
    _jobs: dict[tuple[str, str], _JobState] = field(default_factory=dict)
    _secrets: set[str] = field(default_factory=set)          # job uids whose Secret exists
    _pod_groups: set[str] = field(default_factory=set)       # job uids whose PodGroup exists
    _pod_groups_gone: set[str] = field(default_factory=set)  # job uids whose PodGroup was deleted
    _holders: int = 0                                        # running peering_holder daemons
    _relogin: Callable[[], Any] | None = None                # kopf's login again (after a 401)

    def __post_init__(self) -> None:
        self.opts = self.config.child_options()
        self.instance = socket.gethostname()
        # With peering, nothing runs until kopf says this operator is not paused (see hold()).
        self.active = not self.config.peering_name

    # -- peering: pause and resume -----------------------------------------------------
    def hold(self) -> None:
        """A peering_holder daemon started: kopf has not paused this operator."""
        self._holders += 1
        if not self.active:
            self.resume()

    def release(self) -> None:
        """A peering_holder daemon stopped: kopf paused the operator (or it is exiting)."""
        self._holders = max(self._holders - 1, 0)
        if self._holders == 0 and self.config.peering_name and self.active:
            self.pause()

    def pause(self) -> None:
        """Stop working: cancel timers and reconciles in flight; triggers are only remembered."""
        logger.info('paused: kopf stopped the peering daemon (an operator with a higher priority '
                    'is active, or this one is exiting)')
        self.active = False
        for state in self._jobs.values():
            if state.timer is not None:
                state.timer.cancel()
                state.timer = None
            state.dirty = False
            if state.task is not None and not state.task.done():
                state.task.cancel()

    def resume(self) -> None:
        """Start (again) to work: reconcile every job known so far."""
        logger.info('active: no operator with a higher priority in peering %s', self.config.peering_name)
        self.active = True
        for namespace, name in list(self._jobs):
            self.trigger(namespace, name)

    # -- connection ---------------------------------------------------------------
    @staticmethod
    def credentials(info: Any) -> Credentials:
        """kopf's ConnectionInfo as the REST client's Credentials."""
        def s(v: Any) -> Any:
            return None if v is None else (v if isinstance(v, (str, bytes)) else str(v))
        return Credentials(server=info.server, token=info.token, scheme=info.scheme,
                           username=info.username, password=info.password, ca_path=s(info.ca_path),
                           ca_data=info.ca_data, insecure=bool(info.insecure),
                           certificate_path=s(info.certificate_path), certificate_data=info.certificate_data,
                           private_key_path=s(info.private_key_path), private_key_data=info.private_key_data)

    async def connect(self, info: Any, relogin: Callable[[], Any] | None = None) -> None:
        """Take kopf's ConnectionInfo (from its login handler) for the REST client.

        ``relogin`` runs the same login again; the client calls it when one of its own
        requests gets 401 (kopf re-authenticates only after a 401 on kopf's requests).
        """
        if relogin is not None:
            self._relogin = relogin
        creds = self.credentials(info)
        if self.client is None:
            self.client = KubeClient(creds, self.config.max_in_flight, refresh=self._refresh_credentials)
        else:
            await self.client.update(creds)

    async def _refresh_credentials(self) -> Credentials | None:
        if self._relogin is None:
            return None
        logger.info('HTTP 401 Unauthorized on the operator\'s own request: logging in again')
        info = self._relogin()
        if inspect.isawaitable(info):
            info = await info
        return None if info is None else self.credentials(info)

    async def close(self) -> None:
        for state in self._jobs.values():
            if state.timer:
                state.timer.cancel()
            if state.task and not state.task.done():
                state.task.cancel()
        tasks = [s.task for s in self._jobs.values() if s.task]
        await asyncio.gather(*tasks, return_exceptions=True)
        if self.client is not None:
            await self.client.close()

    # -- triggering ------------------------------------------------------------
    def trigger(self, namespace: str, name: str) -> None:
        key = (namespace, name)
        state = self._jobs.setdefault(key, _JobState())
        if not self.active:
            return                 # remembered: resume() reconciles it
        if state.task is not None and not state.task.done():
            state.dirty = True
            return
        state.task = asyncio.get_running_loop().create_task(self._run(key, state))

    def trigger_later(self, namespace: str, name: str, delay: float) -> None:
        state = self._jobs.setdefault((namespace, name), _JobState())
        if state.timer is not None:
            state.timer.cancel()
            state.timer = None
        if not self.active:
            return
        loop = asyncio.get_running_loop()
        state.timer = loop.call_later(max(delay, 0.0), self.trigger, namespace, name)

    def forget(self, namespace: str, name: str) -> None:
        state = self._jobs.pop((namespace, name), None)
        if state is not None and state.timer is not None:
            state.timer.cancel()
        self.metrics.job_condition((namespace, name), None)

    @property
    def known_jobs(self) -> int:
        return len(self._jobs)

    async def _run(self, key: tuple[str, str], state: _JobState) -> None:
        while self.active:
            state.dirty = False
            if self.config.debounce_seconds:
                await asyncio.sleep(self.config.debounce_seconds)
            started = time.monotonic()
            try:
                await self.reconcile(*key)
                state.failures = 0
            except asyncio.CancelledError:
                raise
            except Exception as exc:   # never crash: log, back off, retry
                self.metrics.reconcile_errors.inc()
                delays = self.config.error_backoff_seconds
                delay = delays[min(state.failures, len(delays) - 1)]
                state.failures += 1
                logger.warning('reconcile of %s/%s failed (%s); retrying in %ss', *key, exc, delay)
                if key in self._jobs:
                    self.trigger_later(*key, delay)
            finally:
                self.metrics.reconcile_duration.observe(time.monotonic() - started)
            if not state.dirty:
                return

    # -- one reconcile -------------------------------------------------------------
    async def reconcile(self, namespace: str, name: str) -> Plan | None:
        client = self.client
        if client is None:
            raise RuntimeError('not logged in yet')
        group = self.config.api_group
        job_path = object_path(group, api.VERSION, api.PLURAL, namespace, name)
        body = await client.get(job_path)
        if body is None:
            self.forget(namespace, name)
            return None
        selector = f'{api.JOB_NAME_LABEL}={name}'
        pods, services = await asyncio.gather(
            client.list(object_path('', 'v1', 'pods', namespace), selector),
            client.list(object_path('', 'v1', 'services', namespace), selector))
        now = datetime.datetime.now(datetime.timezone.utc)
        plan = reconcile(body, pods, services, now, self.opts)
        await self._apply(body, plan, now)
        return plan

    async def _apply(self, body: dict[str, Any], plan: Plan, now: datetime.datetime) -> None:
        client = self.client
        assert client is not None
        meta = body['metadata']
        namespace, name, uid = meta.get('namespace', 'default'), meta['name'], meta.get('uid', '')
        group = self.config.api_group
        key = (namespace, name)
        old_status = body.get('status') or {}
        diff = merge_diff(old_status, plan.status)
        if diff:
            path = object_path(group, api.VERSION, api.PLURAL, namespace, name, 'status')
            try:
                await client.merge_patch(path, {'status': diff})
            except ApiError as e:
                if e.status == 404:
                    self.forget(namespace, name)
                    return
                raise
            created = parse_timestamp(meta.get('creationTimestamp'))
            since = (now - created).total_seconds() if created else None
            self.metrics.transitions(namespace, plan.transitions, since)
        self.metrics.job_condition(key, latest_condition(plan.status))
        await self._post_events(body, plan.events)     # right after the status they describe
        events: list[Event] = []

        if plan.pod_group and uid not in self._pod_groups:
            g, v, plural = api.PODGROUP_API[self.config.gang_scheduler or api.GANG_VOLCANO]
            if await client.create(object_path(g, v, plural, namespace), plan.pod_group):
                events.append(Event('Normal', 'SuccessfulCreatePodGroup', f'Created PodGroup {name}'))
            self._pod_groups.add(uid)
            self._pod_groups_gone.discard(uid)
        if plan.delete_pod_group and uid not in self._pod_groups_gone:
            g, v, plural = api.PODGROUP_API[self.config.gang_scheduler or api.GANG_VOLCANO]
            if await client.delete(object_path(g, v, plural, namespace, name)):
                events.append(Event('Normal', 'SuccessfulDeletePodGroup', f'Deleted PodGroup {name}'))
            self._pod_groups_gone.add(uid)
            self._pod_groups.discard(uid)
        errors: list[str] = []
        pods_to_create = plan.create_pods
        if plan.ensure_secret and uid not in self._secrets:
            job = parse_job(body)
            secret = children.rpc_token_secret(job, secrets.token_urlsafe(32), self.opts)
            secret_name = secret['metadata']['name']
            if await client.create(object_path('', 'v1', 'secrets', namespace), secret):
                self._secrets.add(uid)
            else:
                existing = await client.get(object_path('', 'v1', 'secrets', namespace, secret_name))
                if existing is not None and controller_uid(existing) == uid:
                    self._secrets.add(uid)      # ours: an earlier run (or operator) made it
                else:
                    # Another owner's (a deleted job of the same name awaiting garbage collection),
                    # or gone meanwhile: pods would read a stale token, then fail to start once it
                    # is collected. Create no pod this pass; the retry creates the Secret.
                    errors.append(f'secret {secret_name} belongs to another owner; '
                                  'waiting for it to be deleted before creating pods')
                    pods_to_create = []

        svc_made = await self._create_all('services', namespace, plan.create_services, errors)
        pods_made = await self._create_all('pods', namespace, pods_to_create, errors)
        pods_gone = await self._delete_all('pods', namespace, plan.delete_pods, errors)
        svcs_gone = await self._delete_all('services', namespace, plan.delete_services, errors)
        self.metrics.pods_created.labels(namespace).inc(len(pods_made))
        self.metrics.services_created.labels(namespace).inc(len(svc_made))
        self.metrics.pods_deleted.labels(namespace).inc(len(pods_gone))
        for kind, verb, names in (('Service', 'Create', svc_made), ('Pod', 'Create', pods_made),
                                  ('Pod', 'Delete', pods_gone), ('Service', 'Delete', svcs_gone)):
            if names:
                events.append(Event('Normal', f'Successful{verb}{kind}',
                                    f'{verb}d {kind.lower()}(s) {_names(names)}'))
        state = self._jobs.get(key)
        if errors:
            message = '; '.join(errors)[:900]
            if state is not None and state.last_error != message:
                events.append(Event('Warning', 'FailedCreateOrDelete', message))
                state.last_error = message
        elif state is not None:
            state.last_error = None
        await self._post_events(body, events)
        if errors:
            raise RuntimeError(f'{len(errors)} child operation(s) failed: {errors[0]}')
        if plan.delete_job:
            logger.info('TFJob %s/%s: ttlSecondsAfterFinished expired, deleting it', namespace, name)
            await client.delete(object_path(group, api.VERSION, api.PLURAL, namespace, name))
            self.forget(namespace, name)
            return
        if plan.requeue_after is not None and key in self._jobs:
            self.trigger_later(namespace, name, plan.requeue_after + 0.05)

    async def _create_all(self, plural: str, namespace: str, bodies: Sequence[dict[str, Any]],
                          errors: list[str]) -> list[str]:
        """Create in batches of ``api.POD_CREATE_BATCH``: a batch's manifests are built (pods carry
        the whole TF_CONFIG) only when it is sent, so memory does not grow with the job."""
        client = self.client
        assert client is not None
        path = object_path('', 'v1', plural, namespace)

        async def one(obj: dict[str, Any]) -> str | None:
            try:
                return obj['metadata']['name'] if await client.create(path, obj) else None
            except ApiError as e:
                errors.append(f"create {plural[:-1]} {obj['metadata']['name']}: {e}")
                return None
        made: list[str] = []
        for start in range(0, len(bodies), api.POD_CREATE_BATCH):
            batch = bodies[start:start + api.POD_CREATE_BATCH]
            made.extend(r for r in await asyncio.gather(*(one(b) for b in batch)) if r)
        return made

    async def _delete_all(self, plural: str, namespace: str, names: list[str], errors: list[str]) -> list[str]:
        client = self.client
        assert client is not None

        async def one(n: str) -> str | None:
            try:
                return n if await client.delete(object_path('', 'v1', plural, namespace, n)) else None
            except ApiError as e:
                errors.append(f'delete {plural[:-1]} {n}: {e}')
                return None
        results = await asyncio.gather(*(one(n) for n in dict.fromkeys(names)))
        return [r for r in results if r]

    async def _post_events(self, body: dict[str, Any], events: list[Event]) -> None:
        if not events or self.client is None:
            return
        meta = body['metadata']
        namespace = meta.get('namespace', 'default')
        stamp = timestamp(datetime.datetime.now(datetime.timezone.utc))
        path = object_path('', 'v1', 'events', namespace)
        for ev in events:
            doc = {
                'apiVersion': 'v1', 'kind': 'Event',
                'metadata': {'generateName': meta['name'] + '.', 'namespace': namespace},
                'involvedObject': {'apiVersion': f'{self.config.api_group}/{api.VERSION}', 'kind': api.KIND,
                                   'name': meta['name'], 'namespace': namespace, 'uid': meta.get('uid')},
                'type': ev.type, 'reason': ev.reason, 'message': ev.message[:1024],
                'source': {'component': COMPONENT}, 'reportingComponent': COMPONENT,
                'reportingInstance': self.instance,
                'firstTimestamp': stamp, 'lastTimestamp': stamp, 'count': 1,
            }
            try:
                await self.client.create(path, doc)
            except ApiError as e:      # events are best effort
                logger.warning('could not post event %s on %s: %s', ev.reason, meta['name'], e)


def default_login(**kwargs: Any) -> Any:
    """In-cluster service account first, then kubeconfig (kopf's own piggy-back-free logins)."""
    return kopf.login_with_service_account(**kwargs) or kopf.login_with_kubeconfig(**kwargs)


def build_registry(controller: Controller, login: LoginFn | None = None,
                   configure: Callable[[kopf.OperatorSettings], None] | None = None) -> kopf.OperatorRegistry:
    """Register the handlers for ``controller.config`` on a fresh registry."""
    config = controller.config
    registry = kopf.OperatorRegistry()
    login_fn = login or default_login

    @kopf.on.startup(registry=registry)
    async def startup(settings: kopf.OperatorSettings, **_: Any) -> None:
        settings.scanning.disabled = True
        settings.posting.enabled = True
        settings.watching.server_timeout = 300
        settings.watching.client_timeout = 330
        settings.watching.label_selectors['pods'] = api.JOB_NAME_LABEL
        settings.watching.label_selectors['services'] = api.JOB_NAME_LABEL
        if configure is not None:
            configure(settings)
        if config.metrics_port:
            controller.metrics.serve(config.metrics_port, config.metrics_address)

    @kopf.on.login(registry=registry)
    async def login_handler(**kwargs: Any) -> Any:
        info = login_fn(**kwargs)
        if info is not None:
            await controller.connect(info, relogin=lambda: login_fn(**kwargs))
        return info

    @kopf.on.cleanup(registry=registry)
    async def cleanup(**_: Any) -> None:
        await controller.close()

    @kopf.on.probe(id='jobs', registry=registry)
    async def probe_jobs(**_: Any) -> int:
        return controller.known_jobs

    @kopf.on.event(config.api_group, api.VERSION, api.PLURAL, registry=registry)
    async def tfjob_event(event: dict[str, Any], name: str, namespace: str, **_: Any) -> None:
        if event.get('type') == 'DELETED':
            controller.forget(namespace, name)
        else:
            controller.trigger(namespace, name)

    async def child_event(body: dict[str, Any], namespace: str, **_: Any) -> None:
        job = (body.get('metadata', {}).get('labels') or {}).get(api.JOB_NAME_LABEL)
        if job:
            controller.trigger(namespace, job)

    for plural in ('pods', 'services'):
        kopf.on.event('', 'v1', plural, labels={api.JOB_NAME_LABEL: kopf.PRESENT},
                      registry=registry, id=f'{plural}_event')(child_event)

    if config.peering_name:
        # kopf runs this daemon only while the operator is not paused by peering (its
        # daemon_killer stops every daemon on pause; the re-listing after resume respawns it).
        # The Controller works only while one runs. kopf puts its finalizer on the peering object.
        peering_name = config.peering_name

        @kopf.daemon(PEERING_GROUP, PEERING_VERSION, peering_plural(config), id='peering_holder',
                     when=lambda name, **_: name == peering_name, cancellation_timeout=5,
                     registry=registry)
        async def peering_holder(stopped: Any, **_: Any) -> None:
            controller.hold()
            try:
                await stopped.wait()
            finally:
                controller.release()
    return registry


PEERING_GROUP, PEERING_VERSION = 'kopf.dev', 'v1'


def peering_plural(config: OperatorConfig) -> str:
    """kopf's peering resource: cluster-wide operators use ClusterKopfPeering, others KopfPeering."""
    return 'clusterkopfpeerings' if config.clusterwide else 'kopfpeerings'


async def run_operator(config: OperatorConfig, *, controller: Controller | None = None,
                       login: LoginFn | None = None,
                       configure: Callable[[kopf.OperatorSettings], None] | None = None,
                       stop_flag: Any = None, ready_flag: Any = None, identity: str | None = None) -> None:
    """Run the operator in the current event loop until ``stop_flag`` is set (an asyncio or
    threading Event). ``identity`` is kopf's peer id (default: kopf's, from POD_ID or the host)."""
    controller = controller or Controller(config)
    registry = build_registry(controller, login=login, configure=configure)
    await kopf.operator(
        registry=registry,
        clusterwide=config.clusterwide,
        namespaces=list(config.namespaces),
        standalone=config.standalone and not config.peering_name,
        peering_name=config.peering_name,
        priority=config.priority,
        liveness_endpoint=config.liveness_endpoint,
        stop_flag=stop_flag,
        ready_flag=ready_flag,
        identity=identity,
    )


__all__ = ['Controller', 'build_registry', 'run_operator', 'merge_diff', 'InvalidSpec']
