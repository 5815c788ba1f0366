"""A small async Kubernetes REST client (aiohttp) for the kopf layer.

``controller.py`` and ``apply.py`` use it to read jobs, list children and apply plans: plain JSON dicts in
and out, no model classes, and a bounded number of requests in flight (the
real API server throttles service accounts; see real-apiserver note 7).
It knows nothing of TFJobs; credentials come from kopf's login (``handlers.py``,
passed on by ``controller.py``) as a :class:`Credentials`: :meth:`KubeClient.update` when kopf
logs in again, and the ``refresh`` callback (which runs the login again) when a
request gets 401 Unauthorized; the request is then retried once with the new
credentials. A bearer token from a file (``token_path``: the in-cluster service
account's, which the kubelet rotates) is read again when it is older than
``token_refresh_seconds`` and after a 401, as client-go's cached file token source
does. Client certificates and keys given as data are written to a private
temporary directory only while the SSL context loads them.
"""
from __future__ import annotations

import asyncio
import base64
import json
import os
import ssl
import tempfile
import time
from dataclasses import dataclass
from typing import Any, Awaitable, Callable
from urllib.parse import quote

import aiohttp

MERGE_PATCH = 'application/merge-patch+json'


class ApiError(Exception):
    def __init__(self, status: int, message: str, body: Any = None, creds: 'Credentials | None' = None) -> None:
        super().__init__(f'HTTP {status}: {message}')
        self.status = status
        self.message = message
        self.body = body
        self.creds = creds          # the credentials the request was made with
        self.token: str | None = None   # the bearer token it was made with


@dataclass(frozen=True)
class Credentials:
    server: str
    token: str | None = None
    scheme: str | None = None
    username: str | None = None
    password: str | None = None
    ca_path: str | None = None
    ca_data: str | bytes | None = None
    insecure: bool = False
    certificate_path: str | None = None
    certificate_data: str | bytes | None = None
    private_key_path: str | None = None
    private_key_data: str | bytes | None = None
    token_path: str | None = None       # the token is this file's content, read again as it rotates


def _pem(data: str | bytes) -> str:
    """PEM text from PEM or from base64 (kubeconfig's ``*-data`` fields, as kopf passes them on)."""
    text = data.decode('ascii') if isinstance(data, bytes) else data
    return text if text.lstrip().startswith('-----BEGIN ') else base64.b64decode(text).decode('ascii')


def _write_private(directory: str, name: str, data: str | bytes) -> str:
    path = os.path.join(directory, name)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, 'w') as f:
        f.write(_pem(data))
    return path


def _ssl_context(creds: Credentials) -> ssl.SSLContext | bool:
    if not creds.server.startswith('https'):
        return False
    if creds.insecure:
        return False
    cadata = _pem(creds.ca_data) if creds.ca_data else None
    ctx = ssl.create_default_context(cafile=creds.ca_path, cadata=cadata)
    if not (creds.certificate_path or creds.certificate_data):
        return ctx
    # ssl loads client certificates only from files; the context keeps them in memory once loaded,
    # so the files live in a private (0700) directory only for the load_cert_chain call.
    with tempfile.TemporaryDirectory(prefix='tensorfleet-') as tmp:
        cert = creds.certificate_path or _write_private(tmp, 'client.crt', creds.certificate_data or b'')
        key = creds.private_key_path or (creds.private_key_data
                                         and _write_private(tmp, 'client.key', creds.private_key_data))
        ctx.load_cert_chain(cert, key or None)
    return ctx


RefreshFn = Callable[[], Awaitable['Credentials | None']]


