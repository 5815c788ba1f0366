"""Hooks, Scaffold, SessionManager and MonitoredSession against TF 1.15's documented semantics.

Schedules are checked step by step (which global steps a hook acts on), restore and recovery against the
checkpoint files actually written, and every wait is bounded.
"""
import os
import re
import threading
import time

import pytest

import tensorfleet as tf

WAIT = 30.0


@pytest.fixture
def graph():
    g = tf.Graph()
    with g.as_default():
        yield g


def _model(lr=0.1):
    gs = tf.train.get_or_create_global_step()
    w = tf.Variable(1.0, name="w")
    loss = w * w
    train = tf.train.GradientDescentOptimizer(lr).minimize(loss, global_step=gs)
    return gs, w, loss, train


def _steps_saved(d):
    return sorted({int(m.group(1)) for f in os.listdir(d) for m in [re.match(r"model\.ckpt-(\d+)\.index$", f)] if m})


def test_stop_at_step_and_checkpoint_schedule_then_restore(graph, tmp_path):
    gs, w, loss, train = _model()
    seen = []
    with tf.train.MonitoredTrainingSession(checkpoint_dir=str(tmp_path), save_checkpoint_steps=2,
                                           save_summaries_steps=None, save_summaries_secs=None,
                                           hooks=[tf.train.StopAtStepHook(last_step=5)]) as s:
        while not s.should_stop():
            seen.append(int(s.run([train, gs])[1]))
    assert seen == [0, 1, 2, 3, 4]  # gs fetched in the same run as the increment: its value before
    assert _steps_saved(str(tmp_path)) == [0, 2, 4, 5]  # start, every 2 steps, end
    w5 = 1.0 * 0.8 ** 5
    g2 = tf.Graph()
    with g2.as_default():
        gs, w, loss, train = _model()
        final = tf.train.FinalOpsHook(gs)
        with tf.train.MonitoredTrainingSession(checkpoint_dir=str(tmp_path), save_checkpoint_secs=None,
                                               save_summaries_steps=None,
                                               hooks=[tf.train.StopAtStepHook(num_steps=2), final]) as s:
            first = s.run([gs, w])
            assert first[0] == 5 and abs(first[1] - w5) < 1e-6  # restored, not re-initialised
            n = 0
            while not s.should_stop():
                s.run(train)
                n += 1
        assert n == 2 and final.final_ops_values == 7  # num_steps counts from the restored step


def test_run_after_hook_requested_stop_raises_and_end_runs_final_ops(graph):
    gs, w, loss, train = _model()
    final = tf.train.FinalOpsHook(gs)
    s = tf.train.MonitoredSession(hooks=[tf.train.StopAtStepHook(last_step=3), final])
    while not s.should_stop():
        s.run(train)
    with pytest.raises(RuntimeError, match="should_stop"):
        s.run(train)
    s.close()
    assert final.final_ops_values == 3


def test_logging_tensor_hook_every_n_iter_and_at_end(graph):
    gs, w, loss, train = _model()
    every = tf.train.LoggingTensorHook({"step": gs}, every_n_iter=2)
    at_end = tf.train.LoggingTensorHook([gs], at_end=True)
    with tf.train.MonitoredSession(hooks=[every, at_end, tf.train.StopAtStepHook(last_step=5)]) as s:
        while not s.should_stop():
            s.run(train)
    assert [int(d["step"]) for d in every.logged] == [0, 2, 4]  # values read in runs 0, 2, 4 (before increment)
    assert [int(v) for d in at_end.logged for v in d.values()] == [5]


def test_nan_tensor_hook_raises_or_requests_stop():
    for fail in (True, False):
        with tf.Graph().as_default():
            x = tf.placeholder(tf.float32, [])
            tf.train.get_or_create_global_step()
            s = tf.train.MonitoredSession(hooks=[tf.train.NanTensorHook(x, fail_on_nan_loss=fail)])
            s.run(x, {x: 1.0})
            if fail:
                with pytest.raises(tf.train.NanLossDuringTrainingError):
                    s.run(x, {x: float("nan")})
            else:
                s.run(x, {x: float("nan")})
                assert s.should_stop()
            s.close()


def test_step_counter_hook_reports_every_n_steps(graph):
    gs, w, loss, train = _model()
    counter = tf.train.StepCounterHook(every_n_steps=2)
    with tf.train.MonitoredSession(hooks=[counter, tf.train.StopAtStepHook(last_step=7)]) as s:
        while not s.should_stop():
            s.run(train)
    assert [step for step, _ in counter.rates] == [3, 5, 7]  # first trigger (step 1) only starts the clock
    assert all(rate > 0 for _, rate in counter.rates)


