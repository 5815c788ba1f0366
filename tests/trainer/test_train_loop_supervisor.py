"""tf.train.Supervisor against TF 1.15's documented semantics: chief init/restore, services, stop, managed_session."""
import os
import re
import time

import pytest

import tensorfleet as tf

WAIT = 30.0


def _model():
    gs = tf.train.get_or_create_global_step()
    w = tf.Variable(1.0, name="w")
    train = tf.train.GradientDescentOptimizer(0.1).minimize(w * w, global_step=gs)
    return gs, w, train


def _saved_steps(d):
    return sorted({int(m.group(1)) for f in os.listdir(d) for m in [re.match(r"model\.ckpt-(\d+)\.index$", f)] if m})


def test_chief_initialises_saves_on_its_timer_and_a_new_chief_restores(tmp_path):
    logdir = str(tmp_path)
    with tf.Graph().as_default():
        gs, w, train = _model()
        sv = tf.train.Supervisor(logdir=logdir, save_model_secs=0.05, save_summaries_secs=0)
        assert sv.is_chief and sv.global_step is gs and sv.saver is not None
        with sv.managed_session() as sess:
            for _ in range(4):
                sess.run(train)
            deadline = time.monotonic() + WAIT
            while 4 not in _saved_steps(logdir) and time.monotonic() < deadline:
                time.sleep(0.02)
        assert sv.should_stop()
        assert 4 in _saved_steps(logdir)
    with tf.Graph().as_default():
        gs, w, train = _model()
        sv = tf.train.Supervisor(logdir=logdir, save_model_secs=0, save_summaries_secs=0)
        sess = sv.prepare_or_wait_for_session()
        assert sess.run(gs) == 4 and abs(sess.run(w) - 0.8 ** 4) < 1e-6  # restored, not re-initialised
        sv.stop()
        sess.close()


