"""`tf.train.AdadeltaOptimizer` (Zeiler 2012), TF 1.15's `ApplyAdadelta`:

  accum        = rho * accum + (1 - rho) * g^2
  update       = sqrt(accum_update + epsilon) / sqrt(accum + epsilon) * g
  var         -= lr * update
  accum_update = rho * accum_update + (1 - rho) * update^2

Slots `<var>/Adadelta` ("accum") and `<var>/Adadelta_1` ("accum_update"), both
zeros. Sits beside the other optimizers in `train/`; the fused op is in
`training_ops.py`, its kernel in `kernels/train_kernels.py`; an IndexedSlices gradient updates only its
rows (TF's SparseApplyAdadelta, `sparse_updates.adadelta`).
"""
from __future__ import annotations

from . import sparse_updates, training_ops
from .optimizer import Optimizer

__all__ = ["AdadeltaOptimizer"]


class AdadeltaOptimizer(Optimizer):
    def __init__(self, learning_rate=0.001, rho=0.95, epsilon=1e-8, use_locking=False, name="Adadelta"):
        super().__init__(use_locking, name)
        self._lr = learning_rate
        self._rho = rho
        self._epsilon = epsilon

    def _create_slots(self, var_list):
        for v in var_list:
            self._zeros_slot(v, "accum", self._name)
            self._zeros_slot(v, "accum_update", self._name)

    def _prepare(self):
        self._lr_t = self._hyper_tensor(self._lr, "lr")
        self._rho_t = self._hyper_tensor(self._rho, "rho")
        self._epsilon_t = self._hyper_tensor(self._epsilon, "epsilon")

    def _apply_dense(self, grad, var):
        return training_ops.apply_adadelta(var, self.get_slot(var, "accum"), self.get_slot(var, "accum_update"),
                                           self._lr_t, self._rho_t, self._epsilon_t, grad,
                                           use_locking=self._use_locking).op

    def _apply_sparse(self, grad, var):
        return sparse_updates.adadelta(var, self.get_slot(var, "accum"), self.get_slot(var, "accum_update"),
                                       self._lr_t, self._rho_t, self._epsilon_t, grad, use_locking=self._use_locking)
