"""Dataset.cache(filename): TF 1.15's file cache. The first complete pass writes the files and later passes and
iterators read them without running the input (oracle: the values written and a call counter on the input);
a pass that stops early, fails or is closed leaves no cache behind; a lockfile, a dtype mismatch and a corrupt
file are clear errors."""
import os

import numpy as np
import pytest

import tensorfleet as tf
from test_data import drain

Dataset = tf.data.Dataset


@pytest.fixture(autouse=True)
def _graph():
    with tf.Graph().as_default():
        yield


def _source(calls, offset=0, fail_at=None):
    """Elements (float vector, int64 scalar, string) from a generator that counts its runs."""
    def gen():
        calls.append(1)
        for i in range(4):
            if i == fail_at:
                raise ValueError("input broke")
            yield np.arange(3, dtype=np.float32) + i + offset, i + offset, f"row {i + offset}\x00".encode()
    return Dataset.from_generator(gen, (tf.float32, tf.int64, tf.string), ([3], [], []))


def _want(offset=0):
    return [(np.arange(3, dtype=np.float32) + i + offset, i + offset, f"row {i + offset}\x00".encode())
            for i in range(4)]


def _check(got, want):
    assert len(got) == len(want)
    for (a, b, c), (x, y, z) in zip(got, want):
        np.testing.assert_array_equal(a, x)
        assert a.dtype == np.float32 and int(b) == y and c == z


def _files(tmp_path):
    return sorted(os.listdir(tmp_path))


def test_first_pass_writes_later_passes_and_iterators_read(tmp_path):
    prefix = str(tmp_path / "cache")
    calls = []
    _check(drain(_source(calls).cache(prefix).repeat(3)), _want() * 3)
    assert len(calls) == 1  # passes 2 and 3 came from the files
    assert _files(tmp_path) == ["cache.data-00000-of-00001", "cache.index"]  # no lockfile, no partial file
    # a new iterator over a dataset whose input now yields other values reads the cache: the input never runs
    calls.clear()
    _check(drain(_source(calls, offset=100).cache(prefix)), _want())
    assert calls == []
    # an uncached dataset sees the new values (the oracle is the input, not the cache)
    _check(drain(_source(calls, offset=100)), _want(100))


def test_a_partial_pass_is_discarded_and_written_again(tmp_path):
    prefix = str(tmp_path / "c")
    calls = []
    _check(drain(_source(calls).cache(prefix).take(2)), _want()[:2])  # the writer never saw the end
    assert _files(tmp_path) == []
    with tf.Session() as sess:  # stopped by closing the session after one element
        element = _source(calls).cache(prefix).make_one_shot_iterator().get_next()
        _check([sess.run(element)], _want()[:1])
    assert _files(tmp_path) == []
    with pytest.raises(tf.errors.OpError, match="input broke"):  # an error upstream
        drain(_source(calls, fail_at=3).cache(prefix))
    assert _files(tmp_path) == []
    calls.clear()
    _check(drain(_source(calls, offset=7).cache(prefix)), _want(7))
    _check(drain(_source(calls).cache(prefix)), _want(7))
    assert len(calls) == 1


def test_filename_fed_at_run_time_selects_the_cache(tmp_path):
    name = tf.placeholder(tf.string, [])
    calls = []
    it = _source(calls).cache(name).make_initializable_iterator()
    element = it.get_next()
    with tf.Session() as sess:
        for f in ("a", "b", "a"):
            sess.run(it.initializer, {name: str(tmp_path / f)})
            _check(drain(element=element, sess=sess), _want())
    assert len(calls) == 2 and _files(tmp_path) == ["a.data-00000-of-00001", "a.index", "b.data-00000-of-00001",
                                                    "b.index"]
    # an empty filename is the in-memory cache
    sess_calls = []
    _check(drain(_source(sess_calls).cache(tf.constant("")).repeat(2)), _want() * 2)
    assert len(sess_calls) == 1


def test_lockfile_dtype_mismatch_and_corruption_are_errors(tmp_path):
    prefix = str(tmp_path / "c")
    open(prefix + "_0.lockfile", "w").close()
    with pytest.raises(tf.errors.AlreadyExistsError, match="concurrent caching iterator.*c_0.lockfile"):
        drain(Dataset.range(3).cache(prefix))
    os.remove(prefix + "_0.lockfile")
    assert [int(v) for v in drain(Dataset.range(3).cache(prefix))] == [0, 1, 2]
    with pytest.raises(tf.errors.InvalidArgumentError, match="dtypes \\['int64'\\].*produces \\['float32'\\]"):
        drain(Dataset.range(3).map(lambda v: tf.cast(v, tf.float32)).cache(prefix))
    data = prefix + ".data-00000-of-00001"
    raw = bytearray(open(data, "rb").read())
    raw[-6] ^= 0xFF
    open(data, "wb").write(bytes(raw))
    with pytest.raises(tf.errors.DataLossError, match="corrupted record"):
        drain(Dataset.range(3).cache(prefix))
    with pytest.raises(tf.errors.NotFoundError, match="cannot create"):
        drain(Dataset.range(3).cache(str(tmp_path / "missing" / "c")))
    with pytest.raises(TypeError, match="filename must be"):
        Dataset.range(3).cache(3)
