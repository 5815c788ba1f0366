"""`tf.train.AdagradOptimizer`: accum += grad^2; var -= lr * grad / sqrt(accum).

One slot per variable, `<var>/Adagrad` (slot name "accumulator"), initialized to
`initial_accumulator_value` (0.1).
"""
from __future__ import annotations

from . import sparse_updates, training_ops
from .optimizer import Optimizer

__all__ = ["AdagradOptimizer"]


class AdagradOptimizer(Optimizer):
    def __init__(self, learning_rate, initial_accumulator_value=0.1, use_locking=False, name="Adagrad"):
        if initial_accumulator_value <= 0.0:
            raise ValueError(f"initial_accumulator_value must be positive: {initial_accumulator_value}")
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate
        self._initial_accumulator_value = initial_accumulator_value

    def _create_slots(self, var_list):
        for v in var_list:
            self._get_or_make_slot(v, self._initial_accumulator_value, "accumulator", self._name)

    def _prepare(self):
        self._learning_rate_tensor = self._hyper_tensor(self._learning_rate, "learning_rate")

    def _apply_dense(self, grad, var):
        return training_ops.apply_adagrad(var, self.get_slot(var, "accumulator"), self._learning_rate_tensor, grad,
                                          use_locking=self._use_locking).op

    def _apply_sparse(self, grad, var):
        return sparse_updates.adagrad(var, self.get_slot(var, "accumulator"), self._learning_rate_tensor, grad,
                                      use_locking=self._use_locking)
