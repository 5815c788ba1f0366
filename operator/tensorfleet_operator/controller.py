"""The controller: per-job queue, timers, error backoff and peering pause/resume.

The shell's scheduler, between ``handlers.py`` (kopf: watch events and the
peering daemon call :meth:`Controller.trigger`, :meth:`Controller.forget`,
:meth:`Controller.hold`/:meth:`Controller.release`) and ``apply.py``. Flow of
one job:

1. a watch event on a TFJob, or on a pod/service carrying its job-name label,
   or a timer (deadline, TTL, error backoff) triggers the job's key;
2. triggers are coalesced per job: one reconcile at a time, one more if
   something changed meanwhile;
3. the reconcile reads the TFJob and lists its pods and services (server-side
   label selector) through ``kubeclient.py``, calls the pure
   ``core.plan.reconcile`` and hands the plan to ``apply.Applier``;
4. the plan's ``requeue_after`` becomes an asyncio timer, so deadlines and
   TTLs fire even when nothing else happens; a failed reconcile is retried
   after the next delay of ``error_backoff_seconds``.

With ``--peering`` (hot standby) the controller works only while kopf has not
paused the operator. kopf pauses a lower-priority operator by closing its watch
streams and stopping its daemons, but it knows nothing of the controller's own
timers or reconciles in flight. So the controller starts paused and runs only
while a kopf daemon on the peering object runs (``handlers.peering_holder``):
kopf stops that daemon when it pauses the operator (:meth:`Controller.pause`:
timers and reconciles in flight are cancelled, triggers only remembered) and
spawns it again after it resumes (:meth:`Controller.resume`: every known job is
reconciled).

Everything the controller keeps about a job lives in its ``_JobState`` and goes
with :meth:`Controller.forget` (the job was deleted); nothing is persisted
outside the TFJob's status, so an operator restart reconciles every job again.

Each reconcile also picks the pod whose metrics tell the job's training progress
(``core.progress.progress_target``); the :class:`progress.ProgressPoller` task reads those
on its own timer and writes ``status.progress`` (see ``progress.py``); once that pod has ended, its
termination message gives the final progress (``core.progress.final_progress``). The TFJob event that
its own write causes is recognised by its resourceVersion and reconciles nothing.
"""
from __future__ import annotations

import asyncio
import datetime
import inspect
import logging
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .api_health import ApiHealth
from .apply import Applier, ChildRefused, JobMemory, Outcome
from .config import OperatorConfig
from .core import api, metadata_rules
from .core.plan import Plan, reconcile
from .core.spec import InvalidSpec
from .core.progress import Target, final_progress, progress_target
from .kubeclient import Credentials, KubeClient, object_path
from .metrics import OperatorMetrics
from .progress import ProgressPoller

logger = logging.getLogger('tensorfleet_operator')


@dataclass
class _JobState:
    task: asyncio.Task[None] | None = None
    dirty: bool = False
    timer: asyncio.TimerHandle | None = None
    failures: int = 0
    memory: JobMemory = field(default_factory=JobMemory)     # what apply made for the job
    progress_target: Target | None = None                    # whose metrics tell the progress
    progress: Any = None                                     # status.progress as last read or written
    progress_rv: str | None = None                           # resourceVersion of our last progress write


