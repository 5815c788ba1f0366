"""tf.summary.FileWriter / FileWriterCache (summary/writer.py, summary/event_file_writer.py): the event files
are read back with TensorBoard's own loaders (EventAccumulator, EventFileLoader); values and steps exact."""
import os
import re
import socket
import time
import warnings

import numpy as np
import pytest

import tensorfleet as tf

ea = pytest.importorskip("tensorboard.backend.event_processing.event_accumulator")
efl = pytest.importorskip("tensorboard.backend.event_processing.event_file_loader")
tb_event = pytest.importorskip("tensorboard.compat.proto.event_pb2")


def _accumulator(logdir):
    acc = ea.EventAccumulator(str(logdir), size_guidance={ea.SCALARS: 0, ea.HISTOGRAMS: 0, ea.IMAGES: 0,
                                                          ea.AUDIO: 0, ea.TENSORS: 0})
    acc.Reload()
    return acc


def _events(path):
    return [tb_event.Event.FromString(r) for r in efl.RawEventFileLoader(str(path)).Load()]


def _event_files(logdir):
    return sorted(p for p in os.listdir(logdir) if "tfevents" in p)


def test_file_name_and_first_event(tmp_path):
    before = int(time.time())
    w = tf.summary.FileWriter(str(tmp_path / "run"), filename_suffix=".v1")
    after = int(time.time())
    (name,) = _event_files(tmp_path / "run")
    m = re.fullmatch(r"events\.out\.tfevents\.(\d{10})\.(.+)\.v1", name)
    assert m and before <= int(m.group(1)) <= after and m.group(2) == socket.gethostname()
    assert w.get_logdir() == str(tmp_path / "run")
    # visible before any flush: TensorBoard finds the run as soon as the writer exists
    (first,) = _events(tmp_path / "run" / name)
    assert first.file_version == "brain.Event:2" and first.step == 0 and before <= first.wall_time
    w.close()


def test_scalars_and_histograms_read_back_by_tensorboard(tmp_path):
    x = tf.placeholder(tf.float32, [None])
    tf.summary.scalar("avg", tf.reduce_mean(x))
    tf.summary.histogram("values", x)
    merged = tf.summary.merge_all()
    rng = np.random.RandomState(3)
    feeds = [rng.normal(size=50).astype(np.float32) for _ in range(4)]
    steps = [0, 10, 20, 1000000000000]
    with tf.Session() as sess, tf.summary.FileWriter(str(tmp_path)) as w:
        blobs = []
        for step, feed in zip(steps, feeds, strict=True):
            blob = sess.run(merged, {x: feed})
            blobs.append(tf.Summary.FromString(blob))
            w.add_summary(blob, global_step=step)
    acc = _accumulator(tmp_path)
    assert acc.Tags()["scalars"] == ["avg"] and acc.Tags()["histograms"] == ["values"]
    scalars = acc.Scalars("avg")
    assert [s.step for s in scalars] == steps
    assert [s.value for s in scalars] == [float(np.mean(f, dtype=np.float32)) for f in feeds]
    hists = acc.Histograms("values")
    assert [h.step for h in hists] == steps
    for h, blob, feed in zip(hists, blobs, feeds, strict=True):
        want = blob.value[1].histo
        assert h.histogram_value.num == 50 and h.histogram_value.min == float(feed.min())
        assert list(h.histogram_value.bucket_limit) == list(want.bucket_limit)
        assert list(h.histogram_value.bucket) == list(want.bucket)


def test_images_and_audio_read_back(tmp_path):
    imgs = np.random.RandomState(4).randint(0, 256, size=(2, 3, 5, 3)).astype(np.uint8)
    s_img = tf.summary.image("img", tf.constant(imgs), max_outputs=2)
    s_aud = tf.summary.audio("aud", tf.constant(np.zeros((1, 100), np.float32)), 16000)
    with tf.Session() as sess, tf.summary.FileWriter(str(tmp_path)) as w:
        a, b = sess.run([s_img, s_aud])
        w.add_summary(a, 7)
        w.add_summary(b, 8)
    acc = _accumulator(tmp_path)
    assert sorted(acc.Tags()["images"]) == ["img/image/0", "img/image/1"]
    (ev,) = acc.Images("img/image/1")
    assert (ev.step, ev.width, ev.height) == (7, 5, 3)
    (au,) = acc.Audio("aud/audio/0")
    assert au.step == 8 and au.sample_rate == 16000 and au.length_frames == 100


