"""Autopacking: a (nested) list or tuple that holds tensors converts to one tensor, as `tf.stack` would.

TF's `convert_to_tensor` registers a conversion for lists and tuples before the constant one
(`array_ops._autopacking_conversion_function`, priority 99), so `tf.reduce_sum([[t1, t2], [t3, t4]])`,
`tf.concat([[a, 1.0]], 0)` or `x * [w, 2.0]` work on tensors inside Python lists. The rules, TF 1.15's:
- a list with no tensor (or Variable) anywhere in it is not packed: the constant conversion takes it;
- the dtype is the first tensor's (depth first) unless one is asked for; when one is asked for and differs,
  every tensor is cast to it first;
- Python numbers and numpy arrays beside tensors become constants of that dtype (`constant(x, dtype)`,
  named by their position), so a value the dtype cannot hold raises TF's TypeError;
- each level is a `Pack` op: the outer one is named `packed` (or the conversion's name), inner levels by
  their index inside it (`packed/0`, `packed/1`, ...); a tensor of another dtype than the asked one
  raises "Cannot convert a list containing a tensor of dtype ...".

Sits in ops: `default_graph.convert_to_tensor` calls `autopack` through the hook installed here at import,
so every op that converts its inputs packs lists (the graph layer imports no ops).
"""
from __future__ import annotations

import numpy as np

from .. import default_graph as _graph_mod
from ..graph import Tensor
from ..indexed_slices import IndexedSlices
from .arithmetic_ops import cast
from .common import is_tensor_like, make_tensor

__all__: list = []

#: leaf types that never hold a tensor: TF's _NON_AUTOPACKABLE_TYPES (numpy's scalar types and ndarray)
_NON_AUTOPACKABLE = frozenset(np.ScalarType) | {np.ndarray}


def _leaves(value):
    if isinstance(value, (list, tuple)):
        for item in value:
            yield from _leaves(item)
    else:
        yield value


def _dense_like(value) -> bool:
    """A Tensor or something converting to one (a Variable); not an IndexedSlices (TF's is_dense_tensor_like)."""
    return isinstance(value, Tensor) or (is_tensor_like(value) and not isinstance(value, IndexedSlices))


def _first_dtype(value):
    for item in value:
        if _dense_like(item):
            return item.dtype.base_dtype
        if isinstance(item, (list, tuple)):
            found = _first_dtype(item)
            if found is not None:
                return found
    return None


def _cast_tensors(value, dtype):
    if isinstance(value, (list, tuple)):
        return [_cast_tensors(item, dtype) for item in value]
    if _dense_like(value) and value.dtype.base_dtype != dtype:
        return cast(value, dtype)
    return value


def _pack(value, dtype, name):
    """TF's _autopacking_helper: a Pack of this level when any element is (or packs to) a tensor; else the
    list of converted elements, for the level above to make a constant of."""
    g = _graph_mod.get_default_graph()
    converted, must_pack = [], False
    with g.name_scope(name) as scope:
        for i, item in enumerate(value):
            if _dense_like(item):
                if dtype is not None and item.dtype.base_dtype != dtype:
                    raise TypeError(f"Cannot convert a list containing a tensor of dtype {item.dtype.name} to "
                                    f"{dtype.name} (Tensor is: {item!r})")
                converted.append(item)
                must_pack = True
            elif isinstance(item, (list, tuple)):
                inner = _pack(item, dtype, str(i))
                must_pack = must_pack or isinstance(inner, Tensor)
                converted.append(inner)
            else:
                converted.append(item)
        if not must_pack:
            return converted
        from .array_ops import constant  # late: array_ops re-exports join_ops, which this module sits beside

        tensors = [_graph_mod.convert_to_tensor(item) if _dense_like(item) else constant(item, dtype, name=str(i))
                   for i, item in enumerate(converted)]
        return make_tensor("Pack", tensors, {"axis": 0}, name=scope)


def autopack(value, dtype=None, name=None):
    """The packed tensor of `value` (a list or tuple), or NotImplemented when it holds no tensor."""
    if all(type(leaf) in _NON_AUTOPACKABLE for leaf in _leaves(value)):
        return NotImplemented
    found = _first_dtype(value)
    if found is None:
        return NotImplemented
    if dtype is None:
        dtype = found
    elif dtype != found:
        value = _cast_tensors(value, dtype)
    return _pack(value, dtype, name or "packed")


_graph_mod._set_autopacker(autopack)