@dataclass
class Controller:
    """Per-job coalescing of triggers, the reconcile, and the application of plans."""
    config: OperatorConfig
    metrics: OperatorMetrics = field(default_factory=OperatorMetrics)
    client: KubeClient | None = None
    _jobs: dict[tuple[str, str], _JobState] = field(default_factory=dict)   # all per-job state
    _holders: int = 0                                        # running peering_holder daemons
    timers_fired: int = 0                                    # reconciles started by a timer (deadline, TTL, retry)
    _relogin: Callable[[], Any] | None = None                # kopf's login again (after a 401)
    _token_path: str | None = None                           # the in-cluster token file, if any
    server: str = ''                                         # the API server's URL, once logged in

    def __post_init__(self) -> None:
        self.opts = self.config.child_options()
        self.instance = socket.gethostname()
        self.applier = Applier(self.config.api_group, self.config.gang_scheduler, self.opts, self.metrics,
                               self.instance)
        # With peering, nothing runs until kopf says this operator is not paused (see hold()).
        self.active = not self.config.peering_name
        self.progress_poller = ProgressPoller(self) if self.config.trainer_progress else None
        self.api_health = ApiHealth(self.config)       # readiness: does the API answer?

    async def alive(self) -> dict[str, Any]:
        """The liveness probe's answer, computed on the event loop (``health.py``)."""
        return {'jobs': self.known_jobs}

    # -- training progress (progress.py) -------------------------------------------------
    def start_progress(self) -> None:
        """Start the trainer-progress poller (in the running loop), if it is on."""
        if self.progress_poller is not None:
            self.progress_poller.start()

    def progress_targets(self) -> list[tuple[tuple[str, str], Target]]:
        return [(key, s.progress_target) for key, s in self._jobs.items() if s.progress_target is not None]

    def stored_progress(self, namespace: str, name: str) -> tuple[Any] | None:
        """(status.progress as last known,), or None when the job is forgotten."""
        state = self._jobs.get((namespace, name))
        return None if state is None else (state.progress,)

    def progress_written(self, namespace: str, name: str, progress: Any, resource_version: str | None) -> None:
        state = self._jobs.get((namespace, name))
        if state is not None:
            state.progress, state.progress_rv = progress, resource_version

    def own_progress_write(self, namespace: str, name: str, resource_version: Any) -> bool:
        """Is this TFJob version the one our last progress write made (nothing to reconcile)?"""
        state = self._jobs.get((namespace, name))
        return state is not None and resource_version is not None and state.progress_rv == resource_version

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
    def credentials(info: Any, token_path: str | None = None) -> Credentials:
        """kopf's ConnectionInfo as the REST client's Credentials (``token_path``: the file the
        token comes from, read again as it rotates)."""
        def s(v: Any) -> Any:
            return None if v is None else (v if isinstance(v, (str, bytes)) else str(v))
        return Credentials(server=info.server, token=info.token, scheme=info.scheme, token_path=token_path,
                           username=info.username, password=info.password, ca_path=s(info.ca_path),
                           ca_data=info.ca_data, insecure=bool(info.insecure),
                           certificate_path=s(info.certificate_path), certificate_data=info.certificate_data,
                           private_key_path=s(info.private_key_path), private_key_data=info.private_key_data)

    async def connect(self, info: Any, relogin: Callable[[], Any] | None = None,
                      token_path: str | None = None) -> None:
        """Take kopf's ConnectionInfo (from its login handler) for the REST client.

        ``relogin`` runs the same login again; the client calls it when one of its own
        requests gets 401 (kopf re-authenticates only after a 401 on kopf's requests).
        """
        if relogin is not None:
            self._relogin = relogin
        self._token_path = token_path
        creds = self.credentials(info, token_path)
        self.server = creds.server
        if self.client is None:
            self.client = KubeClient(creds, self.config.max_in_flight, refresh=self._refresh_credentials)
            self.client.token_refresh_seconds = self.config.token_refresh_seconds
        else:
            await self.client.update(creds)

    async def _refresh_credentials(self) -> Credentials | None:
        if self._relogin is None:
            return None
        logger.info('HTTP 401 Unauthorized on the operator\'s own request: logging in again')
        info = self._relogin()
        if inspect.isawaitable(info):
            info = await info
        return None if info is None else self.credentials(info, self._token_path)

    async def close(self) -> None:
        for state in self._jobs.values():
            if state.timer:
                state.timer.cancel()
            if state.task and not state.task.done():
                state.task.cancel()
        tasks = [s.task for s in self._jobs.values() if s.task]
        await asyncio.gather(*tasks, return_exceptions=True)
        if self.progress_poller is not None:
            await self.progress_poller.close()
        await self.api_health.close()
        if self.client is not None:
            await self.client.close()
        # The metrics server stops within its poll interval (0.5 s); nothing here waits for it.
        threading.Thread(target=self.metrics.close, name='metrics-close', daemon=True).start()

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
        state.timer = loop.call_later(max(delay, 0.0), self._timer_fired, namespace, name)

    def _timer_fired(self, namespace: str, name: str) -> None:
        self.timers_fired += 1
        state = self._jobs.get((namespace, name))
        if state is not None:
            state.timer = None
        self.trigger(namespace, name)

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
    async def _children(self, client: KubeClient, namespace: str, name: str
                        ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """The job's pods and services by its job-name label. A name that cannot be a label value
        has none (the API server would answer the selector with 400); the core fails that job."""
        if metadata_rules.label_value_problem(name):
            return [], []
        selector = f'{api.JOB_NAME_LABEL}={name}'
        pods, services = await asyncio.gather(
            client.list(object_path('', 'v1', 'pods', namespace), selector),
            client.list(object_path('', 'v1', 'services', namespace), selector))
        return pods, services

    async def reconcile(self, namespace: str, name: str) -> Plan | None:
        client = self.client
        if client is None:
            raise RuntimeError('not logged in yet')
        group = self.config.api_group
        job_path = object_path(group, api.VERSION, api.PLURAL, namespace, name)
        refused: InvalidSpec | None = None
        for _ in range(2):      # a second pass only to fail the job when the API refused a child
            body = await client.get(job_path)
            if body is None:
                self.forget(namespace, name)
                return None
            pods, services = await self._children(client, namespace, name)
            now = datetime.datetime.now(datetime.timezone.utc)
            plan = reconcile(body, pods, services, now, self.opts, refused=refused)
            state = self._jobs.get((namespace, name))
            try:
                outcome = await self.applier.apply(client, body, plan, now, state.memory if state else JobMemory())
                break
            except ChildRefused as e:
                if refused is not None:
                    raise
                logger.warning('TFJob %s/%s: %s', namespace, name, e)
                refused = e.invalid
        if outcome is not Outcome.APPLIED:
            self.forget(namespace, name)
            return plan
        if state is not None and self.progress_poller is not None:
            state.progress = (body.get('status') or {}).get('progress')
            replicas = plan.job.replicas if plan.job else ()
            state.progress_target = progress_target(replicas, plan.status, pods, self.config.trainer_metrics_port)
            final = final_progress(replicas, pods)    # the chief ended: the last progress it left
            if final is not None:
                await self.progress_poller.record((namespace, name), final)
        if plan.requeue_after is not None and (namespace, name) in self._jobs:
            self.trigger_later(namespace, name, plan.requeue_after + 0.05)
        return plan
