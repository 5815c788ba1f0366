"""The emulated API server over HTTPS, as a pod reaches the real one: a test CA made on the fly with
the ``openssl`` CLI (a server certificate for 127.0.0.1, ::1 and localhost signed by it), a second
listener on the kmock handler that serves TLS with it, and a service-account directory (``token``,
``ca.crt``, ``namespace``) for ``TENSORFLEET_SERVICE_ACCOUNT_DIR``."""
from __future__ import annotations

import contextlib
import shutil
import socket
import ssl
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp.test_utils import RawTestServer


def _openssl(*args: str, cwd: Path) -> None:
    subprocess.run(['openssl', *args], cwd=cwd, check=True, capture_output=True, timeout=60)


def make_ca(directory: Path) -> dict[str, Path]:
    """ca.crt/ca.key and server.crt/server.key (SANs: 127.0.0.1, ::1, localhost) in ``directory``."""
    if shutil.which('openssl') is None:
        pytest.skip('needs the openssl CLI to make a test CA')
    directory.mkdir(parents=True, exist_ok=True)
    ec = ('-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1')     # P-256: fast to make
    _openssl('req', '-x509', *ec, '-nodes', '-keyout', 'ca.key', '-out', 'ca.crt', '-days', '1',
             '-subj', '/CN=tensorfleet-test-ca', '-addext', 'basicConstraints=critical,CA:TRUE',
             '-addext', 'keyUsage=critical,keyCertSign,cRLSign', cwd=directory)
    _openssl('req', *ec, '-nodes', '-keyout', 'server.key', '-out', 'server.csr',
             '-subj', '/CN=kubernetes', cwd=directory)
    (directory / 'ext.cnf').write_text('subjectAltName=IP:127.0.0.1,IP:::1,DNS:localhost\n'
                                       'extendedKeyUsage=serverAuth\n')
    _openssl('x509', '-req', '-in', 'server.csr', '-CA', 'ca.crt', '-CAkey', 'ca.key', '-CAcreateserial',
             '-out', 'server.crt', '-days', '1', '-extfile', 'ext.cnf', cwd=directory)
    return {'ca': directory / 'ca.crt', 'server': directory / 'server.crt', 'server_key': directory / 'server.key'}


def service_account_dir(directory: Path, ca: Path, token: str, namespace: str = 'ns') -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / 'token').write_text(token + '\n')
    shutil.copy(ca, directory / 'ca.crt')
    (directory / 'namespace').write_text(namespace)
    return directory


def ipv6_loopback() -> bool:
    try:
        with socket.socket(socket.AF_INET6, socket.SOCK_STREAM) as s:
            s.bind(('::1', 0))
        return True
    except OSError:
        return False


@contextlib.asynccontextmanager
async def https_listener(handler: Any, certs: dict[str, Path], host: str = '127.0.0.1') -> AsyncIterator[int]:
    """Serve ``handler`` (the kmock emulator) over TLS on ``host``; yields the port."""
    ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ctx.load_cert_chain(certs['server'], certs['server_key'])
    server = RawTestServer(handler, host=host, port=None)
    await server.start_server(ssl=ctx)
    try:
        assert server.port is not None
        yield server.port
    finally:
        await server.close()
