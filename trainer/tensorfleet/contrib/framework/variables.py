"""`tf.contrib.framework`'s variable functions: creating (model) variables and finding them by scope, suffix
or name, as TF 1.15's contrib/framework/python/ops/variables.py does.

`variable` is `tf.get_variable` with TF-contrib defaults (collections default to GLOBAL_VARIABLES, an
optional `device`, and `custom_getter` a getter with get_variable's signature called with the scope's
reuse); `model_variable` adds MODEL_VARIABLES (what `tf.contrib.layers` creates). Lookups filter a
collection with `re.match` on the variable names, like `tf.get_collection(key, scope)`. The global-step
helpers are `tf.train`'s (TF 1.15 deprecated these aliases in their favour).
"""
from __future__ import annotations

import functools
import re

from ...graph import GraphKeys
from ...default_graph import device as _device
from ...default_graph import get_collection, get_default_graph
from ...ops import variable_scope as _vs
from ...ops.state_ops import Variable
from ...train.training_util import (assert_global_step, create_global_step, get_global_step,
                                    get_or_create_global_step)
from .arg_scope import add_arg_scope

__all__ = ["variable", "model_variable", "local_variable", "global_variable", "add_model_variable",
           "get_variables", "get_model_variables", "get_local_variables", "get_trainable_variables",
           "get_variables_to_restore", "get_variables_by_name", "get_variables_by_suffix", "get_unique_variable",
           "get_variable_full_name", "filter_variables", "VariableDeviceChooser", "get_global_step",
           "get_or_create_global_step", "create_global_step", "assert_global_step", "assert_or_get_global_step"]


@add_arg_scope
def variable(name, shape=None, dtype=None, initializer=None, regularizer=None, trainable=True, collections=None,
             caching_device=None, device=None, partitioner=None, custom_getter=None, use_resource=None,
             synchronization=None, aggregation=None):
    """Gets an existing variable with these parameters or creates a new one (`tf.get_variable` in the current
    variable scope); collections default to [GLOBAL_VARIABLES]; `device` places it."""
    collections = list(dict.fromkeys(collections if collections is not None else [GraphKeys.GLOBAL_VARIABLES]))
    getter = _vs.get_variable
    if custom_getter is not None:
        getter = functools.partial(custom_getter, reuse=_vs.get_variable_scope().reuse)
    with _device(device or ""):
        return getter(name, shape=shape, dtype=dtype, initializer=initializer, regularizer=regularizer,
                      trainable=trainable, collections=collections, caching_device=caching_device,
                      partitioner=partitioner, use_resource=use_resource)


@add_arg_scope
def model_variable(name, shape=None, dtype=None, initializer=None, regularizer=None, trainable=True,
                   collections=None, caching_device=None, device=None, partitioner=None, custom_getter=None,
                   use_resource=None, synchronization=None, aggregation=None):
    """`variable` that is also added to GLOBAL_VARIABLES and MODEL_VARIABLES (dtype defaults to float32)."""
    collections = list(collections or []) + [GraphKeys.GLOBAL_VARIABLES, GraphKeys.MODEL_VARIABLES]
    return variable(name, shape=shape, dtype=dtype if dtype is not None else "float32", initializer=initializer,
                    regularizer=regularizer, trainable=trainable, collections=collections,
                    caching_device=caching_device, device=device, partitioner=partitioner,
                    custom_getter=custom_getter, use_resource=use_resource)


def local_variable(initial_value, validate_shape=True, name=None, use_resource=None):
    """A non-trainable `tf.Variable` in LOCAL_VARIABLES only."""
    return Variable(initial_value, trainable=False, collections=[GraphKeys.LOCAL_VARIABLES],
                    validate_shape=validate_shape, name=name)


def global_variable(initial_value, validate_shape=True, name=None, use_resource=None):
    """A non-trainable `tf.Variable` in GLOBAL_VARIABLES only."""
    return Variable(initial_value, trainable=False, collections=[GraphKeys.GLOBAL_VARIABLES],
                    validate_shape=validate_shape, name=name)


def add_model_variable(var) -> None:
    """Adds `var` to MODEL_VARIABLES (once)."""
    if var not in get_collection(GraphKeys.MODEL_VARIABLES):
        get_default_graph().add_to_collection(GraphKeys.MODEL_VARIABLES, var)


