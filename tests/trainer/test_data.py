"""tf.data against Python/numpy oracles and the examples in TF 1.15's Dataset docstrings."""
import threading
import time

import numpy as np
import pytest

import tensorfleet as tf

Dataset = tf.data.Dataset


@pytest.fixture(autouse=True)
def _graph():
    with tf.Graph().as_default():
        yield


def drain(dataset=None, element=None, sess=None, feed=None, limit=10_000):
    """Every element until OutOfRangeError (bounded)."""
    if element is None:
        element = dataset.make_one_shot_iterator().get_next()
    own = sess is None
    sess = sess or tf.Session()
    out = []
    try:
        for _ in range(limit):
            out.append(sess.run(element, feed))
        raise AssertionError("dataset did not end")
    except tf.errors.OutOfRangeError:
        return out
    finally:
        if own:
            sess.close()


def ints(values):
    return [int(v) for v in values]


def test_from_tensor_slices_tuple_dict_and_specs():
    x, y = np.arange(12, dtype=np.float32).reshape(6, 2), np.arange(6)
    ds = Dataset.from_tensor_slices((x, y))
    assert ds.output_types == (tf.float32, tf.int64)
    assert [s.as_list() for s in ds.output_shapes] == [[2], []]
    got = drain(ds)
    assert len(got) == 6
    for i, (a, b) in enumerate(got):
        np.testing.assert_array_equal(a, x[i])
        assert b == y[i]
    d = drain(Dataset.from_tensor_slices({"a": [1, 2], "b": ["x", "y"]}))
    assert [(int(e["a"]), e["b"]) for e in d] == [(1, b"x"), (2, b"y")]
    with pytest.raises(ValueError, match="same size in dimension 0"):
        Dataset.from_tensor_slices((np.zeros(3), np.zeros(4)))


def test_from_tensors_range_zip_take_skip_concatenate():
    assert ints(drain(Dataset.range(5))) == list(range(5))
    assert ints(drain(Dataset.range(2, 11, 3))) == list(range(2, 11, 3))
    assert ints(drain(Dataset.range(5, 1, -2))) == [5, 3]
    one = drain(Dataset.from_tensors(np.ones((2, 3))))
    assert len(one) == 1 and one[0].shape == (2, 3)
    z = drain(Dataset.zip((Dataset.range(3), Dataset.range(10, 20))))
    assert [(int(a), int(b)) for a, b in z] == [(0, 10), (1, 11), (2, 12)]
    assert ints(drain(Dataset.range(10).skip(3).take(4))) == [3, 4, 5, 6]
    assert ints(drain(Dataset.range(3).take(-1))) == [0, 1, 2]
    assert ints(drain(Dataset.range(3).skip(-1))) == []
    assert ints(drain(Dataset.range(2).concatenate(Dataset.range(5, 7)))) == [0, 1, 5, 6]


def test_map_traces_tf_ops_and_matches_numpy():
    x = np.random.RandomState(0).rand(7, 3).astype(np.float32)
    ds = Dataset.from_tensor_slices((x, np.arange(7))).map(lambda a, b: (tf.reduce_sum(a * 2.0), b + 1))
    assert ds.output_types == (tf.float32, tf.int64) and ds.output_shapes[0].as_list() == []
    got = drain(ds)
    np.testing.assert_allclose([a for a, _ in got], (x * 2).sum(1), rtol=1e-6)
    assert [int(b) for _, b in got] == list(range(1, 8))


def test_parallel_map_keeps_order_and_runs_concurrently():
    ds = Dataset.range(40).map(lambda v: v * v, num_parallel_calls=4)
    assert ints(drain(ds)) == [i * i for i in range(40)]
    ds = Dataset.range(5).map(lambda v: v + 1, num_parallel_calls=tf.data.experimental.AUTOTUNE)
    assert ints(drain(ds)) == [1, 2, 3, 4, 5]


def test_map_of_strings_with_decode_csv():
    lines = ["1,2.5", "3,4.5"]
    ds = Dataset.from_tensor_slices(lines).map(lambda line: tuple(tf.decode_csv(line, [[0], [0.0]])))
    got = drain(ds)
    assert [(int(a), float(b)) for a, b in got] == [(1, 2.5), (3, 4.5)]


def test_filter_and_its_type_check():
    assert ints(drain(Dataset.range(10).filter(lambda v: tf.equal(v % 3, 0)))) == [0, 3, 6, 9]
    with pytest.raises(ValueError, match="scalar boolean"):
        Dataset.range(3).filter(lambda v: v)


