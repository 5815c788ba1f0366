"""A client that goes away (SIGKILL, or its own RPC deadline) while its dequeue blocks on the ps: the ps
cancels that step within a bounded time, and the dead step takes nothing from the queue.

The ps runs in the test process (its in-flight call count is the handshake: the client's blocked step is
being served); the client is a real process (`blocked_client.py`) on 127.0.0.1, killed with SIGKILL.
Oracle: if the dead step's dequeue still waited on the ps, it would take the next element enqueued there,
so that element must stay in the queue and a fresh dequeue must get exactly it (TF 1.15 cancels the step
when its caller goes away); and the ps's in-flight count drops to 0. Over the bulk path (Unix socket, TCP,
TLS) and the gRPC-only path (plain, TLS), for a worker's RunGraph (what SyncReplicasOptimizer's token
dequeue is), a remote client's RunStep, and a RunStep on another task's master that runs the RunGraph.
"""
import json
import shutil
import subprocess
import sys
import time

import pytest

import tensorfleet as tf
from dist_cluster import HERE, free_ports, make_tls_files, task_env

#: how long the test waits for the ps to drop a dead caller's step (the runtime's bound is about 1 s;
#: generous here for a slow, busy machine; without cancellation the step never ends: it has no deadline)
CANCEL_WAIT_S = 30.0
#: how long the oracle watches an enqueued element for a consumer that should not exist
EATEN_WINDOW_S = 0.5
TRANSPORTS = {"bulk-unix": {}, "bulk-tcp": {"TENSORFLEET_LOCAL_SOCKET": "0"}, "grpc": {"TENSORFLEET_BULK": "0"}}


@pytest.fixture
def ps(local_servers):
    ps_port, w_port = free_ports(2)
    spec = {"ps": [f"127.0.0.1:{ps_port}"], "worker": [f"127.0.0.1:{w_port}"]}
    server = tf.train.Server(spec, job_name="ps", task_index=0)
    local_servers.append(server)
    return server, spec


def _queue_ops(device="/job:ps/task:0"):
    g = tf.Graph()
    with g.as_default(), tf.device(device):
        q = tf.FIFOQueue(10, tf.float32, shapes=[[]], shared_name="q", name="q")
        value = tf.placeholder(tf.float32, [])
        ops = g, q.enqueue(value), value, q.dequeue(), q.size()
    return ops


def _wait_until(cond, what, timeout):
    deadline = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < deadline, what
        time.sleep(0.01)


def _came_true(cond, timeout) -> bool:
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.01)
    return True


def _start_client(spec, mode, env, timeout_ms=0):
    args = [sys.executable, f"{HERE}/blocked_client.py", json.dumps(spec), mode, str(timeout_ms)]
    return subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=task_env(env))


def _read_line(proc, prefix, timeout=60.0):
    """The client's next output line starting with `prefix` (bounded: count and time)."""
    deadline = time.monotonic() + timeout
    seen = []
    while time.monotonic() < deadline and len(seen) < 1000:
        line = proc.stdout.readline()
        if not line:
            break
        seen.append(line)
        if line.startswith(prefix):
            return line.split()
    raise AssertionError(f"the client never printed {prefix}: {''.join(seen)}")


def _stop(proc):
    if proc.poll() is None:
        proc.kill()
    proc.wait(10)
    proc.stdout.close()


def _nothing_was_taken(ps_server):
    """The oracle: one element enqueued now stays in the queue (a consumer still waiting there is woken by the
    enqueue and takes it within milliseconds; the queue is watched for `EATEN_WINDOW_S`, which can only make a
    broken runtime pass, never a correct one fail), then a fresh dequeue gets exactly it."""
    g, enqueue, value, dequeue, size = _queue_ops()
    with tf.Session(ps_server.target, graph=g, config=tf.ConfigProto(device_filters=["/job:ps"])) as sess:
        assert sess.run(size) == 0
        sess.run(enqueue, {value: 7.0})
        if _came_true(lambda: sess.run(size) == 0, EATEN_WINDOW_S):
            pytest.fail("the element enqueued after the client went away was taken by that client's step")
        assert sess.run(dequeue, options=tf.RunOptions(timeout_in_ms=10000)) == 7.0
        assert sess.run(size) == 0


