"""`tf.train.MomentumOptimizer`: accum = accum * momentum + grad; var -= lr * accum (or Nesterov's step).

One slot per variable, `<var>/Momentum` (slot name "momentum"), zero-initialized.
"""
from __future__ import annotations

from . import sparse_updates, training_ops
from .optimizer import Optimizer

__all__ = ["MomentumOptimizer"]


class MomentumOptimizer(Optimizer):
    def __init__(self, learning_rate, momentum, use_locking=False, name="Momentum", use_nesterov=False):
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate
        self._momentum = momentum
        self._use_nesterov = use_nesterov

    def _create_slots(self, var_list):
        for v in var_list:
            self._zeros_slot(v, "momentum", self._name)

    def _prepare(self):
        self._learning_rate_tensor = self._hyper_tensor(self._learning_rate, "learning_rate")
        self._momentum_tensor = self._hyper_tensor(self._momentum, "momentum")

    def _apply_dense(self, grad, var):
        return training_ops.apply_momentum(var, self.get_slot(var, "momentum"), self._learning_rate_tensor, grad,
                                           self._momentum_tensor, use_locking=self._use_locking,
                                           use_nesterov=self._use_nesterov).op

    def _apply_sparse(self, grad, var):
        return sparse_updates.momentum(var, self.get_slot(var, "momentum"), self._learning_rate_tensor, grad,
                                       self._momentum_tensor, use_nesterov=self._use_nesterov,
                                       use_locking=self._use_locking)
