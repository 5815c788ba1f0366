"""`tf.keras.utils.to_categorical` and `normalize` (numpy helpers, TF 1.15's keras/utils/np_utils.py)."""
from __future__ import annotations

import numpy as np


def to_categorical(y, num_classes=None, dtype="float32"):
    """Class ids (any shape; a trailing axis of 1 is dropped) -> one-hot rows of `num_classes` (max + 1)."""
    y = np.array(y, dtype="int")
    input_shape = y.shape
    if input_shape and input_shape[-1] == 1 and len(input_shape) > 1:
        input_shape = tuple(input_shape[:-1])
    y = y.ravel()
    if not num_classes:
        num_classes = int(np.max(y)) + 1
    n = y.shape[0]
    categorical = np.zeros((n, num_classes), dtype=dtype)
    categorical[np.arange(n), y] = 1
    return np.reshape(categorical, input_shape + (num_classes,))


def normalize(x, axis=-1, order=2):
    """x divided by its `order`-norm along `axis` (zero norms left as 1)."""
    norms = np.atleast_1d(np.linalg.norm(x, order, axis))
    norms[norms == 0] = 1
    return x / np.expand_dims(norms, axis)