def _kill_while_blocked_then_check(server, client, label):
    """Once the client's dequeue is in flight on the ps: SIGKILL it; the ps must end that step (bounded wait)
    and the dead step must have taken nothing (`_nothing_was_taken`)."""
    try:
        _read_line(client, "BLOCKING")
        _wait_until(lambda: server._methods.in_flight >= 1, "the blocked step never reached the ps", 60.0)
        killed = time.monotonic()
        client.kill()
        client.wait(10)
        cancelled = _came_true(lambda: server._methods.in_flight == 0, CANCEL_WAIT_S)
        print(f"{label}: step ended {time.monotonic() - killed:.2f} s after SIGKILL: {cancelled}")
    finally:
        _stop(client)
    _nothing_was_taken(server)
    assert cancelled, f"the dead client's step still ran on the ps {CANCEL_WAIT_S} s after the kill"


@pytest.mark.parametrize("mode,transport", [("worker", "bulk-unix"), ("worker", "bulk-tcp"), ("worker", "grpc"),
                                            ("remote", "bulk-unix"), ("remote", "grpc")])
def test_a_killed_client_s_blocked_dequeue_is_cancelled_on_the_ps(ps, mode, transport):
    server, spec = ps
    _kill_while_blocked_then_check(server, _start_client(spec, mode, TRANSPORTS[transport]), f"{mode}/{transport}")


@pytest.mark.skipif(shutil.which("openssl") is None, reason="needs the openssl command")
@pytest.mark.parametrize("transport", ["bulk-tcp", "grpc"])
def test_a_killed_client_s_blocked_dequeue_is_cancelled_on_a_tls_ps(local_servers, tmp_path, monkeypatch, transport):
    """The same over mutual TLS on the ps's one port (bulk: the TLS connection itself is watched; gRPC: the
    server's TLS pump ends the internal grpcio connection)."""
    tls = make_tls_files(tmp_path)
    for k, v in tls.items():
        monkeypatch.setenv(k, v)
    ps_port, w_port = free_ports(2)
    spec = {"ps": [f"127.0.0.1:{ps_port}"], "worker": [f"127.0.0.1:{w_port}"]}
    server = tf.train.Server(spec, job_name="ps", task_index=0)
    local_servers.append(server)
    _kill_while_blocked_then_check(server, _start_client(spec, "worker", dict(tls, **TRANSPORTS[transport])),
                                   f"tls/{transport}")


@pytest.mark.parametrize("transport", ["bulk-unix", "grpc", "bulk-tls"])
def test_a_killed_client_s_step_is_cancelled_through_its_master_on_another_task(cluster_procs, local_servers,
                                                                               tmp_path, monkeypatch, transport):
    """client -RunStep-> worker 0's master (a task process) -RunGraph-> ps: the master sees its client go and
    aborts its RunGraph (drops the connection / cancels the gRPC call), which the ps sees in turn."""
    if transport == "bulk-tls":
        if shutil.which("openssl") is None:
            pytest.skip("needs the openssl command")
        env = make_tls_files(tmp_path)
        for k, v in env.items():
            monkeypatch.setenv(k, v)
    else:
        env = TRANSPORTS[transport]
    cluster = cluster_procs({"ps": 1, "worker": 1})
    server = tf.train.Server(cluster.spec, job_name="ps", task_index=0)
    local_servers.append(server)
    cluster.start("worker", 0, env=env)   # its calls to the ps over the same transport
    _kill_while_blocked_then_check(server, _start_client(cluster.spec, "via-worker", env), f"via-worker/{transport}")


def test_a_client_s_operation_timeout_leaves_no_consumer_on_the_ps(ps):
    server, spec = ps
    client = _start_client(spec, "worker", {}, timeout_ms=500)
    try:
        _read_line(client, "BLOCKING")
        assert _read_line(client, "ERROR") == ["ERROR", "DeadlineExceededError"]
        _wait_until(lambda: server._methods.in_flight == 0, "the timed-out step still runs on the ps", CANCEL_WAIT_S)
        _nothing_was_taken(server)   # while the client process still runs, its session open
    finally:
        _stop(client)


