"""Argument normalisation shared by Keras layers (TF 1.15's keras/utils/conv_utils.py, the part the core
layers use; the convolution helpers join it with the convolutional layers)."""
from __future__ import annotations

from ..backend.config import image_data_format


def normalize_data_format(value):
    """'channels_last' / 'channels_first' (None: the backend's image_data_format)."""
    if value is None:
        value = image_data_format()
    data_format = value.lower()
    if data_format not in {"channels_first", "channels_last"}:
        raise ValueError('The `data_format` argument must be one of "channels_first", "channels_last". Received: '
                         + str(value))
    return data_format


def normalize_tuple(value, n, name):
    """An int or an iterable of n ints -> a tuple of n ints."""
    if isinstance(value, int):
        return (value,) * n
    try:
        value_tuple = tuple(value)
    except TypeError:
        raise ValueError(f"The `{name}` argument must be a tuple of {n} integers. Received: {value}") from None
    if len(value_tuple) != n:
        raise ValueError(f"The `{name}` argument must be a tuple of {n} integers. Received: {value}")
    for single in value_tuple:
        if not isinstance(single, int):
            raise ValueError(f"The `{name}` argument must be a tuple of {n} integers. Received: {value} including "
                             f"element {single} of type {type(single)}")
    return value_tuple


def normalize_padding(value):
    padding = value.lower()
    if padding not in {"valid", "same", "causal"}:
        raise ValueError('The `padding` argument must be one of "valid", "same" (or "causal", only for `Conv1D). '
                         "Received: " + str(padding))
    return padding
