"""A dead client's state leaves the ps (issue 26, item 2): the graph partitions a master registered on a
ps are owned by that master's (task, incarnation). A worker killed and restarted five times: after each
restart the ps holds exactly the live workers' registrations (counted, at the restarted worker's first
step: its first registration drops its previous incarnation's). A worker killed for good, or a remote
client's master session: freed once their connections have been gone for TENSORFLEET_CLIENT_GC_SECONDS
(1 s here). A client that reconnects within that grace period keeps everything.

The ps runs in the test process (its worker service's `registrations()` is the count); the clients are
real processes (`stepping_client.py`) on 127.0.0.1, killed with SIGKILL. The oracle of which incarnation
is alive is each worker's own GetStatus.
"""
import json
import subprocess
import sys
import time

import pytest

import tensorfleet as tf
from dist_cluster import HERE, free_ports, task_env
from tensorfleet.distributed.client import RpcClient
from tensorfleet.distributed.protos import service_pb2 as pb
from tensorfleet.graph_def import as_graph_def

GC_SECONDS = "1"
WAIT_S = 30.0   # bound on waiting for a grace period of 1 s to pass on a busy machine


@pytest.fixture
def ps(local_servers, monkeypatch):
    monkeypatch.setenv("TENSORFLEET_CLIENT_GC_SECONDS", GC_SECONDS)
    ports = free_ports(3)
    spec = {"ps": [f"127.0.0.1:{ports[0]}"], "worker": [f"127.0.0.1:{p}" for p in ports[1:]]}
    server = tf.train.Server(spec, job_name="ps", task_index=0)
    local_servers.append(server)
    return server, spec


def _start(spec, mode, task=0):
    args = [sys.executable, f"{HERE}/stepping_client.py", json.dumps(spec), mode, str(task)]
    proc = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, env=task_env())
    seen = []
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and len(seen) < 1000:
        line = proc.stdout.readline()
        if not line:
            break
        seen.append(line)
        if line.startswith("STEPPING"):
            return proc
    proc.kill()
    raise AssertionError(f"the client never stepped: {''.join(seen)}")


def _kill(proc):
    proc.kill()
    proc.wait(10)
    proc.stdout.close()
    proc.stdin.close()


def _incarnation(address):
    client = RpcClient(address, "WorkerService", address)
    try:
        return client.call("GetStatus", pb.GetStatusRequest(), pb.GetStatusResponse, timeout=10)[0].incarnation
    finally:
        client.close()


def _until(cond, what):
    deadline = time.monotonic() + WAIT_S
    while not cond():
        assert time.monotonic() < deadline, what
        time.sleep(0.02)


def _worker(i):
    return f"/job:worker/replica:0/task:{i}"


def test_a_worker_killed_and_restarted_five_times_leaves_only_the_live_workers_graphs(ps):
    server, spec = ps
    procs = {i: _start(spec, "worker", i) for i in (0, 1)}
    try:
        live = {i: _incarnation(spec["worker"][i]) for i in (0, 1)}
        first = server.worker_service.registrations()
        assert set(first) == {(_worker(i), live[i]) for i in (0, 1)}
        per_worker = {task: n for (task, _), n in first.items()}
        assert all(n >= 2 for n in per_worker.values()), first   # both step signatures have a ps partition
        for restart in range(5):
            _kill(procs[1])
            procs[1] = _start(spec, "worker", 1)
            live[1] = _incarnation(spec["worker"][1])
            held = server.worker_service.registrations()
            assert held == {(_worker(i), live[i]): per_worker[_worker(i)] for i in (0, 1)}, (restart, held)
        _kill(procs[1])   # for good: its graphs go once its connections have been gone for the grace period
        _until(lambda: set(server.worker_service.registrations()) == {(_worker(0), live[0])},
               "the dead worker's graphs stayed on the ps")
        assert procs[0].poll() is None   # the surviving worker kept stepping
    finally:
        for p in procs.values():
            if p.poll() is None:
                _kill(p)


def test_a_killed_remote_client_s_master_session_is_closed_after_the_grace_period(ps):
    server, spec = ps
    own = ("/job:ps/replica:0/task:0", server.worker_service.incarnation)   # the ps's master registers them
    client = _start(spec, "remote")
    try:
        assert server.worker_service.registrations().get(own, 0) >= 2
    finally:
        _kill(client)
    _until(lambda: own not in server.worker_service.registrations(), "the dead client's session stayed open")


def test_a_client_that_reconnects_within_the_grace_period_keeps_its_graphs(ps):
    server, spec = ps
    g = tf.Graph()
    with g.as_default():
        fetch = (tf.constant(2.0) * 3.0).name
    owner = ("/job:worker/replica:0/task:7", 42)

    def client():
        c = RpcClient(spec["ps"][0], "WorkerService", "/job:ps/replica:0/task:0")
        status = c.call("GetStatus", pb.GetStatusRequest(), pb.GetStatusResponse)[0]
        c.enable_bulk(status.bulk_port, status.local_socket)
        return c

    def run(c, handle):
        return dict(c.call("RunGraph", pb.RunGraphRequest(graph_handle=handle, step_id=1, end_of_step=True),
                           pb.RunGraphResponse)[1])[fetch]

    first = client()
    req = pb.RegisterGraphRequest(graph_def=as_graph_def(g), fetch=[fetch], master_task=owner[0],
                                  master_incarnation=owner[1])
    handle = first.call("RegisterGraph", req, pb.RegisterGraphResponse)[0].graph_handle
    assert run(first, handle) == 6.0
    first.close()   # its connections close; it comes back at once on new ones
    second = client()
    assert run(second, handle) == 6.0
    time.sleep(float(GC_SECONDS) * 1.5)   # past the grace period counted from the first close: nothing lost
    assert run(second, handle) == 6.0 and server.worker_service.registrations() == {owner: 1}
    second.close()
    _until(lambda: not server.worker_service.registrations(), "the gone client's graphs stayed")
    third = client()
    try:
        with pytest.raises(tf.errors.AbortedError):
            run(third, handle)
    finally:
        third.close()
