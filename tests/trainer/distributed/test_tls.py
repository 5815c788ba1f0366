"""Optional mutual TLS from files: a job CA signs one certificate (SAN 127.0.0.1); with the three variables
set, a ps serves gRPC and the bulk frames over TLS on its one spec port (told apart by ALPN), or on two ports
with TENSORFLEET_SINGLE_PORT=0; a client with the files runs a step on both paths, a plaintext client cannot
talk to it, plaintext or silent peers on the TLS port are dropped without stopping it, and a half-configured
environment is refused naming what is missing."""
import os
import shutil
import socket
import sys

import grpc
import numpy as np
import pytest

import tensorfleet as tf
from tensorfleet import errors
from tensorfleet.distributed import wire
from tensorfleet.distributed.client import RpcClient
from tensorfleet.distributed.protos import service_pb2 as pb
from tensorfleet.distributed.tls import tls_from_env

from dist_cluster import make_tls_files
from proc_sockets import listening_tcp_ports

pytestmark = pytest.mark.skipif(shutil.which("openssl") is None, reason="needs the openssl command")


@pytest.fixture
def tls_files(tmp_path):
    return make_tls_files(tmp_path)


def _port(address):
    return int(address.rsplit(":", 1)[1])


@pytest.mark.parametrize("single_port,bulk", [("1", "1"), ("1", "0"), ("0", "1")])
def test_a_step_runs_over_mutual_tls(cluster_procs, local_servers, tls_files, monkeypatch, single_port, bulk):
    env = dict(tls_files, TENSORFLEET_BULK=bulk, TENSORFLEET_SINGLE_PORT=single_port)
    c = cluster_procs({"ps": 1, "worker": 1})
    ps = c.start("ps", 0, env=env)
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    server = tf.train.Server(c.spec, job_name="worker", task_index=0)
    local_servers.append(server)
    x = tf.placeholder(tf.float32, [None])
    with tf.device("/job:ps/task:0"):
        y = x * 2.0
    big = np.arange(3 << 20, dtype=np.float32)  # 12 MiB each way: many TLS records, full pump buffers
    with tf.Session(server.target) as sess:
        np.testing.assert_array_equal(sess.run(y, {x: big}), big * 2.0)
    secure = RpcClient(c.spec["ps"][0], "WorkerService", "/job:ps/replica:0/task:0")
    bulk_port = secure.call("GetStatus", pb.GetStatusRequest(), pb.GetStatusResponse, timeout=10)[0].bulk_port
    secure.close()
    spec_port = _port(c.spec["ps"][0])
    if bulk == "0":
        assert bulk_port == 0
    elif single_port == "1":  # TLS terminated by the server, gRPC and bulk told apart by ALPN
        assert bulk_port == spec_port
    else:
        assert bulk_port not in (0, spec_port)
    if single_port == "1" and sys.platform.startswith("linux"):
        assert listening_tcp_ports(ps.pid) == {spec_port}
    for k in tls_files:
        monkeypatch.delenv(k)
    plain = RpcClient(c.spec["ps"][0], "WorkerService", "/job:ps/replica:0/task:0")
    with pytest.raises(errors.OpError):
        plain.call("GetStatus", pb.GetStatusRequest(), pb.GetStatusResponse, timeout=10)
    plain.close()


def test_plaintext_and_silent_peers_on_a_tls_spec_port_are_dropped_and_it_keeps_serving(cluster_procs, tls_files,
                                                                                          monkeypatch):
    c = cluster_procs({"ps": 1})
    c.start("ps", 0, env=tls_files)
    port = _port(c.spec["ps"][0])
    for junk in (b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + os.urandom(100), wire.MAGIC + os.urandom(100)):
        with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
            s.sendall(junk)
            s.settimeout(20)
            try:
                while s.recv(65536):  # a failed handshake: the server answers with an alert or closes
                    pass
            except (ConnectionResetError, socket.timeout):
                pass
    silent = socket.create_connection(("127.0.0.1", port), timeout=10)  # never sends a ClientHello
    try:
        for k, v in tls_files.items():
            monkeypatch.setenv(k, v)
        client = RpcClient(c.spec["ps"][0], "WorkerService", "/job:ps/replica:0/task:0")
        status = client.call("GetStatus", pb.GetStatusRequest(), pb.GetStatusResponse, timeout=10)[0]
        client.enable_bulk(status.bulk_port)
        again = client.call("GetStatus", pb.GetStatusRequest(), pb.GetStatusResponse, timeout=10)[0]
        client.close()
        assert again.incarnation == status.incarnation
    finally:
        silent.close()


def test_half_configured_tls_is_refused_naming_the_missing_variable(monkeypatch, tls_files):
    monkeypatch.setenv("TENSORFLEET_TLS_CERT", tls_files["TENSORFLEET_TLS_CERT"])
    monkeypatch.delenv("TENSORFLEET_TLS_KEY", raising=False)
    monkeypatch.delenv("TENSORFLEET_TLS_CA", raising=False)
    with pytest.raises(ValueError, match="TENSORFLEET_TLS_KEY"):
        tls_from_env()
    assert grpc is not None
