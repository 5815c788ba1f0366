"""`tf.contrib.framework.arg_scope` and `add_arg_scope`: default keyword arguments for decorated functions.

TF 1.15's semantics (contrib/framework/python/ops/arg_scope.py): one process-wide stack of scopes, each a
dict {function key: {argument: value}}. `arg_scope([f, g], k=v)` pushes a copy of the current scope in which
f's and g's defaults are updated with `k=v` (an inner scope overrides an outer one argument by argument);
`arg_scope(sc)` with a dict yielded by an earlier `arg_scope` pushes that scope again (kwargs must then be
empty). A decorated function is called with the scope's defaults updated by the call's own keyword
arguments, so explicit keywords always win; an argument the call passes positionally and the scope also
sets is given twice (Python's TypeError, as in TF). Arguments are not checked when the scope opens: a
function that does not take one fails when it is called. A function is keyed by its undecorated
original, so aliases (`conv2d` and `convolution2d`) share one entry.
"""
from __future__ import annotations

import contextlib
import functools
import inspect

__all__ = ["arg_scope", "add_arg_scope", "has_arg_scope", "arg_scoped_arguments", "current_arg_scope"]

_ARG_STACK: list = [{}]
_DECORATED: dict = {}  # key -> names of the keyword arguments the function takes


def _key(func) -> str:
    """A decorated function's key is its original's: module, qualified name and identity."""
    key = getattr(func, "_key_op", None)
    if key is None:
        key = f"{getattr(func, '__module__', '')}.{getattr(func, '__qualname__', repr(func))}@{id(func):x}"
    return key


def current_arg_scope() -> dict:
    """The innermost scope: {function key: {argument: default}}."""
    if not _ARG_STACK:
        _ARG_STACK.append({})
    return _ARG_STACK[-1]


@contextlib.contextmanager
def arg_scope(list_ops_or_scope, **kwargs):
    """Sets `kwargs` as the default keyword arguments of every function in `list_ops_or_scope` (each decorated
    with `add_arg_scope`), or re-enters a scope dict from an earlier `arg_scope`. Yields the new scope."""
    if isinstance(list_ops_or_scope, dict):
        if kwargs:
            raise ValueError("When attempting to re-use a scope by suppling a dictionary, kwargs must be empty.")
        scope = dict(list_ops_or_scope)
    else:
        if not isinstance(list_ops_or_scope, (list, tuple)):
            raise TypeError("list_ops_or_scope must either be a list/tuple or reused scope (i.e. dict)")
        scope = dict(current_arg_scope())
        for op in list_ops_or_scope:
            if not has_arg_scope(op):
                name = f"{getattr(op, '__module__', '?')}.{getattr(op, '__name__', op)}"
                raise ValueError(f"{name} is not decorated with @add_arg_scope")
            key = _key(op)
            scope[key] = dict(scope.get(key, {}), **kwargs)
    _ARG_STACK.append(scope)
    try:
        yield scope
    finally:
        _ARG_STACK.pop()


def add_arg_scope(func):
    """Decorates `func` so that `arg_scope` can set its keyword arguments' defaults."""
    key = _key(func)

    @functools.wraps(func)
    def func_with_args(*args, **kwargs):
        defaults = current_arg_scope().get(key)
        if defaults:
            kwargs = dict(defaults, **kwargs)
        return func(*args, **kwargs)

    _DECORATED.setdefault(key, _keyword_names(func))
    func_with_args._key_op = key  # type: ignore[attr-defined]
    return func_with_args


def has_arg_scope(func) -> bool:
    """Whether `func` was decorated with `add_arg_scope`."""
    return _key(func) in _DECORATED


def arg_scoped_arguments(func) -> list:
    """The keyword arguments (those with defaults) `arg_scope` can set for a decorated `func`."""
    if not has_arg_scope(func):
        raise ValueError(f"{getattr(func, '__name__', func)} is not decorated with @add_arg_scope")
    return list(_DECORATED[_key(func)])


def _keyword_names(func) -> tuple:
    try:
        params = inspect.signature(func).parameters.values()
    except (TypeError, ValueError):
        return ()
    return tuple(p.name for p in params if p.default is not p.empty
                 and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY))
