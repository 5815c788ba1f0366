"""Bounds on a server's connections (`ConnectionLimits`), enforced by `conn_loop.ConnectionLoop`, and on
its gRPC calls at once (enforced by grpcio, configured in `server.Server._start_grpc`).

Per server, read from the environment when the server is created; docs/distributed.md lists them
beside the per-call limits (`wire.Limits`).
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field

from .client import Timeouts

#: HTTP/2 streams (gRPC calls) open at once on one gRPC connection (grpcio's default: unbounded); a client
#: over it waits for a free stream (grpcio queues its call), a peer that ignores it gets its streams refused
GRPC_STREAMS_PER_CONNECTION = 100


def _env_number(name: str, default: float) -> float:
    try:
        value = float(os.environ.get(name, default))
    except ValueError:
        return default
    return value if value > 0 else default


@dataclass(frozen=True)
class ConnectionLimits:
    """Per-server bounds on connections. Defaults (env overrides):

    - max_connections: 512 (TENSORFLEET_MAX_CONNECTIONS): open connections, all kinds together.
    - auth_seconds: 5 (TENSORFLEET_AUTH_SECONDS): to send a complete authenticated request head (or the
      HTTP/2 preface; under TLS, the handshake too).
    - grpc_idle_seconds: 8 (TENSORFLEET_GRPC_IDLE_SECONDS), at least TENSORFLEET_DEAD_PEER_SECONDS: a gRPC
      connection moving no byte either way (clients ping every TENSORFLEET_DEAD_PEER_SECONDS / 2).
    - linger_seconds: 1 (TENSORFLEET_BULK_LINGER_SECONDS): how long a worker thread waits for a bulk
      connection's next request before giving the connection back to the loop.
    - stall_seconds: 10 (TENSORFLEET_BULK_STALL_SECONDS): inside a bulk frame (its header or payload), the
      longest time without a byte before the connection is closed (checked every linger_seconds).
    - grpc_calls: 256 (TENSORFLEET_MAX_GRPC_CALLS): gRPC calls served at once, all connections together, each
      in a thread of its own from the start (a call may block, e.g. a dequeue waiting for another call's
      enqueue, or a sync replica's token dequeue: one per worker); one more is refused RESOURCE_EXHAUSTED
      at once, nothing of it queued. Bulk calls are not counted (their worker threads are the bulk path's).
    """

    max_connections: int = field(default_factory=lambda: int(_env_number("TENSORFLEET_MAX_CONNECTIONS", 512)))
    auth_seconds: float = field(default_factory=lambda: _env_number("TENSORFLEET_AUTH_SECONDS", 5.0))
    grpc_idle_seconds: float = field(default_factory=lambda: max(_env_number("TENSORFLEET_GRPC_IDLE_SECONDS", 8.0),
                                                                 Timeouts().dead_peer_seconds))
    linger_seconds: float = field(default_factory=lambda: _env_number("TENSORFLEET_BULK_LINGER_SECONDS", 1.0))
    stall_seconds: float = field(default_factory=lambda: _env_number("TENSORFLEET_BULK_STALL_SECONDS", 10.0))
    grpc_calls: int = field(default_factory=lambda: int(_env_number("TENSORFLEET_MAX_GRPC_CALLS", 256)))

    @property
    def max_unauthenticated(self) -> int:
        return max(1, self.max_connections // 2)