def test_session_log_event_and_flush(tmp_path):
    w = tf.summary.FileWriter(str(tmp_path), flush_secs=3600)
    w.add_session_log(tf.SessionLog(status=tf.SessionLog.START), global_step=3)
    w.add_event(tf.Event(wall_time=1.5, step=4, file_version="custom"))
    w.flush()  # visible without close
    (name,) = _event_files(tmp_path)
    events = _events(tmp_path / name)
    assert [e.WhichOneof("what") for e in events] == ["file_version", "session_log", "file_version"]
    assert events[1].session_log.status == tb_event.SessionLog.START and events[1].step == 3
    assert (events[2].wall_time, events[2].step) == (1.5, 4)
    w.close()


def test_metadata_kept_only_for_the_first_value_of_a_tag(tmp_path):
    def summary(v):
        s = tf.Summary()
        val = s.value.add(tag="t", simple_value=v)
        val.metadata.plugin_data.plugin_name = "scalars"
        return s

    first = summary(1.0)
    with tf.summary.FileWriter(str(tmp_path)) as w:
        w.add_summary(first, 1)
        w.add_summary(summary(2.0), 2)
    assert first.value[0].HasField("metadata")  # the caller's proto is untouched
    (name,) = _event_files(tmp_path)
    values = [e.summary.value[0] for e in _events(tmp_path / name) if e.HasField("summary")]
    assert [v.HasField("metadata") for v in values] == [True, False]
    assert [v.simple_value for v in values] == [1.0, 2.0]


def test_close_reopen_and_closed_writer_warnings(tmp_path):
    w = tf.summary.FileWriter(str(tmp_path))
    w.add_summary(tf.Summary(value=[tf.Summary.Value(tag="a", simple_value=1.0)]), 1)
    w.close()
    w.close()  # twice is fine
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        w.add_summary(tf.Summary(value=[tf.Summary.Value(tag="a", simple_value=99.0)]), 2)  # dropped, as TF
    assert any("closed FileWriter" in str(c.message) for c in caught)
    w.reopen()
    w.add_summary(tf.Summary(value=[tf.Summary.Value(tag="a", simple_value=3.0)]), 3)
    w.close()
    assert len(_event_files(tmp_path)) == 2
    acc = _accumulator(tmp_path)
    assert [(s.step, s.value) for s in acc.Scalars("a")] == [(1, 1.0), (3, 3.0)]


def test_every_max_queue_events_and_every_flush_secs_reach_the_file(tmp_path):
    def on_disk():
        (name,) = _event_files(tmp_path)
        return [e.step for e in _events(tmp_path / name) if e.HasField("summary")]

    w = tf.summary.FileWriter(str(tmp_path), max_queue=3, flush_secs=3600)
    for step in range(7):
        w.add_summary(tf.Summary(value=[tf.Summary.Value(tag="s", simple_value=float(step))]), step)
    assert on_disk() == [0, 1, 2, 3, 4, 5]  # flushed after the 3rd and the 6th, as TF's max_queue
    w.close()
    assert on_disk() == list(range(7))
    for f in _event_files(tmp_path):
        os.remove(tmp_path / f)
    w = tf.summary.FileWriter(str(tmp_path), max_queue=1000, flush_secs=0.2)
    w.add_summary(tf.Summary(value=[tf.Summary.Value(tag="s", simple_value=1.0)]), 9)
    deadline = time.monotonic() + 60
    while on_disk() != [9] and time.monotonic() < deadline:  # the timed flush, without flush() or close()
        time.sleep(0.05)
    assert on_disk() == [9]
    w.close()
    assert not w.event_writer._flusher.is_alive()


