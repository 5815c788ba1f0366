"""tf.train.SummarySaverHook / SecondOrStepTimer (summary/saver_hook.py), driven as a MonitoredSession drives
hooks, against TF 1.15's documented schedule; the event file is read back with TensorBoard's accumulator."""
import collections

import pytest

import tensorfleet as tf

ea = pytest.importorskip("tensorboard.backend.event_processing.event_accumulator")
efl = pytest.importorskip("tensorboard.backend.event_processing.event_file_loader")
tb_event = pytest.importorskip("tensorboard.compat.proto.event_pb2")

RunContext = collections.namedtuple("RunContext", ["session"])
RunValues = collections.namedtuple("RunValues", ["results"])


def _train(make_hook, steps):
    """Builds a model with a loss summary, then runs `steps` steps with the hook `make_hook(summary_op)`."""
    w = tf.Variable(3.0)
    loss = tf.square(w)
    step = tf.train.get_or_create_global_step()
    train = tf.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=step)
    tf.summary.scalar("loss", loss)
    hook = make_hook(tf.summary.merge_all())
    hook.begin()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        ctx = RunContext(sess)
        for _ in range(steps):
            args = hook.before_run(ctx)
            _, results = sess.run([train, args.fetches])
            hook.after_run(ctx, RunValues(results))
        hook.end(sess)
    return hook


def test_writes_every_n_steps_at_the_global_step_after_the_run(tmp_path):
    writer = tf.summary.FileWriter(str(tmp_path))
    _train(lambda op: tf.train.SummarySaverHook(save_steps=3, summary_writer=writer, summary_op=op), 10)
    writer.close()
    acc = ea.EventAccumulator(str(tmp_path), size_guidance={ea.SCALARS: 0})
    acc.Reload()
    # TF: the first run writes (step 1 after it); then when the step about to run is >= last + 3
    assert [s.step for s in acc.Scalars("loss")] == [1, 4, 7, 10]
    # the loss fetched in the same run as the train op is the loss before that step's update
    assert acc.Scalars("loss")[0].value == pytest.approx(9.0)
    (name,) = [p.name for p in tmp_path.iterdir()]
    events = [tb_event.Event.FromString(r) for r in efl.RawEventFileLoader(str(tmp_path / name)).Load()]
    starts = [e for e in events if e.HasField("session_log")]
    assert len(starts) == 1 and starts[0].session_log.status == tb_event.SessionLog.START and starts[0].step == 1


def test_output_dir_uses_the_writer_cache(tmp_path):
    hook = _train(lambda op: tf.train.SummarySaverHook(save_steps=1, output_dir=str(tmp_path), summary_op=op), 3)
    assert tf.train.SummaryWriterCache.get(str(tmp_path)) is hook._summary_writer
    tf.train.SummaryWriterCache.clear()
    acc = ea.EventAccumulator(str(tmp_path), size_guidance={ea.SCALARS: 0})
    acc.Reload()
    assert [s.step for s in acc.Scalars("loss")] == [1, 2, 3]
    assert acc.Tags()["graph"]  # the cache's writer gets the default graph, as TF's


def test_timer_and_argument_rules(monkeypatch):
    with pytest.raises(ValueError, match="Exactly one of scaffold or summary_op"):
        tf.train.SummarySaverHook(save_steps=1)
    with pytest.raises(ValueError, match="every_secs or every_steps"):
        tf.train.SummarySaverHook(save_steps=1, save_secs=1, summary_op=object())
    now = [1000.0]
    monkeypatch.setattr("tensorfleet.summary.saver_hook.time.time", lambda: now[0])
    timer = tf.train.SecondOrStepTimer(every_secs=10)
    assert timer.should_trigger_for_step(0)
    assert timer.update_last_triggered_step(0) == (None, None)
    assert not timer.should_trigger_for_step(0) and not timer.should_trigger_for_step(5)
    now[0] += 10
    assert timer.should_trigger_for_step(5)
    assert timer.update_last_triggered_step(5) == (10.0, 5)
    hook = tf.train.SummarySaverHook(save_steps=1, summary_op=object())
    with pytest.raises(RuntimeError, match="Global step should be created"):
        hook.begin()
