"""gRPC peers without the token cannot hold a ps's connections or memory: a real ps process (token set).

- HEADERS flood: 4 connections open 25,000 streams each (HTTP/2 HEADERS frames, no token) while their
  connections live (TENSORFLEET_AUTH_SECONDS=30); the test reads the answers until the ps has ended every
  stream (RST_STREAM or a status; at most 20 s). Streams per connection and calls at once are bounded
  (grpc.max_concurrent_streams, maximum_concurrent_rpcs), so the ps's peak RSS grows by less than 48 MB
  (before: every refused call queued, +135 MB), and a legitimate client is served during the flood (or
  refused RESOURCE_EXHAUSTED; before: CANCELLED) and after it.
- Pinging preface-only connections: as many as TENSORFLEET_MAX_CONNECTIONS send the HTTP/2 preface and
  SETTINGS, then a PING every 0.3 s, and never a call with the token. Each is closed within
  TENSORFLEET_AUTH_SECONDS (+ slack) of its accept whatever it sends (before: the pings kept them open
  forever, the cap locked every client out), and a legitimate gRPC and bulk client is served throughout.
- A legitimate gRPC connection whose first call comes 1 s after its preface (a quarter of the bound) is
  served, and so is a long-lived channel afterwards, past the bound.
Oracles from outside the process: /proc/<pid>/status, what each socket's sender sees, the ps's log."""
import socket
import struct
import sys
import threading
import time

import grpc
import pytest

from tensorfleet import errors
from tensorfleet.distributed.client import TOKEN_METADATA, RpcClient
from tensorfleet.distributed.one_port import HTTP2_PREFACE
from tensorfleet.distributed.protos import service_pb2 as pb

from dist_cluster import OutputDrain
from proc_sockets import proc_status

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")

TOKEN = "flood-test-token"
TASK = "/job:ps/replica:0/task:0"
RSS_GROWTH_LIMIT = 48 << 20
SETTINGS, SETTINGS_ACK = bytes([0, 0, 0, 4, 0, 0, 0, 0, 0]), bytes([0, 0, 0, 4, 1, 0, 0, 0, 0])


def _h2_frame(kind, flags, stream, payload=b""):
    return struct.pack(">I", len(payload))[1:] + bytes([kind, flags]) + struct.pack(">I", stream) + payload


def _literal(name, value):
    return b"\x00" + bytes([len(name)]) + name + bytes([len(value)]) + value


#: a GetStatus call's headers without the token (HPACK literals, not indexed), END_STREAM | END_HEADERS
_HEADERS_BLOCK = (_literal(b":method", b"POST") + _literal(b":scheme", b"http")
                  + _literal(b":path", b"/tensorfleet.rpc.WorkerService/GetStatus") + _literal(b":authority", b"x")
                  + _literal(b"content-type", b"application/grpc") + _literal(b"te", b"trailers"))


def _start_ps(cluster_procs, env):
    c = cluster_procs({"ps": 1})
    proc = c.start("ps", 0, env={"TENSORFLEET_RPC_TOKEN": TOKEN, "RUN_TASK_LOG_LEVEL": "DEBUG", **env})
    drain = OutputDrain(proc.stdout)
    address = c.spec["ps"][0]
    return c, proc, drain, address, int(address.rsplit(":", 1)[1])


def _clients(address, port):
    bulk = RpcClient(address, "WorkerService", TASK, token=TOKEN)
    bulk.enable_bulk(port)
    return bulk, RpcClient(address, "WorkerService", TASK, token=TOKEN)


def _served(client, within=30.0):
    """A GetStatus call succeeds within `within` seconds (calls refused RESOURCE_EXHAUSTED are retried)."""
    deadline = time.monotonic() + within
    while True:
        try:
            return client.call("GetStatus", pb.GetStatusRequest(), pb.GetStatusResponse, timeout=10)[0].task == TASK
        except errors.ResourceExhaustedError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


def _connect(port):
    return socket.create_connection(("127.0.0.1", port), timeout=10)


def _count_answers(sock, answers, i):
    """Reads the ps's HTTP/2 frames until it closes `sock`: answers[i] counts the streams it ended (RST_STREAM,
    or HEADERS with END_STREAM: a status), so the test knows when the ps has dealt with each one."""
    buf, at = bytearray(), 0
    try:
        sock.settimeout(60)
        while data := sock.recv(1 << 16):
            buf += data
            while len(buf) - at >= 9:
                length = int.from_bytes(buf[at:at + 3], "big")
                if len(buf) - at < 9 + length:
                    break
                kind, flags = buf[at + 3], buf[at + 4]
                answers[i] += kind == 3 or (kind == 1 and flags & 1)
                at += 9 + length
            del buf[:at]
            at = 0
    except OSError:
        pass


def _read_until_closed(sock, closed_at, i):
    """Reads (and drops) until the ps closes `sock`; records when, in closed_at[i]."""
    try:
        sock.settimeout(60)
        while sock.recv(1 << 16):
            pass
    except OSError:
        pass
    closed_at[i] = time.monotonic()