def test_many_events_read_back_in_order(tmp_path):
    with tf.summary.FileWriter(str(tmp_path), max_queue=2) as w:
        for step in range(200):
            w.add_summary(tf.Summary(value=[tf.Summary.Value(tag="s", simple_value=float(step))]), step)
    acc = _accumulator(tmp_path)
    assert [s.value for s in acc.Scalars("s")] == [float(i) for i in range(200)]


def test_bad_arguments_are_clear_errors(tmp_path):
    with pytest.raises(TypeError, match="Summary proto"):
        with tf.summary.FileWriter(str(tmp_path)) as w:
            w.add_summary(3.0)
    with pytest.raises(NotImplementedError, match="session"):
        tf.summary.FileWriter(str(tmp_path), session=object())
    with pytest.raises(TypeError, match="Graph"):
        with tf.summary.FileWriter(str(tmp_path)) as w:
            w.add_graph("not a graph")
    with tf.summary.FileWriter(str(tmp_path)) as w:
        w.add_run_metadata(b"", "step1")
        with pytest.raises(ValueError, match="already used"):
            w.add_run_metadata(b"", "step1")


def test_file_writer_cache(tmp_path, monkeypatch):
    monkeypatch.setattr(tf.summary.FileWriter, "add_graph", lambda self, *a, **k: None)
    a = tf.summary.FileWriterCache.get(str(tmp_path / "a"))
    assert tf.summary.FileWriterCache.get(str(tmp_path / "a")) is a
    b = tf.summary.FileWriterCache.get(str(tmp_path / "b"))
    assert b is not a
    tf.summary.FileWriterCache.clear()
    assert a._closed and b._closed
    assert tf.summary.FileWriterCache.get(str(tmp_path / "a")) is not a
    tf.summary.FileWriterCache.clear()


def _training_graph():
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    w = tf.Variable(np.ones((3, 1), np.float32), name="w")
    loss = tf.reduce_mean(tf.square(tf.matmul(x, w)))
    train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
    tf.summary.scalar("loss", loss)
    return x, loss, train


def test_graph_read_back_and_prepared_for_tensorboards_graph_view(tmp_path):
    from tensorboard.backend import process_graph

    _training_graph()
    graph = tf.get_default_graph()
    with tf.Session() as sess:
        tf.summary.FileWriter(str(tmp_path), sess.graph).close()
    (name,) = _event_files(tmp_path)
    events = _events(tmp_path / name)
    assert [e.WhichOneof("what") for e in events] == ["file_version", "graph_def"]  # the graph comes first
    gd = _accumulator(tmp_path).Graph()  # TensorBoard's own GraphDef class
    ops = graph.get_operations()
    assert [n.name for n in gd.node] == [op.name for op in ops]
    assert [n.op for n in gd.node] == [op.type for op in ops]
    by_name = {n.name: n for n in gd.node}
    for op in ops:
        want = [t.name[:-2] if t.name.endswith(":0") else t.name for t in op.inputs]
        want += ["^" + c.name for c in op.control_inputs]
        assert list(by_name[op.name].input) == want, op.name
    dims = [d.size for d in by_name["MatMul"].attr["_output_shapes"].list.shape[0].dim]
    assert dims == [-1, 1]
    process_graph.prepare_graph_for_ui(gd)  # what the graph plugin does before drawing: must not raise


def test_graph_def_argument_and_add_graph_later(tmp_path):
    from tensorfleet import graph_def

    _training_graph()
    gd = graph_def.as_graph_def(tf.get_default_graph())
    with tf.summary.FileWriter(str(tmp_path / "a"), graph_def=gd):
        pass
    assert len(_accumulator(tmp_path / "a").Graph().node) == len(gd.node)
    with tf.summary.FileWriter(str(tmp_path / "b")) as w:
        w.add_graph(tf.get_default_graph(), global_step=5)
    (name,) = _event_files(tmp_path / "b")
    assert _events(tmp_path / "b" / name)[1].step == 5
    import threading

    before = threading.active_count()
    with pytest.raises(ValueError, match="only graph, or graph_def"):
        tf.summary.FileWriter(str(tmp_path / "c"), graph=tf.get_default_graph(), graph_def=gd)
    assert threading.active_count() == before  # the failed constructor stopped its writer thread


