"""`tf.keras.datasets.mnist.load_data(path='mnist.npz')`: ((x_train, y_train), (x_test, y_test)), images uint8
[60000, 28, 28] and [10000, 28, 28], labels uint8 [60000] and [10000], in the files' order (as Keras's).

From `~/.keras/datasets/<path>` when Keras downloaded it there (an .npz with x_train, y_train, x_test, y_test,
read without pickle), else from the project's pinned IDX copy (tensorfleet.datasets: `python -m
tensorfleet.datasets fetch`, run by `make install`); else MissingDataError saying how to fetch it.
"""
from __future__ import annotations

import os

import numpy as np

from ...datasets import mnist as pinned
from .files import keras_cache_dir, load_npz


def load_data(path="mnist.npz"):
    cached = os.path.join(keras_cache_dir(), path)
    if os.path.isfile(cached):
        x_train, y_train, x_test, y_test = load_npz(cached, ["x_train", "y_train", "x_test", "y_test"])
        return (x_train, y_train), (x_test, y_test)
    train_images, train_labels, test_images, test_labels = pinned.load_mnist()
    return ((np.array(train_images, dtype=np.uint8).reshape(-1, 28, 28), np.array(train_labels, dtype=np.uint8)),
            (np.array(test_images, dtype=np.uint8).reshape(-1, 28, 28), np.array(test_labels, dtype=np.uint8)))