@pytest.mark.parametrize("bulk", [True, False])
def test_a_call_whose_own_rpc_deadline_passes_is_cancelled_on_the_ps(ps, bulk):
    """A RunGraph that carries no step deadline (timeout_ms 0) but whose client gives up (its RPC timeout):
    the client drops the connection (bulk) or grpcio cancels the call at its deadline; the ps cancels it."""
    from tensorfleet.distributed.client import RpcClient
    from tensorfleet.distributed.protos import service_pb2 as pb
    from tensorfleet.graph_def import as_graph_def

    server, spec = ps
    g, _, _, dequeue, _ = _queue_ops(device=None)   # a partition as a master registers it: no job in it
    client = RpcClient(spec["ps"][0], "WorkerService", "/job:ps/replica:0/task:0")
    try:
        status, _ = client.call("GetStatus", pb.GetStatusRequest(), pb.GetStatusResponse)
        if bulk:
            client.enable_bulk(status.bulk_port, status.local_socket)
        reg, _ = client.call("RegisterGraph", pb.RegisterGraphRequest(graph_def=as_graph_def(g), fetch=[dequeue.name]),
                             pb.RegisterGraphResponse)
        with pytest.raises(tf.errors.DeadlineExceededError):
            client.call("RunGraph", pb.RunGraphRequest(graph_handle=reg.graph_handle, step_id=1, end_of_step=True),
                        pb.RunGraphResponse, timeout=1.0)
        cancelled = _came_true(lambda: server._methods.in_flight == 0, CANCEL_WAIT_S)
        _nothing_was_taken(server)
        assert cancelled, "the abandoned call still ran on the ps"
    finally:
        client.close()


@pytest.mark.parametrize("bulk", [True, False])
def test_only_the_abandoned_call_is_cancelled_another_run_of_the_partition_goes_on(ps, bulk):
    """Two RunGraph calls of one registered partition block on the queue; the one whose client gives up is
    cancelled, the other still waits and gets the element enqueued next."""
    import threading

    from tensorfleet.distributed.client import RpcClient
    from tensorfleet.distributed.protos import service_pb2 as pb
    from tensorfleet.graph_def import as_graph_def

    server, spec = ps
    g, _, _, dequeue, _ = _queue_ops(device=None)
    client = RpcClient(spec["ps"][0], "WorkerService", "/job:ps/replica:0/task:0")
    outcome = []
    try:
        status, _ = client.call("GetStatus", pb.GetStatusRequest(), pb.GetStatusResponse)
        if bulk:
            client.enable_bulk(status.bulk_port, status.local_socket)
        reg, _ = client.call("RegisterGraph", pb.RegisterGraphRequest(graph_def=as_graph_def(g), fetch=[dequeue.name]),
                             pb.RegisterGraphResponse)

        def run(step_id, timeout=None):
            _, tensors = client.call("RunGraph", pb.RunGraphRequest(graph_handle=reg.graph_handle, step_id=step_id,
                                                                    end_of_step=True), pb.RunGraphResponse,
                                     timeout=timeout)
            return dict(tensors)[dequeue.name]

        def waiting():
            try:
                outcome.append(run(2))
            except Exception as e:  # noqa: BLE001 - the test asserts the value
                outcome.append(e)

        t = threading.Thread(target=waiting, daemon=True)
        t.start()
        _wait_until(lambda: server._methods.in_flight >= 1, "the first call never reached the ps", 60.0)
        with pytest.raises(tf.errors.DeadlineExceededError):
            run(1, timeout=1.0)
        assert _came_true(lambda: server._methods.in_flight == 1, CANCEL_WAIT_S), "the abandoned call still runs"
        assert t.is_alive() and not outcome, outcome   # the other call still waits
        g2, enqueue2, value2, _, _ = _queue_ops()
        with tf.Session(server.target, graph=g2, config=tf.ConfigProto(device_filters=["/job:ps"])) as sess:
            sess.run(enqueue2, {value2: 7.0})
        t.join(30)
        assert outcome == [7.0]
    finally:
        client.close()
