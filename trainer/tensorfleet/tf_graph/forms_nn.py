"""TF forms of the neural-network ops: softmax, bias, convolution, pooling, top-k, cross-entropies.

Softmax and LogSoftmax work on the last axis in TF: another axis is written as TF's Python writes it
(transpose that axis last, softmax, transpose back). Conv2D's explicit padding is TF's flat list of 8.
"""
from __future__ import annotations

import numpy as np

from .. import dtypes as _dtypes
from .registry import REQUIRED, Emitter, Reader, reads, simple, writes

simple("BiasAdd", "T T", data_format="NHWC")
simple("BiasAddGrad", "T", data_format="NHWC")
simple("MaxPool", "T", ksize=REQUIRED, strides=REQUIRED, padding=REQUIRED, data_format="NHWC")
simple("AvgPool", "T", ksize=REQUIRED, strides=REQUIRED, padding=REQUIRED, data_format="NHWC")
simple("MaxPoolGrad", "T T T", ksize=REQUIRED, strides=REQUIRED, padding=REQUIRED, data_format="NHWC")
simple("InTopK", "- T", k=REQUIRED)
simple("SparseSoftmaxCrossEntropyWithLogits", "T Tlabels")

_CONV_DEFAULTS = {"use_cudnn_on_gpu": True, "explicit_paddings": [], "data_format": "NHWC",
                  "dilations": [1, 1, 1, 1]}


def _explicit_flat(pads, data_format: str) -> list:
    (t, b), (left, right) = pads
    spatial = [t, b, left, right]
    return [0, 0, 0, 0] + spatial if data_format == "NCHW" else [0, 0] + spatial + [0, 0]


@writes("Conv2D", "Conv2DBackpropInput", "Conv2DBackpropFilter")
def _write_conv(e: Emitter):
    fmt = e.attr("data_format")
    padding = e.attr("padding")
    attrs = {"T": e.dtype(0 if e.op.type != "Conv2DBackpropInput" else 1), "strides": list(e.attr("strides")),
             "use_cudnn_on_gpu": True, "padding": padding,
             "explicit_paddings": _explicit_flat(e.attr("explicit_paddings"), fmt) if padding == "EXPLICIT" else [],
             "data_format": fmt, "dilations": list(e.attr("dilations"))}
    e.node(e.op.type, [e.inp(i) for i in range(len(e.op.inputs))], attrs, defaults=_CONV_DEFAULTS)


@reads("Conv2D", "Conv2DBackpropInput", "Conv2DBackpropFilter")
def _read_conv(r: Reader):
    fmt = r.attr("data_format", "NHWC")
    padding = r.attr("padding")
    flat = list(r.attr("explicit_paddings", ()))
    if padding == "EXPLICIT":
        s = flat[4:8] if fmt == "NCHW" else flat[2:6]
        explicit = ((s[0], s[1]), (s[2], s[3]))
    else:
        explicit = ((0, 0), (0, 0))
    return r.node(r.nd.op, None, {"strides": tuple(r.attr("strides")), "padding": padding,
                                  "explicit_paddings": explicit, "data_format": fmt,
                                  "dilations": tuple(r.attr("dilations", (1, 1, 1, 1)))})


@writes("Softmax", "LogSoftmax")
def _write_softmax(e: Emitter):
    axis = e.attr("axis", -1)
    rank = e.op.inputs[0].shape.ndims
    if axis == -1 or (rank is not None and axis == rank - 1):
        e.node(e.op.type, [e.inp(0)], {"T": e.dtype(0)})
        return
    if rank is None:
        e.fail(f"axis {axis} of a tensor of unknown rank (TF's op works on the last axis)")
    perm = list(range(rank))
    perm[axis % rank], perm[-1] = perm[-1], perm[axis % rank]
    p = e.const(np.asarray(perm, np.int32), _dtypes.int32, "perm")
    t = e.node("Transpose", [e.inp(0), p], {"T": e.dtype(0), "Tperm": _dtypes.int32}, name="transpose")
    s = e.node(e.op.type, [t], {"T": e.dtype(0)}, name=e.op.type)
    e.node("Transpose", [s, p], {"T": e.dtype(0), "Tperm": _dtypes.int32})


@reads("Softmax", "LogSoftmax")
def _read_softmax(r: Reader):
    return r.node(r.nd.op, None, {"axis": -1})


@writes("TopKV2")
def _write_top_k(e: Emitter):
    k = e.const(np.int32(e.attr("k")), _dtypes.int32, "k")
    e.node("TopKV2", [e.inp(0), k], {"T": e.dtype(0), "sorted": bool(e.attr("sorted"))}, defaults={"sorted": True})


@reads("TopKV2")
def _read_top_k(r: Reader):
    return r.node("TopKV2", [0], {"k": int(r.const(1, "k")), "sorted": bool(r.attr("sorted", True))})


@writes("SoftmaxCrossEntropyWithLogits")
def _write_xent(e: Emitter):
    axis = e.attr("axis", -1)
    rank = e.op.inputs[0].shape.ndims
    if axis != -1 and (rank is None or axis != rank - 1):
        e.fail(f"axis {axis}: TF's op works on the last axis")
    e.node("SoftmaxCrossEntropyWithLogits", [e.inp(0), e.inp(1)], {"T": e.dtype(0)})


@reads("SoftmaxCrossEntropyWithLogits")
def _read_xent(r: Reader):
    return r.node("SoftmaxCrossEntropyWithLogits", None, {"axis": -1})


@writes("Dropout")
def _write_dropout(e: Emitter):
    """Dropout(x, rate) -> (x * mask, mask), mask = (uniform >= rate) / (1 - rate): as TF 1.15's `tf.nn.dropout`
    writes it (RandomUniform over the noise shape, GreaterEqual, Cast, the scale, Mul). Written only, never read
    back as one op: the TF ops it becomes are read as themselves."""
    dt, int32 = e.dtype(0), _dtypes.int32
    noise = e.attr("noise_shape")
    if noise is None:
        shape = e.node("Shape", [e.inp(0)], {"T": dt, "out_type": int32}, name="Shape")
    elif all(d is not None for d in noise):
        shape = e.const(np.asarray(noise, np.int32), int32, "noise_shape")
    else:
        e.fail(f"a noise_shape with unknown entries ({list(noise)})")
    uniform = e.node("RandomUniform", [shape], {"dtype": dt, "seed": int(e.attr("seed", 0)),
                                                "seed2": int(e.attr("seed2", 0)), "T": int32},
                     name="random_uniform", defaults={"seed": 0, "seed2": 0})
    keep = e.node("GreaterEqual", [uniform, e.inp(1)], {"T": dt}, name="GreaterEqual")
    kept = e.node("Cast", [keep], {"SrcT": _dtypes.bool_, "DstT": dt, "Truncate": False}, name="Cast",
                  defaults={"Truncate": False})
    keep_prob = e.node("Sub", [e.const(np.asarray(1, dt.as_numpy_dtype), dt, "one"), e.inp(1)], {"T": dt},
                       name="sub")
    mask = e.node("RealDiv", [kept, keep_prob], {"T": dt}, name="mask")
    e.node("Mul", [e.inp(0), mask], {"T": dt})
    e.alias(1, mask)
