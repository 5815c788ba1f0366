"""Accumulators (dense and sparse) and tf.train.SyncReplicasOptimizer in one process, against TF 1.15.

Oracles: numpy for the averaged gradients (sparse: TF's per-row averaging over the gradients that had the
row); TF 1.15's documented rules (stale gradients dropped, `set_global_step` sets even a smaller step,
`get_init_tokens_op` refuses too few tokens, the hook needs `apply_gradients` first). The cross-process
behaviour is in tests/trainer/distributed/test_sync_replicas.py."""
import threading
import time

import numpy as np
import pytest

import tensorfleet as tf

WAIT = 60


@pytest.fixture
def graph():
    g = tf.Graph()
    with g.as_default():
        yield g


def test_sparse_accumulator_averages_each_row_over_the_gradients_that_had_it(graph):
    acc = tf.SparseConditionalAccumulator(tf.float32, shape=[5, 2])
    idx, vals, step = tf.placeholder(tf.int64, [None]), tf.placeholder(tf.float32, [None, 2]), \
        tf.placeholder(tf.int64, [])
    apply = acc.apply_grad(idx, vals, grad_shape=[5, 2], local_step=step)
    take_idx, take_vals, take_shape = acc.take_grad(2)
    a_rows, a_vals = [0, 3], np.array([[1, 2], [3, 4]], np.float32)
    b_rows, b_vals = [3, 4], np.array([[5, 6], [7, 8]], np.float32)
    with tf.Session() as s:
        s.run(apply, {idx: a_rows, vals: a_vals, step: 0})
        s.run(apply, {idx: b_rows, vals: b_vals, step: 0})
        assert s.run(acc.num_accumulated()) == 2
        got_idx, got_vals, got_shape = s.run([take_idx, take_vals, take_shape])
        dense = {0: a_vals[0], 3: (a_vals[1] + b_vals[0]) / 2, 4: b_vals[1]}  # row 3 twice: the mean of both
        np.testing.assert_array_equal(got_idx, sorted(dense))
        np.testing.assert_allclose(got_vals, [dense[r] for r in sorted(dense)])
        np.testing.assert_array_equal(got_shape, [5, 2])
        s.run(apply, {idx: [1], vals: [[9, 9]], step: 0})  # the take moved the accumulator to step 1: stale
        assert s.run(acc.num_accumulated()) == 0
        assert s.run(acc.num_dropped_gradients()) == 1


def test_sparse_accumulator_checks_name_the_accumulator(graph):
    acc = tf.SparseConditionalAccumulator(tf.float32, shape=[3, 2], name="emb_acc")
    idx, vals = tf.placeholder(tf.int64, None), tf.placeholder(tf.float32, None)
    apply = acc.apply_grad(idx, vals, grad_shape=[3, 2])
    with tf.Session() as s:
        with pytest.raises(tf.errors.InvalidArgumentError, match="emb_acc.*|exceeds"):
            s.run(apply, {idx: [7], vals: [[1, 1]]})  # row 7 of 3
        with pytest.raises(tf.errors.InvalidArgumentError, match="values dim 1 to be 2"):
            s.run(apply, {idx: [0], vals: [[1, 1, 1]]})
        with pytest.raises(tf.errors.InvalidArgumentError, match="non-empty input values"):
            s.run(apply, {idx: [0, 1], vals: [[1, 1]]})
        assert s.run(acc.num_accumulated()) == 0


def test_set_global_step_sets_even_a_smaller_step_and_drops_are_counted(graph):
    acc = tf.ConditionalAccumulator(tf.float32, shape=[2])
    g, step, new = tf.placeholder(tf.float32, [2]), tf.placeholder(tf.int32, []), tf.placeholder(tf.int32, [])
    apply, num, dropped = acc.apply_grad(g, local_step=step), acc.num_accumulated(), acc.num_dropped_gradients()
    set_step = acc.set_global_step(new)  # an int32 step (a typical global step) is cast, as TF does
    with tf.Session() as s:
        s.run(set_step, {new: 5})
        s.run(apply, {g: [1, 1], step: 3})
        s.run(apply, {g: [1, 1], step: 4})
        assert (s.run(num), s.run(dropped)) == (0, 2)
        s.run(set_step, {new: 2})  # TF 1.15 warns and still sets it
        s.run(apply, {g: [1, 1], step: 3})
        assert (s.run(num), s.run(dropped)) == (1, 2)


def test_cancel_takes_fails_a_blocked_take_until_the_next_set_global_step(graph):
    acc = tf.ConditionalAccumulator(tf.float32, shape=[])
    take, cancel = acc.take_grad(1), acc.cancel_takes()
    apply, reset = acc.apply_grad(4.0, local_step=0), acc.set_global_step(0)
    with tf.Session() as s:
        errors = []

        def blocked():
            try:
                s.run(take)
            except tf.errors.OpError as e:
                errors.append(e)
        t = threading.Thread(target=blocked, daemon=True)
        t.start()
        s.run(cancel)
        t.join(WAIT)
        assert not t.is_alive() and isinstance(errors[0], tf.errors.CancelledError), errors
        with pytest.raises(tf.errors.CancelledError, match="cancel"):  # sticky: a later take that would block
            s.run(take, options=tf.RunOptions(timeout_in_ms=WAIT * 1000))
        s.run(reset)
        s.run(apply)
        assert s.run(take) == 4.0


