"""`tf.train.Optimizer`: the TF1 base class (compute_gradients / apply_gradients / minimize, slots).

Sits on top of the graph layers: `compute_gradients` calls `autodiff.gradients`,
`apply_gradients` creates the slot variables (colocated with their variable,
named `<var>/<OptimizerName>[_N]` like TF), then one fused apply op per
variable from `train/training_ops.py` (kernels in `kernels/train_kernels.py`),
groups them, and with a `global_step` increments it after all updates. The
subclasses (gradient_descent, momentum, adam, adagrad, rmsprop, adadelta,
proximal_*, adagrad_da) only say which slots they need and which apply op they build.
"""
from __future__ import annotations

import dataclasses

import numpy as np

from .. import dtypes as _dtypes
from ..autodiff import gradients as _gradients
from ..graph import GraphKeys, Operation, Tensor
from ..indexed_slices import IndexedSlices
from ..default_graph import convert_to_tensor, get_default_graph
from ..ops import array_ops, control_flow_ops, indexed_slices_ops, state_ops

__all__ = ["Optimizer"]

_VALID_DTYPES = (_dtypes.float16, _dtypes.float32, _dtypes.float64)


def _var_key(var):
    return (var.op.graph, var.op.name)


def _zeros_like_var(var, value=0.0):
    """Initial value for a slot: a constant array of `value` with var's shape and dtype."""
    shape = var.shape.as_list()
    arr = np.full(shape, value, dtype=var.dtype.np_dtype)
    return lambda: array_ops.constant(arr, dtype=var.dtype)


def create_slot(primary, initial_value_fn, op_name: str):
    """A non-trainable slot variable `<primary>/<op_name>` (made unique), colocated with `primary`.

    Created outside any control-dependency and name scope (TF's init_scope + slot variable scope),
    so the slot's name depends only on its variable's name.
    """
    g = primary.op.graph
    with g.as_default(), g.control_dependencies(None), g.name_scope(None), g.colocate_with(primary.op):
        slot = state_ops.Variable(initial_value_fn, trainable=False, name=f"{primary.op.name}/{op_name}",
                                  dtype=primary.dtype)
    info = getattr(primary, "_save_slice_info", None)
    if info is not None:  # a part of a partitioned variable: the slot is the same part of `<full name>/<slot>`
        slot_name = slot.op.name[len(primary.op.name) + 1:]
        slot._save_slice_info = dataclasses.replace(info, full_name=f"{info.full_name}/{slot_name}")
    return slot


