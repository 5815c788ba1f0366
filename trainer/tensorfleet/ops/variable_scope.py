"""Variable scopes and `tf.get_variable` (TF1 variable sharing).

Sits in `ops/` above `state_ops`: a per-graph store (kept in
`Graph._var_scope_store`) maps full variable names to the variables that
`get_variable` created, and holds the stack of open `VariableScope`s. Variable
names depend only on the variable scope, never on the name scope;
`variable_scope` also opens a name scope for the ops created inside it, like TF.
Reuse: False (create; error if it exists), True (must exist), `AUTO_REUSE`
(create or return); None inherits the enclosing scope's mode.
"""
from __future__ import annotations

import contextlib
import inspect

import numpy as np

from .. import dtypes as _dtypes
from ..graph import GraphKeys, Tensor
from ..default_graph import get_default_graph
from ..tensor_shape import as_shape
from . import state_ops
from . import init_ops
from .array_ops import constant

__all__ = ["AUTO_REUSE", "get_variable", "variable_scope", "get_variable_scope", "VariableScope",
           "get_local_variable"]


class _ReuseMode:
    """The type of `tf.AUTO_REUSE`."""

    def __repr__(self):
        return "_ReuseMode.AUTO_REUSE"

    def __bool__(self):  # truthy like TF's enum: `reuse or parent.reuse` keeps AUTO_REUSE
        return True


AUTO_REUSE = _ReuseMode()


class VariableScope:
    """A variable scope: name prefix, reuse mode and defaults (initializer, regularizer, dtype...)."""

    def __init__(self, reuse, name="", initializer=None, regularizer=None, caching_device=None,
                 partitioner=None, custom_getter=None, name_scope="", dtype=_dtypes.float32,
                 use_resource=None, constraint=None):
        self._name = name
        self._reuse = reuse
        self._initializer = initializer
        self._regularizer = regularizer
        self._caching_device = caching_device
        self._partitioner = partitioner
        self._custom_getter = custom_getter
        self._name_scope = name_scope
        self._dtype = _dtypes.as_dtype(dtype)
        self._use_resource = use_resource
        self._constraint = constraint

    name = property(lambda self: self._name)
    original_name_scope = property(lambda self: self._name_scope)
    reuse = property(lambda self: self._reuse)
    initializer = property(lambda self: self._initializer)
    regularizer = property(lambda self: self._regularizer)
    caching_device = property(lambda self: self._caching_device)
    partitioner = property(lambda self: self._partitioner)
    custom_getter = property(lambda self: self._custom_getter)
    dtype = property(lambda self: self._dtype)
    use_resource = property(lambda self: self._use_resource)
    constraint = property(lambda self: self._constraint)

    def reuse_variables(self):
        self._reuse = True

    def set_initializer(self, initializer):
        self._initializer = initializer

    def set_regularizer(self, regularizer):
        self._regularizer = regularizer

    def set_dtype(self, dtype):
        self._dtype = _dtypes.as_dtype(dtype)

    def set_caching_device(self, caching_device):
        self._caching_device = caching_device

    def set_partitioner(self, partitioner):
        self._partitioner = partitioner

    def set_custom_getter(self, custom_getter):
        self._custom_getter = custom_getter

    def set_use_resource(self, use_resource):
        self._use_resource = use_resource

    def global_variables(self):
        return get_default_graph().get_collection(GraphKeys.GLOBAL_VARIABLES, self._prefix())

    def trainable_variables(self):
        return get_default_graph().get_collection(GraphKeys.TRAINABLE_VARIABLES, self._prefix())

    def local_variables(self):
        return get_default_graph().get_collection(GraphKeys.LOCAL_VARIABLES, self._prefix())

    def _prefix(self):
        import re

        return re.escape(self._name + "/") if self._name else None

    def get_variable(self, var_store, name, shape=None, dtype=None, initializer=None, regularizer=None,
                     reuse=None, trainable=None, collections=None, caching_device=None, partitioner=None,
                     validate_shape=True, use_resource=None, custom_getter=None, constraint=None,
                     synchronization=None, aggregation=None):
        if regularizer is None:
            regularizer = self._regularizer
        if partitioner is None:
            partitioner = self._partitioner
        if custom_getter is None:
            custom_getter = self._custom_getter
        if constraint is None:
            constraint = self._constraint
        if reuse is None:
            reuse = self._reuse
        full_name = f"{self._name}/{name}" if self._name else name
        if initializer is None:
            initializer = self._initializer
        if dtype is None:
            dtype = self._dtype
        g = get_default_graph()
        with g.name_scope(None):  # variable names depend on the variable scope only
            return var_store.get_variable(full_name, shape=shape, dtype=dtype, initializer=initializer,
                                          regularizer=regularizer, reuse=reuse, trainable=trainable,
                                          collections=collections, caching_device=caching_device,
                                          partitioner=partitioner, validate_shape=validate_shape,
                                          custom_getter=custom_getter, constraint=constraint)