def test_a_headers_flood_without_the_token_is_bounded_and_the_ps_serves_after(cluster_procs):
    c, proc, drain, address, port = _start_ps(cluster_procs, {"TENSORFLEET_AUTH_SECONDS": "30"})
    bulk, plain = _clients(address, port)
    try:
        assert _served(bulk) and _served(plain)
        base = proc_status(proc.pid)
        socks = [_connect(port) for _ in range(4)]
        answers = [0] * len(socks)
        readers = [threading.Thread(target=_count_answers, args=(s, answers, i), daemon=True)
                   for i, s in enumerate(socks)]
        for s, reader in zip(socks, readers):
            s.sendall(HTTP2_PREFACE + SETTINGS + SETTINGS_ACK)
            reader.start()
        sent, flood_end = 0, time.monotonic() + 10.0
        for burst in range(50):   # 50 x 500 streams on each connection (at most 10 s of it)
            if time.monotonic() > flood_end:
                break
            blob = b"".join(_h2_frame(1, 5, 2 * (burst * 500 + k) + 1, _HEADERS_BLOCK) for k in range(500))
            for s in socks:
                try:
                    s.sendall(blob)
                    sent += 500
                except OSError:
                    pass
        try:   # during the flood: served, or refused for the moment
            plain.call("GetStatus", pb.GetStatusRequest(), pb.GetStatusResponse, timeout=10)
        except errors.ResourceExhaustedError:
            pass
        wait_end = time.monotonic() + 20.0
        while sum(answers) < sent and time.monotonic() < wait_end:   # the ps dealt with every stream
            time.sleep(0.05)
        during = proc_status(proc.pid)
        for s in socks:
            s.close()
        assert _served(plain) and _served(bulk)
        end = proc_status(proc.pid)
    finally:
        bulk.close()
        plain.close()
    growth = end["VmHWM"] - base["VmRSS"]
    print(f"{sent} HEADERS sent, {sum(answers)} streams ended by the ps; ps RSS {base['VmRSS'] >> 20} MB "
          f"before, peak {end['VmHWM'] >> 20} MB (+{growth / 2**20:.1f} MB); threads {base['Threads']} "
          f"before, {during['Threads']} during the flood")
    assert growth < RSS_GROWTH_LIMIT, f"the ps's peak RSS grew by {growth >> 20} MB"
    c.stop()
    drain.join(30)
    assert "Traceback" not in "".join(drain.lines)


def test_connections_that_only_ping_are_closed_within_the_auth_bound_and_do_not_lock_clients_out(cluster_procs):
    cap, auth = 8, 2.0
    c, proc, drain, address, port = _start_ps(cluster_procs, {
        "TENSORFLEET_MAX_CONNECTIONS": str(cap), "TENSORFLEET_AUTH_SECONDS": f"{auth:g}"})
    bulk, plain = _clients(address, port)
    try:
        assert _served(bulk) and _served(plain)   # their connections: authenticated
        socks, opened = [], []
        for _ in range(cap):   # (paced a little, as the review's reproduction: each is pumped before the next)
            s = _connect(port)
            s.sendall(HTTP2_PREFACE + SETTINGS + SETTINGS_ACK)
            socks.append(s)
            opened.append(time.monotonic())
            time.sleep(0.02)
        closed_at = [None] * cap
        readers = [threading.Thread(target=_read_until_closed, args=(s, closed_at, i), daemon=True)
                   for i, s in enumerate(socks)]
        for r in readers:
            r.start()
        stop = time.monotonic() + auth + 8.0
        served, n = 0, 0
        while time.monotonic() < stop and not all(closed_at):   # a PING every 0.3 s on each, while open
            for s in socks:
                try:
                    s.sendall(_h2_frame(6, 0, 0, struct.pack(">Q", n)))
                except OSError:
                    pass
            n += 1
            served += _served(plain, 0) + _served(bulk, 0)
            time.sleep(0.3)
        # a fresh client needs connections of its own (the cap counts every open one) and is served
        fresh_bulk, fresh_plain = _clients(address, port)
        try:
            assert _served(fresh_bulk) and _served(fresh_plain)
        finally:
            fresh_bulk.close()
            fresh_plain.close()
        for s in socks:
            s.close()
    finally:
        bulk.close()
        plain.close()
    lived = [None if t is None else round(t - o, 1) for t, o in zip(closed_at, opened)]
    print(f"seconds each pinging connection stayed open: {lived}; calls served meanwhile: {served}")
    assert None not in lived, f"a pinging connection was still open {auth + 8:g} s later: {lived}"
    assert max(lived) < auth + 4.0, lived
    assert served >= 2
    c.stop()
    drain.join(30)
    log = "".join(drain.lines)
    assert "Traceback" not in log, log[-5000:]
    assert f"no gRPC call with the job token within {auth:g} s" in log


def test_a_grpc_connection_whose_first_call_comes_late_and_a_long_lived_channel_are_served(cluster_procs):
    auth = 4.0
    c, proc, drain, address, port = _start_ps(cluster_procs, {"TENSORFLEET_AUTH_SECONDS": f"{auth:g}"})
    with grpc.insecure_channel(address) as channel:
        grpc.channel_ready_future(channel).result(timeout=30)   # the connection (preface) is up, no call yet
        time.sleep(auth / 4)
        call = channel.unary_unary("/tensorfleet.rpc.WorkerService/GetStatus",
                                   request_serializer=lambda m: m.SerializeToString(),
                                   response_deserializer=pb.GetStatusResponse.FromString)
        assert call(pb.GetStatusRequest(), metadata=((TOKEN_METADATA, TOKEN),), timeout=10).task == TASK
        deadline = time.monotonic() + auth + 2.0   # past the bound: the same channel, its connection kept
        while time.monotonic() < deadline:
            assert call(pb.GetStatusRequest(), metadata=((TOKEN_METADATA, TOKEN),), timeout=10).task == TASK
            time.sleep(0.5)
    c.stop()
    drain.join(30)
    log = "".join(drain.lines)
    assert "no gRPC call with the job token" not in log, log[-5000:]
