"""`tf.keras.backend`'s global settings (TF 1.15's `backend_config.py`): floatx, epsilon, image data format.

Module-level state, as in Keras: the defaults are float32, 1e-7 and channels_last. Unlike Keras, nothing is
read from or written to `~/.keras/keras.json` (no file I/O at import).
"""
from __future__ import annotations

import numpy as np

_FLOATX = "float32"
_EPSILON = 1e-7
_IMAGE_DATA_FORMAT = "channels_last"


def epsilon():
    """The fuzz factor used in numeric expressions (1e-7 by default)."""
    return _EPSILON


def set_epsilon(value):
    global _EPSILON
    _EPSILON = value


def floatx():
    """The default float type as a string: 'float32' unless `set_floatx` changed it."""
    return _FLOATX


def set_floatx(value):
    global _FLOATX
    if value not in {"float16", "float32", "float64"}:
        raise ValueError("Unknown floatx type: " + str(value))
    _FLOATX = str(value)


def image_data_format():
    """'channels_last' (the default) or 'channels_first'."""
    return _IMAGE_DATA_FORMAT


def set_image_data_format(data_format):
    global _IMAGE_DATA_FORMAT
    if data_format not in {"channels_last", "channels_first"}:
        raise ValueError("Unknown data_format: " + str(data_format))
    _IMAGE_DATA_FORMAT = str(data_format)


def cast_to_floatx(x):
    """A numpy array of `x` in floatx."""
    return np.asarray(x, dtype=_FLOATX)