def _model(replicas=1, total=None):
    gs = tf.train.get_or_create_global_step()
    v = tf.Variable([1.0, 2.0], name="v")
    x = tf.placeholder(tf.float32, [2])
    opt = tf.train.SyncReplicasOptimizer(tf.train.GradientDescentOptimizer(0.5), replicas_to_aggregate=replicas,
                                         total_num_replicas=total)
    return gs, v, x, opt, opt.minimize(tf.reduce_sum(v * x), global_step=gs)


def test_sync_optimizer_argument_errors_follow_tf(graph):
    gs, v, x, _, _ = _model()
    opt = tf.train.SyncReplicasOptimizer(tf.train.GradientDescentOptimizer(0.1), replicas_to_aggregate=2)
    with pytest.raises(ValueError, match="after apply_gradients"):
        opt.get_chief_queue_runner()
    with pytest.raises(ValueError, match="apply_gradient should be called"):
        opt.make_session_run_hook(True).begin()
    with pytest.raises(ValueError, match="Global step is required"):
        opt.minimize(tf.reduce_sum(v * x))
    backup = tf.train.SyncReplicasOptimizer(tf.train.GradientDescentOptimizer(0.1), replicas_to_aggregate=4,
                                            total_num_replicas=2, name="more_than_replicas")
    backup.minimize(tf.reduce_sum(v * x), global_step=gs)
    with pytest.raises(ValueError, match="Too few tokens"):
        backup.get_init_tokens_op(num_tokens=1)  # 4 to aggregate from 2 replicas needs 2 tokens up front


def test_sync_optimizer_in_one_session_averages_pushes_and_its_chief_thread_stops_promptly(graph):
    gs, v, x, opt, train = _model(replicas=2)
    qr, tokens = opt.get_chief_queue_runner(), opt.get_init_tokens_op()
    local = [lv for lv in tf.local_variables() if "sync_rep_local_step" in lv.op.name]
    assert len(local) == 1 and local[0] not in tf.global_variables()
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        s.run(opt.chief_init_op)
        s.run(tokens)
        coord = tf.train.Coordinator()
        threads = qr.create_threads(s, coord=coord, daemon=True, start=True)
        assert s.run(train, {x: [1.0, 1.0]}) == 0 and s.run(train, {x: [3.0, 5.0]}) == 0  # initial tokens
        deadline = time.monotonic() + WAIT
        while s.run(gs) < 1:
            assert time.monotonic() < deadline
            time.sleep(0.01)
        np.testing.assert_allclose(s.run(v), np.array([1.0, 2.0]) - 0.5 * np.array([2.0, 3.0]))
        assert s.run(opt.stale_gradients()) == 0
        coord.request_stop()  # the queue runner is blocked in take_grad: its cancel op releases it
        t0 = time.monotonic()
        coord.join(threads, stop_grace_period_secs=WAIT)
        assert time.monotonic() - t0 < 10


def test_monitored_session_with_the_sync_hook_stops_at_the_last_step(graph):
    gs, v, x, opt, train = _model(replicas=1)
    hooks = [tf.train.StopAtStepHook(last_step=5), opt.make_session_run_hook(is_chief=True)]
    final = tf.train.FinalOpsHook(gs)
    t0 = time.monotonic()
    runs = 0
    with tf.train.MonitoredTrainingSession(hooks=hooks + [final], log_step_count_steps=None,
                                           save_summaries_steps=None) as sess:
        while not sess.should_stop():
            sess.run(train, {x: [1.0, 1.0]})
            runs += 1
    assert final.final_ops_values == 5 and runs >= 5
    assert time.monotonic() - t0 < WAIT  # no 120 s stop grace period: the chief's take was cancelled


def test_variable_averages_are_applied_after_each_synchronised_step(graph):
    gs = tf.train.get_or_create_global_step()
    v = tf.Variable([1.0, 2.0], name="v")
    x = tf.placeholder(tf.float32, [2])
    ema = tf.train.ExponentialMovingAverage(0.9)
    opt = tf.train.SyncReplicasOptimizer(tf.train.GradientDescentOptimizer(0.5), replicas_to_aggregate=1,
                                         variable_averages=ema, variables_to_average=[v])
    train = opt.minimize(tf.reduce_sum(v * x), global_step=gs)
    qr, tokens = opt.get_chief_queue_runner(), opt.get_init_tokens_op()
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        s.run([opt.chief_init_op, tokens])
        coord = tf.train.Coordinator()
        threads = qr.create_threads(s, coord=coord, daemon=True, start=True)
        s.run(train, {x: [2.0, 4.0]})
        deadline = time.monotonic() + WAIT
        while s.run(gs) < 1:
            assert time.monotonic() < deadline
            time.sleep(0.01)
        v1 = np.array([1.0, 2.0]) - 0.5 * np.array([2.0, 4.0])
        np.testing.assert_allclose(s.run(v), v1)
        shadow = np.array([1.0, 2.0]) * 0.9 + v1 * 0.1  # TF: shadow -= (1 - decay) * (shadow - variable)
        deadline = time.monotonic() + WAIT
        while not np.allclose(s.run(ema.average(v)), shadow, rtol=1e-6):  # runs right after the tokens
            assert time.monotonic() < deadline, s.run(ema.average(v))
            time.sleep(0.01)
        coord.request_stop()
        coord.join(threads, stop_grace_period_secs=WAIT)
