"""The trainer-progress poller: running jobs' chief metrics -> ``status.progress``.

Shell half of ``core/progress.py``. The controller keeps, per job, the :class:`core.progress.Target`
its last reconcile chose (the chief's, else worker 0's pod IP and metrics port) and the
``status.progress`` last stored. Every ``progress_interval_seconds`` this poller scrapes each
target's ``/metrics`` (HTTP GET, at most ``progress_concurrency`` at once, each bounded by
``progress_timeout_seconds`` and :data:`MAX_BYTES`), parses the text with prometheus_client's
parser, lets the core decide the patch, and merge-patches ``/status`` only when a value changed.

It runs as its own asyncio task beside the reconciles and shares nothing with them but the
REST client's bound on requests in flight: an unreachable or slow trainer costs one scrape
timeout in this task and never delays, fails or retries a reconcile. Nothing scraped is
evaluated: the text is only parsed for numbers. Off with ``--no-trainer-progress`` or
``TENSORFLEET_TRAINER_PROGRESS=false``.
"""
from __future__ import annotations

import asyncio
import datetime
import logging
from typing import TYPE_CHECKING, Any

import aiohttp
from prometheus_client.parser import text_string_to_metric_families

from .core import api
from .core.progress import Progress, Sample, Target, apply_patch, progress_patch, read_progress
from .kubeclient import ApiError, object_path

if TYPE_CHECKING:
    from .controller import Controller

logger = logging.getLogger('tensorfleet_operator')
MAX_BYTES = 4 << 20          # a trainer's metrics page is a few KiB; more is not read


def parse_samples(text: str) -> list[Sample]:
    """Every sample of a Prometheus text page, by prometheus_client's parser (ValueError if malformed)."""
    return [(s.name, s.labels, float(s.value)) for family in text_string_to_metric_families(text)
            for s in family.samples]


class ProgressPoller:
    def __init__(self, controller: Controller) -> None:
        self.controller = controller
        config = controller.config
        self.interval = config.progress_interval_seconds
        self.timeout = config.progress_timeout_seconds
        self._limit = asyncio.Semaphore(max(config.progress_concurrency, 1))
        self._session: aiohttp.ClientSession | None = None
        self._task: asyncio.Task[None] | None = None
        self.rounds = 0                      # completed polling rounds (tests wait on it)

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._loop(), name='trainer-progress')

    async def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
            self._task = None
        if self._session is not None:
            await self._session.close()
            self._session = None

    async def _loop(self) -> None:
        while True:
            await asyncio.sleep(self.interval)
            if self.controller.active and self.controller.client is not None:
                try:
                    await self.poll_once()
                except asyncio.CancelledError:
                    raise
                except Exception as exc:      # never let one bad round stop the poller
                    logger.warning('trainer progress: polling round failed: %s', exc)
            self.rounds += 1

    async def poll_once(self) -> None:
        """One round: scrape every job that has a target, write what changed."""
        results = await asyncio.gather(*(self._one(key, target) for key, target in self.controller.progress_targets()),
                                       return_exceptions=True)
        for result in results:
            if isinstance(result, BaseException) and not isinstance(result, asyncio.CancelledError):
                logger.warning('trainer progress: %s', result)

    async def _get_session(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            self._session = aiohttp.ClientSession(
                timeout=aiohttp.ClientTimeout(total=self.timeout),
                connector=aiohttp.TCPConnector(limit=0, force_close=True))
        return self._session

    async def scrape(self, target: Target) -> str | None:
        """The target's metrics page, or None (unreachable, slow, an HTTP error, too large)."""
        async with self._limit:
            session = await self._get_session()
            try:
                async with session.get(target.url, allow_redirects=False) as resp:
                    if resp.status != 200:
                        raise aiohttp.ClientResponseError(resp.request_info, (), status=resp.status)
                    body = await resp.content.read(MAX_BYTES + 1)
                    if len(body) > MAX_BYTES:
                        raise ValueError(f'more than {MAX_BYTES} bytes')
                    return body.decode('utf-8', 'replace')
            except (aiohttp.ClientError, asyncio.TimeoutError, ValueError, OSError) as exc:
                logger.debug('trainer progress: %s (%s): %s', target.url, target.pod, exc or type(exc).__name__)
                return None

    async def _one(self, key: tuple[str, str], target: Target) -> None:
        metrics = self.controller.metrics
        text = await self.scrape(target)
        if text is None:
            metrics.progress_scrapes.labels('unreachable').inc()
            return
        try:
            progress = read_progress(parse_samples(text), target)
        except Exception:      # noqa: BLE001   whatever the page holds, it is only "invalid"
            progress = None
        if progress is None:
            metrics.progress_scrapes.labels('invalid').inc()
            return
        metrics.progress_scrapes.labels('ok').inc()
        await self.record(key, progress)

    async def record(self, key: tuple[str, str], progress: Progress) -> None:
        """Writes `progress` as the job's ``status.progress`` unless that is what is stored already."""
        old = self.controller.stored_progress(*key)
        if old is None:
            return                                       # forgotten (deleted) meanwhile
        patch = progress_patch(old[0], progress, datetime.datetime.now(datetime.timezone.utc))
        if patch is None:
            return
        await self._write(key, old[0], patch)

    async def _write(self, key: tuple[str, str], old: Any, patch: dict[str, Any]) -> None:
        client = self.controller.client
        if client is None:
            return
        namespace, name = key
        path = object_path(self.controller.config.api_group, api.VERSION, api.PLURAL, namespace, name, 'status')
        try:
            written = await client.merge_patch(path, {'status': {'progress': patch}})
        except ApiError as e:
            if e.status != 404:
                logger.warning('trainer progress: writing %s/%s status.progress: %s', namespace, name, e)
            return
        rv = ((written or {}).get('metadata') or {}).get('resourceVersion') if isinstance(written, dict) else None
        self.controller.progress_written(namespace, name, apply_patch(old, patch), rv)
