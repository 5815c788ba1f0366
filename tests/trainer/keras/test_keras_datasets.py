"""`tf.keras.datasets`: Keras's arrays, offline. MNIST from the project's pinned copy (the `full_mnist_dir`
fixture) or Keras's own cached npz; Fashion-MNIST, CIFAR-10/100 and Boston housing from files placed in the data
directory (written here in their published formats); clear errors for what is missing or pickled."""
import gzip
import struct

import numpy as np
import pytest

import tensorfleet as tf

D = tf.keras.datasets


@pytest.fixture
def data_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("TENSORFLEET_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))  # Keras's cache ~/.keras/datasets: empty
    return tmp_path / "data"


def test_mnist_arrays_as_keras_gives_them(full_mnist_dir, tmp_path, monkeypatch):
    monkeypatch.setenv("TENSORFLEET_DATA_DIR", str(full_mnist_dir.parent))  # <dir>/mnist: the pinned copy
    monkeypatch.setenv("HOME", str(tmp_path))  # no Keras cache
    (x_train, y_train), (x_test, y_test) = D.mnist.load_data()
    assert (x_train.shape, x_train.dtype, y_train.shape, y_train.dtype) == ((60000, 28, 28), np.uint8, (60000,),
                                                                           np.uint8)
    assert (x_test.shape, x_test.dtype, y_test.shape, y_test.dtype) == ((10000, 28, 28), np.uint8, (10000,), np.uint8)
    assert list(y_train[:8]) == [5, 0, 4, 1, 9, 2, 1, 3] and list(y_test[:8]) == [7, 2, 1, 0, 4, 1, 4, 9]
    assert np.bincount(y_test).tolist() == [980, 1135, 1032, 1010, 982, 892, 958, 1028, 974, 1009]
    assert x_train.max() == 255 and x_train.flags.writeable
    # the first training image (a 5): its top rows are blank, rows 5-25 hold the digit
    assert not x_train[0, :5].any() and x_train[0, 5:25].any()


def test_mnist_prefers_the_npz_keras_downloaded(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    cache = tmp_path / ".keras" / "datasets"
    cache.mkdir(parents=True)
    arrays = {"x_train": np.full((3, 28, 28), 7, np.uint8), "y_train": np.arange(3, dtype=np.uint8),
              "x_test": np.zeros((2, 28, 28), np.uint8), "y_test": np.ones(2, np.uint8)}
    np.savez(cache / "mnist.npz", **arrays)
    (x_train, y_train), (x_test, y_test) = D.mnist.load_data()
    np.testing.assert_array_equal(x_train, arrays["x_train"])
    np.testing.assert_array_equal(y_test, arrays["y_test"])
    np.savez(cache / "pickled.npz", x_train=np.array([[1], [1, 2]], dtype=object), y_train=arrays["y_train"],
             x_test=arrays["x_test"], y_test=arrays["y_test"])
    with pytest.raises(ValueError, match="without pickle"):
        D.mnist.load_data(path="pickled.npz")


def _idx(array, magic):
    return struct.pack(">I", magic) + b"".join(struct.pack(">I", d) for d in array.shape) + array.tobytes()


def test_fashion_mnist_from_its_idx_files(data_dir):
    with pytest.raises(D.MissingDataError, match=r"train-labels-idx1-ubyte.*never downloads.*zalandoresearch"):
        D.fashion_mnist.load_data()
    d = data_dir / "fashion_mnist"
    d.mkdir(parents=True)
    rng = np.random.RandomState(0)
    want = {}
    for split, n in (("train", 6), ("t10k", 4)):
        want[split] = rng.randint(0, 256, (n, 28, 28)).astype(np.uint8), rng.randint(0, 10, n).astype(np.uint8)
        (d / f"{split}-images-idx3-ubyte.gz").write_bytes(gzip.compress(_idx(want[split][0], 2051)))
        (d / f"{split}-labels-idx1-ubyte").write_bytes(_idx(want[split][1], 2049))  # plain files work too
    (x_train, y_train), (x_test, y_test) = D.fashion_mnist.load_data()
    np.testing.assert_array_equal(x_train, want["train"][0])
    np.testing.assert_array_equal(y_test, want["t10k"][1])
    assert x_train.dtype == y_train.dtype == np.uint8


def _cifar_records(images_hwc, labels):
    """CIFAR's binary layout from channels-last images: label byte(s), then the R, G, B planes."""
    planes = images_hwc.transpose(0, 3, 1, 2).reshape(len(images_hwc), -1)
    return np.concatenate([labels.reshape(len(labels), -1).astype(np.uint8), planes], axis=1).tobytes()


def test_cifar10_from_the_binary_version(data_dir):
    with pytest.raises(D.MissingDataError, match="data_batch_1.bin.*cifar-10-binary.tar.gz"):
        D.cifar10.load_data()
    d = data_dir / "cifar10"
    d.mkdir(parents=True)
    rng = np.random.RandomState(1)
    images = rng.randint(0, 256, (12, 32, 32, 3)).astype(np.uint8)
    labels = rng.randint(0, 10, 12).astype(np.uint8)
    for i in range(5):
        (d / f"data_batch_{i + 1}.bin").write_bytes(_cifar_records(images[2 * i:2 * i + 2], labels[2 * i:2 * i + 2]))
    (d / "test_batch.bin").write_bytes(_cifar_records(images[10:], labels[10:]))
    (x_train, y_train), (x_test, y_test) = D.cifar10.load_data()
    np.testing.assert_array_equal(x_train, images[:10])
    np.testing.assert_array_equal(y_train, labels[:10].reshape(-1, 1))
    np.testing.assert_array_equal(x_test, images[10:])
    tf.keras.backend.set_image_data_format("channels_first")
    (x_train, _), _ = D.cifar10.load_data()
    np.testing.assert_array_equal(x_train, images[:10].transpose(0, 3, 1, 2))
    (d / "test_batch.bin").write_bytes(b"\0" * 100)
    with pytest.raises(ValueError, match="not a whole number of 3073-byte CIFAR records"):
        D.cifar10.load_data()


def test_cifar100_fine_and_coarse_labels(data_dir):
    d = data_dir / "cifar100"
    d.mkdir(parents=True)
    images = np.arange(3 * 3072, dtype=np.int64).reshape(3, 32, 32, 3).astype(np.uint8)
    labels = np.array([[1, 41], [2, 42], [3, 43]], np.uint8)  # coarse, fine
    (d / "train.bin").write_bytes(_cifar_records(images, labels))
    (d / "test.bin").write_bytes(_cifar_records(images[:1], labels[:1]))
    (x_train, y_train), (x_test, y_test) = D.cifar100.load_data()
    np.testing.assert_array_equal(x_train, images)
    assert y_train.tolist() == [[41], [42], [43]] and y_test.tolist() == [[41]]
    assert D.cifar100.load_data(label_mode="coarse")[0][1].tolist() == [[1], [2], [3]]
    with pytest.raises(ValueError, match="label_mode"):
        D.cifar100.load_data(label_mode="medium")


def test_boston_housing_split_as_keras(data_dir):
    d = data_dir / "boston_housing"
    d.mkdir(parents=True)
    x = np.arange(506 * 13, dtype=np.float64).reshape(506, 13)
    y = np.arange(506, dtype=np.float64)
    np.savez(d / "boston_housing.npz", x=x, y=y)
    (x_train, y_train), (x_test, y_test) = D.boston_housing.load_data()
    order = np.random.RandomState(113).permutation(506)  # Keras: np.random.seed(113); np.random.shuffle
    assert len(x_train) == 404 and len(x_test) == 102
    np.testing.assert_array_equal(y_train, y[order[:404]])
    np.testing.assert_array_equal(x_test, x[order[404:]])


def test_pickled_sets_are_refused():
    for module in (D.imdb, D.reuters):
        with pytest.raises(NotImplementedError, match="never unpickles"):
            module.load_data()
        with pytest.raises(NotImplementedError, match="never unpickles"):
            module.get_word_index()
