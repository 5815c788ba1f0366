"""`tf.train.RMSPropOptimizer` (TF1): mean-square (and, centered, mean-gradient) slots plus momentum.

Slots per variable, in TF's creation order: "rms" `<var>/RMSProp` (initialized
to 1.0 as in TF1), "mg" `<var>/RMSProp_1` when centered, "momentum"
(`<var>/RMSProp_1`, or `<var>/RMSProp_2` when centered), both zero-initialized.
  ms  = decay * ms + (1 - decay) * g^2          (mg = decay * mg + (1 - decay) * g)
  mom = momentum * mom + lr * g / sqrt(ms + eps)  (centered: sqrt(ms - mg^2 + eps))
  var -= mom
"""
from __future__ import annotations

from . import sparse_updates, training_ops
from .optimizer import Optimizer

__all__ = ["RMSPropOptimizer"]


class RMSPropOptimizer(Optimizer):
    def __init__(self, learning_rate, decay=0.9, momentum=0.0, epsilon=1e-10, use_locking=False, centered=False,
                 name="RMSProp"):
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate
        self._decay = decay
        self._momentum = momentum
        self._epsilon = epsilon
        self._centered = centered

    def _create_slots(self, var_list):
        for v in var_list:
            self._get_or_make_slot(v, 1.0, "rms", self._name)
            if self._centered:
                self._zeros_slot(v, "mg", self._name)
            self._zeros_slot(v, "momentum", self._name)

    def _prepare(self):
        self._learning_rate_tensor = self._hyper_tensor(self._learning_rate, "learning_rate")
        self._decay_tensor = self._hyper_tensor(self._decay, "decay")
        self._momentum_tensor = self._hyper_tensor(self._momentum, "momentum")
        self._epsilon_tensor = self._hyper_tensor(self._epsilon, "epsilon")

    def _apply_dense(self, grad, var):
        rms, mom = self.get_slot(var, "rms"), self.get_slot(var, "momentum")
        args = (self._learning_rate_tensor, self._decay_tensor, self._momentum_tensor, self._epsilon_tensor, grad)
        if self._centered:
            return training_ops.apply_centered_rms_prop(var, self.get_slot(var, "mg"), rms, mom, *args,
                                                        use_locking=self._use_locking).op
        return training_ops.apply_rms_prop(var, rms, mom, *args, use_locking=self._use_locking).op

    def _apply_sparse(self, grad, var):
        mg = self.get_slot(var, "mg") if self._centered else None
        return sparse_updates.rms_prop(var, self.get_slot(var, "rms"), self.get_slot(var, "momentum"), mg,
                                       self._learning_rate_tensor, self._decay_tensor, self._momentum_tensor,
                                       self._epsilon_tensor, grad, use_locking=self._use_locking)
