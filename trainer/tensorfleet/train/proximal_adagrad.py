"""`tf.train.ProximalAdagradOptimizer` (FOBOS with Adagrad's per-element step), TF 1.15's
`ApplyProximalAdagrad`:

  accum += g^2;  lr_t = lr / sqrt(accum);  prox = var - lr_t * g
  var    = sign(prox) * max(|prox| - lr_t * l1, 0) / (1 + lr_t * l2)  (l1 > 0; else prox / (1 + lr_t * l2))

One slot `<var>/ProximalAdagrad` ("accumulator"), initialized to
`initial_accumulator_value` (0.1, must be positive). Sits beside adagrad.py in
`train/`; fused op in `training_ops.py`, kernel in `kernels/train_kernels.py`
(dense path only).
"""
from __future__ import annotations

from . import sparse_updates, training_ops
from .optimizer import Optimizer

__all__ = ["ProximalAdagradOptimizer"]


class ProximalAdagradOptimizer(Optimizer):
    def __init__(self, learning_rate, initial_accumulator_value=0.1, l1_regularization_strength=0.0,
                 l2_regularization_strength=0.0, use_locking=False, name="ProximalAdagrad"):
        if initial_accumulator_value <= 0.0:
            raise ValueError(f"initial_accumulator_value must be positive: {initial_accumulator_value}")
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate
        self._initial_accumulator_value = initial_accumulator_value
        self._l1_regularization_strength = l1_regularization_strength
        self._l2_regularization_strength = l2_regularization_strength

    def _create_slots(self, var_list):
        for v in var_list:
            self._get_or_make_slot(v, self._initial_accumulator_value, "accumulator", self._name)

    def _prepare(self):
        self._learning_rate_tensor = self._hyper_tensor(self._learning_rate, "learning_rate")
        self._l1_regularization_strength_tensor = self._hyper_tensor(self._l1_regularization_strength,
                                                                     "l1_regularization_strength")
        self._l2_regularization_strength_tensor = self._hyper_tensor(self._l2_regularization_strength,
                                                                     "l2_regularization_strength")

    def _apply_dense(self, grad, var):
        return training_ops.apply_proximal_adagrad(
            var, self.get_slot(var, "accumulator"), self._learning_rate_tensor,
            self._l1_regularization_strength_tensor, self._l2_regularization_strength_tensor, grad,
            use_locking=self._use_locking).op

    def _apply_sparse(self, grad, var):
        return sparse_updates.proximal(var, self.get_slot(var, "accumulator"), self._learning_rate_tensor,
                                       self._l1_regularization_strength_tensor,
                                       self._l2_regularization_strength_tensor, grad, use_locking=self._use_locking)
