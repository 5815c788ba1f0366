"""Element structures of tf.data: nested tuples / dicts / namedtuples of components (TF's `nest`).

Bottom of the data package. A list is a single component (a tensor), as in TF's tf.data; tuples, namedtuples
and dicts (sorted by key) are structures. A `spec` is the same structure with `(DType, TensorShape)` leaves.
"""
from __future__ import annotations

from typing import Any, Callable


class ComponentSpec:
    """One component's static type: (dtype, TensorShape). Not a tuple, so `flatten` keeps it a leaf."""

    __slots__ = ("dtype", "shape")

    def __init__(self, dtype, shape):
        self.dtype, self.shape = dtype, shape

    def __iter__(self):
        return iter((self.dtype, self.shape))

    def __getitem__(self, i):
        return (self.dtype, self.shape)[i]

    def __repr__(self) -> str:
        return f"ComponentSpec({self.dtype!r}, {self.shape})"


def is_structure(x) -> bool:
    return isinstance(x, (tuple, dict))


def flatten(structure) -> list:
    """The leaves in a fixed order: tuples in order, dicts by sorted key."""
    if isinstance(structure, dict):
        return [leaf for k in sorted(structure) for leaf in flatten(structure[k])]
    if isinstance(structure, tuple):
        return [leaf for item in structure for leaf in flatten(item)]
    return [structure]


def pack_as(structure, flat: list):
    """The inverse of `flatten`: `flat` leaves arranged like `structure`."""
    it = iter(flat)

    def build(s):
        if isinstance(s, dict):
            return {k: build(s[k]) for k in sorted(s)}
        if isinstance(s, tuple):
            items = [build(x) for x in s]
            return type(s)(*items) if hasattr(s, "_fields") else tuple(items)
        return next(it)

    out = build(structure)
    if next(it, None) is not None:
        raise ValueError("pack_as: more values than the structure has components")
    return out


def map_structure(fn: Callable[[Any], Any], structure):
    return pack_as(structure, [fn(x) for x in flatten(structure)])


def same_structure(a, b) -> bool:
    if isinstance(a, dict) and isinstance(b, dict):
        return sorted(a) == sorted(b) and all(same_structure(a[k], b[k]) for k in a)
    if isinstance(a, tuple) and isinstance(b, tuple):
        return len(a) == len(b) and all(same_structure(x, y) for x, y in zip(a, b, strict=True))
    return not is_structure(a) and not is_structure(b)


def call_with_element(fn, element):
    """TF's convention: a tuple element is unpacked into positional arguments, anything else is one argument."""
    if isinstance(element, tuple) and not hasattr(element, "_fields"):
        return fn(*element)
    return fn(element)
