"""An authenticated bulk connection that stalls inside a frame does not hold a worker thread: a real ps
(token set, TENSORFLEET_AUTH_SECONDS=1, TENSORFLEET_BULK_STALL_SECONDS=2), plain and TLS, gets connections
that send a whole request, read its reply and then only the first byte of a next frame; a frame whose header
falls 10 bytes short; a frame whose payload falls short. Oracles: the ps closes each within a few seconds
(a request head within auth seconds of its first byte, no byte for stall seconds inside a frame; before, each
held its thread forever), its log says why at DEBUG without a traceback, and a legitimate client is served
after. Under TLS, a reader that takes longer than the linger to start reading a 16 MiB reply still gets it
whole (the short read timeout does not apply while the server sends)."""
import shutil
import socket
import time

import numpy as np
import pytest

import tensorfleet as tf
from tensorfleet.distributed import wire
from tensorfleet.distributed.client import RpcClient
from tensorfleet.distributed.protos import service_pb2 as pb
from tensorfleet.distributed.tls import tls_from_env
from tensorfleet.graph_def import as_graph_def

from dist_cluster import OutputDrain, make_tls_files

TOKEN = "stall-test-token"
TASK = "/job:ps/replica:0/task:0"
PS_ENV = {"TENSORFLEET_RPC_TOKEN": TOKEN, "TENSORFLEET_AUTH_SECONDS": "1", "TENSORFLEET_BULK_STALL_SECONDS": "2",
          "TENSORFLEET_LOCAL_SOCKET": "0", "RUN_TASK_LOG_LEVEL": "DEBUG"}
#: the bound the test holds the ps to: auth (1 s) or stall (2 s), plus a linger (1 s) of check granularity,
#: plus generous slack for a loaded machine (before the fix: never)
CLOSE_WITHIN_S = 10.0
PER_KIND = 4


def _frame(method, message=b"", payload_bytes=0, header_extra=0):
    header = wire.request_header(method, message, payload_bytes, TOKEN)
    return wire.PREFIX.pack(wire.MAGIC, len(header) + header_extra, payload_bytes) + header


def _closed_at(sock, deadline):
    """Reads (and drops) until the peer closes or resets `sock`; -> time.monotonic() then, None at `deadline`."""
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return None
        sock.settimeout(min(remaining, 0.5))
        try:
            if not sock.recv(65536):
                return time.monotonic()
        except (socket.timeout, BlockingIOError):
            continue
        except OSError:
            return time.monotonic()


@pytest.fixture(params=["plain", "tls"])
def ps(request, cluster_procs, tmp_path, monkeypatch):
    env = dict(PS_ENV)
    if request.param == "tls":
        if shutil.which("openssl") is None:
            pytest.skip("needs the openssl command")
        tls = make_tls_files(tmp_path)
        env.update(tls)
        for k, v in tls.items():
            monkeypatch.setenv(k, v)
    c = cluster_procs({"ps": 1})
    proc = c.start("ps", 0, env=env)
    drain = OutputDrain(proc.stdout)
    address = c.spec["ps"][0]
    port = int(address.rsplit(":", 1)[1])
    context = tls_from_env().client_context() if request.param == "tls" else None

    def connect():
        sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        return context.wrap_socket(sock, server_hostname="127.0.0.1") if context is not None else sock

    yield c, drain, address, port, connect


def test_bulk_connections_that_stall_inside_a_frame_are_closed(ps):
    c, drain, address, port, connect = ps
    status_frame = _frame("WorkerService/GetStatus")
    socks = {"a next frame's first byte only": [], "a header 10 bytes short": [], "a payload 100 bytes short": []}
    for _ in range(PER_KIND):
        s = connect()
        s.sendall(status_frame)
        header, _ = wire.FrameReader(s, wire.Limits()).read()
        assert pb.CallHeader.FromString(header).message, "GetStatus was not served"
        s.sendall(status_frame[:1])   # at once: within the worker's linger, the same thread reads it
        socks["a next frame's first byte only"].append(s)
        s = connect()
        s.sendall(_frame("WorkerService/GetStatus", header_extra=10))
        socks["a header 10 bytes short"].append(s)
        s = connect()
        s.sendall(_frame("WorkerService/GetStatus", payload_bytes=4096) + bytes(100))
        socks["a payload 100 bytes short"].append(s)
    started = time.monotonic()
    closes = {}
    for kind, group in socks.items():
        times = [_closed_at(s, started + CLOSE_WITHIN_S) for s in group]
        closes[kind] = None if None in times else round(max(times) - started, 1)
    print(f"seconds until the ps closed the last stalled connection of each kind: {closes}")
    for group in socks.values():
        for s in group:
            s.close()
    for kind, seconds in closes.items():
        assert seconds is not None, f"{kind}: a stalled connection was still open after {CLOSE_WITHIN_S} s"
    client = RpcClient(address, "WorkerService", TASK, token=TOKEN)
    client.enable_bulk(port)
    try:
        assert client.call("GetStatus", pb.GetStatusRequest(), pb.GetStatusResponse, timeout=20)[0].task == TASK
    finally:
        client.close()
    c.stop()
    drain.join(30)
    log = "".join(drain.lines)
    assert "Traceback" not in log, log[-5000:]
    assert "Stalled: a request head not complete within 1 s" in log, log[-5000:]
    assert "Stalled: no byte for 2 s inside a frame" in log, log[-5000:]


def test_a_slow_reader_gets_a_large_reply_whole(ps):
    """The reader starts reading a 16 MiB RunGraph reply only after 3 s (3 lingers): under TLS the server's
    sends must not run under the 1 s read timeout. (Plain: the same check of the same code path.)"""
    _, _, address, port, connect = ps
    g = tf.Graph()
    with g.as_default():
        big = tf.fill([4 << 20], 2.0)
    client = RpcClient(address, "WorkerService", TASK, token=TOKEN)
    client.enable_bulk(port)
    try:
        reg, _ = client.call("RegisterGraph", pb.RegisterGraphRequest(graph_def=as_graph_def(g), fetch=[big.name]),
                             pb.RegisterGraphResponse, timeout=30)
    finally:
        client.close()
    request = pb.RunGraphRequest(graph_handle=reg.graph_handle, step_id=1, end_of_step=True)
    s = connect()
    try:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 64 << 10)
        s.sendall(_frame("WorkerService/RunGraph", request.SerializeToString()))
        time.sleep(3.0)   # the server's send blocks on the full socket buffers meanwhile
        s.settimeout(30)
        header, payload = wire.FrameReader(s, wire.Limits()).read()
    finally:
        s.close()
    reply = pb.CallHeader.FromString(header)
    assert reply.status.code == 0, reply.status.message
    (name, value), = wire.unpack(pb.RunGraphResponse.FromString(reply.message).recv, payload)
    assert name == big.name and value.shape == (4 << 20,) and np.all(value == 2.0)
