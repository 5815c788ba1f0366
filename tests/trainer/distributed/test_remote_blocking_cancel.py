"""A dequeue blocked on another task (a FIFOQueue on the ps, reached over the bulk/gRPC wire) is cancelled,
on that task, when the step's RunOptions(timeout_in_ms) passes and when the session closes.

Oracle: if the blocked op were still waiting on the ps it would take the next element enqueued there, so a
later dequeue of a freshly enqueued value must get exactly that value; and nothing stays in flight on the ps.
"""
import threading
import time

import pytest

import tensorfleet as tf
from dist_cluster import free_ports


@pytest.fixture
def ps_and_worker(local_servers):
    ps_port, w_port = free_ports(2)
    spec = {"ps": [f"127.0.0.1:{ps_port}"], "worker": [f"127.0.0.1:{w_port}"]}
    ps = tf.train.Server(spec, job_name="ps", task_index=0)
    worker = tf.train.Server(spec, job_name="worker", task_index=0)
    local_servers.extend([worker, ps])
    g = tf.Graph()
    with g.as_default():
        with tf.device("/job:ps/task:0"):
            q = tf.FIFOQueue(10, tf.float32, shapes=[[]], shared_name="q", name="q")
            value = tf.placeholder(tf.float32, [])
            enqueue = q.enqueue(value)
            dequeue = q.dequeue()
    return ps, worker, g, enqueue, value, dequeue


def _wait_until(cond, what, timeout=30.0):
    deadline = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < deadline, what
        time.sleep(0.01)


def test_step_timeout_cancels_the_dequeue_on_the_ps(ps_and_worker):
    ps, worker, g, enqueue, value, dequeue = ps_and_worker
    config = tf.ConfigProto(device_filters=["/job:ps", "/job:worker/task:0"])
    with tf.Session(worker.target, graph=g, config=config) as sess:
        with pytest.raises(tf.errors.DeadlineExceededError) as err:
            sess.run(dequeue, options=tf.RunOptions(timeout_in_ms=300))
        assert "/job:ps/replica:0/task:0" in str(err.value)
        _wait_until(lambda: ps._methods.in_flight == 0, "the dequeue still runs on the ps")
        sess.run(enqueue, {value: 7.0})
        assert sess.run(dequeue, options=tf.RunOptions(timeout_in_ms=10000)) == 7.0


def test_session_close_cancels_the_dequeue_on_the_ps(ps_and_worker):
    ps, worker, g, enqueue, value, dequeue = ps_and_worker
    config = tf.ConfigProto(device_filters=["/job:ps", "/job:worker/task:0"])
    sess = tf.Session(worker.target, graph=g, config=config)
    sess.run(enqueue, {value: 1.0})
    assert sess.run(dequeue) == 1.0   # plans registered; the queue works
    outcome = []

    def blocked():
        try:
            outcome.append(sess.run(dequeue))
        except Exception as e:  # noqa: BLE001 - the test asserts the class
            outcome.append(e)

    t = threading.Thread(target=blocked, daemon=True)
    t.start()
    _wait_until(lambda: ps._methods.in_flight >= 1, "the dequeue never reached the ps")
    sess.close()
    t.join(30)
    assert not t.is_alive(), "the dequeue was not cancelled"
    assert isinstance(outcome[0], tf.errors.CancelledError), outcome
    _wait_until(lambda: ps._methods.in_flight == 0, "the dequeue still runs on the ps")
    with tf.Session(worker.target, graph=g, config=config) as other:   # the ps's queue is still usable
        other.run(enqueue, {value: 2.0})
        assert other.run(dequeue, options=tf.RunOptions(timeout_in_ms=10000)) == 2.0
