"""The start-up contract: wait, bounded, until every peer this task needs resolves and accepts TCP.

Second step of the flow (task.py -> startup.py -> roles). Pods start in any order and their headless
Services' DNS records appear late, so `wait_for_peers` retries each missing peer until the deadline:
one log line when a peer is first found missing (with the reason: DNS, refused, timeout), one when it
becomes reachable, and a reminder at most every `reminder_seconds`. On timeout it raises
`LauncherExit(STARTUP_TIMEOUT)`, a retryable code, naming every missing peer and why.

The same function is used to recover: after a lost peer the roles wait again with the recovery
budget and the exit code for a ps or another peer (`PS_UNAVAILABLE`, `LOST_PEER`).
"""
from __future__ import annotations

import socket
import time
from typing import Callable, Mapping, Optional

from . import runlog
from .exit_codes import ExitCode, LauncherExit

CONNECT_TIMEOUT = 2.0


def probe(address: str, connect_timeout: float = CONNECT_TIMEOUT) -> Optional[str]:
    """None when `host:port` resolves and accepts a TCP connection, else why not (for the log)."""
    host, _, port = address.rpartition(":")
    host = host.strip("[]")
    try:
        infos = socket.getaddrinfo(host, int(port), type=socket.SOCK_STREAM)
    except socket.gaierror as e:
        return f"DNS: {host} does not resolve ({e.strerror})"
    except (UnicodeError, ValueError) as e:
        return f"DNS: {host} is not a valid host name ({e})"
    last = "no address"
    for family, socktype, proto, _, sockaddr in infos:
        where = f"{sockaddr[0]!s}:{sockaddr[1]!s}"
        sock = socket.socket(family, socktype, proto)
        try:
            sock.settimeout(connect_timeout)
            sock.connect(sockaddr)
            return None
        except socket.timeout:
            last = f"TCP: {where} did not answer within {connect_timeout:g} s"
        except OSError as e:
            last = f"TCP: {where} {e.strerror or e}"
        finally:
            sock.close()
    return last


def wait_for_peers(peers: Mapping[str, str], timeout: float, *, interval: float = 0.5,
                   reminder_seconds: float = 30.0, exit_code: Optional[Callable[[list], int]] = None,
                   stop: Optional[Callable[[], bool]] = None, what: str = "start-up",
                   clock: Callable[[], float] = time.monotonic) -> float:
    """Waits until every peer (`name` -> `host:port`) answers; returns the seconds waited.

    `exit_code(missing_names)` picks the code raised on timeout (default STARTUP_TIMEOUT); `stop()`
    returning True (a SIGTERM) ends the wait early with `LauncherExit(SIGTERM)`.
    """
    start = clock()
    deadline = start + max(0.0, timeout)
    missing = dict(peers)
    reasons: dict = {}
    last_reminder = start
    while True:
        for name, address in list(missing.items()):
            reason = probe(address, min(CONNECT_TIMEOUT, max(0.1, deadline - clock())))
            if reason is None:
                del missing[name]
                if name in reasons:
                    runlog.log("peer_ready", f"{name} at {address} is reachable", peer=name,
                               waited_sec=round(clock() - start, 3))
                continue
            if name not in reasons:
                runlog.log("peer_missing", f"waiting for {name} at {address}: {reason}", peer=name,
                           address=address, reason=reason)
            reasons[name] = reason
        if not missing:
            return clock() - start
        now = clock()
        if now >= deadline:
            detail = "; ".join(f"{n} at {missing[n]} ({reasons[n]})" for n in missing)
            code = exit_code(list(missing)) if exit_code else ExitCode.STARTUP_TIMEOUT
            raise LauncherExit(code, f"{what}: {len(missing)} peer(s) still unreachable after {timeout:g} s: "
                                     f"{detail}")
        if stop is not None and stop():
            raise LauncherExit(ExitCode.SIGTERM, f"{what}: stopped by a signal while waiting for peers")
        if now - last_reminder >= reminder_seconds:
            last_reminder = now
            runlog.log("peer_wait", f"still waiting for {', '.join(sorted(missing))}",
                       waited_sec=round(now - start, 1), timeout_sec=timeout)
        time.sleep(min(interval, max(0.0, deadline - now)))


def recovery_exit_code(missing: list) -> int:
    """After a lost peer: PS_UNAVAILABLE when a ps is among the missing, else LOST_PEER."""
    return ExitCode.PS_UNAVAILABLE if any(name.startswith("ps:") for name in missing) else ExitCode.LOST_PEER
