"""`tf.nn` convolution and pooling: conv2d (+ its backprop ops), conv2d_transpose, max_pool, avg_pool.

Sits in `ops/` (wrappers, shape functions, gradients); kernels in `kernels/conv_kernels.py`
(im2col on a strided window view + one matmul). `conv_geometry.window_geometry` is the single source of
TF's SAME/VALID/explicit output-size and padding rule, shared by shape functions and kernels.
"""
from __future__ import annotations

__all__ = ["conv2d", "conv2d_backprop_input", "conv2d_backprop_filter", "conv2d_transpose", "max_pool",
           "avg_pool"]

import numpy as np

from .. import dtypes as _dtypes
from ..graph import Tensor
from ..default_graph import name_scope
from .common import (NotDifferentiable, TensorShape, convert_to_tensor, make_tensor, register_gradient, register_op,
                     static_value)
from ..conv_geometry import conv_output_hw, spatial_hw
from .nn_ops import float_input
from .array_ops import constant

_FORMATS = ("NHWC", "NCHW")


def _get_sequence(value, name: str, data_format: str, n: int = 2):
    """TF's _get_sequence: an int, a list of 1, 2 or 4 -> a 4-list with 1s at batch and channel."""
    if value is None:
        return (1, 1, 1, 1)
    if isinstance(value, Tensor):
        raise TypeError(f"{name} must be a static list of ints, not a Tensor")
    vals = [int(value)] if isinstance(value, (int, np.integer)) else [int(v) for v in value]
    if len(vals) == 1:
        vals = vals * n
    if len(vals) == n:
        return (1, 1, *vals) if data_format == "NCHW" else (1, *vals, 1)
    if len(vals) == n + 2:
        return tuple(vals)
    raise ValueError(f"{name} should be of length 1, {n} or {n + 2} but was {len(vals)}")


def _padding_attrs(padding, data_format):
    """'SAME' / 'VALID' or TF's explicit [[0,0],[t,b],[l,r],[0,0]] -> (padding, explicit_paddings)."""
    if isinstance(padding, (list, tuple)):
        pads = [tuple(int(v) for v in p) for p in padding]
        if len(pads) != 4 or any(len(p) != 2 for p in pads):
            raise ValueError(f"When padding is explicit, it must be a list of 4 pairs, got {padding!r}")
        h, w = spatial_hw(pads, data_format)
        batch, chan = (pads[0], pads[1]) if data_format == "NCHW" else (pads[0], pads[3])
        if batch != (0, 0) or chan != (0, 0):
            raise ValueError(f"Explicit padding in the batch or depth dimension is not supported, got {padding!r}")
        return "EXPLICIT", (h, w)
    if padding not in ("SAME", "VALID"):
        raise ValueError(f"Value for attr 'padding' of {padding!r} is not in the list of allowed values: "
                         f"\"SAME\", \"VALID\"")
    return padding, ((0, 0), (0, 0))


def _check_format(data_format):
    data_format = data_format or "NHWC"
    if data_format not in _FORMATS:
        raise ValueError(f"Value for attr 'data_format' of {data_format!r} is not in the list of allowed values: "
                         f"\"NHWC\", \"NCHW\"")
    return data_format


def _check_rank4(shape: TensorShape, what: str):
    if shape.ndims is not None and shape.ndims != 4:
        raise ValueError(f"Shape must be rank 4 but is rank {shape.ndims} for {what}")


def _conv_attrs(strides, padding, data_format, dilations):
    data_format = _check_format(data_format)
    strides = _get_sequence(strides, "strides", data_format)
    dilations = _get_sequence(dilations, "dilations", data_format)
    c = 1 if data_format == "NCHW" else 3
    if strides[0] != 1 or strides[c] != 1:
        raise ValueError("Current implementation does not yet support strides in the batch and depth dimensions.")
    if dilations[0] != 1 or dilations[c] != 1:
        raise ValueError("Current implementation does not yet support dilations in the batch and depth dimensions.")
    if min(strides) < 1 or min(dilations) < 1:
        raise ValueError(f"strides and dilations must be positive, got {list(strides)} and {list(dilations)}")
    pad, explicit = _padding_attrs(padding, data_format)
    return {"strides": strides, "padding": pad, "explicit_paddings": explicit, "data_format": data_format,
            "dilations": dilations}


def _nhwc_shape(dims, data_format):
    """(N, H, W, C) of a 4-list in `data_format`."""
    if data_format == "NCHW":
        return dims[0], dims[2], dims[3], dims[1]
    return tuple(dims)