def test_text_summary_read_back_by_tensorboards_text_plugin(tmp_path):
    from tensorboard.plugins.text import text_plugin
    from tensorboard.util import tensor_util

    from tensorfleet.ops.summary_ops import STRING

    note = tf.placeholder(getattr(tf, "string", STRING), [])
    s = tf.summary.text("notes", note)
    with pytest.raises(ValueError, match="dtype string"):
        tf.summary.text("bad", tf.constant(1.0))
    with tf.Session() as sess, tf.summary.FileWriter(str(tmp_path)) as w:
        for step, text in enumerate([b"**bold** start", b"second"]):
            w.add_summary(sess.run(s, {note: np.array(text, dtype=object)}), step)
    acc = _accumulator(tmp_path)
    assert acc.SummaryMetadata("notes").plugin_data.plugin_name == "text"
    events = acc.Tensors("notes")
    assert [e.step for e in events] == [0, 1]
    arr = tensor_util.make_ndarray(events[0].tensor_proto)
    assert arr.shape == () and arr.item() == b"**bold** start"
    assert "<strong>bold</strong>" in text_plugin.text_array_to_html(arr, enable_markdown=True)


def test_tensor_summary_of_numbers(tmp_path):
    from tensorboard.util import tensor_util

    value = np.arange(6, dtype=np.float32).reshape(2, 3)
    s = tf.summary.tensor_summary("t", tf.constant(value), summary_description="a table", display_name="T")
    with tf.Session() as sess, tf.summary.FileWriter(str(tmp_path)) as w:
        w.add_summary(sess.run(s), 3)
    acc = _accumulator(tmp_path)
    (ev,) = acc.Tensors("t")
    np.testing.assert_array_equal(tensor_util.make_ndarray(ev.tensor_proto), value)
    md = acc.SummaryMetadata("t")
    assert (md.summary_description, md.display_name) == ("a table", "T")


def test_write_errors_reach_the_caller(tmp_path):
    w = tf.summary.FileWriter(str(tmp_path))
    records = w.event_writer._records

    def disk_full(_record):
        raise OSError(28, "No space left on device")

    records.write = disk_full
    with pytest.raises(tf.errors.UnknownError, match="No space left on device"):
        w.add_summary(tf.Summary(value=[tf.Summary.Value(tag="a", simple_value=1.0)]), 1)
    w.close()  # the file is closed, no thread left behind
    assert not w.event_writer._flusher.is_alive()


def test_writers_left_open_are_closed_at_exit(tmp_path):
    import subprocess
    import sys

    script = (
        "import tensorfleet as tf\n"
        f"w = tf.summary.FileWriter({str(tmp_path)!r}, flush_secs=3600)\n"
        "for i in range(5):\n"
        "    w.add_summary(tf.Summary(value=[tf.Summary.Value(tag='x', simple_value=float(i))]), i)\n"
    )
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    subprocess.run([sys.executable, "-c", script], check=True, timeout=120, env=env)
    assert [s.value for s in _accumulator(tmp_path).Scalars("x")] == [0.0, 1.0, 2.0, 3.0, 4.0]


def test_summary_iterator_reads_back_what_the_writer_wrote(tmp_path):
    """tf.train.summary_iterator against the FileWriter's own output (and TensorBoard's loader as a second
    reader of the same file): the file_version event first, then each summary at its step, in order."""
    writer = tf.summary.FileWriter(str(tmp_path))
    for step, value in ((1, 0.5), (2, 0.25), (5, -1.0)):
        writer.add_summary(tf.Summary(value=[tf.Summary.Value(tag="loss", simple_value=value)]), step)
    writer.close()
    (path,) = [str(p) for p in tmp_path.iterdir()]
    events = list(tf.train.summary_iterator(path))
    assert events[0].file_version.startswith("brain.Event:")
    assert [(e.step, e.summary.value[0].simple_value) for e in events[1:]] == [(1, 0.5), (2, 0.25), (5, -1.0)]
    tb = [ev for ev in efl.EventFileLoader(path).Load()]
    assert [e.step for e in tb] == [e.step for e in events]
    with pytest.raises(tf.errors.NotFoundError):
        next(tf.train.summary_iterator(str(tmp_path / "missing")))
