"""Static shapes (`TensorShape`): partially known shapes inferred at graph-build time.

A dimension is an int or None (unknown); a shape of unknown rank has `dims is None`.
Shape functions in `ops/` return these; `Session.run` checks fed values against them.
"""
from __future__ import annotations

from typing import Iterable, Optional


def _dim(d) -> Optional[int]:
    if d is None:
        return None
    if isinstance(d, Dimension):
        return d.value
    d = int(d)
    if d < 0:
        if d == -1:
            return None
        raise ValueError(f"Dimension {d} must be >= 0")
    return d


class Dimension:
    """A single dimension; `value` is an int or None. Compares equal to ints."""

    __slots__ = ("value",)

    def __init__(self, value):
        self.value = _dim(value)

    def __int__(self):
        return self.value

    def __index__(self):
        return self.value

    def __eq__(self, other):
        other = other.value if isinstance(other, Dimension) else other
        if self.value is None or other is None:
            return None
        return self.value == other

    def __hash__(self):
        return hash(self.value)

    def __repr__(self):
        return f"Dimension({self.value})"

    def __str__(self):
        return "?" if self.value is None else str(self.value)


class KnownDim(int):
    """A known dimension as returned by `shape[i]`: a plain `int` that also has TF1's `.value`.

    TF1 code writes `x.get_shape()[1].value` and `int(x.get_shape()[1])`; the rest of the runtime treats
    dims as ints. Arithmetic returns plain ints. Unknown dims are `None` (so `.value` on them raises
    AttributeError, where TF1 gives None -- `is None` checks keep working).
    """

    __slots__ = ()

    @property
    def value(self) -> int:
        return int(self)

    def __repr__(self):
        return int.__repr__(self)


class TensorShape:
    """A possibly partial shape. `TensorShape(None)` has unknown rank."""

    __slots__ = ("_dims",)

    def __init__(self, dims: Optional[Iterable] = None):
        if isinstance(dims, TensorShape):
            self._dims = dims._dims
        elif dims is None:
            self._dims = None
        else:
            self._dims = tuple(_dim(d) for d in dims)

    # -- queries --------------------------------------------------------------
    @property
    def dims(self):
        return None if self._dims is None else [Dimension(d) for d in self._dims]

    @property
    def ndims(self) -> Optional[int]:
        return None if self._dims is None else len(self._dims)

    rank = ndims

    def as_list(self) -> list:
        if self._dims is None:
            raise ValueError("as_list() is not defined on an unknown TensorShape.")
        return list(self._dims)

    def as_tuple(self):
        return self._dims

    def is_fully_defined(self) -> bool:
        return self._dims is not None and all(d is not None for d in self._dims)

    def num_elements(self) -> Optional[int]:
        if not self.is_fully_defined():
            return None
        n = 1
        for d in self._dims:
            n *= d
        return n

    def __len__(self):
        if self._dims is None:
            raise ValueError("Cannot take the length of shape with unknown rank.")
        return len(self._dims)

    def __iter__(self):
        if self._dims is None:
            raise ValueError("Cannot iterate over a shape with unknown rank.")
        return iter(self._dims)

    def __getitem__(self, key):
        if self._dims is None:
            return TensorShape(None) if isinstance(key, slice) else None
        if isinstance(key, slice):
            return TensorShape(self._dims[key])
        d = self._dims[key]
        return None if d is None else KnownDim(d)

    def __bool__(self):
        return self._dims is not None

    # -- compatibility --------------------------------------------------------
    def is_compatible_with(self, other) -> bool:
        other = as_shape(other)
        if self._dims is None or other._dims is None:
            return True
        if len(self._dims) != len(other._dims):
            return False
        return all(a is None or b is None or a == b for a, b in zip(self._dims, other._dims))

    def merge_with(self, other) -> "TensorShape":
        other = as_shape(other)
        if self._dims is None:
            return other
        if other._dims is None:
            return self
        if not self.is_compatible_with(other):
            raise ValueError(f"Shapes {self} and {other} are not compatible")
        return TensorShape(a if a is not None else b for a, b in zip(self._dims, other._dims))

    def assert_is_compatible_with(self, other):
        if not self.is_compatible_with(other):
            raise ValueError(f"Shapes {self} and {as_shape(other)} are incompatible")

    def assert_has_rank(self, rank):
        if self._dims is not None and len(self._dims) != rank:
            raise ValueError(f"Shape {self} must have rank {rank}")

    def with_rank(self, rank) -> "TensorShape":
        if self._dims is None:
            return unknown_shape(rank)
        self.assert_has_rank(rank)
        return self

    def concatenate(self, other) -> "TensorShape":
        other = as_shape(other)
        if self._dims is None or other._dims is None:
            return TensorShape(None)
        return TensorShape(self._dims + other._dims)

    def __eq__(self, other):
        try:
            other = as_shape(other)
        except (TypeError, ValueError):
            return NotImplemented
        return self._dims == other._dims

    def __hash__(self):
        return hash(self._dims)

    def __repr__(self):
        return "TensorShape(None)" if self._dims is None else f"TensorShape({list(self._dims)})"

    def __str__(self):
        if self._dims is None:
            return "<unknown>"
        inner = ", ".join("?" if d is None else str(d) for d in self._dims)
        return f"({inner},)" if len(self._dims) == 1 else f"({inner})"


def as_shape(shape) -> TensorShape:
    return shape if isinstance(shape, TensorShape) else TensorShape(shape)


def unknown_shape(rank=None) -> TensorShape:
    return TensorShape(None) if rank is None else TensorShape([None] * rank)


def scalar() -> TensorShape:
    return TensorShape([])
