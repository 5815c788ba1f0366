"""`OptimizerV2`, the base of `tf.keras.optimizers.*` in TF 1.15 (keras/optimizer_v2/optimizer_v2.py).

Graph mode. `get_updates(loss, params)` (what `Model.fit` calls inside the `training` name scope) takes the
gradients in `<name>/gradients` and builds, in the name scope `<name>` (e.g. `training/Adam`):
- the `iter` counter (int64) and one float variable per hyper-parameter (`learning_rate`, `decay`, `beta_1`,
  ...: created in sorted order, as TF), all tracked Keras variables;
- a slot per (variable, slot name), named `<variable op name>/<slot>` there (`training/Adam/dense/kernel/m:0`),
  initialised to zeros unless the optimizer says otherwise;
- one update per variable in the scope `update_<variable op name>` (a fused Apply op where TF uses one, else
  assign ops with TF's formulas), the variable's `constraint` applied after it, and `iter += 1` after all.
The learning rate is `learning_rate / (1 + decay * iterations)` when `decay` > 0 (or a schedule called with
the step). Setting `opt.lr = v` (alias of `learning_rate`) after the variables exist assigns them.
"""
from __future__ import annotations

import numpy as np

from ... import dtypes as _dtypes
from ...graph import Operation, Tensor
from ...autodiff import gradients as _gradients
from ...ops import array_ops, clip_ops, math_ops, state_ops
from ...ops import indexed_slices_ops
from ...ops.indexed_slices_ops import IndexedSlices
from .. import backend, initializers
from ..utils.generic_utils import serialize_keras_object

_ALLOWED_KWARGS = {"clipnorm", "clipvalue", "lr", "decay"}


def _var_key(var):
    return var.op.name


