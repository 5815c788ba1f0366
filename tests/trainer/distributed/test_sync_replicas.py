"""Queues, accumulators and tf.train.SyncReplicasOptimizer across worker processes over grpc://.

One cluster of real processes on 127.0.0.1 (1 ps + 3 workers, `run_task.py`) serves the module; the test
process is the client of each worker's master (`tf.Session("grpc://worker...")`), so every queue or
accumulator on the ps is reached by sessions of different worker processes, as in between-graph
replication. Each test starts from `tf.Session.reset` (variables, queues and accumulators cleared).

Oracles: FIFO order; numpy for the averaged gradient steps (loss = sum(v * x) + w * c, so the gradients
are x and c); TF 1.15's documented staleness rule (a gradient whose local step is older than the
accumulator's step is dropped) for which pushes count."""
import json
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

import tensorfleet as tf
from dist_cluster import HERE, Cluster, task_env
from sync_graph import LR, sync_graph

WAIT = 60  # bound on every wait for a thread or a step (generous: a busy 2-core machine)


@pytest.fixture(scope="module")
def cluster():
    c = Cluster({"ps": 1, "worker": 3})
    try:
        c.start_all()
        yield c
    finally:
        c.stop()


@pytest.fixture
def spec(cluster, monkeypatch):
    monkeypatch.setenv("TENSORFLEET_STARTUP_SECONDS", "30")
    tf.Session.reset("grpc://" + cluster.spec["worker"][0])
    return tf.train.ClusterSpec(cluster.spec)


def _session(spec, i, graph):
    config = tf.ConfigProto(device_filters=["/job:ps", f"/job:worker/task:{i}"])
    return tf.Session("grpc://" + spec.job_tasks("worker")[i], graph=graph, config=config)


