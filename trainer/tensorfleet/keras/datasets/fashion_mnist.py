"""`tf.keras.datasets.fashion_mnist.load_data()`: ((x_train, y_train), (x_test, y_test)) as Keras's: images uint8
[60000, 28, 28] / [10000, 28, 28], labels uint8. Read from the four IDX files Keras downloads
(`train-labels-idx1-ubyte.gz`, `train-images-idx3-ubyte.gz`, `t10k-labels-idx1-ubyte.gz`,
`t10k-images-idx3-ubyte.gz`, gzipped or not) in `$TENSORFLEET_DATA_DIR/fashion_mnist/` or Keras's cache
`~/.keras/datasets/fashion-mnist/`; never downloaded.
"""
from __future__ import annotations

import numpy as np

from ...datasets.mnist import IMAGES_MAGIC, LABELS_MAGIC, read_idx
from .files import find_files

ORIGIN = "https://github.com/zalandoresearch/fashion-mnist (the data/fashion/*.gz files)"
_NAMES = ["train-labels-idx1-ubyte", "train-images-idx3-ubyte", "t10k-labels-idx1-ubyte", "t10k-images-idx3-ubyte"]


def load_data():
    files = find_files("fashion_mnist", [[n + ".gz", n] for n in _NAMES], "fashion-mnist", ORIGIN)
    out = []
    for split in ("train", "t10k"):
        labels = read_idx(files[f"{split}-labels-idx1-ubyte.gz"], LABELS_MAGIC)
        images = read_idx(files[f"{split}-images-idx3-ubyte.gz"], IMAGES_MAGIC)
        if images.shape[1:] != (28, 28) or len(images) != len(labels):
            raise ValueError(f"fashion_mnist: {split} images {images.shape} and labels {labels.shape} do not match")
        out.append((np.array(images), np.array(labels)))
    return tuple(out)