def test_feed_fn_hook_feeds_and_conflict_with_user_feed(graph):
    x = tf.placeholder(tf.float32, [])
    y = x * 2
    tf.train.get_or_create_global_step()
    with tf.train.MonitoredSession(hooks=[tf.train.FeedFnHook(lambda: {x: 21.0})]) as s:
        assert s.run(y) == 42.0
        with pytest.raises(RuntimeError, match="Same tensor is fed"):
            s.run(y, {x: 1.0})


def test_user_hook_sees_results_and_can_stop(graph):
    gs, w, loss, train = _model()
    calls = []

    class Hook(tf.train.SessionRunHook):
        def begin(self):
            calls.append("begin")

        def after_create_session(self, session, coord):
            calls.append("create")

        def before_run(self, run_context):
            return tf.train.SessionRunArgs({"loss": loss})

        def after_run(self, run_context, run_values):
            calls.append(round(float(run_values.results["loss"]), 4))
            if len(calls) == 4:
                run_context.request_stop()

        def end(self, session):
            calls.append("end")
    with tf.train.MonitoredSession(hooks=[Hook()]) as s:
        while not s.should_stop():
            s.run(train)
    assert calls == ["begin", "create", 1.0, 0.64, "end"]


def test_global_step_waiter_hook_waits_for_another_thread(graph):
    gs, w, loss, train = _model()
    bump = tf.assign_add(gs, 3)
    waiter = tf.train.GlobalStepWaiterHook(wait_until_step=3, poll_secs=0.01)
    s = tf.train.SingularMonitoredSession(hooks=[waiter])
    raw = s.raw_session()
    timer = threading.Timer(0.2, lambda: raw.run(bump))
    timer.start()
    t0 = time.monotonic()
    assert s.run(gs) >= 3  # the first run waited until the other thread moved the step
    assert time.monotonic() - t0 < WAIT
    timer.join(WAIT)
    s.close()


def test_out_of_range_ends_the_with_block_cleanly_and_runs_end(graph):
    q = tf.FIFOQueue(5, tf.int32, shapes=[[]])
    tf.train.get_or_create_global_step()
    final = tf.train.FinalOpsHook(q.size())
    enq, close, deq = q.enqueue([1]), q.close(), q.dequeue()
    with tf.train.MonitoredSession(hooks=[final]) as s:
        s.run(enq)
        s.run(close)
        s.run(deq)
        s.run(deq)  # OutOfRangeError: suppressed by the with block, as in TF
    assert final.final_ops_values == 0


def test_monitored_session_starts_queue_runners_and_stops_them_on_close(graph):
    q = tf.FIFOQueue(3, tf.float32, shapes=[[]])
    tf.train.add_queue_runner(tf.train.QueueRunner(q, [q.enqueue([7.0])]))
    deq = q.dequeue()
    tf.train.get_or_create_global_step()
    s = tf.train.MonitoredSession(stop_grace_period_secs=WAIT)
    assert [s.run(deq, options=tf.RunOptions(timeout_in_ms=int(WAIT * 1000))) for _ in range(5)] == [7.0] * 5
    t0 = time.monotonic()
    s.close()  # the enqueue thread blocked on the full queue is cancelled; close returns promptly
    assert time.monotonic() - t0 < WAIT
    assert not [t for t in threading.enumerate() if t.name.startswith("QueueRunnerThread") and t.is_alive()]


class _FlakySession:
    """A session whose run raises UnavailableError once (a ps restarting), delegating otherwise."""

    fail_next = True

    def __init__(self, sess):
        self._sess = sess

    graph = property(lambda self: self._sess.graph)

    def run(self, *args, **kwargs):
        if _FlakySession.fail_next and kwargs.get("feed_dict") is None and isinstance(args[0], dict):
            _FlakySession.fail_next = False
            raise tf.errors.UnavailableError(None, None, "ps restarted")
        return self._sess.run(*args, **kwargs)

    def make_callable(self, fetches):
        return lambda: self.run(fetches)

    def close(self):
        self._sess.close()


def test_recovers_from_unavailable_by_recreating_and_restoring(graph, tmp_path):
    gs, w, loss, train = _model()
    clobber = w.assign(123.0)
    scaffold = tf.train.Scaffold()
    inner = tf.train.ChiefSessionCreator(scaffold=scaffold, checkpoint_dir=str(tmp_path))
    created = []

    class Creator(tf.train.SessionCreator):
        def create_session(self):
            created.append(1)
            return _FlakySession(inner.create_session())
    saver_hook = tf.train.CheckpointSaverHook(str(tmp_path), save_steps=1, scaffold=scaffold)
    _FlakySession.fail_next = False
    s = tf.train.MonitoredSession(session_creator=Creator(), hooks=[saver_hook])
    for _ in range(3):
        s.run(train)
    s.run(clobber)  # not checkpointed: recovery must restore the step-3 value
    _FlakySession.fail_next = True
    gs_val, w_val = s.run([gs, w])  # fails once, recreated, restored from model.ckpt-3, then runs
    assert len(created) == 2 and gs_val == 3
    assert abs(w_val - 0.8 ** 3) < 1e-6
    s.close()


