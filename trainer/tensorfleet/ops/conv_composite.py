"""`tf.nn` convolutions and pools that TF composes from the 2-D ones: conv1d, max_pool1d and avg_pool1d (a width-1
image through conv2d / max_pool / avg_pool, as TF builds them), depthwise_conv2d(_native) and separable_conv2d
(one conv2d per input channel: exact, slow for many channels). Their gradients are those ops' gradients.
Depthwise and separable convolutions are NHWC only.

Sits in `ops/` above conv_ops / array_ops (no ops or kernels of its own); exported into `tf.nn` (and used by
`tf.layers` and `tf.keras`' conv1d, pooling1d and separable/depthwise convolutions).
"""
from __future__ import annotations

__all__ = ["conv1d", "max_pool1d", "avg_pool1d", "depthwise_conv2d", "depthwise_conv2d_native", "separable_conv2d"]

from ..default_graph import name_scope
from . import array_ops as _a
from . import conv_ops as _cv
from .common import convert_to_tensor


def _width_axis(data_format):
    if data_format in (None, "NWC"):
        return "NHWC", 1
    if data_format == "NCW":
        return "NCHW", 2
    raise ValueError(f"data_format must be 'NWC' or 'NCW', got {data_format!r}")


def _int1(v, what):
    if isinstance(v, (list, tuple)):
        if len(v) not in (1, 3):
            raise ValueError(f"{what} must be an int or a list of 1 or 3 ints, got {v}")
        return int(v[0] if len(v) == 1 else v[1])
    return int(v)


def conv1d(value=None, filters=None, stride=None, padding=None, use_cudnn_on_gpu=None, data_format=None, name=None,
           input=None, dilations=None):
    """`tf.nn.conv1d`: input [batch, width, in_channels] (NWC), filters [width, in_channels, out_channels]."""
    value = input if value is None else value
    fmt, axis = _width_axis(data_format)
    with name_scope(name, "conv1d", [value, filters]) as scope:
        x = _a.expand_dims(convert_to_tensor(value), axis)
        f = _a.expand_dims(convert_to_tensor(filters), 0)
        s = _int1(stride, "stride")
        d = 1 if dilations is None else _int1(dilations, "dilations")
        strides = [1, 1, s, 1] if fmt == "NHWC" else [1, 1, 1, s]
        dil = [1, 1, d, 1] if fmt == "NHWC" else [1, 1, 1, d]
        out = _cv.conv2d(x, f, strides=strides, padding=padding, data_format=fmt, dilations=dil)
        return _a.squeeze(out, [axis], name=scope)


def _pool1d(fn, input, ksize, strides, padding, data_format, name, default):
    fmt, axis = _width_axis(data_format)
    with name_scope(name, default, [input]) as scope:
        x = _a.expand_dims(convert_to_tensor(input), axis)
        k, s = _int1(ksize, "ksize"), _int1(strides, "strides")
        ks = [1, 1, k, 1] if fmt == "NHWC" else [1, 1, 1, k]
        ss = [1, 1, s, 1] if fmt == "NHWC" else [1, 1, 1, s]
        return _a.squeeze(fn(x, ks, ss, padding, data_format=fmt), [axis], name=scope)


def max_pool1d(input, ksize, strides, padding, data_format="NWC", name=None):
    """`tf.nn.max_pool1d` on [batch, width, channels]."""
    return _pool1d(_cv.max_pool, input, ksize, strides, padding, data_format, name, "MaxPool1d")


def avg_pool1d(input, ksize, strides, padding, data_format="NWC", name=None):
    """`tf.nn.avg_pool1d` on [batch, width, channels]."""
    return _pool1d(_cv.avg_pool, input, ksize, strides, padding, data_format, name, "AvgPool1d")


def depthwise_conv2d_native(input, filter, strides, padding, data_format="NHWC", dilations=(1, 1, 1, 1),
                            name=None):
    """`tf.nn.depthwise_conv2d_native` (NHWC): filter [kh, kw, C, M]; output channel c*M + m is input channel c
    convolved with filter[:, :, c, m]."""
    from .join_ops import concat
    if data_format != "NHWC":
        raise ValueError("depthwise_conv2d: only data_format='NHWC' is supported")
    with name_scope(name, "DepthwiseConv2dNative", [input, filter]):
        x = convert_to_tensor(input)
        f = convert_to_tensor(filter, dtype=x.dtype)
        c = x.shape[3] if x.shape.ndims == 4 else None
        if c is None or f.shape.ndims != 4 or f.shape[2] != c:
            raise ValueError(f"depthwise_conv2d: input channels {c} must be known and equal filter's dim 2 "
                             f"({f.shape})")
        outs = [_cv.conv2d(x[:, :, :, i:i + 1], f[:, :, i:i + 1, :], strides=list(strides), padding=padding,
                           dilations=list(dilations)) for i in range(c)]
        return outs[0] if c == 1 else concat(outs, 3)


def depthwise_conv2d(input, filter, strides, padding, rate=None, name=None, data_format=None, dilations=None):
    """`tf.nn.depthwise_conv2d` (NHWC; `rate` as dilations)."""
    d = dilations if dilations is not None else rate
    d = [1, 1, 1, 1] if d is None else ([1, int(d[0]), int(d[1]), 1] if len(d) == 2 else list(d))
    return depthwise_conv2d_native(input, filter, strides, padding, data_format=data_format or "NHWC", dilations=d,
                                   name=name or "depthwise")


def separable_conv2d(input, depthwise_filter, pointwise_filter, strides, padding, rate=None, name=None,
                     data_format=None, dilations=None):
    """`tf.nn.separable_conv2d`: a depthwise convolution, then a 1x1 convolution with `pointwise_filter`."""
    with name_scope(name, "separable_conv2d", [input, depthwise_filter, pointwise_filter]) as scope:
        depthwise = depthwise_conv2d(input, depthwise_filter, strides, padding, rate=rate, dilations=dilations,
                                     name="depthwise")
        return _cv.conv2d(depthwise, pointwise_filter, strides=[1, 1, 1, 1], padding="VALID", name=scope)
