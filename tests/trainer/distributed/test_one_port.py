"""One port per server (single-port mode): a real server process listens on exactly one TCP port, its
cluster-spec port, and serves gRPC and the bulk frames there; garbage on that port is dropped and the
server keeps serving; a wrong token is UNAUTHENTICATED on both protocols. The oracle for "which ports does
the process listen on" is the kernel's own socket tables (/proc/<pid>/fd and /proc/net/tcp{,6})."""
import os
import socket
import sys

import grpc
import pytest

from tensorfleet import errors
from tensorfleet.distributed import wire
from tensorfleet.distributed.client import RpcClient
from tensorfleet.distributed.protos import service_pb2 as pb

from proc_sockets import listening_tcp_ports

TOKEN = "one-port-token"
TASK = "/job:ps/replica:0/task:0"
linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")


@pytest.fixture
def one_task(cluster_procs):
    c = cluster_procs({"ps": 1})
    proc = c.start("ps", 0, env={"TENSORFLEET_RPC_TOKEN": TOKEN})
    return c.spec["ps"][0], proc


def _client(address, token=TOKEN, bulk_port=None):
    client = RpcClient(address, "WorkerService", TASK, token=token)
    if bulk_port:
        client.enable_bulk(bulk_port)
    return client


def _get_status(address, token=TOKEN, bulk_port=None):
    client = _client(address, token, bulk_port)
    try:
        return client.call("GetStatus", pb.GetStatusRequest(), pb.GetStatusResponse)[0]
    finally:
        client.close()


def _grpc_status_code(address, token):
    with grpc.insecure_channel(address) as channel:
        try:
            channel.unary_unary("/tensorfleet.rpc.WorkerService/GetStatus")(
                b"", metadata=[("tensorfleet-token", token)], timeout=10)
        except grpc.RpcError as e:
            return e.code()
        return grpc.StatusCode.OK


def _bulk_reply(port, data):
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(data)
        s.shutdown(socket.SHUT_WR)
        header, _ = wire.recv_frame(s, wire.Limits())
        return pb.CallHeader.FromString(header) if header is not None else None


def _bulk_get_status(port, token):
    header = wire.request_header("WorkerService/GetStatus", b"", 0, token)   # the token field first
    return _bulk_reply(port, wire.PREFIX.pack(wire.MAGIC, len(header), 0) + header)


@linux_only
def test_a_server_serves_grpc_and_bulk_on_its_one_spec_port(one_task):
    address, proc = one_task
    port = int(address.rsplit(":", 1)[1])
    assert listening_tcp_ports(proc.pid) == {port}  # nothing else: no ephemeral bulk port
    status = _get_status(address)  # over gRPC (no bulk port given to the client)
    assert status.task == TASK and status.bulk_port == port
    reply = _bulk_get_status(port, TOKEN)  # a raw bulk frame on the same port
    assert not reply.HasField("status") or reply.status.code == errors.OK
    assert pb.GetStatusResponse.FromString(reply.message).task == TASK
    assert _get_status(address, bulk_port=status.bulk_port).incarnation == status.incarnation


def test_a_wrong_token_is_unauthenticated_over_both_protocols_on_the_spec_port(one_task):
    address, _ = one_task
    port = int(address.rsplit(":", 1)[1])
    assert _grpc_status_code(address, "wrong") == grpc.StatusCode.UNAUTHENTICATED
    assert _grpc_status_code(address, TOKEN) == grpc.StatusCode.OK
    assert _bulk_get_status(port, "wrong").status.code == errors.UNAUTHENTICATED
    for bulk_port in (None, port):
        with pytest.raises(errors.UnauthenticatedError):
            _get_status(address, token="wrong", bulk_port=bulk_port)


def test_garbage_on_the_spec_port_is_dropped_and_the_server_keeps_serving(one_task):
    address, _ = one_task
    port = int(address.rsplit(":", 1)[1])
    reply = _bulk_reply(port, b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")  # neither HTTP/2 nor a frame
    assert reply.status.code == errors.INVALID_ARGUMENT and "magic" in reply.status.message
    for junk in (b"", b"P", b"PR", b"PRI", b"PRI * HTTP/1.1\r\n\r\n" + os.urandom(64),  # broken preface
                 b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + os.urandom(200), os.urandom(1000)):
        with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
            s.sendall(junk)
            s.shutdown(socket.SHUT_WR)
            s.settimeout(10)
            try:
                while s.recv(65536):  # the server answers or closes; it must not hang
                    pass
            except (ConnectionResetError, socket.timeout):
                pass
    silent = socket.create_connection(("127.0.0.1", port), timeout=10)  # says nothing, stays open
    try:
        assert _grpc_status_code(address, TOKEN) == grpc.StatusCode.OK
        assert _get_status(address, bulk_port=port).task == TASK
    finally:
        silent.close()


def test_single_port_mode_can_be_turned_off(cluster_procs):
    c = cluster_procs({"ps": 1})
    proc = c.start("ps", 0, env={"TENSORFLEET_SINGLE_PORT": "0"})
    address = c.spec["ps"][0]
    port = int(address.rsplit(":", 1)[1])
    status = _get_status(address, token="")
    assert status.bulk_port not in (0, port)  # the old two-port mode: an ephemeral bulk port beside gRPC
    if sys.platform.startswith("linux"):
        assert listening_tcp_ports(proc.pid) == {port, status.bulk_port}
    assert _get_status(address, token="", bulk_port=status.bulk_port).task == TASK
