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


def conv_output_length(input_length, filter_size, padding, stride, dilation=1):
    """The length of a convolution's (or pooling's) output along one axis (None stays None)."""
    if input_length is None:
        return None
    if padding not in {"same", "valid", "full", "causal"}:
        raise ValueError("Invalid padding: " + str(padding))
    dilated = filter_size + (filter_size - 1) * (dilation - 1)
    if padding in ("same", "causal"):
        length = input_length
    elif padding == "valid":
        length = input_length - dilated + 1
    else:
        length = input_length + dilated - 1
    return (length + stride - 1) // stride


def deconv_output_length(input_length, filter_size, padding, output_padding=None, stride=0, dilation=1):
    """The length of a transposed convolution's output along one axis (None stays None)."""
    if input_length is None:
        return None
    filter_size = filter_size + (filter_size - 1) * (dilation - 1)
    if output_padding is None:
        if padding == "valid":
            return input_length * stride + max(filter_size - stride, 0)
        if padding == "full":
            return input_length * stride - (stride + filter_size - 2)
        return input_length * stride
    pad = {"same": filter_size // 2, "valid": 0, "full": filter_size - 1}[padding]
    return (input_length - 1) * stride + filter_size - 2 * pad + output_padding