def _run_in_threads(calls) -> list:
    """Runs each () -> value in its own thread; returns the values (re-raises the first error)."""
    out, errs = [None] * len(calls), []

    def go(k, fn):
        try:
            out[k] = fn()
        except Exception as e:  # noqa: BLE001
            errs.append(e)
    threads = [threading.Thread(target=go, args=(k, fn), daemon=True) for k, fn in enumerate(calls)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(WAIT)
        assert not t.is_alive(), "a step did not finish"
    if errs:
        raise errs[0]
    return out


def test_queue_on_the_ps_is_shared_by_sessions_of_two_worker_processes(spec):
    sessions, ops = [], []
    for i in range(2):
        g = tf.Graph()
        with g.as_default(), tf.device("/job:ps/task:0"):
            q = tf.FIFOQueue(10, tf.int32, shapes=[], shared_name="shared_q")
            ops.append((q.enqueue_many([[10 * i + 1, 10 * i + 2]]), q.dequeue(), q.size()))
        sessions.append(_session(spec, i, g))
    try:
        sessions[0].run(ops[0][0])
        sessions[1].run(ops[1][0])
        assert sessions[0].run(ops[0][2]) == sessions[1].run(ops[1][2]) == 4
        got = [sessions[k % 2].run(ops[k % 2][1]) for k in range(4)]
        assert got == [1, 2, 11, 12]  # one FIFO: worker 0's elements first, taken by both sessions in turn
    finally:
        for s in sessions:
            s.close()


def _blocking_ops(kind):
    """(put 7.0, blocking get) on a shared queue or accumulator on the ps."""
    with tf.device("/job:ps/task:0"):
        if kind == "queue":
            q = tf.FIFOQueue(10, tf.float32, shapes=[], shared_name="blocking_q")
            return q.enqueue(7.0), q.dequeue()
        acc = tf.ConditionalAccumulator(tf.float32, shape=[], shared_name="blocking_acc")
        return acc.apply_grad(7.0, local_step=1000), acc.take_grad(1)  # (each take advances its step by 1)


@pytest.mark.parametrize("kind", ["queue", "accumulator"])
def test_blocked_get_over_grpc_honours_the_deadline_and_close_cancels_only_its_own_session(spec, kind):
    graphs, ops = [], []
    for _ in range(3):
        g = tf.Graph()
        with g.as_default():
            ops.append(_blocking_ops(kind))
        graphs.append(g)
    s0, s1, s2 = (_session(spec, i, g) for i, g in enumerate(graphs))
    try:
        with pytest.raises(tf.errors.DeadlineExceededError, match="/job:ps/replica:0/task:0"):
            s0.run(ops[0][1], options=tf.RunOptions(timeout_in_ms=300))  # raised on the ps, naming it
        bounded = tf.RunOptions(timeout_in_ms=WAIT * 1000)
        s1.run(ops[1][0])
        assert s1.run(ops[1][1], options=bounded) == 7.0  # the timed-out get took nothing

        errors = []

        def blocked():
            try:
                s2.run(ops[2][1])
            except Exception as e:  # noqa: BLE001
                errors.append(e)
        t = threading.Thread(target=blocked, daemon=True)
        t.start()
        time.sleep(1.0)  # let it block on the ps (the assertions below hold either way)
        s2.close()
        t.join(WAIT)
        assert not t.is_alive() and errors, "the blocked get was not cancelled by close"
        assert isinstance(errors[0], (tf.errors.CancelledError, RuntimeError)), errors
        # the queue/accumulator itself is fine: other sessions' partitions on the ps were not cancelled
        s1.run(ops[1][0])
        assert s0.run(ops[0][1], options=bounded) == 7.0
    finally:
        for s in (s0, s1, s2):
            s.close()


class _SyncCluster:
    """`workers` client sessions, the chief's init and queue runner, as the Supervisor style runs them."""

    def __init__(self, spec, workers, aggregate):
        self.models = [sync_graph(spec, i, workers, aggregate) for i in range(workers)]
        self.sessions = [_session(spec, i, m["graph"]) for i, m in enumerate(self.models)]
        chief, s0 = self.models[0], self.sessions[0]
        s0.run(chief["init"])
        s0.run(chief["opt"].chief_init_op)
        for m, s in zip(self.models[1:], self.sessions[1:]):
            s.run(m["opt"].local_step_init_op)
        s0.run(chief["tokens"])
        self.coord = tf.train.Coordinator()
        self.threads = chief["qr"].create_threads(s0, coord=self.coord, daemon=True, start=True)

    def step(self, who, xs, cs) -> list:
        """Workers `who` each run the train op once (concurrently) with their x and c; their tokens."""
        return _run_in_threads([lambda k=k, i=i: self.sessions[i].run(
            self.models[i]["train"], {self.models[i]["x"]: xs[k], self.models[i]["c"]: cs[k]})
            for k, i in enumerate(who)])

    def wait_global_step(self, n):
        deadline = time.monotonic() + WAIT
        while self.read("gs") < n:
            assert time.monotonic() < deadline, f"global step stuck at {self.read('gs')}, wanted {n}"
            time.sleep(0.02)

    def read(self, name, i=0):
        return self.sessions[i].run(self.models[i][name])

    def close(self):
        self.coord.request_stop()
        t0 = time.monotonic()
        self.coord.join(self.threads, stop_grace_period_secs=WAIT, ignore_live_threads=True)
        joined = time.monotonic() - t0
        alive = [t.name for t in self.threads if t.is_alive()]
        for s in self.sessions:
            s.close()
        return joined, alive


def test_sync_steps_average_two_worker_processes_and_drop_stale_pushes(spec):
    sc = _SyncCluster(spec, workers=2, aggregate=2)
    try:
        v0, w0 = sc.read("v"), sc.read("w")
        xa, xb = np.array([1.0, 2.0, 3.0], np.float32), np.array([3.0, 0.0, -1.0], np.float32)
        # step 0: both push at local step 0; the 2 initial tokens let them return at once
        assert sc.step([0, 1], [xa, xb], [1.0, 3.0]) == [0, 0]
        sc.wait_global_step(1)
        v1 = v0 - LR * (xa + xb) / 2
        np.testing.assert_allclose(sc.read("v", 1), v1, rtol=1e-6)
        np.testing.assert_allclose(sc.read("w", 1), w0 - LR * 2.0, rtol=1e-6)
        # their local step is still 0 (the initial tokens held step 0): both pushes are stale, dropped and
        # counted; each takes one of the 2 tokens the chief released after step 0 (holding step 1)
        assert sc.step([0, 1], [xa * 100, xb * 100], [50.0, 50.0]) == [1, 1]
        assert sc.read("stale") == 2
        np.testing.assert_allclose(sc.read("v", 1), v1, rtol=1e-6)
        assert sc.read("gs") == 1
        # at local step 1 they count again: the next step applies their mean
        assert sc.step([0, 1], [xb, xb], [1.0, 1.0]) == [2, 2]
        sc.wait_global_step(2)
        np.testing.assert_allclose(sc.read("v", 0), v1 - LR * xb, rtol=1e-6)
        np.testing.assert_allclose(sc.read("w", 1), w0 - LR * 3.0, rtol=1e-6)
        assert sc.read("stale") == 2
    finally:
        joined, alive = sc.close()
    assert not alive and joined < 30, "the chief's queue runner did not stop promptly (blocked take_grad)"


def test_backup_worker_gradient_is_dropped_and_counted_and_all_three_workers_go_on(spec):
    sc = _SyncCluster(spec, workers=3, aggregate=2)
    try:
        v0 = sc.read("v")
        xa, xb, xc = (np.array(a, np.float32) for a in ([1, 0, 0], [0, 1, 0], [0, 0, 1]))
        sc.step([0, 1], [xa, xb], [0.0, 0.0])  # the 2 initial tokens: workers 0 and 1 go on at once
        sc.wait_global_step(1)  # 2 of 3 aggregated: the step is applied without the backup worker
        np.testing.assert_allclose(sc.read("v", 2), v0 - LR * (xa + xb) / 2, rtol=1e-6)
        # the backup worker's gradient (local step 0) arrives late: dropped, counted, and it still gets a
        # token (the chief releases total_num_replicas = 3 per step)
        assert sc.step([2], [xc * 100], [0.0]) == [1]
        assert sc.read("stale", 2) == 1
        np.testing.assert_allclose(sc.read("v", 0), v0 - LR * (xa + xb) / 2, rtol=1e-6)
        # the two others take the remaining 2 tokens of step 1 (their own pushes were for step 0: stale too)
        assert sc.step([0, 1], [xa, xb], [0.0, 0.0]) == [1, 1]
        assert sc.read("stale") == 3
        # now all three are at local step 1: any 2 of them make step 1
        sc.step([1, 2], [xb, xc], [0.0, 0.0])
        sc.wait_global_step(2)
        np.testing.assert_allclose(sc.read("v", 1), v0 - LR * (xa + xb) / 2 - LR * (xb + xc) / 2, rtol=1e-6)
    finally:
        joined, alive = sc.close()
    assert not alive and joined < 30


def test_workers_leaving_after_a_clean_end_give_back_the_token_the_chiefs_last_step_waits_for(spec):
    """At the end of a run with a backup worker, the other workers can take every token: a worker whose step
    began two global steps before the last runs one step more (StopAtStepHook checks the step it read at the
    start of a run). The chief's last step then waits for a token no one will release (TF's blocks for good);
    here each worker's hook gives two back when its session ends cleanly."""
    sc = _SyncCluster(spec, workers=3, aggregate=2)
    x, c = np.ones(3, np.float32), 0.0
    try:
        assert sc.step([1, 2], [x, x], [c, c]) == [0, 0]  # the 2 initial tokens
        sc.wait_global_step(1)  # 3 tokens holding step 1
        assert sc.step([1, 2], [x, x], [c, c]) == [1, 1]  # stale pushes (local step 0); 1 token left
        assert sc.step([1], [x], [c]) == [1]  # a fresh push for step 1, the last token: the queue is empty
        done = []
        chief = threading.Thread(target=lambda: done.append(sc.step([0], [x], [c])), daemon=True)
        chief.start()  # its push (local step 0) is stale; its dequeue waits
        chief.join(1.0)
        assert chief.is_alive() and not done, "the chief's step returned without a token"
        for i in (1, 2):
            sc.models[i]["hook"].end(sc.sessions[i])
        chief.join(WAIT)
        assert done == [[1]], "the chief's last step stayed blocked after the other workers left"
        assert sc.read("gs") == 1 and sc.read("stale") == 3  # the tokens given back made no step
        assert sc.read("tokens_left") == 2 * 2 - 1  # two each; the chief's step took one
        sc.models[1]["hook"].end(sc.sessions[1])
        assert sc.read("tokens_left") == 3  # once per process
    finally:
        joined, alive = sc.close()
    assert not alive and joined < 30


def _leaving_client(spec, task, workers, mode) -> str:
    """Runs sync_leaving_client.py (a non-chief Supervisor-style client process) to its end; its output."""
    proc = subprocess.run([sys.executable, f"{HERE}/sync_leaving_client.py", json.dumps(spec.as_dict()), str(task),
                           str(workers), mode], env=task_env(), capture_output=True, text=True, timeout=WAIT * 2)
    assert proc.returncode == 0 and "READY" in proc.stdout, proc.stdout + proc.stderr
    return proc.stdout + proc.stderr


def test_a_non_chief_supervisor_gives_two_tokens_back_on_stop_or_else_at_its_process_exit(spec):
    """TF's mnist_replica.py (Supervisor style) never stops a non-chief's Supervisor: its process just ends. The
    tokens a leaving worker gives back come then, from `sv.stop()` if it is called, else at the process's exit;
    once either way. A session the script closed itself gives nothing (there is nothing left to run it on)."""
    sc = _SyncCluster(spec, workers=2, aggregate=2)
    try:
        assert sc.read("tokens_left") == 2  # the chief's initial tokens
        m = sc.models[1]
        sv = tf.train.Supervisor(graph=m["graph"], is_chief=False, local_init_op=m["opt"].local_step_init_op,
                                 ready_for_local_init_op=m["opt"].ready_for_local_init_op, recovery_wait_secs=0.2)
        config = tf.ConfigProto(device_filters=["/job:ps", "/job:worker/task:1"])
        sess = sv.prepare_or_wait_for_session("grpc://" + spec.job_tasks("worker")[1], config=config)
        try:
            sv.stop()
            assert sc.read("tokens_left") == 4
            sv.stop()
            assert sc.read("tokens_left") == 4  # once
        finally:
            sess.close()
        _leaving_client(spec, 1, 2, "exit")
        assert sc.read("tokens_left") == 6  # at the process's exit
        _leaving_client(spec, 1, 2, "stop")
        assert sc.read("tokens_left") == 8  # at stop(), and not again at the exit
        _leaving_client(spec, 1, 2, "closed")
        assert sc.read("tokens_left") == 8
    finally:
        joined, alive = sc.close()
    assert not alive and joined < 30