class _VariableStore:
    """Per graph: variables created by get_variable, the open scope stack, scope-name use counts."""

    def __init__(self):
        self.vars: dict = {}
        self.partitioned: dict = {}  # name -> PartitionedVariable
        self.current_scope = VariableScope(False)
        self.variable_scopes_count: dict = {}

    def open_variable_scope(self, scope_name):
        self.variable_scopes_count[scope_name] = self.variable_scopes_count.get(scope_name, 0) + 1

    def close_variable_subscopes(self, scope_name):
        for k in list(self.variable_scopes_count):
            if scope_name is None or k.startswith(scope_name + "/"):
                self.variable_scopes_count[k] = 0

    def variable_scope_count(self, scope_name):
        return self.variable_scopes_count.get(scope_name, 0)

    def get_variable(self, name, shape=None, dtype=_dtypes.float32, initializer=None, regularizer=None,
                     reuse=None, trainable=None, collections=None, caching_device=None, partitioner=None,
                     validate_shape=True, custom_getter=None, constraint=None):
        if trainable is None:
            trainable = True

        def true_getter(name, shape=None, dtype=_dtypes.float32, initializer=None, regularizer=None,
                        reuse=None, trainable=True, collections=None, caching_device=None, partitioner=None,
                        validate_shape=True, use_resource=None, constraint=None, **kwargs):
            if partitioner is not None:
                return self._get_partitioned_variable(name, partitioner, shape, dtype, initializer, regularizer,
                                                      reuse, trainable, collections, validate_shape, constraint)
            return self._get_single_variable(name, shape, dtype, initializer, regularizer, reuse, trainable,
                                             collections, validate_shape, constraint)

        if custom_getter is not None:
            return custom_getter(true_getter, name, shape=shape, dtype=dtype, initializer=initializer,
                                 regularizer=regularizer, reuse=reuse, trainable=trainable,
                                 collections=collections, caching_device=caching_device, partitioner=partitioner,
                                 validate_shape=validate_shape, constraint=constraint)
        return true_getter(name, shape=shape, dtype=dtype, initializer=initializer, regularizer=regularizer,
                           reuse=reuse, trainable=trainable, collections=collections, partitioner=partitioner,
                           validate_shape=validate_shape, constraint=constraint)

    def _get_partitioned_variable(self, name, partitioner, shape, dtype, initializer, regularizer, reuse, trainable,
                                  collections, validate_shape, constraint):
        """One Variable per slice (`<name>/part_<i>`) grouped as a PartitionedVariable (partitioned_variables.py)."""
        from . import partitioned_variables as pv
        if name in self.partitioned:
            if reuse is False:
                raise ValueError(f"Partitioned variable with name {name} already exists. Did you mean to set "
                                 f"reuse=True or reuse=tf.AUTO_REUSE in VarScope?")
            found = self.partitioned[name]
            if shape is not None and not as_shape(shape).is_compatible_with(found.get_shape()):
                raise ValueError(f"Trying to reuse partitioned variable {name}, but specified shape {as_shape(shape)} "
                                 f"and found shape {found.get_shape()}.")
            return found
        if reuse is True:
            raise ValueError(f"PartitionedVariable {name} does not exist, or was not created with "
                             f"tf.get_variable(). Did you mean to set reuse=tf.AUTO_REUSE in VarScope?")
        if name in self.vars:
            raise ValueError(f"A partitioner was passed, but an unpartitioned version of the variable was found: "
                             f"{name}. Perhaps a variable of the same name was already created without partitioning?")
        from_value = initializer is not None and not callable(initializer)
        if from_value and shape is not None:
            raise ValueError("If initializer is a constant, do not specify shape.")
        dtype = _dtypes.as_dtype(dtype)
        full = as_shape(np.shape(initializer) if from_value else shape)
        if not full.is_fully_defined():
            raise ValueError(f"Partitioned variable {name} needs a fully defined shape, got {full}")
        partitions = list(partitioner(shape=full, dtype=dtype))
        parts = []
        for i, (offset, part_shape) in enumerate(pv.slices(full.as_list(), partitions, name)):
            info = pv.PartitionInfo(tuple(full.as_list()), offset)
            v = self._get_single_variable(f"{name}/part_{i}", None if from_value else part_shape, dtype,
                                          pv.initial_part(initializer, from_value, offset, part_shape), regularizer,
                                          reuse, trainable, collections, validate_shape, constraint, info)
            v._save_slice_info = pv.SaveSliceInfo(name, tuple(full.as_list()), offset, part_shape)
            parts.append(v)
        self.partitioned[name] = pv.PartitionedVariable(name, full, dtype, parts, partitions)
        return self.partitioned[name]

    def _get_single_variable(self, name, shape, dtype, initializer, regularizer, reuse, trainable, collections,
                             validate_shape, constraint, partition_info=None):
        initializing_from_value = initializer is not None and not callable(initializer)
        if shape is not None and initializing_from_value:
            raise ValueError("If initializer is a constant, do not specify shape.")
        dtype = _dtypes.as_dtype(dtype)
        shape = as_shape(shape)
        if name in self.vars:
            if reuse is False:
                raise ValueError(f"Variable {name} already exists, disallowed. Did you mean to set reuse=True "
                                 f"or reuse=tf.AUTO_REUSE in VarScope?")
            found = self.vars[name]
            if not shape.is_compatible_with(found.get_shape()):
                raise ValueError(f"Trying to share variable {name}, but specified shape {shape} and found shape "
                                 f"{found.get_shape()}.")
            if not dtype.is_compatible_with(found.dtype):
                raise ValueError(f"Trying to share variable {name}, but specified dtype {dtype.name} and found "
                                 f"dtype {found.dtype.name}.")
            return found
        if reuse is True:
            raise ValueError(f"Variable {name} does not exist, or was not created with tf.get_variable(). "
                             f"Did you mean to set reuse=tf.AUTO_REUSE in VarScope?")
        if initializer is None:
            initializer = _default_initializer(name, dtype)
        if initializing_from_value:
            init_val, variable_dtype = initializer, None
        else:
            if inspect.isclass(initializer):
                initializer = initializer()
            if shape.is_fully_defined():
                init_val = _bind_initializer(initializer, shape.as_list(), dtype, partition_info)
                variable_dtype = dtype
            elif _takes_no_required_args(initializer):
                init_val, variable_dtype = initializer, None
            else:
                raise ValueError("The initializer passed is not valid. It should be a callable with no arguments "
                                 "and the shape should not be provided or an instance of "
                                 "`tf.keras.initializers.*' and `shape` should be fully defined.")
        g = get_default_graph()
        with g.control_dependencies(None):
            v = state_ops.Variable(initial_value=init_val, name=name, trainable=trainable, collections=collections,
                                   dtype=variable_dtype, validate_shape=validate_shape, constraint=constraint)
        self.vars[name] = v
        if regularizer:
            with g.colocate_with(v.op), g.name_scope(name + "/Regularizer/"), g.control_dependencies(None):
                loss = regularizer(v)
            if loss is not None:
                g.add_to_collection(GraphKeys.REGULARIZATION_LOSSES, loss)
        return v


