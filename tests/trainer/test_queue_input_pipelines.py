"""Queue-based input pipelines (producers, readers, batching) against TF 1.15's documented semantics.

Oracle: the records each test writes to tmp_path itself (TFRecord framing computed independently: 8-byte
length + 4-byte CRC + data + 4-byte CRC per record; lines; byte slices computed with numpy). Every loop is
bounded in count and every blocking run has a deadline; coordinators are joined with a bounded grace period.
"""
import collections
import threading

import numpy as np
import pytest

import tensorfleet as tf

WAIT_MS = 30000
MAX_STEPS = 500
OPTS = tf.RunOptions(timeout_in_ms=WAIT_MS)


@pytest.fixture
def graph():
    g = tf.Graph()
    with g.as_default():
        yield g


def _write_tfrecords(tmp_path, n_files, per_file):
    files, records = [], []
    for j in range(n_files):
        path = str(tmp_path / f"data-{j}.tfrecord")
        with tf.io.TFRecordWriter(path) as w:
            offset = 0
            for i in range(per_file):
                data = f"rec-{j}-{i}".encode() * (i + 1)
                w.write(data)
                records.append((f"{path}:{offset}".encode(), data))
                offset += 8 + 4 + len(data) + 4
        files.append(path)
    return files, records


def _drain(sess, fetch, max_steps=MAX_STEPS):
    """Runs `fetch` until OutOfRangeError; every run has a deadline, the loop a step bound."""
    out = []
    for _ in range(max_steps):
        try:
            out.append(sess.run(fetch, options=OPTS))
        except tf.errors.OutOfRangeError:
            return out
    raise AssertionError(f"no OutOfRangeError after {max_steps} steps")


def _run_with_coordinator(fetch, max_steps=MAX_STEPS):
    with tf.Session() as sess:
        sess.run([tf.global_variables_initializer(), tf.local_variables_initializer()])
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess, coord=coord)
        assert threads
        try:
            out = _drain(sess, fetch, max_steps)
        finally:
            coord.request_stop()
            coord.join(threads, stop_grace_period_secs=30)
        assert not any(t.is_alive() for t in threads)
        return out


def test_string_input_producer_tfrecord_reader_batch_in_order_each_epoch(graph, tmp_path):
    files, records = _write_tfrecords(tmp_path, 3, 4)
    fq = tf.train.string_input_producer(files, num_epochs=2, shuffle=False)
    key, value = tf.TFRecordReader().read(fq)
    batch = tf.train.batch([key, value], batch_size=5, allow_smaller_final_batch=True)
    assert isinstance(batch, list) and batch[0].shape.as_list() == [None]
    got = _run_with_coordinator(batch)
    sizes = [len(k) for k, _ in got]
    assert sizes == [5, 5, 5, 5, 4]  # 24 records: the smaller final batch
    flat = [(k, v) for ks, vs in got for k, v in zip(ks, vs)]
    assert flat == records + records  # file order, record order, each epoch once


def test_shuffle_producer_and_shuffle_batch_is_a_permutation_of_every_epoch(graph, tmp_path):
    files, records = _write_tfrecords(tmp_path, 4, 5)
    fq = tf.train.string_input_producer(files, num_epochs=3, shuffle=True, seed=7)
    key, value = tf.TFRecordReader().read(fq)
    batch = tf.train.shuffle_batch({"key": key, "value": value}, batch_size=7, capacity=30, min_after_dequeue=10,
                                   num_threads=2, seed=3, allow_smaller_final_batch=True)
    assert sorted(batch) == ["key", "value"]
    got = _run_with_coordinator(batch)
    flat = [(k, v) for b in got for k, v in zip(b["key"], b["value"])]
    assert [len(b["key"]) for b in got] == [7] * 8 + [4]  # 60 records
    assert collections.Counter(flat) == collections.Counter(records * 3)
    assert flat != records * 3  # shuffled (a fixed seed: this order is not the written one)


def test_shuffle_batch_without_smaller_final_batch_drops_the_remainder(graph, tmp_path):
    files, records = _write_tfrecords(tmp_path, 1, 10)
    fq = tf.train.string_input_producer(files, num_epochs=1)
    _, value = tf.TFRecordReader().read(fq)
    batch = tf.train.shuffle_batch([value], batch_size=4, capacity=20, min_after_dequeue=2)
    assert batch.shape.as_list() == [4]  # a one-element list gives a tensor, as TF
    got = _run_with_coordinator(batch)
    assert len(got) == 2
    assert set(v for b in got for v in b) <= {v for _, v in records}
    assert len({v for b in got for v in b}) == 8