def test_batch_and_drop_remainder():
    got = drain(Dataset.range(7).batch(3))
    assert [g.tolist() for g in got] == [[0, 1, 2], [3, 4, 5], [6]]
    ds = Dataset.range(7).batch(3, drop_remainder=True)
    assert ds.output_shapes.as_list() == [3]
    assert [g.tolist() for g in drain(ds)] == [[0, 1, 2], [3, 4, 5]]
    bad = Dataset.from_generator(lambda: iter([[1, 2], [3]]), tf.int32, tf.TensorShape([None])).batch(2)
    with pytest.raises(tf.errors.InvalidArgumentError, match="different shapes in component 0"):
        drain(bad)


def test_padded_batch_matches_tf_docs():
    # TF docstring: Dataset.range(1, 5).map(lambda x: tf.fill([x], x)).padded_batch(2, padded_shapes=[None])
    ds = Dataset.range(1, 5).map(lambda v: tf.fill([v], v)).padded_batch(2, padded_shapes=[None])
    got = [g.tolist() for g in drain(ds)]
    assert got == [[[1, 0], [2, 2]], [[3, 3, 3, 0], [4, 4, 4, 4]]]
    fixed = Dataset.range(1, 3).map(lambda v: tf.fill([v], v)).padded_batch(2, [4], padding_values=np.int64(-1))
    assert [g.tolist() for g in drain(fixed)] == [[[1, -1, -1, -1], [2, 2, -1, -1]]]


def test_shuffle_is_a_permutation_bounded_by_the_buffer_and_seeded():
    n, buf = 50, 5
    ds = Dataset.range(n).shuffle(buf, seed=7)
    a, b = ints(drain(ds)), ints(drain(ds))
    assert sorted(a) == list(range(n)) and a == b  # a fixed seed: the same order for every new iterator
    assert a != list(range(n))
    for pos, v in enumerate(a):
        assert v <= pos + buf - 1  # TF's buffer: position p holds one of the first p + buffer_size elements
    assert ints(drain(Dataset.range(10).shuffle(1, seed=3))) == list(range(10))
    two = ints(drain(Dataset.range(20).shuffle(20, seed=1).repeat(2)))
    assert sorted(two[:20]) == sorted(two[20:]) == list(range(20)) and two[:20] != two[20:]  # reshuffled
    same = ints(drain(Dataset.range(20).shuffle(20, seed=1, reshuffle_each_iteration=False).repeat(2)))
    assert same[:20] == same[20:]
    orders = []
    for _ in range(2):
        with tf.Graph().as_default():
            tf.set_random_seed(5)
            orders.append(ints(drain(Dataset.range(30).shuffle(30))))
    assert orders[0] == orders[1] != list(range(30))  # graph seed + op counter: reproducible


def test_repeat_and_cache():
    assert ints(drain(Dataset.range(3).repeat(2))) == [0, 1, 2, 0, 1, 2]
    assert ints(drain(Dataset.range(0).repeat())) == []  # an empty input ends an infinite repeat
    calls = []

    def gen():
        calls.append(1)
        yield from range(3)

    cached = Dataset.from_generator(gen, tf.int64).cache().repeat(3)
    assert ints(drain(cached)) == [0, 1, 2] * 3 and len(calls) == 1
    uncached = Dataset.from_generator(gen, tf.int64).repeat(3)
    calls.clear()
    assert ints(drain(uncached)) == [0, 1, 2] * 3 and len(calls) == 3


def test_interleave_matches_tf_docs():
    # TF docstring: range(1, 6).interleave(lambda x: from_tensors(x).repeat(6), cycle_length=2, block_length=4)
    ds = Dataset.range(1, 6).interleave(lambda v: Dataset.from_tensors(v).repeat(6), cycle_length=2,
                                        block_length=4)
    assert ints(drain(ds)) == [1, 1, 1, 1, 2, 2, 2, 2, 1, 1, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 3, 3, 4, 4, 5, 5, 5, 5,
                               5, 5]
    flat = Dataset.range(1, 4).flat_map(lambda v: Dataset.range(v))
    assert ints(drain(flat)) == [0, 0, 1, 0, 1, 2]


def test_from_generator_converts_and_checks_shapes():
    ds = Dataset.from_generator(lambda: ((i, [i] * 2) for i in range(3)), (tf.int32, tf.float32),
                                (tf.TensorShape([]), tf.TensorShape([2])))
    got = drain(ds)
    assert [(int(a), b.tolist()) for a, b in got] == [(0, [0.0, 0.0]), (1, [1.0, 1.0]), (2, [2.0, 2.0])]
    assert got[0][1].dtype == np.float32
    bad = Dataset.from_generator(lambda: iter([[1, 2, 3]]), tf.int32, tf.TensorShape([2]))
    with pytest.raises(tf.errors.InvalidArgumentError, match="shape"):
        drain(bad)


