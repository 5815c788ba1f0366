"""Real data sets for Tensorfleet examples, tests and benchmarks.

This package is the equivalent of TF1's
``tensorflow.examples.tutorials.mnist.input_data``: ``read_data_sets`` returns a
``Datasets(train, validation, test)`` namedtuple of :class:`DataSet` objects whose
``next_batch`` has TF's exact epoch semantics.  It is used by ``examples/`` and
``bench/``; it depends only on numpy and the standard library (plus scikit-learn's
data file for ``source="digits"``) and imports nothing else from ``tensorfleet``.

Modules: ``input_data`` (``read_data_sets``: sources, splits, conversion, and the
differences from TF's), ``dataset`` (``DataSet``), ``samples`` (the 5k MNIST
sample and digits), ``mnist`` (the full set's IDX files and their fetch).

Command line: ``python -m tensorfleet.datasets fetch [--dest DIR] [--force]`` and
``python -m tensorfleet.datasets verify [--dest DIR]``.
"""

from __future__ import annotations

from .dataset import DataSet, Datasets, dense_to_one_hot
from .input_data import SOURCES, read_data_sets
from .mnist import (DataIntegrityError, MissingDataError, default_data_dir, fetch_mnist, find_mnist_dir, load_mnist,
                    parse_idx, read_idx, verify_mnist_dir)
from .samples import MNIST_5K_RELPATH, clear_cache, load_digits_arrays, load_mnist_5k, mnist_5k_path

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
