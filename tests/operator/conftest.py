"""Fixtures for the operator's integration tests: the emulated API (kmock +
``kube_emulator.TFJobEmulator``) and a harness that runs the real handlers
(kopf embedded in the test's event loop) against it and drives pods through
their phases by patching their status, as the kubelet would."""
from __future__ import annotations

import asyncio
import contextlib
import threading
from typing import Any, Callable

import kopf
import pytest

from kube_emulator import TFJobEmulator, declare_resources
from tensorfleet_operator.config import OperatorConfig
from tensorfleet_operator.controller import Controller
from tensorfleet_operator.handlers import run_operator

NS = 'ns'
GROUP = 'tensorfleet.io'


@pytest.fixture()
def kmock_options() -> dict[str, Any]:
    return {'cls': TFJobEmulator}


class Harness:
    def __init__(self, kmock: Any) -> None:
        self.kmock = kmock
        self.url = str(kmock.url).rstrip('/')
        self.controller: Controller | None = None
        self.controllers: list[Controller] = []
        self._stop: asyncio.Event | None = None
        self._task: asyncio.Task[None] | None = None
        self.threads: list[ThreadedOperator] = []
        self.group = GROUP
        # The fake kubelet's lag between a container's termination and the pod's terminal phase
        # (a real kubelet 1.32: 0.5-1 s; see set_pod). None: the phase never comes.
        self.terminal_delay: float | None = 0.3
        self._kubelet_tasks: set[asyncio.Task[None]] = set()
        self.late_phases: list[tuple[str, str]] = []     # (pod, phase) written late

    # -- operator lifecycle -------------------------------------------------
    def config(self, **config: Any) -> OperatorConfig:
        # Kubeflow's clean-up at once unless a test sets Tensorfleet's grace (test_op_clean_grace.py does)
        config.setdefault('clean_pod_grace_seconds', 0.0)
        return OperatorConfig(api_group=self.group, debounce_seconds=0.01, error_backoff_seconds=(0.2, 0.5, 1.0),
                              **config)

    def run_kwargs(self, peering_lifetime: int | None = None, login: Callable[..., Any] | None = None,
                   api_login: Any = None) -> dict[str, Any]:
        def configure(settings: kopf.OperatorSettings) -> None:
            settings.watching.inactivity_timeout = 999999     # kmock sends no bookmarks
            settings.watching.reconnect_backoff = 0.05
            settings.posting.enabled = False
            if peering_lifetime is not None:
                settings.peering.lifetime = peering_lifetime
        if api_login is not None:        # cluster_login.ApiLogin: the operator's own choice of login
            return {'configure': configure, 'api_login': api_login}
        return {'configure': configure,
                'login': login or (lambda **_: kopf.ConnectionInfo(server=self.url, insecure=True))}

    async def start(self, identity: str | None = None, peering_lifetime: int | None = None,
                    login: Callable[..., Any] | None = None, api_login: Any = None, **config: Any) -> Controller:
        cfg = self.config(**config)
        self.controller = Controller(cfg)
        self.controllers.append(self.controller)
        self._stop, ready = asyncio.Event(), asyncio.Event()
        self._task = asyncio.create_task(run_operator(
            cfg, controller=self.controller, stop_flag=self._stop, ready_flag=ready, identity=identity,
            **self.run_kwargs(peering_lifetime, login, api_login)))
        await asyncio.wait_for(ready.wait(), 10)
        return self.controller

    async def start_in_thread(self, identity: str, peering_lifetime: int | None = None,
                              **config: Any) -> 'ThreadedOperator':
        """A second operator in its own thread and event loop. (Two kopf operators cannot share
        a loop: when one stops, kopf cancels every task created after it started, the other
        operator's included.)"""
        op = ThreadedOperator(Controller(self.config(**config)), identity,
                              self.run_kwargs(peering_lifetime))
        self.threads.append(op)
        await asyncio.to_thread(op.started.wait, 10)
        return op

    async def stop(self) -> None:
        for task in list(self._kubelet_tasks):
            task.cancel()
        await asyncio.gather(*self._kubelet_tasks, return_exceptions=True)
        for op in self.threads:
            await op.stop()
        if self._task is not None and self._stop is not None:
            self._stop.set()
            # kopf waits 5 s for "hung" tasks, which here are only kmock's server-side watch
            # handlers (they never notice a closed client); cancelling skips that wait.
            await asyncio.wait({self._task}, timeout=0.2)
            if not self._task.done():
                self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.wait_for(self._task, 15)
            self._task = None

    # -- API access -----------------------------------------------------------
    async def call(self, method: str, path: str, body: Any = None, content_type: str | None = None) -> Any:
        headers = {'Content-Type': content_type} if content_type else None
        async with self.kmock.request(method, path, json=body, headers=headers) as resp:
            assert resp.status < 400, (method, path, resp.status, await resp.text())
            return await resp.json()

    def jobs_path(self, name: str | None = None, sub: str | None = None) -> str:
        path = f'/apis/{self.group}/v1/namespaces/{NS}/tfjobs'
        return path + (f'/{name}' if name else '') + (f'/{sub}' if sub else '')

    async def create_job(self, body: dict[str, Any]) -> dict[str, Any]:
        body = {**body, 'metadata': {**body['metadata'], 'namespace': NS}}
        body['metadata'].pop('uid', None)
        body['metadata'].pop('creationTimestamp', None)
        body.pop('status', None)
        return await self.call('POST', self.jobs_path(), body)

    async def patch_job(self, name: str, patch: dict[str, Any]) -> Any:
        return await self.call('PATCH', self.jobs_path(name), patch, 'application/merge-patch+json')

    def objects(self, plural: str) -> dict[str, dict[str, Any]]:
        """Live objects of a kind in NS, by name."""
        out = {}
        for key in list(self.kmock.objects):
            resource, namespace, name = key
            if resource.plural == plural and namespace == NS:
                obj = self.kmock.objects[key]
                if not obj.deleted:
                    out[name] = obj.raw
        return out

    def history(self, plural: str, name: str) -> list[Any]:
        for key in list(self.kmock.objects):
            if key[0].plural == plural and key[1] == NS and key[2] == name:
                return list(self.kmock.objects[key].history.raw)
        return []

    def job(self, name: str) -> dict[str, Any] | None:
        return self.objects('tfjobs').get(name)

    def status(self, name: str) -> dict[str, Any]:
        return (self.job(name) or {}).get('status') or {}

    def conditions(self, name: str) -> dict[str, str]:
        return {c['type']: c['status'] for c in self.status(name).get('conditions') or []}

    def events(self, reason: str | None = None) -> list[dict[str, Any]]:
        evs = list(self.objects('events').values())
        return [e for e in evs if reason is None or e.get('reason') == reason]

    def pods(self, job: str | None = None) -> dict[str, dict[str, Any]]:
        return {n: p for n, p in self.objects('pods').items()
                if job is None or p['metadata']['labels'].get('training.kubeflow.org/job-name') == job}

    async def set_pod(self, name: str, phase: str, exit_code: int | None = None, reason: str | None = None,
                      restarts: int = 0, terminal_delay: float | None | str = 'default',
                      missing_ok: bool = False, message: str | None = None) -> None:
        """Play the kubelet: patch a pod's status, in a real kubelet's order.

        A finishing container (a terminal ``phase`` with an ``exit_code``) is reported first as
        ``state.terminated`` while ``status.phase`` stays ``Running``; the terminal phase follows
        ``terminal_delay`` seconds later (default :attr:`terminal_delay`; None: never, as when the
        pod is deleted before its sandbox is torn down; 0: both at once). The late write is for that
        pod only (its uid is checked): a pod recreated under the same name is left alone.
        ``missing_ok``: a pod the operator may already have deleted (404) is not an error.
        ``message``: the finished container's termination message (what it wrote to /dev/termination-log).
        """
        delay = self.terminal_delay if terminal_delay == 'default' else terminal_delay
        state: dict[str, Any] = {'running': {'startedAt': '2026-01-01T00:00:00Z'}}
        if exit_code is not None:
            state = {'terminated': {'exitCode': exit_code, 'reason': reason or ('Completed' if exit_code == 0
                                                                               else 'Error')}}
            if message is not None:
                state['terminated']['message'] = message
        elif phase == 'Pending':
            state = {'waiting': {'reason': reason or 'ContainerCreating'}}
        status = {'phase': phase, 'containerStatuses': [
            {'name': 'tensorflow', 'restartCount': restarts, 'state': state}]}
        path = f'/api/v1/namespaces/{NS}/pods/{name}/status'
        if phase in ('Succeeded', 'Failed') and exit_code is not None and delay != 0:
            status['phase'] = 'Running'
            pod = await self._patch_status(path, status, missing_ok)
            if pod is not None and delay is not None:
                task = asyncio.create_task(self._late_phase(path, pod['metadata']['uid'], phase, float(delay)))
                self._kubelet_tasks.add(task)
                task.add_done_callback(self._kubelet_tasks.discard)
            return
        await self._patch_status(path, status, missing_ok)

    async def _patch_status(self, path: str, status: dict[str, Any], missing_ok: bool) -> Any:
        async with self.kmock.request('PATCH', path, json={'status': status},
                                      headers={'Content-Type': 'application/merge-patch+json'}) as resp:
            if resp.status == 404 and missing_ok:
                return None
            assert resp.status < 400, ('PATCH', path, resp.status, await resp.text())
            return await resp.json()

    async def _late_phase(self, path: str, uid: str, phase: str, delay: float) -> None:
        await asyncio.sleep(delay)
        patch = [{'op': 'test', 'path': '/metadata/uid', 'value': uid},
                 {'op': 'replace', 'path': '/status/phase', 'value': phase}]
        async with self.kmock.request('PATCH', path, json=patch,
                                      headers={'Content-Type': 'application/json-patch+json'}) as resp:
            # 404: deleted meanwhile; 422: another pod of that name now. Both: nothing to report.
            assert resp.status in (200, 404, 422), (path, resp.status, await resp.text())
            if resp.status == 200:
                self.late_phases.append((path.split('/')[-2], phase))

    async def delete(self, plural: str, name: str) -> None:
        await self.call('DELETE', f'/api/v1/namespaces/{NS}/{plural}/{name}')

    async def wait_for(self, check: Callable[[], Any], timeout: float = 60.0, what: str = '') -> Any:
        """Poll until ``check()`` is truthy (a condition, not a timing assertion: the generous
        timeout only bounds a hang, so a slow, busy machine passes as a fast one does)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            result = check()
            if result:
                return result
            if loop.time() > deadline:
                raise AssertionError(f'timed out waiting for {what or check}; job statuses: '
                                     f'{ {n: j.get("status") for n, j in self.objects("tfjobs").items()} }')
            await asyncio.sleep(0.02)

    def busy(self) -> bool:
        """Is any operator of this test reconciling, or about to (a trigger coalesced meanwhile)?"""
        running = ([self.controller] if self._task is not None and self.controller else []) + \
            [t.controller for t in self.threads if t.alive]
        return any(state.task is not None and not state.task.done()    # a coalesced trigger keeps it running
                   for c in running for state in list(c._jobs.values()))

    async def settle(self, quiet: float = 0.3, timeout: float = 60.0) -> None:
        """Wait until no operator has reconciled for ``quiet`` seconds and the API has taken no
        write meanwhile: what follows checks that nothing more happens (no stray event, no
        second delete). On a slow machine this waits longer; it never passes early."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        quiet_since, last_rv = loop.time(), self.kmock._last_rv
        while loop.time() - quiet_since < quiet:
            if self.busy() or self.kmock._last_rv != last_rv:
                quiet_since, last_rv = loop.time(), self.kmock._last_rv
            if loop.time() > deadline:
                raise AssertionError('the operator never went quiet')
            await asyncio.sleep(0.02)


class ThreadedOperator:
    """run_operator in a thread with its own event loop; stop() waits for a graceful exit."""

    def __init__(self, controller: Controller, identity: str, run_kwargs: dict[str, Any]) -> None:
        self.controller = controller
        self.started, self._stop = threading.Event(), threading.Event()
        self._thread = threading.Thread(target=asyncio.run, daemon=True, args=(run_operator(
            controller.config, controller=controller, stop_flag=self._stop, ready_flag=self.started,
            identity=identity, **run_kwargs),))
        self._thread.start()

    @property
    def alive(self) -> bool:
        return self._thread.is_alive()

    async def stop(self) -> None:
        self._stop.set()
        await asyncio.to_thread(self._thread.join, 15)
        assert not self._thread.is_alive(), 'the threaded operator did not stop'


@pytest.fixture()
async def cluster(kmock: Any) -> Any:
    declare_resources(kmock, GROUP)
    declare_resources(kmock, 'kubeflow.org')
    harness = Harness(kmock)
    try:
        yield harness
    finally:
        await harness.stop()