def _default_initializer(name, dtype):
    """TF's default: glorot_uniform for floats, zeros for integers and bools."""

    if dtype.is_floating:
        factory = getattr(init_ops, "glorot_uniform_initializer", None)
    elif dtype.is_integer or dtype.is_bool:
        factory = getattr(init_ops, "zeros_initializer", None)
        if factory is None:  # keep integer variables working without init_ops
            return _numpy_zeros
    else:
        raise ValueError(f"An initializer for variable {name} of {dtype.base_dtype} is required")
    if factory is None:
        raise NotImplementedError(f"The default initializer for {name} needs tf.glorot_uniform_initializer, "
                                  f"which ops/init_ops.py does not define yet; pass initializer=...")
    return factory()


def _numpy_zeros(shape, dtype=_dtypes.float32, partition_info=None):
    import numpy as np


    return constant(np.zeros(shape, dtype=_dtypes.as_dtype(dtype).np_dtype))


def _takes_no_required_args(fn) -> bool:
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return False
    return all(p.default is not p.empty or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
               for p in sig.parameters.values())


def _bind_initializer(initializer, shape, dtype, partition_info=None):
    """A no-argument callable for Variable: initializer(shape, dtype=..., partition_info=None) as TF calls it."""
    try:
        params = inspect.signature(initializer).parameters
    except (TypeError, ValueError):
        params = {}
    kwargs = {}
    if "dtype" in params or any(p.kind == p.VAR_KEYWORD for p in params.values()):
        kwargs["dtype"] = dtype
    if "partition_info" in params or any(p.kind == p.VAR_KEYWORD for p in params.values()):
        kwargs["partition_info"] = partition_info
    return lambda: initializer(shape, **kwargs)


