"""`tf.keras.optimizers.SGD` (TF 1.15): plain, momentum and Nesterov gradient descent.

Without momentum: TF's ApplyGradientDescent (var -= lr * g). With momentum, Keras's own rule
(ResourceApplyKerasMomentum): accum = momentum * accum - lr * g; var += accum (Nesterov:
var += momentum * accum - lr * g), slot `momentum`. Defaults: learning_rate 0.01, momentum 0, nesterov False.
"""
from __future__ import annotations

from ...ops import array_ops, state_ops
from ...train import training_ops
from .optimizer_v2 import OptimizerV2


class SGD(OptimizerV2):
    def __init__(self, learning_rate=0.01, momentum=0.0, nesterov=False, name="SGD", **kwargs):
        super().__init__(name, **kwargs)
        self._set_hyper("learning_rate", kwargs.get("lr", learning_rate))
        self._set_hyper("decay", self._initial_decay)
        self._momentum = False
        if callable(momentum) or momentum > 0:
            self._momentum = True
        if isinstance(momentum, (int, float)) and (momentum < 0 or momentum > 1):
            raise ValueError("`momentum` must be between [0, 1].")
        self._set_hyper("momentum", momentum)
        self.nesterov = nesterov

    def _create_slots(self, var_list):
        if self._momentum:
            for var in var_list:
                self.add_slot(var, "momentum")

    def _prepare_local(self, var_dtype, coefficients):
        super()._prepare_local(var_dtype, coefficients)
        coefficients["momentum"] = array_ops.identity(self._get_hyper("momentum", var_dtype))

    def _resource_apply_dense(self, grad, var, c):
        if not self._momentum:
            return training_ops.apply_gradient_descent(var, c["lr_t"], grad, use_locking=self._use_locking)
        accum = self.get_slot(var, "momentum")
        accum_t = state_ops.assign(accum, accum.value() * c["momentum"] - c["lr_t"] * grad)
        if self.nesterov:
            return state_ops.assign_add(var, accum_t * c["momentum"] - c["lr_t"] * grad)
        return state_ops.assign_add(var, accum_t)

    def get_config(self):
        return {**super().get_config(), "learning_rate": self._serialize_hyperparameter("learning_rate"),
                "decay": self._serialize_hyperparameter("decay"),
                "momentum": self._serialize_hyperparameter("momentum"), "nesterov": self.nesterov}

