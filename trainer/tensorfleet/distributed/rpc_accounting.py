"""RPC accounting hook: who called what, how many bytes each way, how long it took.

Called by `client.RpcClient.call` for every call this process issues (side "client": the peer is the
task called) and, through `server._Methods.account`, by both server transports (`grpc_handler` and the
bulk port) for every call served (side "server": the peer is "unknown", a request does not say who
sent it). Bytes are counted as on the wire on both ends: the message, tensor metadata included, plus
the tensor payload, so a caller's "sent" equals the server's "received". Nothing is counted
until an observer is installed: the launcher's telemetry installs one that feeds
`tensorfleet.metrics.TrainerMetrics` (the `tensorfleet_rpc_*` series of docs/metrics.md), so the
distributed runtime never imports prometheus_client. An observer that raises is logged and ignored:
accounting never fails a call.
"""
from __future__ import annotations

import logging
from typing import Callable, Optional

logger = logging.getLogger("tensorfleet.distributed")

# (peer, method, side, bytes sent, bytes received, seconds or None)
Observer = Callable[[str, str, str, int, int, Optional[float]], None]
_observer: Optional[Observer] = None


def set_rpc_observer(observer: Optional[Observer]) -> None:
    """Install `observer` for every RPC of this process (None: stop counting)."""
    global _observer
    _observer = observer


def observing() -> bool:
    return _observer is not None


def observe(peer: str, method: str, side: str, sent: int, received: int, seconds: Optional[float] = None) -> None:
    observer = _observer
    if observer is None:
        return
    try:
        observer(peer, method, side, sent, received, seconds)
    except Exception as e:  # noqa: BLE001   accounting must never fail the call it counts
        logger.debug("RPC observer failed: %s", e)
