"""TensorProto, TensorShapeProto and DataType <-> numpy: how a tensor value is written in a GraphDef.

Bottom layer beside `dtypes` and `tensor_shape` (used by `graph_def` for constants and
shapes, and by the distributed wire format for dtypes and shapes). Numeric values are
raw little-endian bytes in `tensor_content`; strings go in `string_val`; sizes are
checked against the shape before anything is built, and nothing is evaluated.
"""
from __future__ import annotations

import math

import numpy as np

from . import dtypes as _dtypes
from . import errors
from .protos import types_pb2
from .protos.tensor_pb2 import TensorProto
from .protos.tensor_shape_pb2 import TensorShapeProto
from .tensor_shape import TensorShape

# dtype name -> TF DataType enum number (types.proto)
_ENUM_BY_NAME = {
    "float32": types_pb2.DT_FLOAT, "float64": types_pb2.DT_DOUBLE, "int32": types_pb2.DT_INT32,
    "uint8": types_pb2.DT_UINT8, "int16": types_pb2.DT_INT16, "int8": types_pb2.DT_INT8,
    "string": types_pb2.DT_STRING, "complex64": types_pb2.DT_COMPLEX64, "int64": types_pb2.DT_INT64,
    "bool": types_pb2.DT_BOOL, "bfloat16": types_pb2.DT_BFLOAT16, "uint16": types_pb2.DT_UINT16,
    "complex128": types_pb2.DT_COMPLEX128, "float16": types_pb2.DT_HALF, "uint32": types_pb2.DT_UINT32,
    "uint64": types_pb2.DT_UINT64,
}
_NAME_BY_ENUM: dict[int, str] = {int(v): k for k, v in _ENUM_BY_NAME.items()}


# -- dtypes and tensors ------------------------------------------------------------------------
def dtype_to_enum(dtype) -> int:
    """A tensorfleet DType (or anything `as_dtype` takes) -> TF's DataType enum number."""
    dt = _dtypes.as_dtype(dtype)
    try:
        return _ENUM_BY_NAME[dt.name]
    except KeyError:
        raise errors.InvalidArgumentError(None, None, f"dtype {dt.name} has no DataType number") from None


def enum_to_dtype(value: int, where: str = "tensor"):
    """TF's DataType enum number -> tensorfleet DType; unknown or unsupported numbers raise, naming `where`."""
    name = _NAME_BY_ENUM.get(value)
    if name is None:
        raise errors.InvalidArgumentError(None, None, f"{where}: unsupported DataType {value}")
    try:
        return _dtypes.as_dtype(name)
    except TypeError:
        raise errors.InvalidArgumentError(None, None, f"{where}: DataType {name} is not supported here") from None


def shape_to_proto(shape) -> TensorShapeProto:
    shape = shape if isinstance(shape, TensorShape) else TensorShape(shape)
    proto = TensorShapeProto()
    if shape.ndims is None:
        proto.unknown_rank = True
        return proto
    for d in shape.as_tuple():
        proto.dim.add(size=-1 if d is None else int(d))
    return proto


def proto_to_shape(proto: TensorShapeProto, where: str = "shape") -> TensorShape:
    if proto.unknown_rank:
        if len(proto.dim):
            raise errors.InvalidArgumentError(None, None, f"{where}: unknown rank with {len(proto.dim)} dims")
        return TensorShape(None)
    dims = []
    for d in proto.dim:
        if d.size < -1:
            raise errors.InvalidArgumentError(None, None, f"{where}: bad dimension {d.size}")
        dims.append(None if d.size == -1 else d.size)
    return TensorShape(dims)


def _is_string_array(arr: np.ndarray) -> bool:
    return arr.dtype.kind in "SUO"


def ndarray_to_proto(value) -> TensorProto:
    """A numpy value -> TensorProto: numeric as raw little-endian bytes, strings in string_val."""
    arr = np.asarray(value)
    proto = TensorProto()
    proto.tensor_shape.CopyFrom(shape_to_proto(TensorShape(arr.shape)))
    if _is_string_array(arr):
        proto.dtype = types_pb2.DT_STRING
        proto.string_val.extend(x if isinstance(x, bytes) else str(x).encode() for x in arr.reshape(-1).tolist())
        return proto
    proto.dtype = dtype_to_enum(arr.dtype)  # type: ignore[assignment]
    proto.tensor_content = np.ascontiguousarray(arr, dtype=arr.dtype.newbyteorder("<")).tobytes()
    return proto


def proto_to_ndarray(proto: TensorProto, where: str = "tensor") -> np.ndarray:
    """TensorProto -> read-only numpy array; sizes are checked against the shape, nothing is evaluated."""
    shape = proto_to_shape(proto.tensor_shape, where)
    if not shape.is_fully_defined():
        raise errors.InvalidArgumentError(None, None, f"{where}: a tensor value needs a fully defined shape")
    dims = tuple(shape.as_tuple())
    count = math.prod(dims)
    if proto.dtype == types_pb2.DT_STRING:
        vals = list(proto.string_val)
        if len(vals) == 1 and count != 1:
            vals = vals * count
        if len(vals) != count:
            raise errors.InvalidArgumentError(None, None, f"{where}: {len(vals)} strings for shape {dims}")
        arr = np.empty(count, dtype=object)
        arr[:] = vals
        arr = arr.reshape(dims)
    else:
        dt = enum_to_dtype(proto.dtype, where).np_dtype
        if proto.tensor_content:
            if len(proto.tensor_content) != count * dt.itemsize:
                raise errors.InvalidArgumentError(
                    None, None, f"{where}: {len(proto.tensor_content)} bytes of content for shape {dims} of "
                                f"{dt.name} (expected {count * dt.itemsize})")
            arr = np.frombuffer(proto.tensor_content, dtype=dt.newbyteorder("<")).astype(dt, copy=False)
            arr = arr.reshape(dims)
        else:
            arr = _from_typed_vals(proto, dt, count, dims, where)
    arr.flags.writeable = False
    return arr


def _from_typed_vals(proto: TensorProto, dt: np.dtype, count: int, dims: tuple, where: str) -> np.ndarray:
    if dt == np.float16:
        vals = np.array(proto.half_val, dtype=np.uint16).view(np.float16)
    else:
        field = {"f": "float_val", "b": "bool_val"}.get(dt.kind, "")
        if dt == np.float64:
            field = "double_val"
        elif dt.kind in "iu":
            field = {8: "uint64_val" if dt.kind == "u" else "int64_val"}.get(dt.itemsize, "int_val")
            if dt == np.uint32:
                field = "uint32_val"
        vals = np.array(getattr(proto, field), dtype=dt)
    if vals.size == count:
        return vals.reshape(dims)
    if vals.size == 0:
        return np.zeros(dims, dtype=dt)
    if vals.size < count:  # TF repeats the last value to fill the shape
        return np.concatenate([vals, np.full(count - vals.size, vals[-1], dtype=dt)]).reshape(dims)
    raise errors.InvalidArgumentError(None, None, f"{where}: {vals.size} values for shape {dims}")