class KubeClient:
    def __init__(self, creds: Credentials, max_in_flight: int = 32, refresh: RefreshFn | None = None,
                 token_refresh_seconds: float = 60.0) -> None:
        self.creds = creds
        self.refresh = refresh          # log in again after a 401 (None: no retry)
        self.token_refresh_seconds = token_refresh_seconds
        self._file_token: tuple[str, str, float] | None = None   # (path, token, monotonic time read)
        self._limit = asyncio.Semaphore(max_in_flight)
        self._session: aiohttp.ClientSession | None = None
        self._session_creds: Credentials | None = None
        self._in_flight: dict[aiohttp.ClientSession, int] = {}
        self._retired: list[aiohttp.ClientSession] = []     # closed once their requests are done
        self._refreshing = asyncio.Lock()

    def token(self, creds: Credentials, reread: bool = False) -> str | None:
        """The bearer token: ``creds.token``, or the content of ``creds.token_path`` as last read
        (again when older than ``token_refresh_seconds``, or ``reread``; the last good one if the
        file cannot be read)."""
        if not creds.token_path:
            return creds.token
        cached = self._file_token
        fresh = cached is not None and cached[0] == creds.token_path and not reread \
            and time.monotonic() - cached[2] < self.token_refresh_seconds
        if not fresh:
            try:
                with open(creds.token_path, encoding='utf-8') as f:
                    self._file_token = (creds.token_path, f.read().strip(), time.monotonic())
            except OSError:
                if cached is None or cached[0] != creds.token_path:
                    return creds.token
        return self._file_token[1] if self._file_token else creds.token

    def _auth_header(self, creds: Credentials) -> dict[str, str]:
        token = self.token(creds)
        return {'Authorization': f'{creds.scheme or "Bearer"} {token}'} if token else {}

    async def _get_session(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            auth = (aiohttp.BasicAuth(self.creds.username, self.creds.password or '')
                    if self.creds.username else None)
            self._session = aiohttp.ClientSession(
                base_url=None, auth=auth, headers={'Accept': 'application/json'},
                connector=aiohttp.TCPConnector(ssl=_ssl_context(self.creds), limit=0),
                timeout=aiohttp.ClientTimeout(total=60))
            self._session_creds = self.creds
        return self._session

    async def update(self, creds: Credentials) -> None:
        """Use new credentials from now on; requests in flight finish on the old session."""
        if creds == self.creds:
            return
        self.creds = creds
        old, self._session = self._session, None
        if old is not None:
            if self._in_flight.get(old):
                self._retired.append(old)
            else:
                await old.close()

    async def close(self) -> None:
        for session in [self._session, *self._retired]:
            if session is not None:
                await session.close()
        self._session, self._retired = None, []

    async def _relogin(self, failed: Credentials | None, failed_token: str | None) -> bool:
        """After a 401 with ``failed``: True if there are other credentials to retry with."""
        async with self._refreshing:
            if self.creds != failed:           # someone (kopf's login, another request) refreshed
                return True
            if failed is not None and failed.token_path and self.token(failed, reread=True) != failed_token:
                return True                    # the kubelet rotated the token file
            if self.refresh is None:
                return False
            creds = await self.refresh()
            if creds is None or creds == failed:
                return False
            await self.update(creds)
            return True

    async def request(self, method: str, path: str, *, params: dict[str, str] | None = None,
                      body: Any = None, content_type: str = 'application/json') -> Any:
        try:
            return await self._request(method, path, params, body, content_type)
        except ApiError as e:
            if e.status != 401 or not await self._relogin(e.creds, e.token):
                raise
        return await self._request(method, path, params, body, content_type)     # once

    async def _request(self, method: str, path: str, params: dict[str, str] | None, body: Any,
                       content_type: str) -> Any:
        data = None if body is None else json.dumps(body)
        async with self._limit:
            session = await self._get_session()
            creds = self._session_creds
            assert creds is not None
            headers = self._auth_header(creds)
            if body is not None:
                headers['Content-Type'] = content_type
            url = creds.server.rstrip('/') + path
            self._in_flight[session] = self._in_flight.get(session, 0) + 1
            try:
                async with session.request(method, url, params=params, data=data, headers=headers) as resp:
                    text = await resp.text()
                    try:
                        payload = json.loads(text) if text else None
                    except ValueError:
                        payload = text
                    if resp.status >= 400:
                        message = payload.get('message', text) if isinstance(payload, dict) else text
                        error = ApiError(resp.status, str(message)[:500], payload, creds)
                        error.token = headers.get('Authorization', ' ').split(' ', 1)[1] or None
                        raise error
                    return payload
            finally:
                self._in_flight[session] -= 1
                if not self._in_flight[session]:
                    del self._in_flight[session]
                    if session in self._retired:
                        self._retired.remove(session)
                        await session.close()

    async def get(self, path: str) -> dict[str, Any] | None:
        """The object, or None if it does not exist."""
        try:
            return await self.request('GET', path)
        except ApiError as e:
            if e.status == 404:
                return None
            raise

    async def list(self, path: str, label_selector: str | None = None) -> list[dict[str, Any]]:
        params = {'labelSelector': label_selector} if label_selector else None
        payload = await self.request('GET', path, params=params)
        return list((payload or {}).get('items') or [])

    async def create(self, path: str, body: dict[str, Any]) -> bool:
        """True if created, False if it already existed (409 AlreadyExists is success)."""
        try:
            await self.request('POST', path, body=body)
            return True
        except ApiError as e:
            if e.status == 409:
                return False
            raise

    async def merge_patch(self, path: str, body: dict[str, Any]) -> Any:
        return await self.request('PATCH', path, body=body, content_type=MERGE_PATCH)

    async def delete(self, path: str) -> bool:
        """True if deleted now, False if it was already gone."""
        try:
            await self.request('DELETE', path)
            return True
        except ApiError as e:
            if e.status == 404:
                return False
            raise


def object_path(group: str, version: str, plural: str, namespace: str, name: str | None = None,
                sub: str | None = None) -> str:
    base = f'/api/{version}' if not group else f'/apis/{group}/{version}'
    path = f'{base}/namespaces/{quote(namespace)}/{plural}'
    if name:
        path += '/' + quote(name)
    if sub:
        path += '/' + sub
    return path
