"""Optional TLS from files for both transports (mutual: every task has a certificate signed by the job's CA).

Set all three of TENSORFLEET_TLS_CERT, TENSORFLEET_TLS_KEY and TENSORFLEET_TLS_CA (PEM files,
e.g. mounted from a Secret) in every task: servers then serve gRPC and the bulk port over TLS
and require a client certificate signed by the CA; clients verify the server against the CA
and present their own certificate. The job token is still checked on every call. With TLS
the same-host Unix socket is off (everything goes encrypted). None set: plaintext.

Both protocols share the spec port under TLS too (`one_port`): the server terminates TLS itself and
tells them apart by ALPN. gRPC clients offer `h2`; the bulk client offers `BULK_ALPN`.
"""
from __future__ import annotations

import os
import ssl
from dataclasses import dataclass
from typing import Optional

import grpc

_VARS = ("TENSORFLEET_TLS_CERT", "TENSORFLEET_TLS_KEY", "TENSORFLEET_TLS_CA")
#: the ALPN protocol id of the bulk frames; `h2` (what gRPC offers) goes to the gRPC server
BULK_ALPN = "tensorfleet-bulk"
GRPC_ALPN = "h2"


@dataclass(frozen=True)
class TlsFiles:
    cert: str
    key: str
    ca: str

    def _read(self) -> tuple:
        with open(self.cert, "rb") as c, open(self.key, "rb") as k, open(self.ca, "rb") as a:
            return c.read(), k.read(), a.read()

    def grpc_server_credentials(self):
        cert, key, ca = self._read()
        return grpc.ssl_server_credentials([(key, cert)], root_certificates=ca, require_client_auth=True)

    def grpc_channel_credentials(self):
        cert, key, ca = self._read()
        return grpc.ssl_channel_credentials(root_certificates=ca, private_key=key, certificate_chain=cert)

    def server_context(self) -> ssl.SSLContext:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(self.cert, self.key)
        ctx.load_verify_locations(self.ca)
        ctx.verify_mode = ssl.CERT_REQUIRED
        ctx.set_alpn_protocols([GRPC_ALPN, BULK_ALPN])
        return ctx

    def client_context(self) -> ssl.SSLContext:
        ctx = ssl.create_default_context(ssl.Purpose.SERVER_AUTH, cafile=self.ca)
        ctx.load_cert_chain(self.cert, self.key)
        ctx.set_alpn_protocols([BULK_ALPN])
        return ctx


def tls_from_env() -> Optional[TlsFiles]:
    """The TLS files from the environment; None when none is set; ValueError naming what is missing."""
    values = [os.environ.get(v, "") for v in _VARS]
    if not any(values):
        return None
    missing = [v for v, x in zip(_VARS, values, strict=True) if not x]
    if missing:
        raise ValueError(f"TLS needs all of {', '.join(_VARS)}; missing: {', '.join(missing)}")
    for name, path in zip(_VARS, values, strict=True):
        if not os.path.isfile(path):
            raise ValueError(f"{name}={path!r} is not a readable file")
    return TlsFiles(*values)
