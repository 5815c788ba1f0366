"""A bulk call's deadline and a dead peer, against real sockets on 127.0.0.1 that accept and never answer.

- Several calls sent together and their replies read in turn (step_dataflow) share one deadline each, not
  one per read: two hung tasks fail the step once, at the deadline, not at twice it.
- A peer that stops reading (a hung process) fails a call without a deadline as UnavailableError naming
  the task, once TCP gives up on it (TCP_USER_TIMEOUT: `dead_peer_seconds`), not as a Python TypeError.
"""
import socket
import threading
import time

import numpy as np
import pytest

from tensorfleet import errors
from tensorfleet.distributed.client import RpcClient, Timeouts
from tensorfleet.distributed.protos import service_pb2


class SilentPeer:
    """Accepts connections on 127.0.0.1; reads (or, with `read=False`, never reads) and never replies."""

    def __init__(self, read: bool = True):
        self.sock = socket.socket()
        if not read:
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(4)
        self.port = self.sock.getsockname()[1]
        self.read, self.conns, self.stopped = read, [], threading.Event()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while not self.stopped.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.conns.append(conn)
            if self.read:
                threading.Thread(target=self._drain, args=(conn,), daemon=True).start()

    def _drain(self, conn):
        conn.settimeout(0.2)
        deadline = time.monotonic() + 30
        while not self.stopped.is_set() and time.monotonic() < deadline:
            try:
                if not conn.recv(1 << 16):
                    return
            except socket.timeout:
                continue
            except OSError:
                return

    def close(self):
        self.stopped.set()
        self.sock.close()
        for c in self.conns:
            c.close()


def _client(peer: SilentPeer, task: str, timeouts=None) -> RpcClient:
    c = RpcClient(f"127.0.0.1:{peer.port}", "WorkerService", task, token="t", timeouts=timeouts)
    c.enable_bulk(peer.port)
    return c


def test_calls_read_in_turn_share_their_deadline_not_one_each():
    peers = [SilentPeer() for _ in range(3)]
    clients = [_client(p, f"/job:ps/replica:0/task:{i}") for i, p in enumerate(peers)]
    try:
        started = time.monotonic()
        replies = [c.start_call("RunGraph", service_pb2.RunGraphRequest(graph_handle="h"),
                                service_pb2.RunGraphResponse, timeout=0.6) for c in clients]
        failed = []
        for reply in replies:
            with pytest.raises(errors.DeadlineExceededError) as e:
                reply()
            failed.append((time.monotonic() - started, e.value.message))
        assert failed[-1][0] < 0.6 + 1.0, failed   # one deadline for all three (before: 3 x 0.6 s)
        assert failed[0][0] >= 0.55
        for i, (_, message) in enumerate(failed):
            assert f"task /job:ps/replica:0/task:{i}" in message and "within 0.600 s" in message
    finally:
        for c in clients:
            c.close()
        for p in peers:
            p.close()


def test_a_peer_that_stops_reading_fails_a_call_without_deadline_as_unavailable():
    peer = SilentPeer(read=False)
    client = _client(peer, "/job:ps/replica:0/task:0", Timeouts(dead_peer_seconds=1.5))
    big = np.zeros(32 << 20, np.uint8)   # more than the kernel buffers: the send blocks on the silent peer
    try:
        started = time.monotonic()
        with pytest.raises(errors.UnavailableError) as e:
            client.call("RunGraph", service_pb2.RunGraphRequest(graph_handle="h"), service_pb2.RunGraphResponse,
                        [("x:0", big)])
        assert time.monotonic() - started < 15
        assert "/job:ps/replica:0/task:0" in e.value.message
    finally:
        client.close()
        peer.close()
