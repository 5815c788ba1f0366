"""Queues, ConditionalAccumulator, Coordinator and QueueRunner against TF 1.15's documented semantics.

Blocking cases use handshakes (events, queue sizes) and bounded timeouts, never bare sleeps for ordering.
"""
import threading
import time

import numpy as np
import pytest

import tensorfleet as tf

WAIT = 30.0  # generous bound for a busy machine


@pytest.fixture
def graph():
    g = tf.Graph()
    with g.as_default():
        yield g


def test_fifo_order_size_and_closed_empty_raises_out_of_range(graph):
    q = tf.FIFOQueue(10, tf.int32, shapes=[[]])
    x = tf.placeholder(tf.int32, [None])
    enq, deq, size, closed = q.enqueue_many([x]), q.dequeue(), q.size(), q.is_closed()
    with tf.Session() as s:
        s.run(enq, {x: [5, 6, 7]})
        assert s.run(size) == 3
        assert [int(s.run(deq)) for _ in range(3)] == [5, 6, 7]
        assert not s.run(closed)
        s.run(q.close())
        assert s.run(closed)
        with pytest.raises(tf.errors.OutOfRangeError):
            s.run(deq)
        with pytest.raises(tf.errors.CancelledError):
            s.run(enq, {x: [1]})


def test_dequeue_many_and_up_to_on_closed_queue(graph):
    q = tf.FIFOQueue(10, [tf.float32, tf.int32], shapes=[[2], []])
    a, b = tf.placeholder(tf.float32, [None, 2]), tf.placeholder(tf.int32, [None])
    enq = q.enqueue_many([a, b])
    many, up_to = q.dequeue_many(2), q.dequeue_up_to(4)
    assert many[0].shape.as_list() == [2, 2]
    with tf.Session() as s:
        s.run(enq, {a: np.arange(10, dtype=np.float32).reshape(5, 2), b: [0, 1, 2, 3, 4]})
        va, vb = s.run(many)
        np.testing.assert_array_equal(va, [[0, 1], [2, 3]])
        np.testing.assert_array_equal(vb, [0, 1])
        s.run(q.close())
        with pytest.raises(tf.errors.OutOfRangeError):  # 3 left < 4, closed: dequeue_many fails ...
            s.run(q.dequeue_many(4))
        va, vb = s.run(up_to)  # ... dequeue_up_to returns what is left
        np.testing.assert_array_equal(vb, [2, 3, 4])
        with pytest.raises(tf.errors.OutOfRangeError):
            s.run(up_to)


def test_blocking_dequeue_honours_timeout_in_ms(graph):
    q = tf.FIFOQueue(2, tf.float32, shapes=[[]])
    deq = q.dequeue()
    enq = q.enqueue([1.0])
    with tf.Session() as s:
        t0 = time.monotonic()
        with pytest.raises(tf.errors.DeadlineExceededError):
            s.run(deq, options=tf.RunOptions(timeout_in_ms=100))
        assert time.monotonic() - t0 < WAIT
        s.run(enq)
        s.run(enq)
        with pytest.raises(tf.errors.DeadlineExceededError):  # full queue: enqueue blocks too
            s.run(enq, options=tf.RunOptions(timeout_in_ms=100))
        assert s.run(q.size()) == 2


def test_dequeue_in_one_thread_waits_for_enqueue_run_by_another(graph):
    q = tf.FIFOQueue(5, tf.int32, shapes=[[]])
    deq, enq, size = q.dequeue(), q.enqueue([42]), q.size()
    got, errs = [], []
    with tf.Session() as s:
        def consumer():
            try:
                got.append(int(s.run(deq, options=tf.RunOptions(timeout_in_ms=int(WAIT * 1000)))))
            except Exception as e:  # noqa: BLE001
                errs.append(e)
        t = threading.Thread(target=consumer)
        t.start()
        time.sleep(0.05)
        s.run(enq)  # same session, this thread
        t.join(WAIT)
        assert not t.is_alive() and not errs and got == [42]
        assert s.run(size) == 0