class Optimizer:
    """Base class of the TF1 optimizers. Subclasses implement `_create_slots`, `_prepare`, `_apply_dense`."""

    GATE_NONE = 0
    GATE_OP = 1
    GATE_GRAPH = 2

    def __init__(self, use_locking, name):
        if not name:
            raise ValueError("Must specify the optimizer name")
        self._use_locking = use_locking
        self._name = name
        self._slots: dict = {}  # slot name -> {var key: slot variable}
        self._non_slot_dict: dict = {}  # (name, graph) -> variable

    def get_name(self) -> str:
        return self._name

    # -- gradients ------------------------------------------------------------
    def compute_gradients(self, loss, var_list=None, gate_gradients=GATE_OP, aggregation_method=None,
                          colocate_gradients_with_ops=False, grad_loss=None):
        """Returns [(gradient or None, variable)] for `var_list` (default: the trainable variables)."""
        if callable(loss) and not isinstance(loss, Tensor):
            loss = loss()
        if gate_gradients not in (Optimizer.GATE_GRAPH, Optimizer.GATE_OP, Optimizer.GATE_NONE):
            raise ValueError(f"gate_gradients must be one of: Optimizer.GATE_NONE, Optimizer.GATE_OP, "
                             f"Optimizer.GATE_GRAPH. Not {gate_gradients}")
        loss = convert_to_tensor(loss)
        self._assert_valid_dtypes([loss])
        if grad_loss is not None:
            self._assert_valid_dtypes([convert_to_tensor(grad_loss)])
        if var_list is None:
            var_list = loss.graph.get_collection(GraphKeys.TRAINABLE_VARIABLES)
        else:
            var_list = list(var_list.values()) if isinstance(var_list, dict) else list(var_list)
            # a PartitionedVariable stands for its parts (TF's _get_variable_list)
            var_list = [p for v in var_list for p in (v._get_variable_list() if hasattr(v, "_get_variable_list")
                                                      else [v])]
        if not var_list:
            raise ValueError("No variables to optimize.")
        grads = _gradients(loss, var_list, grad_ys=grad_loss, gate_gradients=gate_gradients == Optimizer.GATE_OP,
                           aggregation_method=aggregation_method,
                           colocate_gradients_with_ops=colocate_gradients_with_ops)
        dense = [i for i, g in enumerate(grads) if isinstance(g, Tensor)]
        if gate_gradients == Optimizer.GATE_GRAPH and dense:
            gated = control_flow_ops.tuple_([grads[i] for i in dense])
            for i, g in zip(dense, gated):
                grads[i] = g
        grads_and_vars = list(zip(grads, var_list))
        self._assert_valid_dtypes([v for g, v in grads_and_vars if g is not None])
        return grads_and_vars

    def apply_gradients(self, grads_and_vars, global_step=None, name=None):
        """One fused update per (gradient, variable) with a gradient; returns the train op."""
        grads_and_vars = tuple(grads_and_vars)
        if not grads_and_vars:
            raise ValueError("No variables provided.")
        converted = []
        for g, v in grads_and_vars:
            if g is not None and not isinstance(g, IndexedSlices):
                try:
                    g = convert_to_tensor(g)
                except (TypeError, ValueError):
                    raise TypeError(f"Gradient must be convertible to a Tensor or IndexedSlices, or None: {g}") \
                        from None
            if not isinstance(getattr(v, "op", None), Operation) or v.op.type != "VariableV2":
                raise NotImplementedError(f"Trying to update a Tensor {v!r}")
            converted.append((g, v))
        var_list = [v for g, v in converted if g is not None]
        if not var_list:
            raise ValueError(f"No gradients provided for any variable: {[str(v) for _, v in converted]}.")
        graph = var_list[0].op.graph
        with graph.as_default():
            with graph.control_dependencies(None):
                self._create_slots(var_list)
            update_ops = []
            with graph.name_scope(name or self._name) as scope:
                self._prepare()
                for g, v in converted:
                    if g is None:
                        continue
                    with graph.name_scope("update_" + v.op.name), graph.colocate_with(v.op):
                        update_ops.append(self._update_op(g, v))
                if global_step is None:
                    apply_updates = self._finish(update_ops, scope)
                else:
                    with graph.control_dependencies([self._finish(update_ops, "update")]):
                        gs_op = global_step.op if hasattr(global_step, "op") else global_step
                        with graph.colocate_with(gs_op):
                            apply_updates = state_ops.assign_add(global_step, 1, name=scope)
            if isinstance(apply_updates, Tensor):
                apply_updates = apply_updates.op
            train_ops = graph.get_collection_ref(GraphKeys.TRAIN_OP)
            if apply_updates not in train_ops:
                train_ops.append(apply_updates)
        return apply_updates

    def minimize(self, loss, global_step=None, var_list=None, gate_gradients=GATE_OP, aggregation_method=None,
                 colocate_gradients_with_ops=False, name=None, grad_loss=None):
        """compute_gradients + apply_gradients; returns the train op (named after the optimizer)."""
        grads_and_vars = self.compute_gradients(loss, var_list=var_list, gate_gradients=gate_gradients,
                                                aggregation_method=aggregation_method,
                                                colocate_gradients_with_ops=colocate_gradients_with_ops,
                                                grad_loss=grad_loss)
        if not [v for g, v in grads_and_vars if g is not None]:
            raise ValueError(f"No gradients provided for any variable, check your graph for ops that do not "
                             f"support gradients, between variables {[str(v) for _, v in grads_and_vars]} "
                             f"and loss {loss}.")
        return self.apply_gradients(grads_and_vars, global_step=global_step, name=name)

    def _update_op(self, grad, var):
        if isinstance(grad, IndexedSlices):
            update = self._apply_sparse_duplicate_indices(grad, var)
        else:
            update = self._apply_dense(grad, var)
        constraint = getattr(var, "constraint", None)
        if constraint is None:
            return update
        with var.op.graph.control_dependencies([update]):
            return state_ops.assign(var, constraint(var.value())).op

    # -- hooks for subclasses -------------------------------------------------
    def _create_slots(self, var_list):
        pass

    def _prepare(self):
        pass

    def _apply_dense(self, grad, var):
        raise NotImplementedError()

    def _apply_sparse_duplicate_indices(self, grad, var):
        """An IndexedSlices gradient: duplicate indices merged (summed), then `_apply_sparse`."""
        return self._apply_sparse(indexed_slices_ops.deduplicate(grad), var)

    def _apply_sparse(self, grad, var):
        """Rows-only update (train/sparse_updates.py); without one an optimizer applies the dense gradient."""
        return self._apply_dense(convert_to_tensor(grad), var)

    def _finish(self, update_ops, name_scope):
        return control_flow_ops.group(*update_ops, name=name_scope)

    # -- hyper-parameters -----------------------------------------------------
    @staticmethod
    def _call_if_callable(param):
        return param() if callable(param) else param

    def _hyper_tensor(self, value, name):
        value = self._call_if_callable(value)
        if isinstance(value, Tensor) or hasattr(value, "_as_graph_element"):
            return convert_to_tensor(value)
        return convert_to_tensor(value, name=name)

    # -- slots ----------------------------------------------------------------
    def get_slot(self, var, name):
        """The slot variable `name` created for `var`, or None."""
        named = self._slots.get(name)
        if not named:
            return None
        return named.get(_var_key(var))

    def get_slot_names(self) -> list:
        return sorted(self._slots)

    def _slot_dict(self, slot_name):
        return self._slots.setdefault(slot_name, {})

    def _get_or_make_slot(self, var, value, slot_name, op_name):
        """A slot initialized to the constant `value` (e.g. 0.0, 0.1, 1.0)."""
        named = self._slot_dict(slot_name)
        key = _var_key(var)
        if key not in named:
            named[key] = create_slot(var, _zeros_like_var(var, value), op_name)
        return named[key]

    def _zeros_slot(self, var, slot_name, op_name):
        return self._get_or_make_slot(var, 0.0, slot_name, op_name)

    def _create_non_slot_variable(self, initial_value, name, colocate_with):
        """A variable of the optimizer itself (Adam's beta powers), one per graph."""
        graph = colocate_with.op.graph
        key = (name, graph)
        v = self._non_slot_dict.get(key)
        if v is None:
            with graph.as_default(), graph.control_dependencies(None), graph.colocate_with(colocate_with.op):
                v = state_ops.Variable(initial_value, name=name, trainable=False)
            self._non_slot_dict[key] = v
        return v

    def _get_non_slot_variable(self, name, graph=None):
        return self._non_slot_dict.get((name, graph or get_default_graph()))

    def _non_slot_variables(self):
        return list(self._non_slot_dict.values())

    def variables(self) -> list:
        """The optimizer's slot and non-slot variables in the default graph, sorted by name."""
        g = get_default_graph()
        out = [v for v in self._non_slot_variables() if v.op.graph is g]
        for named in self._slots.values():
            out.extend(v for v in named.values() if v.op.graph is g)
        return sorted(out, key=lambda v: v.name)

    # -- checks ---------------------------------------------------------------
    def _assert_valid_dtypes(self, tensors):
        for t in tensors:
            dtype = t.dtype.base_dtype
            if dtype not in _VALID_DTYPES:
                raise ValueError(f"Invalid type {dtype!r} for {t.name}, expected: {list(_VALID_DTYPES)}.")
