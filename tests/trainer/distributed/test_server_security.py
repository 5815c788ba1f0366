"""Tokens, bad input and bounds on a real server process: a missing or wrong token is UNAUTHENTICATED and
nothing runs; garbage, truncated, oversize and unknown calls to every method get a clear status, and the
server keeps serving afterwards."""
import os
import random
import socket
import struct

import grpc
import numpy as np
import pytest

import tensorfleet as tf
from tensorfleet import errors
from tensorfleet.distributed import wire
from tensorfleet.distributed.client import RpcClient
from tensorfleet.distributed.protos import service_pb2 as pb
from tensorfleet.distributed.server import bind_host

TOKEN = "s3cret-token"
SERVICES = {"WorkerService": ["GetStatus", "RegisterGraph", "DeregisterGraph", "RunGraph", "CleanupStep", "Reset"],
            # (Shutdown is fuzzed last, in its own test: a well-formed one stops the server)
            "MasterService": ["CreateSession", "ExtendSession", "RunStep", "CloseSession", "ListDevices", "Reset"]}
STREAMING = {"RunGraph", "RunStep"}


@pytest.fixture
def secured(cluster_procs):
    c = cluster_procs({"ps": 1})
    c.start("ps", 0, env={"TENSORFLEET_RPC_TOKEN": TOKEN, "TENSORFLEET_MAX_HEADER_BYTES": str(1 << 20)})
    return c.spec["ps"][0]


def _status(address, token):
    client = RpcClient(address, "WorkerService", "/job:ps/replica:0/task:0", token=token)
    try:
        return client.call("GetStatus", pb.GetStatusRequest(), pb.GetStatusResponse)[0]
    finally:
        client.close()


def _raw_grpc(address, service, method, payload, token=TOKEN):
    with grpc.insecure_channel(address) as channel:
        path = f"/tensorfleet.rpc.{service}/{method}"
        md = [("tensorfleet-token", token)] if token is not None else []
        if method in STREAMING:
            call = channel.stream_stream(path)
            try:
                list(call(iter([payload]), metadata=md, timeout=10))
            except grpc.RpcError as e:
                return e.code()
            return grpc.StatusCode.OK
        try:
            channel.unary_unary(path)(payload, metadata=md, timeout=10)
        except grpc.RpcError as e:
            return e.code()
        return grpc.StatusCode.OK


def _bulk_frame(port, data, read=True):
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(data)
        if not read:
            return None
        s.shutdown(socket.SHUT_WR)
        header, _ = wire.recv_frame(s, wire.Limits())
        return pb.CallHeader.FromString(header) if header is not None else None


def test_missing_or_wrong_token_is_unauthenticated_and_nothing_runs(secured):
    status = _status(secured, TOKEN)
    assert status.task == "/job:ps/replica:0/task:0"
    assert _raw_grpc(secured, "WorkerService", "GetStatus", b"", token=None) == grpc.StatusCode.UNAUTHENTICATED
    assert _raw_grpc(secured, "WorkerService", "Reset", b"", token="wrong") == grpc.StatusCode.UNAUTHENTICATED
    for bulk in (False, True):
        client = RpcClient(secured, "WorkerService", "ps0", token="wrong")
        if bulk:
            client.enable_bulk(status.bulk_port)
        with pytest.raises(errors.UnauthenticatedError):
            client.call("GetStatus", pb.GetStatusRequest(), pb.GetStatusResponse)
        client.close()
    # a session with the right token sets a variable; a wrong-token Reset must not clear it
    os.environ["TENSORFLEET_RPC_TOKEN"] = TOKEN
    try:
        with tf.device("/job:ps/task:0"):
            v = tf.Variable(7.0, name="guarded")
        with tf.Session("grpc://" + secured) as sess:
            sess.run(v.initializer)
            wrong = RpcClient(secured, "WorkerService", "ps0", token="wrong")
            wrong.enable_bulk(status.bulk_port)
            with pytest.raises(errors.UnauthenticatedError):
                wrong.call("Reset", pb.ResetRequest(), pb.ResetResponse)
            wrong.close()
            assert sess.run(v) == 7.0
    finally:
        del os.environ["TENSORFLEET_RPC_TOKEN"]