def test_session_close_cancels_blocked_dequeue(graph):
    q = tf.FIFOQueue(5, tf.int32, shapes=[[]])
    deq = q.dequeue()
    s = tf.Session()
    s.run(q.size())
    errs, started = [], threading.Event()

    def consumer():
        started.set()
        try:
            s.run(deq)
        except Exception as e:  # noqa: BLE001
            errs.append(e)
    t = threading.Thread(target=consumer)
    t.start()
    started.wait(WAIT)
    time.sleep(0.1)
    s.close()
    t.join(WAIT)
    assert not t.is_alive()
    assert len(errs) == 1 and isinstance(errs[0], tf.errors.CancelledError)


def test_close_without_cancel_lets_pending_enqueue_finish_with_cancel_fails_it(graph):
    q = tf.FIFOQueue(1, tf.int32, shapes=[[]])
    enq, deq = q.enqueue([1]), q.dequeue()
    with tf.Session() as s:
        s.run(enq)
        errs, done = [], []

        def producer():
            try:
                s.run(enq, options=tf.RunOptions(timeout_in_ms=int(WAIT * 1000)))
                done.append(1)
            except Exception as e:  # noqa: BLE001
                errs.append(e)
        t = threading.Thread(target=producer)
        t.start()
        time.sleep(0.1)
        s.run(q.close())
        assert s.run(deq) == 1  # makes room: the pending enqueue (admitted before close) completes
        t.join(WAIT)
        assert done == [1] and not errs
    g2 = tf.Graph()
    with g2.as_default():
        q = tf.FIFOQueue(1, tf.int32, shapes=[[]])
        enq, cancel = q.enqueue([1]), q.close(cancel_pending_enqueues=True)
        with tf.Session() as s:
            s.run(enq)
            errs2 = []

            def producer2():
                try:
                    s.run(enq, options=tf.RunOptions(timeout_in_ms=int(WAIT * 1000)))
                except Exception as e:  # noqa: BLE001
                    errs2.append(e)
            t = threading.Thread(target=producer2)
            t.start()
            time.sleep(0.1)
            s.run(cancel)
            t.join(WAIT)
            assert len(errs2) == 1 and isinstance(errs2[0], tf.errors.CancelledError)


def test_random_shuffle_queue_keeps_min_after_dequeue_and_is_a_permutation(graph):
    q = tf.RandomShuffleQueue(100, min_after_dequeue=5, dtypes=tf.int32, shapes=[[]], seed=3)
    x = tf.placeholder(tf.int32, [None])
    enq, deq, size = q.enqueue_many([x]), q.dequeue(), q.size()
    with tf.Session() as s:
        s.run(enq, {x: np.arange(20)})
        first = [int(s.run(deq)) for _ in range(15)]
        assert s.run(size) == 5
        with pytest.raises(tf.errors.DeadlineExceededError):  # would go below min_after_dequeue
            s.run(deq, options=tf.RunOptions(timeout_in_ms=100))
        s.run(q.close())
        rest = [int(s.run(deq)) for _ in range(5)]  # closed: min_after_dequeue no longer holds
        assert sorted(first + rest) == list(range(20))
        assert first != list(range(15))


def test_padding_fifo_queue_pads_to_largest(graph):
    q = tf.PaddingFIFOQueue(10, tf.int32, shapes=[[None]])
    x = tf.placeholder(tf.int32, [None])
    enq, deq = q.enqueue([x]), q.dequeue_many(2)
    with tf.Session() as s:
        s.run(enq, {x: [1, 2, 3]})
        s.run(enq, {x: [4]})
        np.testing.assert_array_equal(s.run(deq), [[1, 2, 3], [4, 0, 0]])


def test_enqueue_shape_mismatch_names_queue(graph):
    q = tf.FIFOQueue(10, tf.float32, shapes=[[2]])
    x = tf.placeholder(tf.float32, None)
    with tf.Session() as s:
        with pytest.raises(tf.errors.InvalidArgumentError, match="fifo_queue"):
            s.run(q.enqueue([x]), {x: [1.0, 2.0, 3.0]})