class OptimizerV2:
    """Base class: subclasses set hypers in `__init__`, create slots in `_create_slots`, and update one
    variable in `_resource_apply_dense(grad, var, coefficients)`."""

    def __init__(self, name, **kwargs):
        for k in kwargs:
            if k not in _ALLOWED_KWARGS:
                raise TypeError("Unexpected keyword argument passed to optimizer: " + str(k))
            if kwargs[k] is not None and kwargs[k] < 0:
                raise ValueError(f"Expected {k} >= 0, received: {kwargs[k]}")
        object.__setattr__(self, "_hyper", {})
        self._use_locking = True
        self._name = name
        self._slots: dict = {}
        self._slot_names: list = []
        self._weights: list = []
        self._iterations = None
        self._hypers_created = False
        decay = kwargs.pop("decay", 0.0)
        if decay < 0.0:
            raise ValueError(f"decay cannot be less than 0: {decay}")
        self._initial_decay = decay
        if "clipnorm" in kwargs:
            self.clipnorm = kwargs.pop("clipnorm")
        if "clipvalue" in kwargs:
            self.clipvalue = kwargs.pop("clipvalue")

    # -- hyper-parameters -------------------------------------------------------------------------------
    def __getattr__(self, name):
        hyper = self.__dict__.get("_hyper")
        if hyper is None:
            raise AttributeError(name)
        if name == "lr":
            name = "learning_rate"
        if name in hyper:
            return self._get_hyper(name)
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __setattr__(self, name, value):
        if name == "lr":
            name = "learning_rate"
        hyper = self.__dict__.get("_hyper")
        if hyper is not None and name in hyper:
            self._set_hyper(name, value)
        else:
            object.__setattr__(self, name, value)

    def _set_hyper(self, name, value):
        if name not in self._hyper:
            self._hyper[name] = value
            return
        prev = self._hyper[name]
        if callable(prev) or isinstance(prev, (Tensor, int, float)) or callable(value):
            self._hyper[name] = value
        else:
            backend.set_value(prev, value)

    def _get_hyper(self, name, dtype=None):
        if not self._hypers_created:
            self._create_hypers()
        value = self._hyper[name]
        if callable(value) and not isinstance(value, state_ops.Variable) and _is_schedule(value):
            return value
        if callable(value) and not isinstance(value, state_ops.Variable):
            value = value()
        if dtype is not None:
            return math_ops.cast(value, dtype)
        return value

    def _create_hypers(self):
        if self._hypers_created:
            return
        for name, value in sorted(self._hyper.items()):
            if isinstance(value, (Tensor, state_ops.Variable)) or callable(value):
                continue
            self._hyper[name] = self.add_weight(name, shape=[], trainable=False, initializer=value)
        self._hypers_created = True

    def _serialize_hyperparameter(self, name):
        value = self._hyper[name]
        if _is_schedule(value):
            return serialize_keras_object(value)
        if callable(value) and not isinstance(value, state_ops.Variable):
            return value()
        if isinstance(value, (Tensor, state_ops.Variable)):
            return backend.get_value(value)
        return value

    def _decayed_lr(self, var_dtype):
        lr_t = self._get_hyper("learning_rate", var_dtype)
        if _is_schedule(lr_t):
            lr_t = math_ops.cast(lr_t(math_ops.cast(self.iterations, var_dtype)), var_dtype)
        if self._initial_decay > 0.0:
            local_step = math_ops.cast(self.iterations, var_dtype)
            decay_t = self._get_hyper("decay", var_dtype)
            lr_t = lr_t / (1.0 + decay_t * local_step)
        return lr_t

    # -- variables ---------------------------------------------------------------------------------------
    @property
    def iterations(self):
        """The int64 step counter variable `iter` (created on first use)."""
        if self._iterations is None:
            self._iterations = self.add_weight("iter", shape=[], dtype=_dtypes.int64, trainable=False,
                                               initializer="zeros")
            self._weights.append(self._iterations)
        return self._iterations

    @iterations.setter
    def iterations(self, variable):
        if self._iterations is not None:
            raise RuntimeError("Cannot set `iterations` to a new Variable after the Optimizer weights have been "
                               "created")
        self._iterations = variable
        self._weights.append(self._iterations)

    def add_weight(self, name, shape, dtype=None, initializer="zeros", trainable=None, **kwargs):
        dtype = _dtypes.as_dtype(dtype or _dtypes.float32)
        pending = self.__dict__.get("_deferred_restorations")
        if pending and name in pending:  # a checkpoint loaded before this variable existed (keras/saving)
            initializer = np.asarray(pending.pop(name), dtype=dtype.as_numpy_dtype)
        if isinstance(initializer, str) or callable(initializer):
            init = initializers.get(initializer)

            def initial_value():
                return init(shape, dtype=dtype)
        else:
            initial_value = array_ops.constant(initializer, dtype=dtype)
        variable = state_ops.Variable(initial_value, name=name, dtype=dtype, trainable=bool(trainable))
        backend.track_variable(variable)
        return variable

    def add_slot(self, var, slot_name, initializer="zeros"):
        """The slot `slot_name` of `var` (created on first request, colocated with the variable)."""
        if slot_name not in self._slot_names:
            self._slot_names.append(slot_name)
        slots = self._slots.setdefault(_var_key(var), {})
        weight = slots.get(slot_name)
        if weight is None:
            pending = self.__dict__.get("_deferred_slot_restorations")
            if pending and (_var_key(var), slot_name) in pending:  # loaded before `fit` made the slot
                initializer = np.asarray(pending.pop((_var_key(var), slot_name)), dtype=var.dtype.as_numpy_dtype)
            init = initializers.get(initializer) if isinstance(initializer, str) or callable(initializer) else None

            def initial_value():
                if init is None:
                    return array_ops.constant(initializer, dtype=var.dtype, shape=var.shape.as_list())
                return init(var.shape.as_list(), dtype=var.dtype)
            with var.graph.colocate_with(var.op):
                weight = state_ops.Variable(initial_value, name=f"{var.op.name}/{slot_name}", dtype=var.dtype,
                                            trainable=False)
            backend.track_variable(weight)
            slots[slot_name] = weight
            self._weights.append(weight)
        return weight

    def get_slot(self, var, slot_name):
        slots = self._slots.get(_var_key(var), {})
        if slot_name not in slots:
            raise KeyError(f"Unknown slot {slot_name} for variable {var.name}")
        return slots[slot_name]

    def get_slot_names(self):
        return list(self._slot_names)

    def _create_slots(self, var_list):
        pass

    @property
    def weights(self):
        return list(self._weights)

    variables = weights

    def get_weights(self):
        return backend.batch_get_value(self._weights)

    def set_weights(self, weights):
        params = self.weights
        if len(params) != len(weights):
            raise ValueError(f"You called `set_weights(weights)` on optimizer {self._name} with a  weight list of "
                             f"length {len(weights)}, but the optimizer was expecting {len(params)} weights.")
        backend.batch_set_value(list(zip(params, weights)))

    # -- gradients and updates -------------------------------------------------------------------------------
    def get_gradients(self, loss, params):
        """d loss / d params (in `<name>/gradients`), clipped by `clipnorm` / `clipvalue`."""
        with backend.get_graph().as_default(), backend.name_scope(self._name + "/gradients"):
            grads = _gradients(loss, params)
            for grad, param in zip(grads, params):
                if grad is None:
                    raise ValueError(f"Variable {param} has `None` for gradient. Please make sure that all of your "
                                     "ops have a gradient defined (i.e. are differentiable). Common ops without "
                                     "gradient: K.argmax, K.round, K.eval.")
            if hasattr(self, "clipnorm"):
                grads = [clip_ops.clip_by_norm(g, self.clipnorm) for g in grads]
            if hasattr(self, "clipvalue"):
                grads = [clip_ops.clip_by_value(g, -self.clipvalue, self.clipvalue) for g in grads]
        return grads

    def get_updates(self, loss, params):
        grads = self.get_gradients(loss, params)
        return [self.apply_gradients(list(zip(grads, params)))]

    def minimize(self, loss, var_list, grad_loss=None, name=None):
        """`apply_gradients(compute_gradients)`; `loss` is a tensor (or a zero-argument callable)."""
        loss_t = loss() if callable(loss) else loss
        var_list = var_list() if callable(var_list) else var_list
        with backend.name_scope(self._name + "/gradients"):
            grads = _gradients(loss_t, var_list, grad_ys=grad_loss)
        return self.apply_gradients(list(zip(grads, var_list)), name=name)

    def apply_gradients(self, grads_and_vars, name=None):
        """One update per (gradient, variable) with a gradient, then `iter += 1`; returns that op."""
        grads_and_vars = [(g, v) for g, v in grads_and_vars if g is not None]
        if not grads_and_vars:
            raise ValueError("No gradients provided for any variable.")
        var_list = [v for _, v in grads_and_vars]
        with backend.name_scope(self._name):
            _ = self.iterations
            self._create_hypers()
            self._create_slots(var_list)
            coefficients = self._prepare(var_list)
            update_ops = []
            with backend.name_scope(name or self._name):
                for grad, var in grads_and_vars:
                    with backend.name_scope("update_" + var.op.name), var.graph.colocate_with(var.op):
                        update_ops.append(self._apply_one(grad, var, coefficients[var.dtype]))
                with backend.get_graph().control_dependencies(update_ops):
                    return self._iterations.assign_add(1).op

    def _apply_one(self, grad, var, coefficients):
        if isinstance(grad, IndexedSlices):  # dense update of the summed rows (TF applies them sparsely)
            grad = indexed_slices_ops.to_dense(grad)
        update = self._resource_apply_dense(grad, var, coefficients)
        if getattr(var, "constraint", None) is not None:
            with backend.get_graph().control_dependencies([_as_op(update)]):
                return state_ops.assign(var, var.constraint(var.value())).op
        return _as_op(update)

    def _prepare(self, var_list):
        coefficients = {}
        for dtype in {v.dtype for v in var_list}:
            coefficients[dtype] = {}
            self._prepare_local(dtype, coefficients[dtype])
        return coefficients

    def _prepare_local(self, var_dtype, coefficients):
        if "learning_rate" in self._hyper:
            coefficients["lr_t"] = array_ops.identity(self._decayed_lr(var_dtype))

    def _resource_apply_dense(self, grad, var, coefficients):
        raise NotImplementedError("Must be implemented in subclasses.")

    # -- config --------------------------------------------------------------------------------------------
    def get_config(self):
        config = {"name": self._name}
        if hasattr(self, "clipnorm"):
            config["clipnorm"] = self.clipnorm
        if hasattr(self, "clipvalue"):
            config["clipvalue"] = self.clipvalue
        return config

    @classmethod
    def from_config(cls, config, custom_objects=None):
        config = dict(config)
        if "lr" in config:
            config["learning_rate"] = config.pop("lr")
        return cls(**config)


def _is_schedule(value):
    return hasattr(value, "get_config") and callable(value) and not isinstance(value, state_ops.Variable) \
        and type(value).__name__ not in ("function",)


def _as_op(x):
    return x if isinstance(x, Operation) else x.op
