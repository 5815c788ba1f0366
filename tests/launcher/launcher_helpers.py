"""Helpers shared by the launcher's tests: the repository root, free 127.0.0.1 ports and the TF_CONFIG of
one task. Test modules import from here, never from `conftest` (several test directories have one)."""
import os
import socket

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def free_ports(n):
    """`n` distinct ports free on 127.0.0.1 now (bound together, then released)."""
    socks = [socket.socket() for _ in range(n)]
    for s in socks:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in socks]
    for s in socks:
        s.close()
    return ports


def tf_config(cluster, job, index):
    """TF_CONFIG for task `job`:`index` of `cluster`, as the operator writes it."""
    return {"cluster": cluster, "task": {"type": job, "index": index}, "environment": "cloud"}