def test_conditional_accumulator_averages_and_drops_stale(graph):
    acc = tf.ConditionalAccumulator(tf.float32, shape=[2])
    g, step = tf.placeholder(tf.float32, [2]), tf.placeholder(tf.int64, [])
    apply, take, num = acc.apply_grad(g, local_step=step), acc.take_grad(2), acc.num_accumulated()
    with tf.Session() as s:
        s.run(apply, {g: [1, 2], step: 0})
        s.run(apply, {g: [3, 6], step: 0})
        assert s.run(num) == 2
        np.testing.assert_allclose(s.run(take), [2, 4])
        assert s.run(num) == 0
        s.run(apply, {g: [100, 100], step: 0})  # stale: the take moved the accumulator to step 1
        assert s.run(num) == 0
        s.run(acc.set_global_step(5))
        s.run(apply, {g: [9, 9], step: 4})  # stale
        s.run(apply, {g: [1, 1], step: 5})
        assert s.run(num) == 1
        with pytest.raises(tf.errors.DeadlineExceededError):  # take_grad(2) blocks with 1 accumulated
            s.run(take, options=tf.RunOptions(timeout_in_ms=100))
        with pytest.raises(tf.errors.InvalidArgumentError):
            s.run(acc.take_grad(0))


def test_coordinator_stop_join_and_exception():
    coord = tf.train.Coordinator()
    assert not coord.should_stop()
    ready = threading.Event()

    def worker():
        with coord.stop_on_exception():
            ready.set()
            while not coord.should_stop():
                coord.wait_for_stop(0.01)

    def failing():
        with coord.stop_on_exception():
            ready.wait(WAIT)
            raise ValueError("boom")
    threads = [threading.Thread(target=worker), threading.Thread(target=failing)]
    for t in threads:
        t.start()
    with pytest.raises(ValueError, match="boom"):
        coord.join(threads, stop_grace_period_secs=WAIT)
    assert coord.should_stop() and coord.joined


def test_coordinator_out_of_range_is_clean_and_stragglers_reported():
    coord = tf.train.Coordinator()
    with coord.stop_on_exception():
        raise tf.errors.OutOfRangeError(None, None, "done")
    assert coord.should_stop()
    coord.raise_requested_exception()  # nothing to raise
    coord.join([])
    coord2 = tf.train.Coordinator()
    release = threading.Event()
    t = threading.Thread(target=release.wait, args=(WAIT,))
    t.start()
    coord2.request_stop()
    with pytest.raises(RuntimeError, match="threads still running"):
        coord2.join([t], stop_grace_period_secs=0.05)
    release.set()
    t.join(WAIT)


def test_queue_runner_fills_queue_closes_at_end_of_input_and_stops_with_coordinator(graph):
    src = tf.FIFOQueue(100, tf.int32, shapes=[[]])
    x = tf.placeholder(tf.int32, [None])
    fill = src.enqueue_many([x])
    dst = tf.FIFOQueue(4, tf.int32, shapes=[[]])
    qr = tf.train.QueueRunner(dst, [dst.enqueue([src.dequeue()])] * 2)
    tf.train.add_queue_runner(qr)
    out = dst.dequeue()
    with tf.Session() as s:
        s.run(fill, {x: np.arange(30)})
        s.run(src.close())
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(s, coord=coord)
        assert len(threads) == 3  # two enqueue threads + the close-on-stop thread
        got = []
        with pytest.raises(tf.errors.OutOfRangeError):  # src runs dry -> dst closed -> dequeue ends
            while True:
                got.append(int(s.run(out, options=tf.RunOptions(timeout_in_ms=int(WAIT * 1000)))))
        assert sorted(got) == list(range(30))
        coord.request_stop()
        coord.join(threads, stop_grace_period_secs=WAIT)


def test_queue_runner_threads_stop_on_request_stop_with_full_queue(graph):
    q = tf.FIFOQueue(2, tf.float32, shapes=[[]])
    qr = tf.train.QueueRunner(q, [q.enqueue([1.0])])
    with tf.Session() as s:
        coord = tf.train.Coordinator()
        threads = qr.create_threads(s, coord=coord, start=True)
        deadline = time.monotonic() + WAIT
        while s.run(q.size()) < 2 and time.monotonic() < deadline:
            time.sleep(0.01)
        coord.request_stop()  # the enqueue thread is blocked on the full queue: the cancel op frees it
        coord.join(threads, stop_grace_period_secs=WAIT)
        assert not any(t.is_alive() for t in threads)