def _get_default_variable_store() -> _VariableStore:
    g = get_default_graph()
    store = g._var_scope_store
    if store is None:
        store = g._var_scope_store = _VariableStore()
    return store


def get_variable_scope() -> VariableScope:
    """The current variable scope of the default graph."""
    return _get_default_variable_store().current_scope


def get_variable(name, shape=None, dtype=None, initializer=None, regularizer=None, trainable=None,
                 collections=None, caching_device=None, partitioner=None, validate_shape=True, use_resource=None,
                 custom_getter=None, constraint=None, synchronization=None, aggregation=None):
    """`tf.get_variable`: creates `<scope>/<name>` or returns the existing one, per the scope's reuse mode."""
    store = _get_default_variable_store()
    return store.current_scope.get_variable(store, name, shape=shape, dtype=dtype, initializer=initializer,
                                            regularizer=regularizer, trainable=trainable, collections=collections,
                                            caching_device=caching_device, partitioner=partitioner,
                                            validate_shape=validate_shape, custom_getter=custom_getter,
                                            constraint=constraint)


def get_local_variable(name, shape=None, dtype=None, initializer=None, regularizer=None, trainable=False,
                       collections=None, **kwargs):
    """`tf.get_local_variable`: get_variable into LOCAL_VARIABLES, not trainable."""
    collections = list(collections or []) + [GraphKeys.LOCAL_VARIABLES]
    return get_variable(name, shape=shape, dtype=dtype, initializer=initializer, regularizer=regularizer,
                        trainable=False, collections=collections, **kwargs)


def _get_unique_variable_scope(store: _VariableStore, prefix: str) -> str:
    current = store.current_scope.name
    name = f"{current}/{prefix}" if current else prefix
    if store.variable_scope_count(name) == 0:
        return prefix
    idx = 1
    while store.variable_scope_count(f"{name}_{idx}") > 0:
        idx += 1
    return f"{prefix}_{idx}"


