"""Data types (`tf.float32`, `tf.string`, ...): the bottom layer, used by the graph, ops and kernels.

A `DType` names a numpy dtype and says whether it is floating, integer, bool or string.
Kernels run on numpy (or cupy) arrays of exactly `as_numpy_dtype`; a `tf.string` tensor is a numpy object
array of `bytes` (as TF's Python API hands them out), kept on the host.

`as_dtype` accepts exactly what TF 1.15's `tf.as_dtype` accepts, with TF's meanings: the canonical names,
TF's aliases "half"/"float"/"double" (float16/float32/float64), the Python types float/bool/object, numpy
dtypes and scalar types, and the `DataType` enum numbers. Anything else raises TF's TypeError ("Cannot convert
value ... to a TensorFlow DType."), notably "int" and the Python type `int`, which numpy would take as int64.
TF names of types tensorfleet has no kernels for (quantized, bfloat16, resource, variant, the `_ref` types)
raise a TypeError saying so.
"""
from __future__ import annotations

from typing import Optional

import numpy as np


class DType:
    """A tensor element type, compatible with TF's `tf.DType` for the common fields."""

    __slots__ = ("name", "as_numpy_dtype", "_np", "_enum")

    def __init__(self, name: str, np_type, enum: int):
        self.name = name
        self._np = np.dtype(np_type)
        self.as_numpy_dtype = self._np.type
        self._enum = enum

    @property
    def base_dtype(self) -> "DType":
        return self

    @property
    def as_datatype_enum(self) -> int:
        """The number of this type in TF's `DataType` enum (types.proto)."""
        return self._enum

    @property
    def is_floating(self) -> bool:
        return self._np.kind == "f"

    @property
    def is_complex(self) -> bool:
        return self._np.kind == "c"

    @property
    def is_integer(self) -> bool:
        return self._np.kind in "iu"

    @property
    def is_unsigned(self) -> bool:
        return self._np.kind == "u"

    @property
    def is_bool(self) -> bool:
        return self._np.kind == "b"

    @property
    def is_string(self) -> bool:
        return self._np.kind == "O"

    @property
    def is_numeric(self) -> bool:
        return self._np.kind in "fiuc"

    @property
    def is_quantized(self) -> bool:
        return False

    @property
    def is_differentiable(self) -> bool:
        return self._np.kind in "fc"

    @property
    def size(self) -> int:
        return self._np.itemsize

    @property
    def np_dtype(self) -> np.dtype:
        return self._np

    @property
    def min(self):
        if self._np.kind not in "fiu":
            raise TypeError(f"Cannot find minimum value of {self}.")
        return np.finfo(self._np).min if self.is_floating else np.iinfo(self._np).min

    @property
    def max(self):
        if self._np.kind not in "fiu":
            raise TypeError(f"Cannot find maximum value of {self}.")
        return np.finfo(self._np).max if self.is_floating else np.iinfo(self._np).max

    def is_compatible_with(self, other) -> bool:
        return self is as_dtype(other)

    def __eq__(self, other) -> bool:
        """As TF's: equal to anything that converts to this type (tf.float32 == "float" == np.float32)."""
        if other is self:
            return True
        if other is None or isinstance(other, DType):
            return False
        try:
            return as_dtype(other) is self
        except TypeError:
            return False

    def __ne__(self, other) -> bool:
        return not self.__eq__(other)

    __hash__ = object.__hash__

    def __repr__(self) -> str:
        return f"tf.{self.name}"

    def __reduce__(self):
        return as_dtype, (self.name,)


# The enum numbers are TF's types.proto DataType values.
float32 = DType("float32", np.float32, 1)
float64 = DType("float64", np.float64, 2)
int32 = DType("int32", np.int32, 3)
uint8 = DType("uint8", np.uint8, 4)
int16 = DType("int16", np.int16, 5)
int8 = DType("int8", np.int8, 6)
string = DType("string", np.object_, 7)
complex64 = DType("complex64", np.complex64, 8)
int64 = DType("int64", np.int64, 9)
bool_ = DType("bool", np.bool_, 10)
uint16 = DType("uint16", np.uint16, 17)
complex128 = DType("complex128", np.complex128, 18)
float16 = DType("float16", np.float16, 19)
uint32 = DType("uint32", np.uint32, 22)
uint64 = DType("uint64", np.uint64, 23)
half = float16
double = float64

