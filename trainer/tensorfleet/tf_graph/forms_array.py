"""TF forms of the array ops: constants and placeholders, shapes, reshapes, joins, slices, gathers.

Where these ops hold a static shape, axis or index list as an attribute, TF takes it as an int32 Const
input (Reshape's `shape`, Transpose's `perm`, ConcatV2's `axis`, StridedSlice's begin/end/strides and
masks, ...): the writers add that Const, the readers fold it back (and refuse a non-constant one, naming
the node, where these ops have no dynamic form). `NnFlatten` (`tf.layers.flatten`) is written as TF's
Reshape to `[-1, prod(dims[1:])]`, `NnGather` (`embedding_lookup`) as GatherV2 on axis 0.
"""
from __future__ import annotations

import builtins

import numpy as np

from .. import dtypes as _dtypes
from ..tensor_shape import TensorShape
from .registry import REQUIRED, Emitter, Reader, int_list, reads, simple, writes

simple("PlaceholderWithDefault", "", out_types="dtype", shape=REQUIRED)
simple("Squeeze", "T", squeeze_dims=())
simple("Pack", "N*T", axis=0)
simple("Shape", "T", out_type=_dtypes.int32)
simple("Size", "T", out_type=_dtypes.int32)
simple("Rank", "T")
simple("GatherNd", "Tparams Tindices")
simple("InvertPermutation", "T")


@writes("Const")
def _write_const(e: Emitter):
    e.node("Const", [], {"value": np.asarray(e.attr("value")), "dtype": e.attr("dtype")})


@reads("Const")
def _read_const(r: Reader):
    return r.node("Const", [], {"value": r.nd.attr["value"], "dtype": r.nd.attr["dtype"]})


@writes("Placeholder")
def _write_placeholder(e: Emitter):
    e.node("Placeholder", [], {"dtype": e.attr("dtype"), "shape": e.attr("shape")})


@writes("IdentityN")
def _write_identity_n(e: Emitter):
    e.node("IdentityN", [e.inp(i) for i in range(len(e.op.inputs))], {"T": [t.dtype for t in e.op.inputs]})


@reads("IdentityN")
def _read_identity_n(r: Reader):
    return r.node("IdentityN")


@writes("ZerosLike", "OnesLike")
def _write_like(e: Emitter):
    if e.attr("dtype") is not e.dtype(0):
        e.fail(f"a {e.attr('dtype').name} result from a {e.dtype(0).name} input")
    e.node(e.op.type, [e.inp(0)], {"T": e.dtype(0)})


@reads("ZerosLike", "OnesLike")
def _read_like(r: Reader):
    return r.node(r.nd.op, None, {"dtype": r.attr("T")})


def _int_input(e: Emitter, value, suffix: str, index=None, dtype=_dtypes.int32) -> str:
    """A static int list attribute as a Const input, or the op's own dynamic input `index` when it has none."""
    if value is None:
        if index is None or index >= len(e.op.inputs):
            e.fail(f"its {suffix} is neither static nor an input")
        return e.inp(index)
    return e.const(np.asarray(value, dtype=dtype.as_numpy_dtype), dtype, suffix)


@writes("Reshape")
def _write_reshape(e: Emitter):
    shape = _int_input(e, e.attr("shape"), "shape", 1)
    e.node("Reshape", [e.inp(0), shape], {"T": e.dtype(0), "Tshape": _dtypes.int32 if len(e.op.inputs) < 2
                                                                      else e.dtype(1)})


@reads("Reshape")
def _read_reshape(r: Reader):
    shape = r.maybe_const(1)
    if shape is None:
        return r.node("Reshape", [0, 1], {"shape": None})
    return r.node("Reshape", [0], {"shape": tuple(int_list(shape))})


@writes("NnFlatten")
def _write_flatten(e: Emitter):
    dims = e.op.inputs[0].shape
    rest = dims[1:].num_elements() if dims.ndims is not None else None
    if rest is None:
        e.fail("flattening a tensor whose non-batch dimensions are not all known")
    shape = e.const(np.asarray([-1, rest], np.int32), _dtypes.int32, "shape")
    e.node("Reshape", [e.inp(0), shape], {"T": e.dtype(0), "Tshape": _dtypes.int32})


