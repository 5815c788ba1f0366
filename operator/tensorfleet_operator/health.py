"""The probe endpoints: liveness (``--liveness`` URL, default ``/healthz`` on port 8081) and readiness
(``/readyz`` on the same port), served from a thread of their own.

Liveness is cheap but fails when the operator is wedged: each request schedules one coroutine on
the operator's event loop (where kopf's watches, the controller and every API request run) and
waits at most ``liveness_timeout_seconds`` for it; a loop that does not answer in time (blocked by
a busy handler, a deadlock, a closed loop) gets 503 with the reason, which the kubelet's
``livenessProbe`` turns into a restart. 200 carries ``{"jobs": N}`` (jobs the controller knows).
Readiness is ``api_health.ApiHealth``: 200 once the API answers with the login's credentials and
kopf has started, 503 with the reason otherwise (``{"ready": false, "reason": "cannot use the
Kubernetes API at https://...: cannot connect: Connection refused"}``). Serving from a thread is
what lets liveness see a stuck loop and readiness answer while ``run_operator`` still waits for the
API before kopf starts.
"""
from __future__ import annotations

import asyncio
import concurrent.futures
import json
import logging
import socket
import threading
from collections.abc import Awaitable, Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

logger = logging.getLogger('tensorfleet_operator')
READINESS_PATH = '/readyz'


class HealthServer:
    def __init__(self, url: str, loop: asyncio.AbstractEventLoop, alive: Callable[[], Awaitable[dict[str, Any]]],
                 readiness: Callable[[], dict[str, Any]], loop_timeout: float) -> None:
        parts = urlsplit(url)
        self.host, self.port = parts.hostname or '0.0.0.0', parts.port or 8081
        self.liveness_path = parts.path or '/healthz'
        self.loop, self.alive, self.readiness, self.loop_timeout = loop, alive, readiness, loop_timeout
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    def liveness(self) -> tuple[int, dict[str, Any]]:
        if self.loop.is_closed():
            return 503, {'alive': False, 'reason': 'the event loop is closed'}
        future = asyncio.run_coroutine_threadsafe(self.alive(), self.loop)
        try:
            return 200, future.result(self.loop_timeout)
        except concurrent.futures.TimeoutError:
            future.cancel()
            return 503, {'alive': False, 'reason': f'the event loop did not answer within {self.loop_timeout:g} s'}
        except Exception as exc:     # noqa: BLE001   the probe says why, it never raises
            return 503, {'alive': False, 'reason': f'{type(exc).__name__}: {exc}'}

    def answer(self, path: str) -> tuple[int, dict[str, Any]]:
        path = urlsplit(path).path
        if path == self.liveness_path:
            return self.liveness()
        if path == READINESS_PATH:
            state = self.readiness()
            return (200 if state.get('ready') else 503), state
        return 404, {'error': f'no such endpoint; {self.liveness_path} (liveness) or {READINESS_PATH} (readiness)'}

    def start(self) -> None:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:   # noqa: N802   http.server's name
                status, body = server.answer(self.path)
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header('Content-Type', 'application/json')
                self.send_header('Content-Length', str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: Any) -> None:   # the kubelet probes every few seconds
                logger.debug('health: ' + format, *args)

        class Server(ThreadingHTTPServer):
            address_family = socket.AF_INET6 if ':' in self.host else socket.AF_INET
            allow_reuse_address = True      # as check_port_free in __main__ tests it
            daemon_threads = True

        self._server = Server((self.host, self.port), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={'poll_interval': 0.2},
                                        name='health', daemon=True)
        self._thread.start()

    def close(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
