"""`tf.keras.datasets.cifar10.load_data()`: ((x_train, y_train), (x_test, y_test)) as Keras's: images uint8
[50000, 32, 32, 3] / [10000, 32, 32, 3] (channels first when `image_data_format()` says so), labels uint8
[N, 1]. Read from the binary version's files (`data_batch_1.bin` ... `data_batch_5.bin`, `test_batch.bin`) in
`$TENSORFLEET_DATA_DIR/cifar10/` or `~/.keras/datasets/cifar-10-batches-bin/`; never downloaded, and the pickled
python version is not read.
"""
from __future__ import annotations

import numpy as np

from .cifar import read_records, to_data_format
from .files import find_files

ORIGIN = "https://www.cs.toronto.edu/~kriz/cifar-10-binary.tar.gz, extracted"
_TRAIN = [f"data_batch_{i}.bin" for i in range(1, 6)]


def load_data():
    files = find_files("cifar10", _TRAIN + ["test_batch.bin"], "cifar-10-batches-bin", ORIGIN)
    parts = [read_records(files[name], 1) for name in _TRAIN]
    x_train = np.concatenate([p[0] for p in parts])
    y_train = np.concatenate([p[1] for p in parts])
    x_test, y_test = read_records(files["test_batch.bin"], 1)
    return (to_data_format(x_train), y_train.reshape(-1, 1)), (to_data_format(x_test), y_test.reshape(-1, 1))
