"""The process-wide default graph and session, the `tf.*` scope functions, and `convert_to_tensor`.

Part of the graph layer, above `graph.py` (which never imports it; `Graph.as_default`
pushes onto `graph._default_graph_stack`): `tf.name_scope`, `tf.device`, `tf.control_dependencies`... act on the
default graph; `convert_to_tensor` turns Variables (through registered
conversion functions) and Python/numpy values (through the Const factory that
`ops/array_ops` installs) into Tensors.
"""
from __future__ import annotations

from typing import Callable, Optional

from . import dtypes as _dtypes
from .graph import Graph, Operation, Tensor, _default_graph_stack
from .graph import get_default_session  # noqa: F401  (re-export: tf.get_default_session)

# -- the default graph and default session ------------------------------------
_global_default_graph: Optional[Graph] = None


def get_default_graph() -> Graph:
    global _global_default_graph
    if _default_graph_stack:
        return _default_graph_stack[-1]
    if _global_default_graph is None:
        _global_default_graph = Graph()
    return _global_default_graph


def reset_default_graph() -> None:
    """Clears the global default graph (not allowed inside a `with g.as_default()` block)."""
    global _global_default_graph
    if _default_graph_stack:
        raise AssertionError("Do not use tf.reset_default_graph() to clear nested graphs. "
                             "If you need a cleared graph, exit the nesting and create a new graph.")
    _global_default_graph = Graph()


def name_scope(name, default_name=None, values=None):
    """`tf.name_scope(name, default_name=None, values=None)` on the default graph (or values' graph)."""
    g = get_default_graph()
    if getattr(g, "outer_graph", None) is None:  # inside a control-flow body (FuncGraph) its scopes apply
        g = _graph_of(values) or g
    n = name if name is not None else default_name
    return g.name_scope(n)


def _graph_of(values) -> Optional[Graph]:
    for v in values or ():
        if isinstance(v, (Tensor, Operation)):
            return v.graph
    return None


def control_dependencies(control_inputs):
    return get_default_graph().control_dependencies(control_inputs)


def device(device_name_or_function):
    return get_default_graph().device(device_name_or_function)


def colocate_with(op, ignore_existing: bool = False):
    return get_default_graph().colocate_with(op, ignore_existing)


def add_to_collection(name, value):
    get_default_graph().add_to_collection(name, value)


def add_to_collections(names, value):
    get_default_graph().add_to_collections(names, value)


def get_collection(key, scope=None):
    return get_default_graph().get_collection(key, scope)


def get_collection_ref(key):
    return get_default_graph().get_collection_ref(key)


def set_random_seed(seed: Optional[int]) -> None:
    get_default_graph().seed = seed


# -- conversion of Python values and Tensor-like objects ----------------------
_conversion_functions: list[tuple[type, Callable]] = []
_constant_factory: Optional[Callable] = None


def register_tensor_conversion_function(base_type, conversion_func) -> None:
    """`conversion_func(value, dtype=None, name=None, as_ref=False) -> Tensor`."""
    _conversion_functions.append((base_type, conversion_func))


def _set_constant_factory(fn: Callable) -> None:
    global _constant_factory
    _constant_factory = fn


#: TF's autopacking conversion of lists and tuples holding tensors (`ops/autopacking.py` installs it)
_autopacker: Optional[Callable] = None


def _set_autopacker(fn: Callable) -> None:
    global _autopacker
    _autopacker = fn


def _autopack(value, dtype, preferred_dtype, name):
    """The packed tensor of a list or tuple that holds tensors, or NotImplemented (TF tries the preferred dtype
    first and falls back to none when the values do not fit it)."""
    if dtype is None and preferred_dtype is not None:
        try:
            packed = _autopacker(value, _dtypes.as_dtype(preferred_dtype), name)
        except (TypeError, ValueError):
            packed = NotImplemented
        if packed is not NotImplemented:
            return packed
    return _autopacker(value, dtype, name)


def convert_to_tensor(value, dtype=None, name=None, preferred_dtype=None) -> Tensor:
    """Tensors pass through (dtype checked); lists and tuples holding tensors pack (TF's autopacking);
    registered types convert; other values become constants."""
    if dtype is not None:
        dtype = _dtypes.as_dtype(dtype)
    if isinstance(value, Tensor):
        if dtype is not None and value.dtype is not dtype:
            raise ValueError(f"Tensor conversion requested dtype {dtype.name} for Tensor with dtype "
                             f"{value.dtype.name}: {value!r}")
        return value
    if isinstance(value, (list, tuple)) and _autopacker is not None:
        packed = _autopack(value, dtype, preferred_dtype, name)
        if packed is not NotImplemented:
            return packed
    for base, fn in _conversion_functions:
        if isinstance(value, base):
            return convert_to_tensor(fn(value, dtype=dtype, name=name), dtype=dtype)
    if isinstance(value, Operation):
        raise TypeError(f"Can't convert Operation '{value.name}' to Tensor (target dtype={dtype}, name={name!r})")
    if dtype is None and preferred_dtype is not None:
        try:
            return _constant_factory(value, dtype=preferred_dtype, name=name or "Const")
        except (TypeError, ValueError):
            pass
    return _constant_factory(value, dtype=dtype, name=name or "Const")
