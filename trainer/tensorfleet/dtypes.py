"""Data types (`tf.float32`, ...): the bottom layer, used by the graph, ops and kernels.

A `DType` names a numpy dtype and says whether it is floating, integer or bool.
Kernels run on numpy (or cupy) arrays of exactly `as_numpy_dtype`.
"""
from __future__ import annotations

import numpy as np


class DType:
    """A tensor element type, compatible with TF's `tf.DType` for the common fields."""

    __slots__ = ("name", "as_numpy_dtype", "_np")

    def __init__(self, name: str, np_type):
        self.name = name
        self._np = np.dtype(np_type)
        self.as_numpy_dtype = self._np.type

    @property
    def base_dtype(self) -> "DType":
        return self

    @property
    def is_floating(self) -> bool:
        return self._np.kind == "f"

    @property
    def is_integer(self) -> bool:
        return self._np.kind in "iu"

    @property
    def is_bool(self) -> bool:
        return self._np.kind == "b"

    @property
    def is_numeric(self) -> bool:
        return self._np.kind in "fiu"

    @property
    def is_differentiable(self) -> bool:
        return self.is_floating

    @property
    def size(self) -> int:
        return self._np.itemsize

    @property
    def np_dtype(self) -> np.dtype:
        return self._np

    @property
    def min(self):
        return np.finfo(self._np).min if self.is_floating else np.iinfo(self._np).min

    @property
    def max(self):
        return np.finfo(self._np).max if self.is_floating else np.iinfo(self._np).max

    def is_compatible_with(self, other) -> bool:
        return self is as_dtype(other)

    def __repr__(self) -> str:
        return f"tf.{self.name}"

    def __reduce__(self):
        return as_dtype, (self.name,)


float16 = DType("float16", np.float16)
float32 = DType("float32", np.float32)
float64 = DType("float64", np.float64)
int8 = DType("int8", np.int8)
int16 = DType("int16", np.int16)
int32 = DType("int32", np.int32)
int64 = DType("int64", np.int64)
uint8 = DType("uint8", np.uint8)
bool_ = DType("bool", np.bool_)
half = float16
double = float64

_ALL = (float16, float32, float64, int8, int16, int32, int64, uint8, bool_)
_BY_NAME = {d.name: d for d in _ALL}
_BY_NP = {d.np_dtype: d for d in _ALL}


def as_dtype(value) -> DType:
    """Converts a DType, a name ("float32"), a numpy dtype or a Python type to a DType."""
    if isinstance(value, DType):
        return value
    if isinstance(value, str) and value in _BY_NAME:
        return _BY_NAME[value]
    if value is float:
        return float32
    if value is int:
        return int32
    if value is bool:
        return bool_
    try:
        npd = np.dtype(value)
    except TypeError:
        npd = None
    if npd is not None and npd in _BY_NP:
        return _BY_NP[npd]
    raise TypeError(f"Cannot convert {value!r} to a tensorfleet DType")