def test_session_manager_prepare_wait_and_recover(graph, tmp_path):
    v = tf.Variable(3.0, name="v")
    init = tf.global_variables_initializer()
    ready = tf.report_uninitialized_variables()
    saver = tf.train.Saver()
    sm = tf.train.SessionManager(ready_op=ready, recovery_wait_secs=0.05)
    with pytest.raises(RuntimeError, match="not initialized"):
        sm.prepare_session("")
    sess = sm.prepare_session("", init_op=init)
    assert sess.run(v) == 3.0
    sess.run(v.assign(5.0))
    saver.save(sess, str(tmp_path / "model.ckpt"), global_step=1)
    sess.close()
    sess, loaded = sm.recover_session("", saver=saver, checkpoint_dir=str(tmp_path))
    assert loaded and sess.run(v) == 5.0
    sess.close()
    sess, loaded = sm.recover_session("", saver=saver, checkpoint_dir=str(tmp_path / "none"))
    assert not loaded
    sess.close()
    t0 = time.monotonic()
    with pytest.raises(tf.errors.DeadlineExceededError, match="v"):  # nobody initialises v in a local session
        sm.wait_for_session("", max_wait_secs=0.3)
    assert time.monotonic() - t0 < WAIT
    assert tf.train.session_manager.DEFAULT_RECOVERY_WAIT_SECS <= 0.5  # TF polls every 30 s


def test_worker_creator_gives_up_after_max_wait(graph):
    tf.Variable(1.0)
    tf.train.get_or_create_global_step()
    t0 = time.monotonic()
    with pytest.raises(tf.errors.DeadlineExceededError):
        tf.train.MonitoredTrainingSession(is_chief=False, max_wait_secs=0.6)
    assert time.monotonic() - t0 < WAIT


def test_two_threads_share_a_monitored_session(graph):
    q = tf.FIFOQueue(10, tf.int32, shapes=[[]])
    tf.train.get_or_create_global_step()
    x = tf.placeholder(tf.int32, [])
    enq, deq = q.enqueue([x]), q.dequeue()
    with tf.train.MonitoredSession() as s:
        out = []
        t = threading.Thread(target=lambda: out.append(int(s.run(deq, options=tf.RunOptions(
            timeout_in_ms=int(WAIT * 1000))))))
        t.start()
        time.sleep(0.05)
        s.run(enq, {x: 9})
        t.join(WAIT)
        assert out == [9]


def test_mnist_monitored_example_trains_and_resumes(tmp_path):
    import importlib.util
    path = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "mnist_monitored.py")
    spec = importlib.util.spec_from_file_location("mnist_monitored", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    ck = str(tmp_path / "ck")
    with tf.Graph().as_default():
        acc = mod.main(["--steps", "150", "--checkpoint-dir", ck, "--save-checkpoint-steps", "100"])
    assert acc > 0.8  # digits: well above chance (0.1) after 150 Adam steps
    assert _steps_saved(ck) == [0, 100, 150]
    with tf.Graph().as_default():
        mod.main(["--steps", "160", "--checkpoint-dir", ck, "--save-checkpoint-steps", "100"])
    assert _steps_saved(ck)[-1] == 160  # resumed at 150, ran 10 more


def _events(d):
    from tensorfleet.io.tfrecord import tf_record_iterator
    from tensorfleet.protos.event_pb2 import Event
    out = []
    for f in sorted(os.listdir(d)):
        if f.startswith("events.out.tfevents"):
            out.extend(Event.FromString(r) for r in tf_record_iterator(os.path.join(d, f)))
    return out


def test_monitored_training_session_writes_summaries_every_n_steps(graph, tmp_path):
    gs, w, loss, train = _model()
    tf.summary.scalar("loss", loss)
    with tf.train.MonitoredTrainingSession(checkpoint_dir=str(tmp_path), save_summaries_steps=2,
                                           save_checkpoint_secs=None, log_step_count_steps=None,
                                           hooks=[tf.train.StopAtStepHook(last_step=6)]) as s:
        while not s.should_stop():
            s.run(train)
    from tensorfleet.summary.writer import FileWriterCache
    FileWriterCache.get(str(tmp_path)).flush()
    steps = [e.step for e in _events(str(tmp_path)) for v in e.summary.value if v.tag == "loss"]
    assert steps == [1, 3, 5]  # TF: the first run, then each run at least 2 steps after the last write
