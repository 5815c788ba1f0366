"""`tf.keras.datasets.boston_housing.load_data(path='boston_housing.npz', test_split=0.2, seed=113)`: Keras's
shuffle (numpy's global RandomState seeded with `seed`) and split of the 506 samples (13 features, float64),
from the `boston_housing.npz` Keras downloads (arrays `x`, `y`, read without pickle) in
`$TENSORFLEET_DATA_DIR/boston_housing/` or `~/.keras/datasets/`; never downloaded.
"""
from __future__ import annotations

import numpy as np

from .files import find_files, load_npz

ORIGIN = "https://storage.googleapis.com/tensorflow/tf-keras-datasets/boston_housing.npz"


def load_data(path="boston_housing.npz", test_split=0.2, seed=113):
    if not 0 <= test_split < 1:
        raise ValueError("test_split must be in [0, 1)")
    files = find_files("boston_housing", [path], origin=ORIGIN)
    x, y = load_npz(files[path], ["x", "y"])
    np.random.seed(seed)
    indices = np.arange(len(x))
    np.random.shuffle(indices)
    x, y = x[indices], y[indices]
    cut = int(len(x) * (1 - test_split))
    return (np.array(x[:cut]), np.array(y[:cut])), (np.array(x[cut:]), np.array(y[cut:]))