def _from_nhwc(n, h, w, c, data_format):
    return TensorShape([n, c, h, w] if data_format == "NCHW" else [n, h, w, c])


# -- Conv2D -------------------------------------------------------------------
def _conv2d_out_shape(attrs, in_shape: TensorShape, filter_shape: TensorShape):
    fmt = attrs["data_format"]
    _check_rank4(in_shape, "'input'")
    _check_rank4(filter_shape, "'filter'")
    n, h, w, c = _nhwc_shape(in_shape.as_tuple(), fmt) if in_shape.ndims else (None,) * 4
    kh, kw, fc, o = filter_shape.as_tuple() if filter_shape.ndims else (None,) * 4
    if c is not None and fc is not None and c != fc:
        raise ValueError(f"Dimensions must be equal, but are {c} and {fc}")
    out_h = out_w = None
    if kh is not None and kw is not None:
        (out_h, out_w), _ = conv_output_hw(attrs, (h, w), (kh, kw))
        if (out_h is not None and out_h <= 0) or (out_w is not None and out_w <= 0):
            raise ValueError(f"Negative dimension size caused by subtracting {kh if out_h <= 0 else kw} from "
                             f"{h if out_h <= 0 else w}")
    return _from_nhwc(n, out_h, out_w, o, fmt)


def _conv2d_shape(op):
    x, f = op.inputs
    return [(x.dtype, _conv2d_out_shape(op.attrs, x.shape, f.shape))]


register_op("Conv2D", _conv2d_shape, expensive=True)


def conv2d(input, filter=None, strides=None, padding=None, use_cudnn_on_gpu=True, data_format="NHWC",
           dilations=(1, 1, 1, 1), name=None, filters=None):
    """`tf.nn.conv2d`: NHWC input (or NCHW), HWIO filter; SAME/VALID/explicit padding exactly like TF."""
    if filter is not None and filters is not None:
        raise ValueError("Cannot specify both 'filters' and 'filter'")
    filter = filters if filter is None else filter
    if filter is None:
        raise ValueError("conv2d: a filter is required")
    if padding is None:
        raise ValueError("conv2d: padding is required ('SAME' or 'VALID')")
    x = float_input(input, "Conv2D", "input")
    f = convert_to_tensor(filter, dtype=x.dtype)
    attrs = _conv_attrs(strides, padding, data_format, dilations)
    return make_tensor("Conv2D", [x, f], attrs, name=name, default_name="Conv2D")


register_op("NnShape", lambda op: [(_dtypes.int32, TensorShape([op.inputs[0].shape.ndims]))])
NotDifferentiable("NnShape")  # an int32 shape vector


def shape_of(t: Tensor) -> Tensor:
    """t's shape as an int32 vector: a constant when static, else an nn-private NnShape op."""
    if t.shape.is_fully_defined():
        return constant(np.array(t.shape.as_list(), dtype=np.int32), name="Shape")
    return make_tensor("NnShape", [t], name="Shape")


def _sizes_shape(sizes: Tensor) -> TensorShape:
    v = static_value(sizes)
    if v is not None:
        return TensorShape([int(d) for d in np.asarray(v).ravel()])
    return TensorShape([None] * 4)


def _backprop_input_shape(op):
    sizes, f, g = op.inputs
    shape = _sizes_shape(sizes)
    _check_rank4(shape, "'input_sizes'")
    return [(f.dtype, shape)]


def _backprop_filter_shape(op):
    x, sizes, g = op.inputs
    shape = _sizes_shape(sizes)
    _check_rank4(shape, "'filter_sizes'")
    return [(x.dtype, shape)]


register_op("Conv2DBackpropInput", _backprop_input_shape, expensive=True)
register_op("Conv2DBackpropFilter", _backprop_filter_shape, expensive=True)


def _sizes_tensor(sizes):
    if isinstance(sizes, Tensor):
        return sizes
    return convert_to_tensor(np.asarray(sizes, dtype=np.int32))


def conv2d_backprop_input(input_sizes, filter=None, out_backprop=None, strides=None, padding=None,
                          use_cudnn_on_gpu=True, data_format="NHWC", dilations=(1, 1, 1, 1), name=None,
                          filters=None):
    """`tf.nn.conv2d_backprop_input`: the gradient of conv2d wrt its input (input_sizes: 4 ints)."""
    filter = filters if filter is None else filter
    g = float_input(out_backprop, "Conv2DBackpropInput", "out_backprop")
    f = convert_to_tensor(filter, dtype=g.dtype)
    attrs = _conv_attrs(strides, padding, data_format, dilations)
    return make_tensor("Conv2DBackpropInput", [_sizes_tensor(input_sizes), f, g], attrs, name=name,
                       default_name="Conv2DBackpropInput")