def test_text_line_reader_skips_header_and_strips_newlines(graph, tmp_path):
    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    a.write_bytes(b"header\nx,1\r\ny,2\n\nz,4\r")  # TF strips "\r" before "\n" and at the end
    b.write_bytes(b"only-header\n")
    fq = tf.train.string_input_producer([str(a), str(b), str(a)], num_epochs=1, shuffle=False)
    key, value = tf.TextLineReader(skip_header_lines=1).read(fq)
    got = _run_with_coordinator([key, value])
    assert got == [[f"{a}:{n}".encode(), v] for n, v in ((2, b"x,1"), (3, b"y,2"), (4, b""), (5, b"z,4"))] * 2


def test_fixed_length_record_reader_header_footer_hop(graph, tmp_path):
    rng = np.random.default_rng(0)
    data = rng.integers(0, 256, size=3 + 6 * 5 + 2, dtype=np.uint8).tobytes()
    path = tmp_path / "recs.bin"
    path.write_bytes(data)
    fq = tf.train.string_input_producer([str(path)], num_epochs=1, shuffle=False)
    key, value = tf.FixedLengthRecordReader(record_bytes=6, header_bytes=3, footer_bytes=2).read(fq)
    label = tf.decode_raw(value, tf.uint8)
    got = _run_with_coordinator([key, label])
    body = np.frombuffer(data[3:-2], np.uint8).reshape(5, 6)
    assert [k for k, _ in got] == [f"{path}:{i}".encode() for i in range(5)]
    np.testing.assert_array_equal(np.stack([v for _, v in got]), body)
    with tf.Graph().as_default():  # hop_bytes: record i starts at header + i*hop while it and the footer fit
        fq = tf.train.string_input_producer([str(path)], num_epochs=1, shuffle=False)
        _, value = tf.FixedLengthRecordReader(record_bytes=6, header_bytes=3, footer_bytes=2, hop_bytes=4).read(fq)
        got = [v for v in _run_with_coordinator(value)]
        want = [data[3 + 4 * i:3 + 4 * i + 6] for i in range(8) if 3 + 4 * i + 6 + 2 <= len(data)]
        assert got == want and len(want) == 7


def test_whole_file_identity_reader_counters_reset_and_read_up_to(graph, tmp_path):
    paths = []
    for i in range(3):
        p = tmp_path / f"f{i}.txt"
        p.write_bytes(f"contents {i}".encode() * (i + 1))
        paths.append(str(p))
    q = tf.FIFOQueue(10, tf.string, shapes=[[]])
    names = tf.placeholder(tf.string, [None])
    enq = q.enqueue_many([names])
    whole = tf.WholeFileReader()
    key, value = whole.read(q)
    ident = tf.IdentityReader()
    ikeys, ivals = ident.read_up_to(q, 5)
    lines = tf.TextLineReader()
    lkeys, lvals = lines.read_up_to(q, 3)
    produced, done = whole.num_records_produced(), whole.num_work_units_completed()
    with tf.Session() as s:
        s.run(enq, {names: paths[:2]})
        assert s.run([key, value], options=OPTS) == [paths[0].encode(), b"contents 0"]
        assert s.run([produced, done]) == [1, 1]  # a whole file is one finished unit at once
        assert s.run(value, options=OPTS) == b"contents 1contents 1"
        s.run(whole.reset())
        assert s.run([produced, done]) == [0, 0]
        s.run(enq, {names: ["w1", "w2"]})
        k, v = s.run([ikeys, ivals], options=OPTS)  # identity: one record per unit, read_up_to ends with it
        assert list(k) == [b"w1"] and list(v) == [b"w1"]
        lp = tmp_path / "lines.txt"
        lp.write_bytes(b"a\nb\nc\nd\ne\n")
        s.run(enq, {names: [str(lp), str(lp)]})
        assert list(s.run(ikeys, options=OPTS)) == [b"w2"]
        assert list(s.run(lvals, options=OPTS)) == [b"a", b"b", b"c"]
        assert list(s.run(lvals, options=OPTS)) == [b"d", b"e"]  # the end of a file ends a read_up_to
        assert list(s.run(lvals, options=OPTS)) == [b"a", b"b", b"c"]
        s.run(q.close())
        assert list(s.run(lvals, options=OPTS)) == [b"d", b"e"]
        with pytest.raises(tf.errors.OutOfRangeError):
            s.run(lvals, options=OPTS)
        with pytest.raises(tf.errors.OutOfRangeError):
            s.run(key, options=OPTS)