def test_initializable_iterator_with_fed_placeholder_and_reinit():
    p = tf.placeholder(tf.float32, [None])
    n = tf.placeholder(tf.int64, [])
    it = Dataset.from_tensor_slices(p).batch(n).make_initializable_iterator()
    nxt = it.get_next()
    with tf.Session() as s:
        with pytest.raises(tf.errors.FailedPreconditionError, match="not been initialized"):
            s.run(nxt)
        s.run(it.initializer, {p: [1.0, 2.0, 3.0], n: 2})
        assert [v.tolist() for v in drain(element=nxt, sess=s)] == [[1.0, 2.0], [3.0]]
        with pytest.raises(tf.errors.OutOfRangeError):
            s.run(nxt)  # stays at the end
        s.run(it.initializer, {p: [5.0], n: 1})
        assert s.run(nxt).tolist() == [5.0]
    with pytest.raises(ValueError, match="placeholder"):
        Dataset.from_tensor_slices(p).make_one_shot_iterator()


def test_iterator_from_structure_switches_datasets():
    train = Dataset.range(10).batch(4)
    val = Dataset.range(100, 103).batch(4)
    it = tf.data.Iterator.from_structure(train.output_types, train.output_shapes)
    nxt = it.get_next()
    init_train, init_val = it.make_initializer(train), it.make_initializer(val)
    with tf.Session() as s:
        s.run(init_train)
        assert s.run(nxt).tolist() == [0, 1, 2, 3]
        s.run(init_val)
        assert [v.tolist() for v in drain(element=nxt, sess=s)] == [[100, 101, 102]]
        s.run(init_train)
        assert s.run(nxt).tolist() == [0, 1, 2, 3]
    with pytest.raises(TypeError, match="types"):
        it.make_initializer(Dataset.from_tensors(np.float32(1)))


def test_each_session_iterates_independently():
    nxt = Dataset.range(3).make_one_shot_iterator().get_next()
    with tf.Session() as s1, tf.Session() as s2:
        assert int(s1.run(nxt)) == 0 and int(s1.run(nxt)) == 1 and int(s2.run(nxt)) == 0


def test_prefetch_yields_everything_in_order_and_stops_its_thread():
    before = {t.ident for t in threading.enumerate()}
    ds = Dataset.range(100).map(lambda v: v * 2).prefetch(3)
    assert ints(drain(ds)) == [2 * i for i in range(100)]
    infinite = Dataset.range(5).repeat().prefetch(2)
    nxt = infinite.make_one_shot_iterator().get_next()
    with tf.Session() as s:
        assert ints(s.run(nxt) for _ in range(12)) == [0, 1, 2, 3, 4] * 2 + [0, 1]
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        extra = [t for t in threading.enumerate() if t.ident not in before and t.name.startswith("tf.data")]
        if not extra:
            break
        time.sleep(0.02)
    assert not extra, f"prefetch threads still running after the session closed: {extra}"


def test_prefetch_passes_errors_through_in_order():
    def gen():
        yield 1
        yield 2
        raise RuntimeError("boom in generator")

    nxt = Dataset.from_generator(gen, tf.int64).prefetch(4).make_one_shot_iterator().get_next()
    with tf.Session() as s:
        assert int(s.run(nxt)) == 1 and int(s.run(nxt)) == 2
        with pytest.raises(tf.errors.InvalidArgumentError, match="boom in generator"):
            s.run(nxt)


def test_training_loop_with_out_of_range_like_tf1_scripts():
    x = np.random.RandomState(0).rand(64, 3).astype(np.float32)
    y = x @ np.array([[1.0], [-2.0], [0.5]], np.float32)
    ds = Dataset.from_tensor_slices((x, y)).shuffle(64, seed=0).batch(16).repeat(30).prefetch(2)
    bx, by = ds.make_one_shot_iterator().get_next()
    w = tf.Variable(tf.zeros([3, 1]))
    loss = tf.reduce_mean(tf.square(tf.matmul(bx, w) - by))
    train = tf.train.GradientDescentOptimizer(0.5).minimize(loss)
    steps = 0
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        try:
            while True:
                s.run(train)
                steps += 1
        except tf.errors.OutOfRangeError:
            pass
        wv = s.run(w)
    assert steps == 4 * 30
    np.testing.assert_allclose(wv.ravel(), [1.0, -2.0, 0.5], atol=0.05)