def get_variables(scope=None, suffix=None, collection=GraphKeys.GLOBAL_VARIABLES) -> list:
    """The variables of `collection` whose names match `scope` (a string or a VariableScope) and end in
    `suffix` (`scope + '.*' + suffix + ':'`, matched from the start of the name)."""
    if isinstance(scope, _vs.VariableScope):
        scope = scope.name
    if suffix is not None:
        if ":" not in suffix:
            suffix += ":"
        scope = (scope or "") + ".*" + suffix
    return get_collection(collection, scope)


def get_model_variables(scope=None, suffix=None) -> list:
    return get_variables(scope, suffix, GraphKeys.MODEL_VARIABLES)


def get_local_variables(scope=None, suffix=None) -> list:
    return get_variables(scope, suffix, GraphKeys.LOCAL_VARIABLES)


def get_trainable_variables(scope=None, suffix=None) -> list:
    return get_variables(scope, suffix, GraphKeys.TRAINABLE_VARIABLES)


def get_variables_to_restore(include=None, exclude=None) -> list:
    """GLOBAL_VARIABLES under any scope of `include` (all when None), minus those under any of `exclude`."""
    if include is None:
        included = get_variables()
    else:
        if not isinstance(include, (list, tuple)):
            raise TypeError("include is provided but is not a list or a tuple.")
        included = [v for scope in include for v in get_variables(scope)]
    excluded: set = set()
    if exclude is not None:
        if not isinstance(exclude, (list, tuple)):
            raise TypeError("exclude is provided but is not a list or a tuple.")
        for scope in exclude:
            excluded |= set(get_variables(scope))
    return [v for v in included if v not in excluded]


def get_variables_by_suffix(suffix, scope=None) -> list:
    return get_variables(scope=scope, suffix=suffix)


def get_variables_by_name(given_name, scope=None) -> list:
    """The variables whose last name component is `given_name`."""
    return get_variables(scope=scope, suffix="/" + given_name + ":|^" + given_name + ":")


def get_unique_variable(var_op_name):
    """The variable whose op is named exactly `var_op_name`; ValueError if there is none."""
    candidates = get_variables(scope=var_op_name)
    if not candidates:
        raise ValueError(f"Couldnt find variable {var_op_name}")
    for candidate in candidates:
        if candidate.op.name == var_op_name:
            return candidate
    raise ValueError(f"Variable {var_op_name} does not uniquely identify a variable")


def get_variable_full_name(var) -> str:
    """The name a checkpoint uses: the whole variable's for a part of a partitioned one, else `var.op.name`."""
    info = getattr(var, "_save_slice_info", None)
    return info.full_name if info else var.op.name


def filter_variables(var_list, include_patterns=None, exclude_patterns=None, reg_search=True) -> list:
    """The variables of `var_list` whose names match one of `include_patterns` (all when None) and none of
    `exclude_patterns`; `re.search` (or `re.match` when reg_search is False)."""
    find = re.search if reg_search else re.match
    kept = [v for v in var_list if include_patterns is None or any(find(p, v.name) for p in include_patterns)]
    if exclude_patterns is None:
        return kept
    return [v for v in kept if not any(find(p, v.name) for p in exclude_patterns)]


def assert_or_get_global_step(graph=None, global_step_tensor=None):
    """`global_step_tensor` after checking it is an integer scalar, or the graph's global step (or None)."""
    if global_step_tensor is None:
        return get_global_step(graph)
    assert_global_step(global_step_tensor)
    return global_step_tensor


class VariableDeviceChooser:
    """A device function for variables: round robin over `num_tasks` tasks of `job_name` (when > 0), on
    `/device:<device_type>:<device_index>`."""

    def __init__(self, num_tasks=0, job_name="ps", device_type="CPU", device_index=0):
        self._job_name, self._device_type, self._device_index = job_name, device_type, device_index
        self._num_tasks = num_tasks
        self._next_task_id = 0

    def __call__(self, op) -> str:
        prefix = ""
        if self._num_tasks > 0:
            prefix = f"/job:{self._job_name}/task:{self._next_task_id}"
            self._next_task_id = (self._next_task_id + 1) % self._num_tasks
        return f"{prefix}/device:{self._device_type}:{self._device_index}"