def test_missing_file_fails_one_read_then_the_next_file_is_read(graph, tmp_path):
    files, records = _write_tfrecords(tmp_path, 1, 2)
    q = tf.FIFOQueue(10, tf.string, shapes=[[]])
    enq = q.enqueue_many([[str(tmp_path / "missing.tfrecord")] + files])
    key, value = tf.TFRecordReader().read(q)
    with tf.Session() as s:
        s.run(enq)
        with pytest.raises(tf.errors.NotFoundError, match="missing.tfrecord"):
            s.run(value, options=OPTS)
        assert [s.run(key, options=OPTS) for _ in range(2)] == [k for k, _ in records]


def test_blocked_read_honours_deadline(graph):
    q = tf.FIFOQueue(10, tf.string, shapes=[[]])
    _, value = tf.TFRecordReader().read(q)
    with tf.Session() as s:
        with pytest.raises(tf.errors.DeadlineExceededError):
            s.run(value, options=tf.RunOptions(timeout_in_ms=100))


def test_dynamic_pad_batch_pads_each_batch_to_its_longest(graph, tmp_path):
    lines = [b"ab", b"abcde", b"a", b"abc", b"abcdefg", b"xy"]
    p = tmp_path / "var.txt"
    p.write_bytes(b"\n".join(lines) + b"\n")
    fq = tf.train.string_input_producer([str(p)], num_epochs=1, shuffle=False)
    _, line = tf.TextLineReader().read(fq)
    codes = tf.decode_raw(line, tf.uint8)
    length = tf.shape(codes)[0]
    padded, lengths = tf.train.batch([codes, length], batch_size=4, dynamic_pad=True, allow_smaller_final_batch=True)
    got = _run_with_coordinator([padded, lengths])
    for (arr, lens), chunk in zip(got, [lines[:4], lines[4:]]):
        want = np.zeros((len(chunk), max(map(len, chunk))), np.uint8)
        for i, c in enumerate(chunk):
            want[i, :len(c)] = np.frombuffer(c, np.uint8)
        np.testing.assert_array_equal(arr, want)
        assert list(lens) == [len(c) for c in chunk]
    assert len(got) == 2


def test_range_slice_and_input_producers_with_num_threads(graph):
    x = np.arange(12, dtype=np.float32).reshape(6, 2)
    y = np.arange(6, dtype=np.int64) * 10
    xs, ys = tf.train.slice_input_producer([x, y], num_epochs=2, shuffle=True, seed=1)
    bx, by = tf.train.batch([xs, ys], batch_size=3, num_threads=3)
    got = _run_with_coordinator([bx, by])
    assert len(got) == 4
    rows = [(tuple(a), int(b)) for bxv, byv in got for a, b in zip(bxv, byv)]
    assert collections.Counter(rows) == collections.Counter([(tuple(x[i]), int(y[i])) for i in range(6)] * 2)
    with tf.Graph().as_default():
        q = tf.train.range_input_producer(5, num_epochs=2, shuffle=False)
        assert _run_with_coordinator(q.dequeue()) == [0, 1, 2, 3, 4] * 2
    with tf.Graph().as_default():
        q = tf.train.input_producer(tf.constant([[1, 2], [3, 4]]), num_epochs=1, shuffle=False, capacity=4)
        assert [list(v) for v in _run_with_coordinator(q.dequeue())] == [[1, 2], [3, 4]]


