"""TF1's ``DataSet``: images and labels with ``next_batch`` epoch semantics, and ``dense_to_one_hot``.

Part of ``tensorfleet.datasets``: ``input_data.read_data_sets`` builds three of
these (``Datasets(train, validation, test)``). Differences from TF's class are
listed in ``input_data``'s docstring.
"""

from __future__ import annotations

import collections

import numpy as np

Datasets = collections.namedtuple("Datasets", ["train", "validation", "test"])


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


def dense_to_one_hot(labels_dense, num_classes=10, dtype=np.float32):
    """Convert class labels ``[N]`` to one-hot ``[N, num_classes]``."""
    labels_dense = np.asarray(labels_dense).astype(np.int64).ravel()
    if labels_dense.size and (labels_dense.min() < 0
                              or labels_dense.max() >= num_classes):
        raise ValueError("labels must be in [0, %d)" % num_classes)
    out = np.zeros((labels_dense.shape[0], num_classes), dtype=dtype)
    out[np.arange(labels_dense.shape[0]), labels_dense] = 1
    return out