@writes("ExpandDims")
def _write_expand_dims(e: Emitter):
    dim = e.const(np.int32(e.attr("axis")), _dtypes.int32, "dim")
    e.node("ExpandDims", [e.inp(0), dim], {"T": e.dtype(0), "Tdim": _dtypes.int32}, defaults={"Tdim": _dtypes.int32})


@reads("ExpandDims")
def _read_expand_dims(r: Reader):
    return r.node("ExpandDims", [0], {"axis": int(r.const(1, "dim"))})


@writes("Transpose")
def _write_transpose(e: Emitter):
    perm = e.attr("perm")
    if perm is None:
        rank = e.op.inputs[0].shape.ndims
        if rank is None:
            e.fail("a reversing transpose of a tensor of unknown rank")
        perm = list(range(rank))[::-1]
    e.node("Transpose", [e.inp(0), e.const(np.asarray(perm, np.int32), _dtypes.int32, "perm")],
           {"T": e.dtype(0), "Tperm": _dtypes.int32})


@reads("Transpose")
def _read_transpose(r: Reader):
    return r.node("Transpose", [0], {"perm": tuple(int_list(r.const(1, "perm")))})


@writes("Fill")
def _write_fill(e: Emitter):
    dims = _int_input(e, e.attr("shape"), "dims", 1)
    e.node("Fill", [dims, e.inp(0)], {"T": e.dtype(0), "index_type": _dtypes.int32},
           defaults={"index_type": _dtypes.int32})


@reads("Fill")
def _read_fill(r: Reader):
    dims = r.maybe_const(0)
    if dims is None:
        return r.node("Fill", [1, 0], {"shape": None})
    return r.node("Fill", [1], {"shape": tuple(int_list(dims))})


# Range is TF's form here too (start, limit, delta as inputs; ops/sequence_ops.py)
simple("Range", "Tidx Tidx Tidx", Tidx=REQUIRED)


@writes("ConcatV2")
def _write_concat(e: Emitter):
    n = len(e.op.inputs)
    axis = e.const(np.int32(e.attr("axis")), _dtypes.int32, "axis")
    e.node("ConcatV2", [e.inp(i) for i in range(n)] + [axis], {"N": n, "T": e.dtype(0), "Tidx": _dtypes.int32},
           defaults={"Tidx": _dtypes.int32})


@reads("ConcatV2")
def _read_concat(r: Reader):
    n = len(r.data_inputs()) - 1
    return r.node("ConcatV2", list(range(n)), {"axis": int(r.const(n, "axis"))})


@writes("Unpack")
def _write_unpack(e: Emitter):
    e.node("Unpack", [e.inp(0)], {"num": e.attr("num"), "T": e.dtype(0), "axis": e.attr("axis")}, defaults={"axis": 0})


@reads("Unpack")
def _read_unpack(r: Reader):
    return r.node("Unpack", None, {"num": r.attr("num"), "axis": r.attr("axis", 0)})


@writes("Split", "SplitV")
def _write_split(e: Emitter):
    axis = e.const(np.int32(e.attr("axis")), _dtypes.int32, "split_dim")
    n = len(e.op.outputs)
    if e.op.type == "Split":
        e.node("Split", [axis, e.inp(0)], {"num_split": n, "T": e.dtype(0)})
        return
    sizes = e.const(np.asarray(e.attr("size_splits"), np.int32), _dtypes.int32, "size_splits")
    e.node("SplitV", [e.inp(0), sizes, axis], {"num_split": n, "T": e.dtype(0), "Tlen": _dtypes.int32},
           defaults={"Tlen": _dtypes.int64})


@reads("Split")
def _read_split(r: Reader):
    n = r.attr("num_split")
    return r.node("Split", [1], {"axis": int(r.const(0, "split_dim")), "size_splits": (None,) * n})


@reads("SplitV")
def _read_split_v(r: Reader):
    return r.node("SplitV", [0], {"axis": int(r.const(2, "split_dim")),
                                  "size_splits": tuple(int_list(r.const(1, "size_splits")))})


@writes("Tile")
def _write_tile(e: Emitter):
    m = e.const(np.asarray(e.attr("multiples"), np.int32), _dtypes.int32, "multiples")
    e.node("Tile", [e.inp(0), m], {"T": e.dtype(0), "Tmultiples": _dtypes.int32},
           defaults={"Tmultiples": _dtypes.int32})


