"""Free 127.0.0.1 ports for tests that start servers in other processes (one implementation for every test folder).

A port picked by binding port 0 and closing the socket comes from the kernel's ephemeral range, where any
outgoing connection of any process may take it as its source port before the test's server binds it: on a busy
2-core machine running test processes in parallel, that is an occasional "Address already in use". So ports are
drawn at random below the ephemeral range (Linux: `ip_local_port_range`, 32768 by default), which outgoing
connections never use, each checked free by binding it.
"""
import random
import socket

_FLOOR = 20000


def _ephemeral_floor() -> int:
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            return int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


def free_ports(n: int) -> list:
    """`n` distinct ports free on 127.0.0.1 now, below the ephemeral range (bounded attempts)."""
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
        ports.append(port)
        if len(ports) == n:
            return ports
    raise RuntimeError(f"no {n} free 127.0.0.1 ports in [{_FLOOR}, {high})")


def free_port() -> int:
    return free_ports(1)[0]
