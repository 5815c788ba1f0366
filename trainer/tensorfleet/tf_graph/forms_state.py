"""TF forms of variables, assignments and random ops.

A variable is TF's ref variable `VariableV2`. Ops that write one hold it as an attribute here (`var`) and
take its ref output as their first input in TF (Assign(ref, value), AssignAdd, IsVariableInitialized,
CountUpTo). TF's resource variables read as ref variables (VarHandleOp -> VariableV2, ReadVariableOp ->
Identity, AssignVariableOp -> Assign, VarIsInitializedOp -> IsVariableInitialized). Random ops hold a static
shape attribute here and take it as an int32 Const input in TF, with TF's `seed`/`seed2`.
"""
from __future__ import annotations

import numpy as np

from .. import dtypes as _dtypes
from .registry import Emitter, Reader, reads, writes


@writes("VariableV2")
def _write_variable(e: Emitter):
    e.node("VariableV2", [], {"shape": e.attr("shape"), "dtype": e.attr("dtype"), "container": "",
                              "shared_name": ""}, defaults={"container": "", "shared_name": ""})


@reads("VariableV2", "Variable", "VarHandleOp")
def _read_variable(r: Reader):
    return r.node("VariableV2", [], {"shape": r.attr("shape"), "dtype": r.attr("dtype")})


@writes("Assign", "AssignAdd", "AssignSub")
def _write_assign(e: Emitter):
    attrs = {"T": e.dtype(0), "use_locking": e.op.type == "Assign"}
    defaults = {"use_locking": e.op.type == "Assign"}
    if e.op.type == "Assign":
        attrs["validate_shape"] = bool(e.attr("validate_shape", True))
        defaults["validate_shape"] = True
    e.node(e.op.type, [e.ref(), e.inp(0)], attrs, defaults=defaults)


@reads("Assign", "AssignAdd", "AssignSub")
def _read_assign(r: Reader):
    ref, value = r.data_inputs()[:2]
    validate = bool(r.attr("validate_shape", True)) if r.nd.op == "Assign" else True
    return r.node(r.nd.op, [value], {"var": r.op_ref(ref), "validate_shape": validate})


@reads("AssignVariableOp")
def _read_assign_variable(r: Reader):
    ref, value = r.data_inputs()[:2]
    return r.node("Assign", [value], {"var": r.op_ref(ref), "validate_shape": bool(r.attr("validate_shape", False))})


@reads("ReadVariableOp")
def _read_read_variable(r: Reader):
    return r.node("Identity", [0])


@writes("IsVariableInitialized")
def _write_is_initialized(e: Emitter):
    e.node("IsVariableInitialized", [e.ref()], {"dtype": e.op.attrs["var"].outputs[0].dtype})


@reads("IsVariableInitialized", "VarIsInitializedOp")
def _read_is_initialized(r: Reader):
    return r.node("IsVariableInitialized", [], {"var": r.op_ref(r.data_inputs()[0])})


@writes("CountUpTo")
def _write_count_up_to(e: Emitter):
    e.node("CountUpTo", [e.ref()], {"limit": int(e.attr("limit")), "T": e.op.outputs[0].dtype})


@reads("CountUpTo")
def _read_count_up_to(r: Reader):
    return r.node("CountUpTo", [], {"var": r.op_ref(r.data_inputs()[0]), "limit": int(r.attr("limit"))})


_RANDOM = ("RandomStandardNormal", "TruncatedNormal", "RandomUniform", "RandomUniformInt")


@writes(*_RANDOM)
def _write_random(e: Emitter):
    static = e.attr("shape")
    if static is None:
        shape, shape_dtype = e.inp(len(e.op.inputs) - 1), e.dtype(len(e.op.inputs) - 1)
    else:
        shape, shape_dtype = e.const(np.asarray(static, np.int32), _dtypes.int32, "shape"), _dtypes.int32
    inputs = [shape]
    attrs = {"seed": int(e.attr("seed", 0)), "seed2": int(e.attr("seed2", 0)), "T": shape_dtype}
    if e.op.type == "RandomUniformInt":
        dt = e.attr("dtype")
        inputs += [e.const(np.asarray(e.attr(k), dt.as_numpy_dtype), dt, k) for k in ("minval", "maxval")]
        attrs["Tout"] = dt
    else:
        attrs["dtype"] = e.attr("dtype")
    e.node(e.op.type, inputs, attrs, defaults={"seed": 0, "seed2": 0})


@reads(*_RANDOM)
def _read_random(r: Reader):
    shape = r.maybe_const(0)
    attrs = {"seed": int(r.attr("seed", 0)), "seed2": int(r.attr("seed2", 0))}
    if r.nd.op == "RandomUniformInt":
        attrs.update(dtype=r.attr("Tout"), minval=int(r.const(1, "minval")), maxval=int(r.const(2, "maxval")))
    else:
        attrs["dtype"] = r.attr("dtype")
    if shape is None:
        return r.node(r.nd.op, [0], {**attrs, "shape": None})
    return r.node(r.nd.op, [], {**attrs, "shape": tuple(int(d) for d in np.asarray(shape).reshape(-1))})