@reads("Tile")
def _read_tile(r: Reader):
    return r.node("Tile", [0], {"multiples": tuple(int_list(r.const(1, "multiples")))})


@writes("Pad")
def _write_pad(e: Emitter):
    pads = e.const(np.asarray(e.attr("paddings"), np.int32).reshape(-1, 2), _dtypes.int32, "paddings")
    cv = np.asarray(e.attr("constant_values"))
    if cv.any():
        e.node("PadV2", [e.inp(0), pads, e.const(cv, e.dtype(0), "constant_values")],
               {"T": e.dtype(0), "Tpaddings": _dtypes.int32}, defaults={"Tpaddings": _dtypes.int32})
    else:
        e.node("Pad", [e.inp(0), pads], {"T": e.dtype(0), "Tpaddings": _dtypes.int32},
               defaults={"Tpaddings": _dtypes.int32})


@reads("Pad", "PadV2")
def _read_pad(r: Reader):
    pads = tuple((int(a), int(b)) for a, b in np.asarray(r.const(1, "paddings")).reshape(-1, 2).tolist())
    dt = r.attr("T")
    cv = r.const(2, "constant_values") if r.nd.op == "PadV2" else np.zeros((), dt.as_numpy_dtype)
    return r.node("Pad", [0], {"paddings": pads, "constant_values": np.asarray(cv, dt.as_numpy_dtype)})


@writes("MirrorPad")
def _write_mirror_pad(e: Emitter):
    pads = e.const(np.asarray(e.attr("paddings"), np.int32).reshape(-1, 2), _dtypes.int32, "paddings")
    e.node("MirrorPad", [e.inp(0), pads], {"T": e.dtype(0), "Tpaddings": _dtypes.int32,
                                           "mode": e.attr("mode").upper()}, defaults={"Tpaddings": _dtypes.int32})


@reads("MirrorPad")
def _read_mirror_pad(r: Reader):
    pads = tuple((int(a), int(b)) for a, b in np.asarray(r.const(1, "paddings")).reshape(-1, 2).tolist())
    return r.node("MirrorPad", [0], {"paddings": pads, "mode": str(r.attr("mode")).lower()})


def _slice_parts(e: Emitter, key) -> tuple:
    begin, end, strides = [], [], []
    masks = {"begin_mask": 0, "end_mask": 0, "ellipsis_mask": 0, "new_axis_mask": 0, "shrink_axis_mask": 0}
    for i, k in enumerate(key):
        bit = 1 << i
        if k is Ellipsis:
            masks["ellipsis_mask"] |= bit
            begin.append(0), end.append(0), strides.append(1)
        elif k is None:
            masks["new_axis_mask"] |= bit
            begin.append(0), end.append(0), strides.append(1)
        elif isinstance(k, builtins.slice):
            step = 1 if k.step is None else int(k.step)
            if k.start is None:
                masks["begin_mask"] |= bit
            if k.stop is None:
                masks["end_mask"] |= bit
            begin.append(0 if k.start is None else int(k.start))
            end.append(0 if k.stop is None else int(k.stop))
            strides.append(step)
        elif isinstance(k, (int, np.integer)):
            masks["shrink_axis_mask"] |= bit
            begin.append(int(k)), end.append(int(k) + 1), strides.append(1)
        else:
            e.fail(f"slice key item {k!r}")
    return begin, end, strides, masks


@writes("StridedSlice")
def _write_strided_slice(e: Emitter):
    begin, end, strides, masks = _slice_parts(e, e.attr("key"))
    if not begin:  # x[()] : TF needs one dimension of spec; an ellipsis keeps everything
        begin, end, strides, masks["ellipsis_mask"] = [0], [0], [1], 1
    parts = [e.const(np.asarray(v, np.int32), _dtypes.int32, k) for k, v in
             (("begin", begin), ("end", end), ("strides", strides))]
    e.node("StridedSlice", [e.inp(0)] + parts, {"T": e.dtype(0), "Index": _dtypes.int32, **masks},
           defaults={m: 0 for m in masks})


