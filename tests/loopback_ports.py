"""Free 127.0.0.1 ports for tests that start servers in other processes (one implementation for every test folder).

A port picked by binding port 0 and closing the socket comes from the kernel's ephemeral range, where any
outgoing connection of any process may take it as its source port before the test's server binds it: on a busy
2-core machine running test processes in parallel, that is an occasional "Address already in use". So ports are
drawn at random below the ephemeral range (Linux: `ip_local_port_range`, 32768 by default), which outgoing
connections never use, each checked free by binding it.

A port checked free is still free only until somebody binds it, and a test's server may bind it seconds later
(a process that starts late on purpose). Other pickers on the machine (the other pytest-xdist workers, a second
suite run beside this one) would draw it meanwhile, so every port handed out is also reserved machine-wide for
`RESERVE_SECONDS`: a file created with O_EXCL in a directory all pickers share; a reservation older than that is
taken over, under an flock of the directory's lock file, so two pickers cannot both take it (the lock ends with
its holder's process).
"""
import fcntl
import os
import random
import socket
import tempfile
import time

_FLOOR = 20000
RESERVE_SECONDS = 300
_DIR = os.path.join(tempfile.gettempdir(), f"tensorfleet-test-ports-{os.getuid()}")


def _ephemeral_floor() -> int:
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            return int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


def _create(path: str) -> bool:
    try:
        os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
        return True
    except FileExistsError:
        return False


def _reserve(port: int) -> bool:
    """True when this process now holds `port`'s reservation (new, or taken over from an expired one)."""
    os.makedirs(_DIR, exist_ok=True)
    path = os.path.join(_DIR, str(port))
    if _create(path):
        return True
    with open(os.path.join(_DIR, ".takeover.lock"), "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)   # the check and the takeover as one step among pickers
        try:
            if time.time() - os.stat(path).st_mtime < RESERVE_SECONDS:
                return False
            os.unlink(path)
        except FileNotFoundError:
            pass
        return _create(path)


def free_ports(n: int) -> list:
    """`n` distinct ports free on 127.0.0.1 now and reserved for this caller, below the ephemeral range
    (bounded attempts)."""
    high = max(_ephemeral_floor(), _FLOOR + 1000)
    rng = random.SystemRandom()
    ports: list = []
    for _ in range(200 * n):
        port = rng.randrange(_FLOOR, high)
        if port in ports:
            continue
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
        if not _reserve(port):
            continue
        ports.append(port)
        if len(ports) == n:
            return ports
    raise RuntimeError(f"no {n} free 127.0.0.1 ports in [{_FLOOR}, {high})")


def free_port() -> int:
    return free_ports(1)[0]
