"""Optional mutual TLS from files: a job CA signs one certificate (SAN 127.0.0.1); with the three variables
set, a ps serves gRPC and the bulk port over TLS; a client with the files runs a step on both paths, a
plaintext client cannot talk to it, and a half-configured environment is refused naming what is missing."""
import os
import shutil
import subprocess

import grpc
import numpy as np
import pytest

import tensorfleet as tf
from tensorfleet import errors
from tensorfleet.distributed.client import RpcClient
from tensorfleet.distributed.protos import service_pb2 as pb
from tensorfleet.distributed.tls import tls_from_env

pytestmark = pytest.mark.skipif(shutil.which("openssl") is None, reason="needs the openssl command")


def _openssl(*args, cwd):
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True, timeout=60)


@pytest.fixture
def tls_files(tmp_path):
    d = str(tmp_path)
    _openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.pem", "-days", "2",
             "-subj", "/CN=tensorfleet-test-ca", cwd=d)
    (tmp_path / "ext.cnf").write_text("subjectAltName=IP:127.0.0.1,DNS:localhost\n"
                                      "extendedKeyUsage=serverAuth,clientAuth\n")
    _openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", "task.key", "-out", "task.csr",
             "-subj", "/CN=task", cwd=d)
    _openssl("x509", "-req", "-in", "task.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
             "-out", "task.pem", "-days", "2", "-extfile", "ext.cnf", cwd=d)
    return {"TENSORFLEET_TLS_CERT": os.path.join(d, "task.pem"), "TENSORFLEET_TLS_KEY": os.path.join(d, "task.key"),
            "TENSORFLEET_TLS_CA": os.path.join(d, "ca.pem")}


@pytest.mark.parametrize("bulk", ["1", "0"])
def test_a_step_runs_over_mutual_tls(cluster_procs, local_servers, tls_files, monkeypatch, bulk):
    env = dict(tls_files, TENSORFLEET_BULK=bulk)
    c = cluster_procs({"ps": 1, "worker": 1})
    c.start("ps", 0, env=env)
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    server = tf.train.Server(c.spec, job_name="worker", task_index=0)
    local_servers.append(server)
    x = tf.placeholder(tf.float32, [None])
    with tf.device("/job:ps/task:0"):
        y = tf.reduce_sum(x * 2.0)
    with tf.Session(server.target) as sess:
        assert sess.run(y, {x: np.arange(5, dtype=np.float32)}) == 20.0
    secure = RpcClient(c.spec["ps"][0], "WorkerService", "/job:ps/replica:0/task:0")
    bulk_port = secure.call("GetStatus", pb.GetStatusRequest(), pb.GetStatusResponse, timeout=10)[0].bulk_port
    secure.close()
    # under TLS gRPC and bulk cannot be told apart by their first bytes: the two-port mode stays
    assert bulk_port == 0 if bulk == "0" else bulk_port not in (0, int(c.spec["ps"][0].rsplit(":", 1)[1]))
    for k in tls_files:
        monkeypatch.delenv(k)
    plain = RpcClient(c.spec["ps"][0], "WorkerService", "/job:ps/replica:0/task:0")
    with pytest.raises(errors.OpError):
        plain.call("GetStatus", pb.GetStatusRequest(), pb.GetStatusResponse, timeout=10)
    plain.close()


def test_half_configured_tls_is_refused_naming_the_missing_variable(monkeypatch, tls_files):
    monkeypatch.setenv("TENSORFLEET_TLS_CERT", tls_files["TENSORFLEET_TLS_CERT"])
    monkeypatch.delenv("TENSORFLEET_TLS_KEY", raising=False)
    monkeypatch.delenv("TENSORFLEET_TLS_CA", raising=False)
    with pytest.raises(ValueError, match="TENSORFLEET_TLS_KEY"):
        tls_from_env()
    assert grpc is not None
