"""More of tf.nn for TF1 tutorials: conv1d and 1-D pooling (on the 2-D kernels, as TF builds them),
local_response_normalization / lrn (the CIFAR-10 tutorial's), built from existing ops so their gradients
are those ops' gradients.

Sits in `ops/` above conv_ops / array_ops; exported into `tf.nn` (and conv1d / pooling1d into `tf.layers`).
"""
from __future__ import annotations

__all__ = ["conv1d", "max_pool1d", "avg_pool1d", "local_response_normalization", "lrn"]

from ..graph import name_scope
from . import array_ops as _a
from . import conv_ops as _cv
from . import math_ops as _m
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


def local_response_normalization(input, depth_radius=5, bias=1, alpha=1, beta=0.5, name=None):
    """`tf.nn.lrn`: x / (bias + alpha * sum of x^2 over channels d-r..d+r) ** beta, on the last axis (NHWC)."""
    with name_scope(name, "LRN", [input]):
        x = convert_to_tensor(input)
        if x.shape.ndims != 4 or x.shape[3] is None:
            raise ValueError(f"lrn: input must be 4-D with a known channel dimension, got {x.shape}")
        r, c = int(depth_radius), x.shape[3]
        sq = _a.pad(_m.square(x), [[0, 0], [0, 0], [0, 0], [r, r]])
        window = _m.add_n([sq[:, :, :, k:k + c] for k in range(2 * r + 1)])
        return _m.multiply(x, _m.pow(_m.add(_m.multiply(window, float(alpha)), float(bias)), -float(beta)))


lrn = local_response_normalization
