"""`tf.keras.backend`: convolutions, pooling, padding, resizing and batch normalization (TF 1.15's backend.py).

The convolutional and pooling layers (`keras/layers/convolutional.py`, `pooling.py`, `spatial_reshaping.py`,
`normalization.py`) call these. channels_first inputs are transposed to channels_last around the op, as TF
1.15's backend does on a CPU (`_preprocess_conv2d_input`: no NCHW kernels without a GPU); Conv1D's 'causal'
padding is a left zero padding of `dilation * (kernel - 1)` steps followed by a 'valid' convolution.
"""
from __future__ import annotations

import numpy as np

from ...default_graph import convert_to_tensor
from ...ops import array_ops, conv_composite, conv_ops, join_ops, math_ops, nn_composite, nn_impl, slicing_ops
from .config import image_data_format
from .tensors import int_shape


def _data_format(data_format):
    data_format = image_data_format() if data_format is None else data_format
    if data_format not in {"channels_first", "channels_last"}:
        raise ValueError("Unknown data_format: " + str(data_format))
    return data_format


def _to_last(x, data_format):
    """channels_first -> channels_last (a transpose), as TF 1.15's backend on a CPU."""
    if data_format == "channels_first":
        n = x.shape.ndims
        return array_ops.transpose(x, [0] + list(range(2, n)) + [1])
    return x


def _to_first(x, data_format):
    if data_format == "channels_first":
        n = x.shape.ndims
        return array_ops.transpose(x, [0, n - 1] + list(range(1, n - 1)))
    return x


def _padding(padding):
    if padding == "same":
        return "SAME"
    if padding == "valid":
        return "VALID"
    raise ValueError("Invalid padding: " + str(padding))


def _pairs(v, n):
    v = (v,) * n if isinstance(v, int) else tuple(v)
    return tuple(int(a) for a in v)


def temporal_padding(x, padding=(1, 1)):
    """Pads the middle axis of a 3-D tensor with zeros."""
    if len(padding) != 2:
        raise ValueError("padding must be a tuple of 2 integers, got " + str(padding))
    return slicing_ops.pad(x, [[0, 0], list(padding), [0, 0]])


def spatial_2d_padding(x, padding=((1, 1), (1, 1)), data_format=None):
    """Pads the 2 spatial axes of a 4-D tensor with zeros."""
    data_format = _data_format(data_format)
    rows, cols = (list(p) for p in padding)
    pattern = [[0, 0], [0, 0], rows, cols] if data_format == "channels_first" else [[0, 0], rows, cols, [0, 0]]
    return slicing_ops.pad(x, pattern)


def conv1d(x, kernel, strides=1, padding="valid", data_format=None, dilation_rate=1):
    """1-D convolution; kernel [width, in, out]; padding 'valid', 'same' or 'causal'."""
    data_format = _data_format(data_format)
    strides, dilation_rate = _pairs(strides, 1)[0], _pairs(dilation_rate, 1)[0]
    if padding == "causal":
        left = dilation_rate * (int_shape(kernel)[0] - 1)
        if data_format == "channels_last":
            x = temporal_padding(x, (left, 0))
        else:
            x = slicing_ops.pad(x, [[0, 0], [0, 0], [left, 0]])
        padding = "valid"
    x = _to_last(x, data_format)
    out = conv_composite.conv1d(x, kernel, stride=strides, padding=_padding(padding), data_format="NWC",
                              dilations=dilation_rate)
    return _to_first(out, data_format)


def conv2d(x, kernel, strides=(1, 1), padding="valid", data_format=None, dilation_rate=(1, 1)):
    """2-D convolution; kernel [kh, kw, in, out]."""
    data_format = _data_format(data_format)
    x = _to_last(x, data_format)
    sh, sw = _pairs(strides, 2)
    dh, dw = _pairs(dilation_rate, 2)
    out = conv_ops.conv2d(x, kernel, strides=[1, sh, sw, 1], padding=_padding(padding), data_format="NHWC",
                          dilations=[1, dh, dw, 1])
    return _to_first(out, data_format)


def conv2d_transpose(x, kernel, output_shape, strides=(1, 1), padding="valid", data_format=None,
                     dilation_rate=(1, 1)):
    """The gradient of a 2-D convolution with respect to its input; kernel [kh, kw, out, in]; `output_shape`
    is in `data_format` order."""
    data_format = _data_format(data_format)
    if tuple(_pairs(dilation_rate, 2)) != (1, 1):
        raise NotImplementedError("conv2d_transpose: dilation_rate other than 1 is not supported")
    if data_format == "channels_first":
        if isinstance(output_shape, (list, tuple)):
            output_shape = (output_shape[0], output_shape[2], output_shape[3], output_shape[1])
        else:
            output_shape = join_ops.stack([output_shape[0], output_shape[2], output_shape[3], output_shape[1]])
    x = _to_last(x, data_format)
    sh, sw = _pairs(strides, 2)
    out = conv_ops.conv2d_transpose(x, kernel, output_shape, strides=[1, sh, sw, 1], padding=_padding(padding),
                                    data_format="NHWC")
    return _to_first(out, data_format)


