"""TF forms of the math ops: elementwise, comparisons, MatMul, Cast, reductions, ArgMax/ArgMin, scans.

Most are `simple` (same name and inputs; `T` from the inputs). Reductions and ArgMax/ArgMin hold their
axes as an attribute here and take them as a constant input in TF (`reduction_indices`/`dimension`,
int32), with `keep_dims` (TF's spelling) for `keepdims`.
"""
from __future__ import annotations

import numpy as np

from .. import dtypes as _dtypes
from .registry import REQUIRED, Emitter, Reader, int_list, reads, simple, writes

_UNARY = ("Neg", "Abs", "Sign", "Exp", "Log", "Log1p", "Sqrt", "Rsqrt", "Square", "Reciprocal", "Floor", "Ceil",
          "Round", "Rint", "Sin", "Cos", "Tan", "Asin", "Acos", "Atan", "Sinh", "Cosh", "Asinh", "Acosh", "Atanh",
          "Expm1", "Erf", "Erfc", "Lgamma", "Digamma", "BesselI0e", "BesselI1e", "IsNan", "IsInf", "IsFinite",
          "Sigmoid", "Tanh", "Relu", "Relu6", "Elu", "Softplus", "Identity",
          "StopGradient", "L2Loss", "CheckNumerics")
_BINARY = ("Add", "AddV2", "Sub", "Mul", "RealDiv", "FloorDiv", "FloorMod", "Maximum", "Minimum", "Pow",
           "SquaredDifference", "DivNoNan", "Atan2", "Equal", "NotEqual", "Less", "LessEqual", "Greater",
           "GreaterEqual", "Igamma", "Igammac", "IgammaGradA", "Polygamma", "Zeta", "NextAfter",
           "ReluGrad", "Relu6Grad", "EluGrad", "SigmoidGrad", "TanhGrad", "SoftplusGrad")

for _t in _UNARY:
    if _t == "CheckNumerics":
        simple(_t, "T", message=REQUIRED)
    else:
        simple(_t, "T")
for _t in _BINARY:
    simple(_t, "T T")
simple("LogicalNot", "-")
simple("LogicalAnd", "- -")
simple("LogicalOr", "- -")
simple("LeakyRelu", "T", alpha=0.2)
simple("LeakyReluGrad", "T T", alpha=0.2)
simple("Betainc", "T T T")
simple("MatMul", "T T", transpose_a=False, transpose_b=False)
simple("BatchMatMulV2", "T T", adj_x=False, adj_y=False)
simple("Cast", "SrcT", DstT=REQUIRED, Truncate=False)
simple("AddN", "N*T")
simple("Select", "- T T")
simple("SelectV2", "- T T")
simple("Where", "T")
simple("NoOp", "")

_REDUCTIONS = ("Sum", "Mean", "Max", "Min", "Prod", "All", "Any")


def _axes(e: Emitter, axis) -> list:
    if axis is None:
        rank = e.op.inputs[0].shape.ndims
        if rank is None:
            e.fail("a reduction over every axis of a tensor of unknown rank")
        return list(range(rank))
    return int_list(axis)


@writes(*_REDUCTIONS)
def _write_reduction(e: Emitter):
    axis = e.attr("axis")
    axes = _axes(e, axis)
    value = np.asarray(axes if not isinstance(axis, int) else axes[0], dtype=np.int32)
    idx = e.const(value, _dtypes.int32, "reduction_indices")
    is_bool = e.op.type in ("All", "Any")
    attrs = {"keep_dims": bool(e.attr("keepdims")), "Tidx": _dtypes.int32}
    if not is_bool:
        attrs["T"] = e.dtype(0)
    e.node(e.op.type, [e.inp(0), idx], attrs, defaults={"keep_dims": False, "Tidx": _dtypes.int32})


@reads(*_REDUCTIONS)
def _read_reduction(r: Reader):
    axes = r.const(1, "reduction_indices")
    axis = int(axes) if axes.ndim == 0 else tuple(int_list(axes))
    return r.node(r.nd.op, [0], {"axis": axis, "keepdims": bool(r.attr("keep_dims", False))})


@writes("ArgMax", "ArgMin")
def _write_arg(e: Emitter):
    dim = e.const(np.int32(e.attr("axis")), _dtypes.int32, "dimension")
    e.node(e.op.type, [e.inp(0), dim], {"T": e.dtype(0), "Tidx": _dtypes.int32, "output_type": e.attr("output_type")},
           defaults={"Tidx": _dtypes.int32, "output_type": _dtypes.int64})


@reads("ArgMax", "ArgMin")
def _read_arg(r: Reader):
    return r.node(r.nd.op, [0], {"axis": int(r.const(1, "dimension")),
                                 "output_type": r.attr("output_type", _dtypes.int64)})


@writes("Cumsum", "Cumprod")
def _write_scan(e: Emitter):
    axis = e.const(np.int32(e.attr("axis")), _dtypes.int32, "axis")
    e.node(e.op.type, [e.inp(0), axis], {"T": e.dtype(0), "Tidx": _dtypes.int32,
                                         "exclusive": bool(e.attr("exclusive")), "reverse": bool(e.attr("reverse"))},
           defaults={"Tidx": _dtypes.int32, "exclusive": False, "reverse": False})


@reads("Cumsum", "Cumprod")
def _read_scan(r: Reader):
    return r.node(r.nd.op, [0], {"axis": int(r.const(1, "axis")), "exclusive": bool(r.attr("exclusive", False)),
                                 "reverse": bool(r.attr("reverse", False))})


@writes("Assert")
def _write_assert(e: Emitter):
    """tf.Assert: this op keeps its strings in a template; TF takes every data item as a tensor input."""
    data, types = [], []
    for i, (kind, value) in enumerate(e.attr("template")):
        if kind == "s":
            data.append(e.const(np.asarray(value.encode(), dtype=object), _dtypes.string, f"data_{i}"))
            types.append(_dtypes.string)
        else:
            data.append(e.inp(1 + int(value)))
            types.append(e.dtype(1 + int(value)))
    e.node("Assert", [e.inp(0)] + data, {"T": types, "summarize": int(e.attr("summarize", 3))},
           defaults={"summarize": 3})


@reads("Assert")
def _read_assert(r: Reader):
    template, tensors = [], [0]
    for i in range(1, len(r.data_inputs())):
        value = r.maybe_const(i)
        if value is not None and value.ndim == 0 and value.dtype == object:
            v = value.item()
            template.append(("s", v.decode("utf-8", "replace") if isinstance(v, bytes) else str(v)))
        else:
            template.append(("t", len(tensors) - 1))
            tensors.append(i)
    return r.node("Assert", tensors, {"template": tuple(template), "summarize": int(r.attr("summarize", 3))})