def conv2d_backprop_filter(input, filter_sizes, out_backprop, strides, padding, use_cudnn_on_gpu=True,
                           data_format="NHWC", dilations=(1, 1, 1, 1), name=None):
    """`tf.nn.conv2d_backprop_filter`: the gradient of conv2d wrt its filter (filter_sizes: 4 ints)."""
    x = float_input(input, "Conv2DBackpropFilter", "input")
    g = convert_to_tensor(out_backprop, dtype=x.dtype)
    attrs = _conv_attrs(strides, padding, data_format, dilations)
    return make_tensor("Conv2DBackpropFilter", [x, _sizes_tensor(filter_sizes), g], attrs, name=name,
                       default_name="Conv2DBackpropFilter")


def conv2d_transpose(value, filter=None, output_shape=None, strides=None, padding="SAME", data_format="NHWC",
                     name=None, input=None, filters=None, dilations=None):
    """`tf.nn.conv2d_transpose`: filter [h, w, out_channels, in_channels]; output_shape 4 ints (or int32 Tensor)."""
    value = input if value is None else value
    filter = filters if filter is None else filter
    with name_scope(name, "conv2d_transpose", [value, filter, output_shape]) as scope:
        g = float_input(value, "Conv2DBackpropInput", "value")
        f = convert_to_tensor(filter, dtype=g.dtype)
        fmt = _check_format(data_format)
        c_axis = 1 if fmt == "NCHW" else 3
        if g.shape.ndims == 4 and f.shape.ndims == 4 and g.shape[c_axis] is not None and f.shape[3] is not None \
                and g.shape[c_axis] != f.shape[3]:
            raise ValueError(f"input channels does not match filter's input channels, {g.shape[c_axis]} != "
                             f"{f.shape[3]}")
        if not isinstance(output_shape, Tensor):
            out = [int(d) for d in output_shape]
            if len(out) != 4:
                raise ValueError(f"output_shape must have shape (4,), got ({len(out)},)")
            if f.shape.ndims == 4 and f.shape[2] is not None and out[c_axis] != f.shape[2]:
                raise ValueError(f"output_shape does not match filter's output channels, {out[c_axis]} != "
                                 f"{f.shape[2]}")
        attrs = _conv_attrs(strides, padding, fmt, dilations)
        return make_tensor("Conv2DBackpropInput", [_sizes_tensor(output_shape), f, g], attrs, name=scope)


def _attrs_of(op):
    return {k: op.get_attr(k) for k in ("strides", "padding", "explicit_paddings", "data_format", "dilations")}


@register_gradient("Conv2D")
def _conv2d_grad(op, grad):
    x, f = op.inputs
    attrs = _attrs_of(op)
    return [make_tensor("Conv2DBackpropInput", [shape_of(x), f, grad], attrs, name="Conv2DBackpropInput"),
            make_tensor("Conv2DBackpropFilter", [x, shape_of(f), grad], attrs, name="Conv2DBackpropFilter")]


@register_gradient("Conv2DBackpropInput")
def _conv2d_backprop_input_grad(op, grad):
    sizes, f, g = op.inputs
    attrs = _attrs_of(op)
    return [None,
            make_tensor("Conv2DBackpropFilter", [grad, shape_of(f), g], attrs, name="Conv2DBackpropFilter"),
            make_tensor("Conv2D", [grad, f], attrs, name="Conv2D")]


@register_gradient("Conv2DBackpropFilter")
def _conv2d_backprop_filter_grad(op, grad):
    x, sizes, g = op.inputs
    attrs = _attrs_of(op)
    return [make_tensor("Conv2DBackpropInput", [shape_of(x), grad, g], attrs, name="Conv2DBackpropInput"),
            None,
            make_tensor("Conv2D", [x, grad], attrs, name="Conv2D")]