@reads("StridedSlice")
def _read_strided_slice(r: Reader):
    begin, end, strides = (int_list(r.const(i + 1, k)) for i, k in enumerate(("begin", "end", "strides")))
    m = {k: int(r.attr(k, 0)) for k in ("begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask",
                                          "shrink_axis_mask")}
    key: list = []
    for i, (b, en, s) in enumerate(zip(begin, end, strides)):
        bit = 1 << i
        if m["ellipsis_mask"] & bit:
            key.append(Ellipsis)
        elif m["new_axis_mask"] & bit:
            key.append(None)
        elif m["shrink_axis_mask"] & bit:
            key.append(b)
        else:
            key.append(builtins.slice(None if m["begin_mask"] & bit else b, None if m["end_mask"] & bit else en, s))
    return r.node("StridedSlice", [0], {"key": tuple(key)})


@writes("Slice")
def _write_slice(e: Emitter):
    key = e.attr("key")
    begin = [int(k.start) for k in key]
    size = [-1 if k.stop is None else int(k.stop) - int(k.start) for k in key]
    parts = [e.const(np.asarray(v, np.int32), _dtypes.int32, k) for k, v in (("begin", begin), ("size", size))]
    e.node("Slice", [e.inp(0)] + parts, {"T": e.dtype(0), "Index": _dtypes.int32})


@reads("Slice")
def _read_slice(r: Reader):
    begin, size = int_list(r.const(1, "begin")), int_list(r.const(2, "size"))
    return r.node("Slice", [0], {"key": tuple(builtins.slice(b, None if s == -1 else b + s, None)
                                              for b, s in zip(begin, size))})


@writes("GatherV2", "NnGather")
def _write_gather(e: Emitter):
    axis = e.const(np.int32(e.attr("axis", 0)), _dtypes.int32, "axis")
    e.node("GatherV2", [e.inp(0), e.inp(1), axis], {"Tparams": e.dtype(0), "Tindices": e.dtype(1),
                                                    "Taxis": _dtypes.int32, "batch_dims": 0},
           defaults={"batch_dims": 0})


@reads("GatherV2")
def _read_gather(r: Reader):
    if r.attr("batch_dims", 0):
        r.fail("batch_dims != 0 is not supported here")
    return r.node("GatherV2", [0, 1], {"axis": int(r.const(2, "axis"))})


@reads("Gather")
def _read_gather_v1(r: Reader):
    return r.node("GatherV2", [0, 1], {"axis": 0})


@writes("OneHot")
def _write_one_hot(e: Emitter):
    dt = e.attr("dtype")
    parts = [e.const(np.int32(e.attr("depth")), _dtypes.int32, "depth"),
             e.const(np.asarray(e.attr("on"), dt.as_numpy_dtype), dt, "on_value"),
             e.const(np.asarray(e.attr("off"), dt.as_numpy_dtype), dt, "off_value")]
    e.node("OneHot", [e.inp(0)] + parts, {"T": dt, "TI": e.dtype(0), "axis": int(e.attr("axis"))},
           defaults={"axis": -1, "TI": _dtypes.int64})


@reads("OneHot")
def _read_one_hot(r: Reader):
    return r.node("OneHot", [0], {"depth": int(r.const(1, "depth")), "on": r.const(2, "on_value"),
                                  "off": r.const(3, "off_value"), "axis": int(r.attr("axis", -1)),
                                  "dtype": r.attr("T")})


@writes("ReverseV2")
def _write_reverse(e: Emitter):
    axis = e.const(np.asarray(int_list(e.attr("axis")), np.int32), _dtypes.int32, "axis")
    e.node("ReverseV2", [e.inp(0), axis], {"T": e.dtype(0), "Tidx": _dtypes.int32}, defaults={"Tidx": _dtypes.int32})


@reads("ReverseV2")
def _read_reverse(r: Reader):
    return r.node("ReverseV2", [0], {"axis": tuple(int_list(r.const(1, "axis")))})


@reads("Placeholder")
def _read_placeholder(r: Reader):
    shape = r.attr("shape", None)
    return r.node("Placeholder", [], {"dtype": r.attr("dtype"), "shape": shape if shape is not None
                                      else TensorShape(None)})


simple("DynamicPartition", "T -", num_partitions=REQUIRED)


@writes("DynamicStitch", "ParallelDynamicStitch")
def _write_stitch(e: Emitter):
    n = int(e.attr("N"))
    e.node(e.op.type, [e.inp(i) for i in range(2 * n)], {"N": n, "T": e.dtype(n)})


@reads("DynamicStitch", "ParallelDynamicStitch")
def _read_stitch(r: Reader):
    return r.node(r.nd.op, None, {"N": int(r.attr("N"))})