def test_feedable_iterator_switches_by_string_handle():
    """TF1's feedable-iterator pattern: one get_next, fed the handle of a training or validation iterator."""
    train = Dataset.range(100).repeat()
    val = Dataset.range(1000, 1003)
    handle = tf.placeholder(tf.string, [])
    it = tf.data.Iterator.from_string_handle(handle, train.output_types, train.output_shapes)
    nxt = it.get_next()
    train_it = train.make_one_shot_iterator()
    val_it = val.make_initializable_iterator()
    with tf.Session() as s:
        th, vh = s.run([train_it.string_handle(), val_it.string_handle()])
        assert isinstance(th, bytes) and th != vh
        assert [int(s.run(nxt, {handle: th})) for _ in range(3)] == [0, 1, 2]
        with pytest.raises(tf.errors.FailedPreconditionError, match="not been initialized"):
            s.run(nxt, {handle: vh})
        s.run(val_it.initializer)
        assert ints(drain(element=nxt, sess=s, feed={handle: vh})) == [1000, 1001, 1002]
        assert int(s.run(nxt, {handle: th})) == 3  # the training iterator kept its place


def test_text_line_dataset_with_csv_parsing(tmp_path):
    import gzip
    a = tmp_path / "a.csv"
    a.write_bytes(b"x,y\n1,2.5\r\n3,4.5\n")
    b = tmp_path / "b.csv.gz"
    b.write_bytes(gzip.compress(b"x,y\n5,6.5"))  # no trailing newline
    lines = drain(tf.data.TextLineDataset([str(a)]))
    assert lines == [b"x,y", b"1,2.5", b"3,4.5"]
    assert drain(tf.data.TextLineDataset(str(b), compression_type="GZIP")) == [b"x,y", b"5,6.5"]
    ds = tf.data.TextLineDataset(str(a)).skip(1).map(lambda line: tuple(tf.decode_csv(line, [[0], [0.0]])))
    assert [(int(x), float(y)) for x, y in drain(ds)] == [(1, 2.5), (3, 4.5)]
    with pytest.raises(tf.errors.NotFoundError):
        drain(tf.data.TextLineDataset(str(tmp_path / "missing.csv")))


def test_fixed_length_records_like_cifar(tmp_path):
    rng = np.random.RandomState(0)
    labels, images = rng.randint(0, 10, 5).astype(np.uint8), rng.randint(0, 256, (5, 2, 2, 3)).astype(np.uint8)
    path = tmp_path / "data_batch.bin"
    path.write_bytes(b"HDR" + b"".join(bytes([lb]) + im.tobytes() for lb, im in zip(labels, images, strict=True)))

    def decode(record):
        raw = tf.decode_raw(record, tf.uint8)
        return tf.cast(raw[0], tf.int32), tf.reshape(raw[1:], [2, 2, 3])

    ds = tf.data.FixedLengthRecordDataset(str(path), record_bytes=13, header_bytes=3).map(decode)
    got = drain(ds)
    assert [int(lb) for lb, _ in got] == labels.tolist()
    np.testing.assert_array_equal(np.stack([im for _, im in got]), images)
    with pytest.raises(tf.errors.DataLossError, match="whole records"):
        drain(tf.data.FixedLengthRecordDataset(str(path), record_bytes=13))


def test_list_files_and_experimental_helpers(tmp_path):
    for n in ("b.txt", "a.txt", "c.dat"):
        (tmp_path / n).write_text(n)
    names = [v.decode() for v in drain(Dataset.list_files(str(tmp_path / "*.txt"), shuffle=False))]
    assert names == [str(tmp_path / "a.txt"), str(tmp_path / "b.txt")]
    shuffled = sorted(v.decode() for v in drain(Dataset.list_files(str(tmp_path / "*.txt"), seed=3)))
    assert shuffled == names
    with pytest.raises(tf.errors.InvalidArgumentError, match="No files matched"):
        Dataset.list_files(str(tmp_path / "*.none"))
    exp = tf.data.experimental
    sr = ints(drain(Dataset.range(4).apply(exp.shuffle_and_repeat(4, count=2, seed=1))))
    assert sorted(sr[:4]) == sorted(sr[4:]) == [0, 1, 2, 3]
    mb = drain(Dataset.range(5).apply(exp.map_and_batch(lambda v: v * 10, 2, drop_remainder=True)))
    assert [b.tolist() for b in mb] == [[0, 10], [20, 30]]
    ub = drain(Dataset.from_tensors(np.arange(6).reshape(3, 2)).apply(exp.unbatch()))
    assert [u.tolist() for u in ub] == [[0, 1], [2, 3], [4, 5]]