# -- pooling ------------------------------------------------------------------
def _pool_attrs(ksize, strides, padding, data_format):
    data_format = _check_format(data_format)
    ksize = _get_sequence(ksize, "ksize", data_format)
    strides = _get_sequence(strides, "strides", data_format)
    c = 1 if data_format == "NCHW" else 3
    if ksize[0] != 1 or ksize[c] != 1 or strides[0] != 1 or strides[c] != 1:
        raise ValueError("Pooling is not yet supported on the batch nor depth dimensions.")
    if min(ksize) < 1 or min(strides) < 1:
        raise ValueError(f"ksize and strides must be positive, got {list(ksize)} and {list(strides)}")
    if padding not in ("SAME", "VALID"):
        raise ValueError(f"Value for attr 'padding' of {padding!r} is not in the list of allowed values: "
                         f"\"SAME\", \"VALID\"")
    return {"ksize": ksize, "strides": strides, "padding": padding, "data_format": data_format}


def _pool_shape(op):
    x = op.inputs[0]
    return [(x.dtype, _pool_out_shape(op.attrs, x.shape))]


def _pool_out_shape(attrs, shape: TensorShape) -> TensorShape:
    _check_rank4(shape, "'input'")
    fmt = attrs["data_format"]
    n, h, w, c = _nhwc_shape(shape.as_tuple(), fmt) if shape.ndims else (None,) * 4
    kh, kw = spatial_hw(attrs["ksize"], fmt)
    (oh, ow), _ = conv_output_hw(attrs, (h, w), (kh, kw))
    if (oh is not None and oh <= 0) or (ow is not None and ow <= 0):
        raise ValueError(f"Negative dimension size caused by subtracting {kh if oh is not None and oh <= 0 else kw}"
                         f" from {h if oh is not None and oh <= 0 else w}")
    return _from_nhwc(n, oh, ow, c, fmt)


register_op("MaxPool", _pool_shape)
register_op("AvgPool", _pool_shape)
register_op("MaxPoolGrad", lambda op: [(op.inputs[0].dtype, op.inputs[0].shape)])
register_op("AvgPoolGrad", lambda op: [(op.inputs[1].dtype, _sizes_shape(op.inputs[0]))])
# MaxPoolGradGrad(x, y, g): each output takes g at its window's (first) maximum -- TF's op of that name
register_op("MaxPoolGradGrad", lambda op: [(op.inputs[2].dtype, op.inputs[1].shape)])


def max_pool(value, ksize, strides, padding, data_format="NHWC", name=None, input=None):
    """`tf.nn.max_pool`: padded positions never win (SAME pads with -inf)."""
    value = input if value is None else value
    x = float_input(value, "MaxPool", "input")
    return make_tensor("MaxPool", [x], _pool_attrs(ksize, strides, padding, data_format), name=name,
                       default_name="MaxPool")


def avg_pool(value, ksize, strides, padding, data_format="NHWC", name=None, input=None):
    """`tf.nn.avg_pool`: SAME divides each window by its count of valid (unpadded) elements, like TF."""
    value = input if value is None else value
    x = float_input(value, "AvgPool", "value")
    return make_tensor("AvgPool", [x], _pool_attrs(ksize, strides, padding, data_format), name=name,
                       default_name="AvgPool")


def _pool_attrs_of(op):
    return {k: op.get_attr(k) for k in ("ksize", "strides", "padding", "data_format")}


@register_gradient("MaxPool")
def _max_pool_grad(op, grad):
    return [make_tensor("MaxPoolGrad", [op.inputs[0], op.outputs[0], grad], _pool_attrs_of(op),
                        name="MaxPoolGrad")]


@register_gradient("MaxPoolGrad")
def _max_pool_grad_grad(op, grad):
    x, y, _ = op.inputs  # piecewise linear: no gradient into x or y (TF returns zeros)
    return [None, None, make_tensor("MaxPoolGradGrad", [x, y, grad], _pool_attrs_of(op), name="MaxPoolGradGrad")]


@register_gradient("MaxPoolGradGrad")
def _max_pool_grad_grad_grad(op, grad):
    x, y, _ = op.inputs
    return [None, None, make_tensor("MaxPoolGrad", [x, y, grad], _pool_attrs_of(op), name="MaxPoolGrad")]


@register_gradient("AvgPool")
def _avg_pool_grad(op, grad):
    return [make_tensor("AvgPoolGrad", [shape_of(op.inputs[0]), grad], _pool_attrs_of(op), name="AvgPoolGrad")]


@register_gradient("AvgPoolGrad")
def _avg_pool_grad_grad(op, grad):
    return [None, make_tensor("AvgPool", [grad], _pool_attrs_of(op), name="AvgPool")]