def test_batch_join_maybe_batch_join_and_shuffle_batch_join(graph, tmp_path):
    files, records = _write_tfrecords(tmp_path, 3, 4)
    fq = tf.train.string_input_producer(files, num_epochs=1, shuffle=False)
    readers = [tf.TFRecordReader().read(fq) for _ in range(2)]  # one thread per reader, sharing the file queue
    joined = tf.train.batch_join([[k, v] for k, v in readers], batch_size=5, allow_smaller_final_batch=True)
    got = _run_with_coordinator(joined)
    flat = [(k, v) for ks, vs in got for k, v in zip(ks, vs)]
    assert collections.Counter(flat) == collections.Counter(records)
    with tf.Graph().as_default():
        fq = tf.train.string_input_producer(files, num_epochs=1, shuffle=False)
        readers = [tf.TFRecordReader().read(fq) for _ in range(2)]
        joined = tf.train.maybe_batch_join([{"k": k, "v": v} for k, v in readers], tf.constant(True), batch_size=5,
                                           allow_smaller_final_batch=True)
        flat = [(k, v) for x in _run_with_coordinator(joined) for k, v in zip(x["k"], x["v"])]
        assert collections.Counter(flat) == collections.Counter(records)
    with tf.Graph().as_default():
        fq = tf.train.string_input_producer(files, num_epochs=2, shuffle=False)
        pairs = [tf.TFRecordReader().read(fq) for _ in range(3)]
        b = tf.train.shuffle_batch_join([{"k": k, "v": v} for k, v in pairs], batch_size=5, capacity=20,
                                        min_after_dequeue=5, seed=2, allow_smaller_final_batch=True)
        got = _run_with_coordinator(b)
        flat = [(k, v) for x in got for k, v in zip(x["k"], x["v"])]
        assert collections.Counter(flat) == collections.Counter(records * 2)


def test_maybe_batch_filters_by_keep_input(graph):
    v = tf.train.range_input_producer(10, num_epochs=1, shuffle=False).dequeue()
    b = tf.train.maybe_batch([v], tf.equal(v % 3, 0), batch_size=2, allow_smaller_final_batch=True)
    got = _run_with_coordinator(b)
    assert [list(x) for x in got] == [[0, 3], [6, 9]]
    with tf.Graph().as_default():  # a vector keep_input with enqueue_many
        xs = tf.constant([1, 2, 3, 4, 5, 6])
        lim = tf.train.limit_epochs(xs, num_epochs=1)
        b = tf.train.maybe_batch(lim, lim > 3, batch_size=2, enqueue_many=True, allow_smaller_final_batch=True)
        assert [list(x) for x in _run_with_coordinator(b)] == [[4, 5], [6]]


def test_monitored_training_session_reads_until_num_epochs_end(graph, tmp_path):
    files, records = _write_tfrecords(tmp_path, 3, 3)
    fq = tf.train.string_input_producer(files, num_epochs=2, shuffle=True, seed=5)
    key, value = tf.TFRecordReader().read(fq)
    batch = tf.train.shuffle_batch([key, value], batch_size=4, capacity=12, min_after_dequeue=3,
                                   allow_smaller_final_batch=True, num_threads=2)
    seen = []
    with tf.train.MonitoredTrainingSession() as sess:
        for _ in range(MAX_STEPS):
            if sess.should_stop():
                break
            ks, vs = sess.run(batch, options=OPTS)
            seen.extend(zip(ks, vs))
        assert sess.should_stop()
    assert collections.Counter(seen) == collections.Counter(records * 2)
    left = [t for t in threading.enumerate() if t.name.startswith("QueueRunnerThread")]
    for t in left:
        t.join(30)
    assert not any(t.is_alive() for t in left)


def test_limit_epochs_match_filenames_once_and_file_ops(graph, tmp_path):
    (tmp_path / "sub").mkdir()
    written = tf.write_file(str(tmp_path / "sub" / "new" / "x.txt"), b"payload")
    for name in ("b.dat", "a.dat", ".hidden.dat", "c.txt"):
        (tmp_path / name).write_bytes(name.encode())
    matched = tf.train.match_filenames_once(str(tmp_path / "*.dat"))
    listed = tf.io.matching_files([str(tmp_path / "*.txt"), str(tmp_path / "a*")])
    counted = tf.train.limit_epochs(tf.constant(5), num_epochs=2)
    assert tf.get_collection(tf.GraphKeys.LOCAL_VARIABLES)[0] is matched
    with tf.Session() as s:
        s.run(tf.local_variables_initializer())
        assert list(s.run(matched)) == sorted(str(tmp_path / n).encode() for n in ("a.dat", "b.dat", ".hidden.dat"))
        assert list(s.run(listed)) == sorted(str(tmp_path / n).encode() for n in ("c.txt", "a.dat"))
        s.run(written)
        assert s.run(tf.read_file(str(tmp_path / "sub" / "new" / "x.txt"))) == b"payload"
        assert s.run(tf.io.read_file(str(tmp_path / "c.txt"))) == b"c.txt"
        assert [s.run(counted), s.run(counted)] == [5, 5]
        with pytest.raises(tf.errors.OutOfRangeError, match="Reached limit of 2"):
            s.run(counted)
        with pytest.raises(tf.errors.NotFoundError):
            s.run(tf.read_file(str(tmp_path / "nope")))