def _apply_scope_overrides(scope: VariableScope, base: VariableScope, *, initializer, regularizer,
                           caching_device, partitioner, custom_getter, dtype, use_resource, constraint) -> None:
    """Sets on a freshly opened scope the defaults that `variable_scope` was given explicitly (None = inherit)."""
    if initializer is not None:
        scope.set_initializer(initializer)
    if regularizer is not None:
        scope.set_regularizer(regularizer)
    if caching_device is not None:
        scope.set_caching_device(caching_device)
    if partitioner is not None:
        scope.set_partitioner(partitioner)
    if custom_getter is not None:
        scope.set_custom_getter(_maybe_wrap_custom_getter(custom_getter, base.custom_getter))
    if dtype is not None:
        scope.set_dtype(dtype)
    if use_resource is not None:
        scope.set_use_resource(use_resource)
    if constraint is not None:
        scope._constraint = constraint


@contextlib.contextmanager
def variable_scope(name_or_scope, default_name=None, values=None, initializer=None, regularizer=None,
                   caching_device=None, partitioner=None, custom_getter=None, reuse=None, dtype=None,
                   use_resource=None, constraint=None, auxiliary_name_scope=True):
    """`tf.variable_scope`: opens a variable scope (and a name scope); yields the VariableScope."""
    if default_name is None and name_or_scope is None:
        raise TypeError("If default_name is None then name_or_scope is required")
    if reuse is False:  # TF: a scope cannot switch reuse off; False means inherit
        reuse = None
    if not (reuse is True or reuse is None or reuse is AUTO_REUSE):
        raise ValueError("The reuse parameter must be True or False or None.")
    if name_or_scope is not None and not isinstance(name_or_scope, (VariableScope, str)):
        raise TypeError("VariableScope: name_or_scope must be a string or VariableScope.")
    g = get_default_graph()
    for v in values or ():
        if isinstance(v, Tensor):
            g = v.graph
            break
    with g.as_default():
        store = _get_default_variable_store()
        old = store.current_scope
        if name_or_scope is not None:
            if isinstance(name_or_scope, str):
                ns_name = name_or_scope
            else:
                ns_name = name_or_scope.name.split("/")[-1]
        else:
            if reuse is True:
                raise ValueError("reuse=True cannot be used without a name_or_scope")
            ns_name = default_name
        name_scope_cm = g.name_scope(ns_name) if (auxiliary_name_scope and ns_name) else contextlib.nullcontext(None)
        with name_scope_cm as opened_ns:
            if opened_ns is None:
                opened_ns = (g.get_name_scope() + "/") if g.get_name_scope() else ""
            if isinstance(name_or_scope, VariableScope):
                new_name = name_or_scope.name
                base = name_or_scope
                new_reuse = reuse if reuse else name_or_scope.reuse
                original_ns = name_or_scope.original_name_scope
            else:
                leaf = name_or_scope if name_or_scope is not None else _get_unique_variable_scope(store,
                                                                                                   default_name)
                new_name = f"{old.name}/{leaf}" if old.name else leaf
                base = old
                new_reuse = reuse or old.reuse
                original_ns = opened_ns
            scope = VariableScope(new_reuse, name=new_name, initializer=base.initializer,
                                  regularizer=base.regularizer, caching_device=base.caching_device,
                                  partitioner=base.partitioner, custom_getter=base.custom_getter,
                                  name_scope=original_ns, dtype=base.dtype, use_resource=base.use_resource,
                                  constraint=base.constraint)
            _apply_scope_overrides(scope, base, initializer=initializer, regularizer=regularizer,
                                   caching_device=caching_device, partitioner=partitioner,
                                   custom_getter=custom_getter, dtype=dtype, use_resource=use_resource,
                                   constraint=constraint)
            store.open_variable_scope(new_name)
            store.current_scope = scope
            try:
                yield scope
            finally:
                store.current_scope = old
                store.close_variable_subscopes(new_name)


def _maybe_wrap_custom_getter(custom_getter, old_getter):
    """Nested custom getters compose: the inner one receives the outer as its getter."""
    if old_getter is None:
        return custom_getter

    def wrapped(getter, *args, **kwargs):
        return custom_getter(lambda *a, **k: old_getter(getter, *a, **k), *args, **kwargs)

    return wrapped