def test_garbage_to_every_grpc_method_gets_a_clear_status(secured):
    rng = random.Random(7)
    garbage = [b"\xff" * 17, bytes(rng.getrandbits(8) for _ in range(300)), b"\x0a\x05abc"]  # last: truncated
    ok_codes = {grpc.StatusCode.INVALID_ARGUMENT, grpc.StatusCode.RESOURCE_EXHAUSTED, grpc.StatusCode.NOT_FOUND,
                grpc.StatusCode.ABORTED, grpc.StatusCode.OK, grpc.StatusCode.FAILED_PRECONDITION}
    for service, methods in SERVICES.items():
        for method in methods:
            for g in garbage:
                code = _raw_grpc(secured, service, method, g)
                assert code in ok_codes, (service, method, g[:8], code)
                assert code not in (grpc.StatusCode.UNKNOWN, grpc.StatusCode.INTERNAL, grpc.StatusCode.UNAVAILABLE)
    assert _raw_grpc(secured, "WorkerService", "NoSuchMethod", b"") == grpc.StatusCode.UNIMPLEMENTED
    assert _status(secured, TOKEN).task == "/job:ps/replica:0/task:0"  # still serving


def test_oversize_messages_are_rejected_and_the_server_keeps_serving(secured):
    big = b"\x0a" + b"\x80" * 10 + os.urandom(4 << 20)  # over the 1 MiB header + 1 MiB chunk bound given
    assert _raw_grpc(secured, "MasterService", "CreateSession", big) == grpc.StatusCode.RESOURCE_EXHAUSTED
    port = _status(secured, TOKEN).bulk_port
    reply = _bulk_frame(port, wire.PREFIX.pack(wire.MAGIC, 8 << 20, 0))
    assert reply.status.code == errors.RESOURCE_EXHAUSTED and "header" in reply.status.message
    reply = _bulk_frame(port, wire.PREFIX.pack(wire.MAGIC, 10, 1 << 62))
    assert reply.status.code == errors.RESOURCE_EXHAUSTED and "payload" in reply.status.message
    assert _status(secured, TOKEN).task == "/job:ps/replica:0/task:0"


