"""`tf.make_template`: wraps a function so that every call shares the variables the first call created.

Sits in `ops/` on `variable_scope`: the first call opens a unique variable scope (`name_`, `name__1`, ...)
and runs the function there, creating its `tf.get_variable`s; later calls reopen that scope with
`reuse=True`, each under a new name scope, so ops are new and variables shared. As in TF 1.15, a later
call that creates a new trainable variable (a `tf.Variable` where `tf.get_variable` was meant) is a
ValueError.
"""
from __future__ import annotations

import functools
import logging

from ..default_graph import get_collection
from ..graph import GraphKeys
from .variable_scope import variable_scope

__all__ = ["make_template"]
logger = logging.getLogger("tensorfleet")


class Template:
    """What `tf.make_template` returns: call it like the function it wraps."""

    def __init__(self, name, func, create_scope_now=False, unique_name=None, custom_getter=None):
        self._name = name
        self._func = func
        self._unique_name = unique_name
        self._custom_getter = custom_getter
        self._variable_scope = None
        self._first_call = True
        self._variables_created = False
        if create_scope_now:
            with variable_scope(unique_name, default_name=None if unique_name else name,
                                custom_getter=custom_getter) as vs:
                self._variable_scope = vs

    def __call__(self, *args, **kwargs):
        if self._variable_scope is not None:
            with variable_scope(self._variable_scope, reuse=None if self._first_call else True):
                self._first_call = False
                return self._call_func(args, kwargs)
        with variable_scope(self._unique_name, default_name=None if self._unique_name else self._name,
                            custom_getter=self._custom_getter) as vs:
            self._variable_scope = vs
            self._first_call = False
            return self._call_func(args, kwargs)

    def _call_func(self, args, kwargs):
        trainable_at_start = len(get_collection(GraphKeys.TRAINABLE_VARIABLES))
        vars_at_start = len(get_collection(GraphKeys.GLOBAL_VARIABLES))
        result = self._func(*args, **kwargs)
        if not self._variables_created:
            self._variables_created = True
            return result
        trainable = get_collection(GraphKeys.TRAINABLE_VARIABLES)
        if len(trainable) != trainable_at_start:
            raise ValueError(f"Trainable variable created when calling a template after the first time, perhaps "
                             f"you used tf.Variable when you meant tf.get_variable: {trainable[trainable_at_start:]}")
        variables = get_collection(GraphKeys.GLOBAL_VARIABLES)
        if len(variables) != vars_at_start:
            logger.info("New variables created when calling a template after the first time, perhaps you used "
                        "tf.Variable when you meant tf.get_variable: %s", variables[vars_at_start:])
        return result

    @property
    def name(self):
        return self._name

    @property
    def func(self):
        return self._func

    @property
    def variable_scope(self):
        return self._variable_scope

    var_scope = variable_scope

    @property
    def variable_scope_name(self):
        return self._variable_scope.name if self._variable_scope is not None else ""

    def _scoped(self, key):
        if self._variable_scope is None:
            return []
        return get_collection(key, self._variable_scope.name + "/")

    @property
    def global_variables(self):
        return self._scoped(GraphKeys.GLOBAL_VARIABLES)

    variables = global_variables

    @property
    def trainable_variables(self):
        return self._scoped(GraphKeys.TRAINABLE_VARIABLES)

    @property
    def local_variables(self):
        return self._scoped(GraphKeys.LOCAL_VARIABLES)


def make_template(name_, func_, create_scope_now_=False, unique_name_=None, custom_getter_=None, **kwargs):
    """`tf.make_template(name_, func_, ...)`: `func_` with `kwargs` bound, sharing its variables across calls."""
    if kwargs:
        func_ = functools.partial(func_, **kwargs)
    return Template(name_, func_, create_scope_now=create_scope_now_, unique_name=unique_name_,
                    custom_getter=custom_getter_)
