"""CIFAR's binary distribution (the format `tf.keras.datasets.cifar10/cifar100` read here instead of the pickled
python one): fixed-size records of label byte(s) followed by 3072 image bytes (1024 red, 1024 green, 1024 blue,
row-major 32x32)."""
from __future__ import annotations

import numpy as np

from .. import backend as K

IMAGE_BYTES = 32 * 32 * 3


def read_records(path: str, label_bytes: int):
    """(images uint8 [N, 3, 32, 32], labels uint8 [N, label_bytes]) of a CIFAR .bin file."""
    raw = np.fromfile(path, dtype=np.uint8)
    record = label_bytes + IMAGE_BYTES
    if raw.size == 0 or raw.size % record:
        raise ValueError(f"{path}: {raw.size} bytes is not a whole number of {record}-byte CIFAR records")
    rows = raw.reshape(-1, record)
    return rows[:, label_bytes:].reshape(-1, 3, 32, 32), rows[:, :label_bytes]


def to_data_format(images):
    """Keras's layout: channels last unless `image_data_format()` is channels_first."""
    if K.image_data_format() == "channels_last":
        return np.ascontiguousarray(images.transpose(0, 2, 3, 1))
    return np.ascontiguousarray(images)
