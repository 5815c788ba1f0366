"""`tf.train.FtrlOptimizer` (FTRL-Proximal, TF 1.15's `ApplyFtrl` without l2 shrinkage): the linear
estimators' default optimizer.

Per variable, slots "accum" (`initial_accumulator_value`, 0.1) and "linear" (0):
    accum_new = accum + g^2
    linear   += g - (accum_new^-p - accum^-p) / lr * var          (p = learning_rate_power, -0.5)
    quadratic = accum_new^-p / lr + 2 * l2
    var       = (clip(linear, -l1, l1) - linear) / quadratic  if |linear| > l1  else 0
Built from math ops: every new value is computed from the old ones before any is assigned. An
IndexedSlices gradient updates only its rows (TF's SparseApplyFtrl).
"""
from __future__ import annotations

from ..default_graph import control_dependencies
from ..ops import control_flow_ops, math_ops, scatter_ops, state_ops
from ..ops.slicing_ops import gather
from .optimizer import Optimizer

__all__ = ["FtrlOptimizer"]


class FtrlOptimizer(Optimizer):
    def __init__(self, learning_rate, learning_rate_power=-0.5, initial_accumulator_value=0.1,
                 l1_regularization_strength=0.0, l2_regularization_strength=0.0, use_locking=False, name="Ftrl",
                 accum_name=None, linear_name=None, l2_shrinkage_regularization_strength=0.0):
        if initial_accumulator_value < 0.0:
            raise ValueError(f"initial_accumulator_value {initial_accumulator_value} needs to be positive or zero")
        if learning_rate_power > 0.0:
            raise ValueError(f"learning_rate_power {learning_rate_power} needs to be negative or zero")
        if l1_regularization_strength < 0.0:
            raise ValueError(f"l1_regularization_strength {l1_regularization_strength} needs to be positive or zero")
        if l2_regularization_strength < 0.0:
            raise ValueError(f"l2_regularization_strength {l2_regularization_strength} needs to be positive or zero")
        if l2_shrinkage_regularization_strength:
            raise NotImplementedError("FtrlOptimizer(l2_shrinkage_regularization_strength=...) is not supported")
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate
        self._lr_power = float(learning_rate_power)
        self._initial_accumulator_value = initial_accumulator_value
        self._l1, self._l2 = float(l1_regularization_strength), float(l2_regularization_strength)
        self._accum_name, self._linear_name = accum_name, linear_name

    def _create_slots(self, var_list):
        for v in var_list:
            self._get_or_make_slot(v, self._initial_accumulator_value, "accum", self._accum_name or self._name)
            self._zeros_slot(v, "linear", self._linear_name or self._name)

    def _prepare(self):
        self._learning_rate_tensor = self._hyper_tensor(self._learning_rate, "learning_rate")

    def _power(self, x):
        if self._lr_power == -0.5:
            return math_ops.sqrt(x)
        return math_ops.pow(x, -self._lr_power)

    def _step(self, old_var, old_accum, old_linear, grad, dtype):
        """(new var, new accum, new linear) from the old values and the gradient, elementwise."""
        lr = math_ops.cast(self._learning_rate_tensor, dtype)
        new_accum = old_accum + grad * grad
        sigma = (self._power(new_accum) - self._power(old_accum)) / lr
        new_linear = old_linear + grad - sigma * old_var
        quadratic = self._power(new_accum) / lr + 2.0 * self._l2
        clipped = math_ops.minimum(math_ops.maximum(new_linear, -self._l1), self._l1)
        shrunk = (clipped - new_linear) / quadratic
        new_var = math_ops.cast(math_ops.greater(math_ops.abs(new_linear), self._l1), dtype) * shrunk
        return new_var, new_accum, new_linear

    def _apply_dense(self, grad, var):
        accum, linear = self.get_slot(var, "accum"), self.get_slot(var, "linear")
        new_var, new_accum, new_linear = self._step(var.value(), accum.value(), linear.value(), grad,
                                                    var.dtype.base_dtype)
        with control_dependencies([new_var, new_linear, new_accum]):
            return control_flow_ops.group(state_ops.assign(var, new_var), state_ops.assign(accum, new_accum),
                                          state_ops.assign(linear, new_linear))

    def _apply_sparse(self, grad, var):
        """TF's SparseApplyFtrl: the same step on the gradient's rows only."""
        accum, linear = self.get_slot(var, "accum"), self.get_slot(var, "linear")
        idx = grad.indices
        new_var, new_accum, new_linear = self._step(gather(var.value(), idx), gather(accum.value(), idx),
                                                    gather(linear.value(), idx), grad.values, var.dtype.base_dtype)
        with control_dependencies([new_var, new_linear, new_accum]):
            return control_flow_ops.group(scatter_ops.scatter_update(var, idx, new_var),
                                          scatter_ops.scatter_update(accum, idx, new_accum),
                                          scatter_ops.scatter_update(linear, idx, new_linear))
