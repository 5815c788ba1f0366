"""`tf.train.AdamOptimizer` (Kingma & Ba), TF1's formulation:

  lr_t = lr * sqrt(1 - beta2^t) / (1 - beta1^t)
  m = beta1 * m + (1 - beta1) * g;  v = beta2 * v + (1 - beta2) * g^2
  var -= lr_t * m / (sqrt(v) + epsilon)

Slots `<var>/Adam` ("m") and `<var>/Adam_1` ("v"); non-slot variables
`beta1_power` / `beta2_power` colocated with the first variable (by name),
multiplied by beta1/beta2 after all updates of a step (in `_finish`).
"""
from __future__ import annotations

from ..default_graph import get_default_graph
from . import sparse_updates, training_ops
from .optimizer import Optimizer

__all__ = ["AdamOptimizer"]


class AdamOptimizer(Optimizer):
    def __init__(self, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-8, use_locking=False, name="Adam"):
        super().__init__(use_locking, name)
        self._lr = learning_rate
        self._beta1 = beta1
        self._beta2 = beta2
        self._epsilon = epsilon

    def _get_beta_accumulators(self, graph=None):
        graph = graph or get_default_graph()
        return (self._get_non_slot_variable("beta1_power", graph=graph),
                self._get_non_slot_variable("beta2_power", graph=graph))

    def _create_slots(self, var_list):
        first_var = min(var_list, key=lambda x: x.name)
        self._create_non_slot_variable(initial_value=self._call_if_callable(self._beta1), name="beta1_power",
                                       colocate_with=first_var)
        self._create_non_slot_variable(initial_value=self._call_if_callable(self._beta2), name="beta2_power",
                                       colocate_with=first_var)
        for v in var_list:
            self._zeros_slot(v, "m", self._name)
            self._zeros_slot(v, "v", self._name)

    def _prepare(self):
        self._lr_t = self._hyper_tensor(self._lr, "learning_rate")
        self._beta1_t = self._hyper_tensor(self._beta1, "beta1")
        self._beta2_t = self._hyper_tensor(self._beta2, "beta2")
        self._epsilon_t = self._hyper_tensor(self._epsilon, "epsilon")

    def _apply_dense(self, grad, var):
        beta1_power, beta2_power = self._get_beta_accumulators(var.op.graph)
        return training_ops.apply_adam(var, self.get_slot(var, "m"), self.get_slot(var, "v"), beta1_power.value(),
                                       beta2_power.value(), self._lr_t, self._beta1_t, self._beta2_t,
                                       self._epsilon_t, grad, use_locking=self._use_locking).op

    def _apply_sparse(self, grad, var):
        beta1_power, beta2_power = self._get_beta_accumulators(var.op.graph)
        return sparse_updates.adam_non_lazy(var, self.get_slot(var, "m"), self.get_slot(var, "v"),
                                            beta1_power.value(), beta2_power.value(), self._lr_t, self._beta1_t,
                                            self._beta2_t, self._epsilon_t, grad, use_locking=self._use_locking)

    def _finish(self, update_ops, name_scope):
        beta1_power, beta2_power = self._get_beta_accumulators(update_ops[0].graph)
        g = beta1_power.op.graph
        with g.control_dependencies(update_ops):
            with g.colocate_with(beta1_power.op):
                update_beta1 = beta1_power.assign(beta1_power.value() * training_ops.cast_like(self._beta1_t,
                                                                                               beta1_power))
                update_beta2 = beta2_power.assign(beta2_power.value() * training_ops.cast_like(self._beta2_t,
                                                                                               beta2_power))
        return super()._finish(list(update_ops) + [update_beta1.op, update_beta2.op], name_scope)