_ALL = (float16, float32, float64, int8, int16, int32, int64, uint8, uint16, uint32, uint64, bool_, string,
        complex64, complex128)

#: TF 1.15's name table (`_STRING_TO_TF`): canonical names plus the non-canonical aliases half/float/double
STRING_TO_DTYPE = {d.name: d for d in _ALL}
STRING_TO_DTYPE.update({"half": float16, "float": float32, "double": float64})

#: TF 1.15 names of types tensorfleet does not implement, with their DataType enum numbers
UNSUPPORTED_TF_NAMES = {"qint8": 11, "quint8": 12, "qint32": 13, "bfloat16": 14, "qint16": 15, "quint16": 16,
                        "resource": 20, "variant": 21}
_REF_NAMES = {f"{n}_ref": (d._enum if isinstance(d, DType) else d) + 100
              for n, d in list(STRING_TO_DTYPE.items()) + list(UNSUPPORTED_TF_NAMES.items())}

_UNSUPPORTED_ENUMS = set(UNSUPPORTED_TF_NAMES.values()) | set(_REF_NAMES.values())
_UNSUPPORTED_NAMES = set(UNSUPPORTED_TF_NAMES) | set(_REF_NAMES)
_PYTHON_TO_DTYPE = {float: float32, bool: bool_, object: string}
_BY_ENUM = {d._enum: d for d in _ALL}
_BY_NP_TYPE = {d.as_numpy_dtype: d for d in _ALL}


def _unsupported(value) -> TypeError:
    return TypeError(f"{value!r} is a TensorFlow DType that tensorfleet does not support (supported: "
                     f"{', '.join(sorted(d.name for d in _ALL))}).")


def _from_numpy(value) -> Optional[DType]:
    """A numpy dtype or scalar type (np.float32, np.dtype("S3"), ...); None if it is neither."""
    typ = value.type if isinstance(value, np.dtype) else value
    if typ in (np.bytes_, np.str_):
        return string
    return _BY_NP_TYPE.get(typ)


def _from_tf_name_or_enum(value) -> Optional[DType]:
    """A TF type name or DataType enum number; raises for TF types without kernels here."""
    if isinstance(value, str):
        if value in _UNSUPPORTED_NAMES:
            raise _unsupported(value)
        return STRING_TO_DTYPE.get(value)
    if int(value) in _UNSUPPORTED_ENUMS:
        raise _unsupported(value)
    return _BY_ENUM.get(int(value))


def as_dtype(value) -> DType:
    """`tf.as_dtype`: a DType, a TF 1.15 type name, float/bool/object, a numpy dtype or type, or an enum number."""
    if isinstance(value, DType):
        return value
    found = None
    if isinstance(value, type) and value in _PYTHON_TO_DTYPE:
        found = _PYTHON_TO_DTYPE[value]
    elif isinstance(value, (np.dtype, type)):
        found = _from_numpy(value)
    elif isinstance(value, (str, int, np.integer)):  # as TF, a bool counts as its int (True is DT_FLOAT's 1)
        found = _from_tf_name_or_enum(value)
    if found is None:
        raise TypeError(f"Cannot convert value {value!r} to a TensorFlow DType.")
    return found


def string_array(value) -> np.ndarray:
    """A feed or constant value as a `tf.string` array: a numpy object array of `bytes` (str is UTF-8 encoded).

    Raises TypeError for elements that are not str/bytes, as TF does for e.g. a number fed as a string.
    A scalar of numpy's fixed-width 'S' type keeps its trailing NUL bytes (its itemsize is its length);
    in a longer 'S' array they are numpy's padding and are dropped, as numpy itself does.
    """
    if isinstance(value, (np.ndarray, np.bytes_)) and np.ndim(value) == 0 and np.asarray(value).dtype.kind == "S":
        return np.array(np.asarray(value).tobytes(), dtype=object)
    raw = np.asarray(value, dtype=object)
    out = np.empty(raw.shape, dtype=object)
    flat_in, flat_out = raw.reshape(-1), out.reshape(-1)
    for i, item in enumerate(flat_in):
        if isinstance(item, bytes):
            flat_out[i] = bytes(item)
        elif isinstance(item, str):
            flat_out[i] = item.encode("utf-8")
        else:
            raise TypeError(f"Expected string, got {item!r} of type '{type(item).__name__}' instead.")
    return out
