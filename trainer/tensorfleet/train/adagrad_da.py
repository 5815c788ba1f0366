"""`tf.train.AdagradDAOptimizer` (Adagrad Dual Averaging, Duchi et al.), TF 1.15's `ApplyAdagradDA`:

  g_acc += g;  gg_acc += g^2;  T = global_step + 1 (read once per step, before the increment)
  var = -lr * sign(g_acc) * max(|g_acc| - l1 * T, 0) / (l2 * T * lr + sqrt(gg_acc))   (l1 > 0; else g_acc)

The variable is recomputed from the accumulators each step (its old value is
not used). Slots `<var>/AdagradDA` ("gradient_accumulator", zeros) and
`<var>/AdagradDA_1` ("gradient_squared_accumulator",
`initial_gradient_squared_accumulator_value`, 0.1, must be positive). The
constructor takes the global step tensor; pass the same one to
`minimize(global_step=...)` or T stays 1. Sits beside adagrad.py in `train/`;
fused op in `training_ops.py`, kernel in `kernels/train_kernels.py` (dense path only).
"""
from __future__ import annotations

from ..ops import array_ops
from . import training_ops
from .optimizer import Optimizer

__all__ = ["AdagradDAOptimizer"]


class AdagradDAOptimizer(Optimizer):
    def __init__(self, learning_rate, global_step, initial_gradient_squared_accumulator_value=0.1,
                 l1_regularization_strength=0.0, l2_regularization_strength=0.0, use_locking=False,
                 name="AdagradDA"):
        if initial_gradient_squared_accumulator_value <= 0.0:
            raise ValueError(f"initial_gradient_squared_accumulator_value must be positive: "
                             f"{initial_gradient_squared_accumulator_value}")
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate
        self._initial_gradient_squared_accumulator_value = initial_gradient_squared_accumulator_value
        self._l1_regularization_strength = l1_regularization_strength
        self._l2_regularization_strength = l2_regularization_strength
        self._global_step = global_step
        self._global_step_on_worker = None

    def _create_slots(self, var_list):
        for v in var_list:
            self._get_or_make_slot(v, 0.0, "gradient_accumulator", self._name)
            self._get_or_make_slot(v, self._initial_gradient_squared_accumulator_value,
                                   "gradient_squared_accumulator", self._name)

    def _prepare(self):
        self._learning_rate_tensor = self._hyper_tensor(self._learning_rate, "learning_rate")
        # TF: one copy of the step per worker (not one read of the ps per variable), plus one
        self._global_step_on_worker = array_ops.identity(self._global_step) + 1

    def _apply_dense(self, grad, var):
        return training_ops.apply_adagrad_da(
            var, self.get_slot(var, "gradient_accumulator"), self.get_slot(var, "gradient_squared_accumulator"),
            grad, self._learning_rate_tensor, self._l1_regularization_strength, self._l2_regularization_strength,
            self._global_step_on_worker, use_locking=self._use_locking).op