def test_summaries_and_argument_errors(graph):
    fq = tf.train.string_input_producer(["a", "b"], capacity=16)
    assert fq.dtypes == [tf.string]
    assert [t.op.name for t in tf.get_collection(tf.GraphKeys.SUMMARIES)] == ["input_producer/fraction_of_16_full"]
    assert len(tf.get_collection(tf.GraphKeys.QUEUE_RUNNERS)) == 1
    v = tf.constant([1.0])
    tf.train.shuffle_batch([v], 2, capacity=30, min_after_dequeue=10)
    assert "shuffle_batch/fraction_over_10_of_20_full" in [t.op.name for t in tf.get_collection(
        tf.GraphKeys.SUMMARIES)]
    with pytest.raises(ValueError, match="must be bigger than min_after_dequeue"):
        tf.train.shuffle_batch([v], 2, capacity=10, min_after_dequeue=10)
    with pytest.raises(ValueError, match="non-null"):
        tf.train.string_input_producer([])
    with pytest.raises(ValueError, match="num_epochs must be > 0"):
        tf.train.limit_epochs(v, 0)
    with pytest.raises(ValueError, match="fully defined"):
        tf.train.batch([tf.placeholder(tf.float32, [None])], 2)
    with pytest.raises(ValueError, match="vector"):
        tf.train.maybe_batch([v], tf.constant([True]), 2)
    with pytest.raises(TypeError, match="queue"):
        tf.TFRecordReader().read(v)


def test_stopping_early_with_endless_input_leaves_no_thread_running(graph, tmp_path):
    files, records = _write_tfrecords(tmp_path, 2, 3)
    fq = tf.train.string_input_producer(files)  # num_epochs=None: endless
    _, value = tf.TFRecordReader().read(fq)
    batch = tf.train.shuffle_batch([value], batch_size=4, capacity=16, min_after_dequeue=4, num_threads=3)
    before = {t.ident for t in threading.enumerate()}
    with tf.train.MonitoredTrainingSession() as sess:
        got = [sess.run(batch, options=OPTS) for _ in range(20)]  # 80 examples from 6 records: many epochs
        assert not sess.should_stop()
    assert set(v for b in got for v in b) == {v for _, v in records}
    left = [t for t in threading.enumerate() if t.ident not in before]
    for t in left:
        t.join(30)
    assert not any(t.is_alive() for t in left)
    with tf.Session() as s:  # a plain Session: the coordinator's request_stop cancels the blocked enqueues
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(s, coord=coord)
        assert len(s.run(batch, options=OPTS)) == 4
        coord.request_stop()
        coord.join(threads, stop_grace_period_secs=30)
        assert not any(t.is_alive() for t in threads)


def test_tfrecord_reader_reads_gzip_files_with_uncompressed_offsets(graph, tmp_path):
    path = str(tmp_path / "z.tfrecord.gz")
    opts = tf.io.TFRecordOptions(tf.io.TFRecordCompressionType.GZIP)
    data = [b"alpha", b"", b"gamma" * 50]
    with tf.io.TFRecordWriter(path, options=opts) as w:
        for d in data:
            w.write(d)
    fq = tf.train.string_input_producer([path], num_epochs=1, shuffle=False)
    key, value = tf.TFRecordReader(options=opts).read(fq)
    got = _run_with_coordinator([key, value])
    offsets = np.cumsum([0] + [16 + len(d) for d in data[:-1]])
    assert got == [[f"{path}:{o}".encode(), d] for o, d in zip(offsets, data)]