def separable_conv2d(x, depthwise_kernel, pointwise_kernel, strides=(1, 1), padding="valid", data_format=None,
                     dilation_rate=(1, 1)):
    """A depthwise convolution followed by a 1x1 convolution."""
    data_format = _data_format(data_format)
    x = _to_last(x, data_format)
    sh, sw = _pairs(strides, 2)
    out = conv_composite.separable_conv2d(x, depthwise_kernel, pointwise_kernel, [1, sh, sw, 1], _padding(padding),
                                        rate=_pairs(dilation_rate, 2))
    return _to_first(out, data_format)


def depthwise_conv2d(x, depthwise_kernel, strides=(1, 1), padding="valid", data_format=None, dilation_rate=(1, 1)):
    """Each input channel convolved with its own `depth_multiplier` filters; kernel [kh, kw, in, multiplier]."""
    data_format = _data_format(data_format)
    x = _to_last(x, data_format)
    sh, sw = _pairs(strides, 2)
    out = conv_composite.depthwise_conv2d(x, depthwise_kernel, [1, sh, sw, 1], _padding(padding),
                                        rate=_pairs(dilation_rate, 2))
    return _to_first(out, data_format)


def pool2d(x, pool_size, strides=(1, 1), padding="valid", data_format=None, pool_mode="max"):
    """2-D max or average pooling."""
    data_format = _data_format(data_format)
    x = _to_last(x, data_format)
    ksize = [1, *_pairs(pool_size, 2), 1]
    strides = [1, *_pairs(strides, 2), 1]
    if pool_mode == "max":
        out = conv_ops.max_pool(x, ksize, strides, _padding(padding))
    elif pool_mode == "avg":
        out = conv_ops.avg_pool(x, ksize, strides, _padding(padding))
    else:
        raise ValueError("Invalid pooling mode: " + str(pool_mode))
    return _to_first(out, data_format)


def resize_images(x, height_factor, width_factor, data_format, interpolation="nearest"):
    """Upsamples the spatial axes by integer factors: nearest (each pixel repeated) or bilinear (TF 1.15's
    `resize_images` sampling, align_corners False)."""
    data_format = _data_format(data_format)
    h_axis, w_axis = (2, 3) if data_format == "channels_first" else (1, 2)
    shape = int_shape(x)
    if interpolation == "nearest":
        for axis, factor in ((h_axis, int(height_factor)), (w_axis, int(width_factor))):
            x = repeat_axis(x, factor, axis, shape[axis])
        return x
    if interpolation != "bilinear":
        raise ValueError("interpolation should be one of \"nearest\" or \"bilinear\".")
    from ...image.resize import ResizeMethod, resize_images
    if shape[h_axis] is None or shape[w_axis] is None:
        raise ValueError("resize_images: bilinear interpolation needs static spatial dimensions")
    x = _to_last(x, data_format)
    size = (shape[h_axis] * int(height_factor), shape[w_axis] * int(width_factor))
    out = resize_images(x, size, method=ResizeMethod.BILINEAR)
    return _to_first(math_ops.cast(out, x.dtype), data_format)


def repeat_axis(x, factor, axis, static_size=None):
    """np.repeat(x, factor, axis): one gather when the size is static, else expand-tile-reshape."""
    if factor == 1:
        return x
    if static_size is not None:
        return slicing_ops.gather(x, np.repeat(np.arange(static_size, dtype=np.int32), factor), axis=axis)
    n = x.shape.ndims
    tiled = join_ops.tile(array_ops.expand_dims(x, axis + 1), [1] * (axis + 1) + [factor] + [1] * (n - axis - 1))
    dyn = array_ops.shape(x)
    new_shape = [dyn[i] for i in range(axis)] + [dyn[axis] * factor] + [dyn[i] for i in range(axis + 1, n)]
    out = array_ops.reshape(tiled, join_ops.stack(new_shape))
    out.set_shape([d if i != axis else None for i, d in enumerate(x.shape.as_list())])
    return out


def normalize_batch_in_training(x, gamma, beta, reduction_axes, epsilon=1e-3):
    """(normalized, batch mean, batch variance) over `reduction_axes`."""
    mean, var = nn_impl.moments(x, list(reduction_axes), keep_dims=False)
    n = x.shape.ndims
    target = [1 if i in reduction_axes else (int_shape(x)[i] or -1) for i in range(n)]
    if sorted(reduction_axes) == list(range(n - 1)):
        bmean, bvar = mean, var
    else:
        bmean, bvar = array_ops.reshape(mean, target), array_ops.reshape(var, target)
        gamma = None if gamma is None else array_ops.reshape(gamma, target)
        beta = None if beta is None else array_ops.reshape(beta, target)
    return nn_composite.batch_normalization(x, bmean, bvar, beta, gamma, epsilon), mean, var


def batch_normalization(x, mean, var, beta, gamma, axis=-1, epsilon=1e-3):
    """`(x - mean) / sqrt(var + epsilon) * gamma + beta`."""
    return nn_composite.batch_normalization(x, convert_to_tensor(mean), convert_to_tensor(var), beta, gamma, epsilon)