def test_garbage_to_every_bulk_method_gets_a_clear_status(secured):
    port = _status(secured, TOKEN).bulk_port
    reply = _bulk_frame(port, b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
    assert reply.status.code == errors.INVALID_ARGUMENT and "magic" in reply.status.message
    junk = os.urandom(40)
    reply = _bulk_frame(port, wire.PREFIX.pack(wire.MAGIC, len(junk), 0) + junk)
    assert reply.status.code in (errors.INVALID_ARGUMENT, errors.UNAUTHENTICATED)
    for service, methods in SERVICES.items():
        for method in methods + ["Nope"]:
            header = wire.request_header(f"{service}/{method}", b"\xff\xff\xff", 5, TOKEN)
            reply = _bulk_frame(port, wire.PREFIX.pack(wire.MAGIC, len(header), 5) + header + b"12345")
            expected = errors.UNIMPLEMENTED if method == "Nope" else errors.INVALID_ARGUMENT
            assert reply.status.code == expected, (service, method, reply.status)
    # a frame cut short: the server drops that connection only
    _bulk_frame(port, wire.PREFIX.pack(wire.MAGIC, 100, 0) + b"short", read=False)
    # tensors that do not fit their payload are refused
    req = pb.RunGraphRequest(graph_handle="x")
    req.send.add(name="t", dtype=1, offset=0, nbytes=4096).shape.dim.add(size=1024)
    header = wire.request_header("WorkerService/RunGraph", req.SerializeToString(), 16, TOKEN)
    reply = _bulk_frame(port, wire.PREFIX.pack(wire.MAGIC, len(header), 16) + header + bytes(16))
    assert reply.status.code == errors.INVALID_ARGUMENT and "do not fit" in reply.status.message
    assert _status(secured, TOKEN).task == "/job:ps/replica:0/task:0"


def test_without_a_token_a_server_refuses_non_loopback_addresses(monkeypatch):
    monkeypatch.delenv("TENSORFLEET_RPC_TOKEN", raising=False)
    with pytest.raises(ValueError, match="TENSORFLEET_RPC_TOKEN"):
        tf.train.Server({"worker": ["0.0.0.0:0"]}, start=False)
    with pytest.raises(ValueError, match="TENSORFLEET_RPC_TOKEN"):
        tf.train.Server({"worker": ["job-worker-0.ns.svc:2222"]}, start=False)
    assert bind_host("localhost") == "127.0.0.1"
    assert bind_host("127.0.0.1") == "127.0.0.1"
    assert bind_host("10.1.2.3") == "10.1.2.3"
    assert bind_host("job-worker-0.ns.svc") == "::"
    assert bind_host("::1") == "::1"


def test_a_server_binds_exactly_its_own_loopback_address(local_servers):
    server = tf.train.Server.create_local_server()
    local_servers.append(server)
    port = int(server.target.rsplit(":", 1)[1])
    with socket.socket() as s:  # the same port on the loopback address is taken (no SO_REUSEPORT sharing)
        with pytest.raises(OSError):
            s.bind(("127.0.0.1", port))
    import subprocess
    out = subprocess.run(["ss", "-ltn"], capture_output=True, text=True).stdout if _has_ss() else ""
    for line in out.splitlines():
        if f":{port} " in line:
            assert "127.0.0.1" in line.split()[3], line  # 127.0.0.1:p or [::ffff:127.0.0.1]:p, never *:p


def _has_ss():
    from shutil import which
    return which("ss") is not None


def test_tensor_payload_round_trip_keeps_dtype_shape_and_bytes():
    arrays = [("a", np.arange(7, dtype=np.float32)), ("b", np.array(3, np.int64)),
              ("c", np.ones((2, 0, 3), np.float64)), ("d", np.array([[True, False]])),
              ("e", np.arange(12, dtype=np.int8).reshape(3, 4)[:, ::2]), ("f", np.float16([1.5, -2]))]
    metas, parts, size = wire.pack(arrays)
    payload = b"".join(bytes(p) for p in parts)
    assert len(payload) == size and all(m.offset % wire.ALIGN == 0 for m in metas)
    back = wire.unpack(metas, payload)
    for (name, a), (name2, b) in zip(arrays, back, strict=True):
        assert name == name2 and a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b)
    struct.pack("<I", 1)  # (struct is the frame prefix's codec)


def test_string_tensors_travel_as_length_prefixed_bytes():
    words = np.array([[b"ps", b""], ["w\u00e9".encode(), b"x" * 300]], dtype=object)
    metas, parts, size = wire.pack([("s", words), ("n", np.arange(3))])
    payload = b"".join(bytes(p) for p in parts)
    (_, back), (_, n) = wire.unpack(metas, payload)
    assert back.dtype == object and back.shape == (2, 2) and back.tolist() == words.tolist()
    assert n.tolist() == [0, 1, 2]
    metas[0].nbytes -= 1
    with pytest.raises(errors.InvalidArgumentError, match="lengths"):
        wire.unpack(metas, payload)


def test_shutdown_needs_the_token_and_a_well_formed_request(secured, cluster_procs):
    assert _raw_grpc(secured, "WorkerService", "Shutdown", b"", token="wrong") == grpc.StatusCode.UNAUTHENTICATED
    assert _raw_grpc(secured, "WorkerService", "Shutdown", b"\xff" * 9) == grpc.StatusCode.INVALID_ARGUMENT
    assert _status(secured, TOKEN).task == "/job:ps/replica:0/task:0"  # still serving
    assert _raw_grpc(secured, "WorkerService", "Shutdown", b"") == grpc.StatusCode.OK
