"""`tf.train.GradientDescentOptimizer`: var -= learning_rate * grad, one fused ApplyGradientDescent per variable."""
from __future__ import annotations

from . import sparse_updates, training_ops
from .optimizer import Optimizer

__all__ = ["GradientDescentOptimizer"]


class GradientDescentOptimizer(Optimizer):
    def __init__(self, learning_rate, use_locking=False, name="GradientDescent"):
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate
        self._learning_rate_tensor = None

    def _prepare(self):
        self._learning_rate_tensor = self._hyper_tensor(self._learning_rate, "learning_rate")

    def _apply_dense(self, grad, var):
        return training_ops.apply_gradient_descent(var, self._learning_rate_tensor, grad,
                                                   use_locking=self._use_locking).op

    def _apply_sparse_duplicate_indices(self, grad, var):
        return sparse_updates.gradient_descent(var, self._learning_rate_tensor, grad, use_locking=self._use_locking)
