"""The operator's API connection as the probes see it: the start-up wait, then readiness.

``handlers.run_operator`` calls :meth:`ApiHealth.wait_until_reachable` before kopf starts: it lists
TFJobs (``limit=1``, in each watched namespace or cluster-wide) with the credentials of the login
until that works, logging each failure with the endpoint, where it came from and the cause
(refused connection, unknown host, untrusted certificate, 401, 403 without RBAC, 404 without the
CRD), and gives up after ``api_timeout_seconds`` with :class:`ApiUnreachable` (``__main__`` prints
it in one line and exits 1; 0 waits for ever). Once kopf has started (its startup handler calls
:meth:`ApiHealth.start`), the same list is made every ``api_check_seconds``: kopf exposes no state
of its watch streams, and each of them is a list followed by a watch from the same endpoint with
the same credentials and scope, so a list that works is what a watch stream needs. ``ready`` and
``reason`` are what ``health.py`` serves on the readiness endpoint.
"""
from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import Any

import aiohttp

from .config import OperatorConfig
from .core import api
from .kubeclient import ApiError, KubeClient

logger = logging.getLogger('tensorfleet_operator')
_HINTS = {401: 'the credentials are not accepted', 403: 'forbidden: the RBAC of the operator lacks list on tfjobs',
          404: 'not found: is the TFJob CRD installed?'}


class ApiUnreachable(Exception):
    """The API could not be used within the start-up timeout; the message names endpoint and cause."""


def failure_cause(exc: BaseException, timeout: float) -> str:
    """Why a request failed, in words (the aiohttp or HTTP error, not a traceback)."""
    if isinstance(exc, ApiError):
        hint = _HINTS.get(exc.status)
        return f'HTTP {exc.status}{f" ({hint})" if hint else ""}: {exc.message}'
    if isinstance(exc, aiohttp.ClientConnectorCertificateError):
        return f'TLS: the server certificate is not trusted: {exc.certificate_error}'
    if isinstance(exc, aiohttp.ClientConnectorError):
        err = exc.os_error
        return f'cannot connect: {err.strerror or err}' if isinstance(err, OSError) else f'cannot connect: {exc}'
    if isinstance(exc, (asyncio.TimeoutError, TimeoutError)):
        return f'no answer within {timeout:g} s'
    return f'{type(exc).__name__}: {exc}'


class ApiHealth:
    def __init__(self, config: OperatorConfig, origin: str | None = None) -> None:
        self.config = config
        self.origin = origin               # where the endpoint came from (for messages)
        self.ready = False
        self.reason = 'starting: the API connection has not been checked yet'
        self.kopf_started = False
        self.checks = 0                    # checks made, for tests
        self._task: asyncio.Task[None] | None = None

    def paths(self) -> list[str]:
        base = f'/apis/{self.config.api_group}/{api.VERSION}'
        if self.config.clusterwide:
            return [f'{base}/{api.PLURAL}']
        return [f'{base}/namespaces/{ns}/{api.PLURAL}' for ns in self.config.namespaces]

    def _where(self, server: str) -> str:
        return f'the Kubernetes API at {server}' + (f' (from {self.origin})' if self.origin else '')

    async def check(self, client: KubeClient | None, server: str = '') -> str | None:
        """One check through ``client`` (connected to ``server``): None if it worked, else the cause
        (``ready``/``reason`` are updated). Only the client's ``get`` is used: 404 is None there."""
        self.checks += 1
        if client is None:
            cause: str | None = 'not logged in yet'
        else:
            cause = None
            timeout = self.config.api_request_timeout_seconds
            for path in self.paths():
                try:
                    if await asyncio.wait_for(client.get(path + '?limit=1'), timeout) is None:
                        raise ApiError(404, f'the server could not find the requested resource ({api.PLURAL})')
                except asyncio.CancelledError:
                    raise
                except Exception as exc:      # every failure is a reason to be not ready
                    cause = f'{self._where(server)}: GET {path}: {failure_cause(exc, timeout)}'
                    break
        if cause is None and not self.kopf_started:
            self.ready, self.reason = False, 'the API answers; kopf is starting'
        elif cause is None:
            self.ready, self.reason = True, 'the API answers'
        else:
            self.ready, self.reason = False, cause
        return cause

    async def wait_until_reachable(self, client: KubeClient, server: str, stopping: Callable[[], bool]) -> bool:
        """Check until the API answers (True), or ``stopping()`` (False); :class:`ApiUnreachable`
        after ``api_timeout_seconds`` (0: never)."""
        limit = self.config.api_timeout_seconds
        started = time.monotonic()
        delays = (1.0, 2.0, 5.0, 10.0, 15.0)
        attempt = 0
        while not stopping():
            cause = await self.check(client, server)
            if cause is None:
                if attempt:
                    logger.info('%s answers now', self._where(server))
                return True
            waited = time.monotonic() - started
            if limit and waited >= limit:
                raise ApiUnreachable(f'cannot use {cause} (gave up after {waited:.0f} s; --api-timeout)')
            delay = delays[min(attempt, len(delays) - 1)]
            if limit:
                delay = min(delay, max(limit - waited, 0.05))
            logger.warning('cannot use %s; retrying in %g s', cause, delay)
            attempt += 1
            deadline = time.monotonic() + delay
            while time.monotonic() < deadline and not stopping():
                await asyncio.sleep(min(0.1, delay))
        return False

    def start(self, connection: Callable[[], tuple[KubeClient | None, str]]) -> None:
        """kopf has started: check every ``api_check_seconds`` from now on (``connection()``: the
        client and its server, as they are then)."""
        self.kopf_started = True
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._loop(connection), name='api-health')

    async def _loop(self, connection: Callable[[], tuple[KubeClient | None, str]]) -> None:
        while True:
            was = self.ready
            cause = await self.check(*connection())
            if cause and was:
                logger.warning('not ready: cannot use %s', cause)
            elif not cause and not was:
                logger.info('ready: the API answers')
            await asyncio.sleep(self.config.api_check_seconds)

    async def close(self) -> None:
        self.ready, self.reason = False, 'stopping'
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
            self._task = None

    def state(self) -> dict[str, Any]:
        return {'ready': self.ready, 'reason': self.reason}
