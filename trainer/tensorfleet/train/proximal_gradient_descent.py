"""`tf.train.ProximalGradientDescentOptimizer` (FOBOS with a fixed step), TF 1.15's
`ApplyProximalGradientDescent`:

  prox = var - lr * g
  var  = sign(prox) * max(|prox| - lr * l1, 0) / (1 + lr * l2)     (l1 > 0; else prox / (1 + lr * l2))

No slots. Sits beside the other optimizers in `train/`; the fused op is in
`training_ops.py`, its kernel in `kernels/train_kernels.py` (dense path only).
"""
from __future__ import annotations

from . import sparse_updates, training_ops
from .optimizer import Optimizer

__all__ = ["ProximalGradientDescentOptimizer"]


class ProximalGradientDescentOptimizer(Optimizer):
    def __init__(self, learning_rate, l1_regularization_strength=0.0, l2_regularization_strength=0.0,
                 use_locking=False, name="ProximalGradientDescent"):
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate
        self._l1_regularization_strength = l1_regularization_strength
        self._l2_regularization_strength = l2_regularization_strength

    def _prepare(self):
        self._learning_rate_tensor = self._hyper_tensor(self._learning_rate, "learning_rate")
        self._l1_regularization_strength_tensor = self._hyper_tensor(self._l1_regularization_strength,
                                                                     "l1_regularization_strength")
        self._l2_regularization_strength_tensor = self._hyper_tensor(self._l2_regularization_strength,
                                                                     "l2_regularization_strength")

    def _apply_dense(self, grad, var):
        return training_ops.apply_proximal_gradient_descent(
            var, self._learning_rate_tensor, self._l1_regularization_strength_tensor,
            self._l2_regularization_strength_tensor, grad, use_locking=self._use_locking).op

    def _apply_sparse(self, grad, var):
        return sparse_updates.proximal(var, None, self._learning_rate_tensor, self._l1_regularization_strength_tensor,
                                       self._l2_regularization_strength_tensor, grad, use_locking=self._use_locking)