def test_the_chiefs_start_up_writes_what_tf_1_15s_writes(tmp_path):
    """TF 1.15's chief Supervisor, right after its session is ready: graph.pbtxt, the graph and meta graph and
    a SessionLog START in its event file, a checkpoint at once (its LooperThreads run, then wait), and the
    `global_step/sec` step counter; a non-chief supervisor has no logdir, saver thread or writer."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    logdir = str(tmp_path / "chief")
    with tf.Graph().as_default():
        gs, w, train = _model()
        sv = tf.train.Supervisor(logdir=logdir, save_model_secs=3600, save_summaries_secs=3600)
        sess = sv.prepare_or_wait_for_session()
        deadline = time.monotonic() + WAIT
        while 0 not in _saved_steps(logdir) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert _saved_steps(logdir) == [0]                       # model.ckpt-0, not after an hour
        assert os.path.isfile(os.path.join(logdir, "graph.pbtxt"))
        sess.run(train)
        sv.stop()
        sess.close()
    acc = EventAccumulator(logdir, size_guidance={"scalars": 0})
    acc.Reload()
    assert acc.Graph() is not None and acc.MetaGraph() is not None
    assert "global_step/sec" in acc.Tags()["scalars"]
    from tensorfleet.io.tfrecord import read_records
    from tensorfleet.protos.event_pb2 import Event, SessionLog
    statuses = [e.session_log.status for f in os.listdir(logdir) if f.startswith("events.out")
                for e in map(Event.FromString, read_records(os.path.join(logdir, f))) if e.HasField("session_log")]
    assert statuses[0] == SessionLog.START and SessionLog.CHECKPOINT in statuses
    with tf.Graph().as_default():
        _model()
        worker = tf.train.Supervisor(is_chief=False, logdir=str(tmp_path / "worker"))
        assert worker.logdir is None and worker.summary_writer is None and worker.save_path is None
    assert not os.path.exists(tmp_path / "worker")


def test_managed_session_reraises_body_errors_but_not_out_of_range():
    with tf.Graph().as_default():
        _model()
        sv = tf.train.Supervisor(save_model_secs=0, save_summaries_secs=0)
        with pytest.raises(ValueError, match="bad step"):
            with sv.managed_session():
                raise ValueError("bad step")
        with sv.managed_session():
            raise tf.errors.OutOfRangeError(None, None, "input done")
        assert sv.should_stop()


def test_non_chief_waits_for_the_chief_then_gives_up():
    with tf.Graph().as_default():
        _model()
        sv = tf.train.Supervisor(is_chief=False, save_model_secs=0)
        assert sv.session_manager is not None
        t0 = time.monotonic()
        with pytest.raises(tf.errors.DeadlineExceededError, match="w"):  # nobody initialises w in this process
            sv.prepare_or_wait_for_session(max_wait_secs=0.4)
        assert time.monotonic() - t0 < WAIT
        with pytest.raises(RuntimeError, match="summary writer"):
            sv.summary_computed(None, b"")


def test_queue_runners_loop_and_stop():
    with tf.Graph().as_default():
        q = tf.FIFOQueue(2, tf.float32, shapes=[[]])
        qr = tf.train.QueueRunner(q, [q.enqueue([1.0])])
        _model()
        deq = q.dequeue()
        sv = tf.train.Supervisor(save_model_secs=0, save_summaries_secs=0)
        sess = sv.prepare_or_wait_for_session(start_standard_services=False)
        threads = sv.start_queue_runners(sess, [qr])
        assert len(threads) == 2
        assert sess.run(deq, options=tf.RunOptions(timeout_in_ms=int(WAIT * 1000))) == 1.0
        ticks = []
        sv.loop(0.01, lambda: ticks.append(1))
        deadline = time.monotonic() + WAIT
        while len(ticks) < 3 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert len(ticks) >= 3
        sv.request_stop()
        sv.stop()  # joins the queue-runner threads (blocked on the full queue: cancelled) and the looper
        assert not any(t.is_alive() for t in threads)
        sess.close()


def test_init_feed_dict_and_init_fn():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [])
        v = tf.Variable(x, name="v")
        seen = []
        sv = tf.train.Supervisor(init_feed_dict={x: 7.0}, init_fn=lambda s: seen.append(s.run(v)),
                                 save_model_secs=0)
        with sv.managed_session() as sess:
            assert sess.run(v) == 7.0
        assert seen == [7.0]


def test_summary_service_and_summary_computed_write_events(tmp_path):
    from tensorfleet.io.tfrecord import tf_record_iterator
    from tensorfleet.protos.event_pb2 import Event
    logdir = str(tmp_path)
    with tf.Graph().as_default():
        gs, w, train = _model()
        tf.summary.scalar("w_value", w)
        manual = tf.summary.scalar("manual", w * 2)
        sv = tf.train.Supervisor(logdir=logdir, save_model_secs=0, save_summaries_secs=0.05)
        with sv.managed_session() as sess:
            sess.run(train)
            sv.summary_computed(sess, sess.run(manual))
            deadline = time.monotonic() + WAIT
            tags = set()
            while "w_value" not in tags and time.monotonic() < deadline:
                time.sleep(0.05)
                sv.summary_writer.flush()
                tags = {v.tag for f in os.listdir(logdir) if f.startswith("events.out")
                        for r in tf_record_iterator(os.path.join(logdir, f))
                        for v in Event.FromString(r).summary.value}
        assert {"w_value", "manual"} <= tags


def test_basic_train_loop_runs_steps_until_the_supervisor_stops(tmp_path):
    """tf.train.basic_train_loop (TF 1.15): the step function gets the managed session and the given args."""
    step = tf.train.get_or_create_global_step()
    inc = tf.assign_add(step, 1)
    sv = tf.train.Supervisor(logdir=str(tmp_path), save_model_secs=0, save_summaries_secs=0)
    seen = []

    def train_step(sess, scale, limit=None):
        value = sess.run(inc)
        seen.append(value * scale)
        if value >= limit:
            sv.request_stop()

    tf.train.basic_train_loop(sv, train_step, args=(10,), kwargs={"limit": 3})
    assert seen == [10, 20, 30]


def test_generate_checkpoint_state_proto_follows_tfs_path_rules():
    state = tf.train.generate_checkpoint_state_proto("ckpts", "ckpts/model-3", ["ckpts/model-2"])
    assert state.model_checkpoint_path == "model-3" and state.all_model_checkpoint_paths == ["model-2", "model-3"]
    absolute = tf.train.generate_checkpoint_state_proto("/abs/ckpts", "/abs/ckpts/model-3")
    assert absolute.all_model_checkpoint_paths == ["/abs/ckpts/model-3"]
