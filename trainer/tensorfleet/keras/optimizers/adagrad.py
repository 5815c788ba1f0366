"""`tf.keras.optimizers.Adagrad` and `Adadelta` (TF 1.15).

- Adagrad: learning_rate 0.001, initial_accumulator_value 0.1, epsilon 1e-7; TF's ApplyAdagradV2 rule
  accum += g^2; var -= lr g / (sqrt(accum) + eps) (slot `accumulator`).
- Adadelta: learning_rate 0.001, rho 0.95, epsilon 1e-7; TF's ApplyAdadelta kernel (slots accum_grad,
  accum_var).
"""
from __future__ import annotations

from ...ops import array_ops, init_ops, math_ops, state_ops
from ...train import training_ops
from ..backend import config as _config
from .optimizer_v2 import OptimizerV2


class Adagrad(OptimizerV2):
    def __init__(self, learning_rate=0.001, initial_accumulator_value=0.1, epsilon=1e-7, name="Adagrad", **kwargs):
        if initial_accumulator_value < 0.0:
            raise ValueError(f"initial_accumulator_value must be non-negative: {initial_accumulator_value}")
        if epsilon is None:
            epsilon = _config.epsilon()
        super().__init__(name, **kwargs)
        self._set_hyper("learning_rate", kwargs.get("lr", learning_rate))
        self._set_hyper("decay", self._initial_decay)
        self._initial_accumulator_value = initial_accumulator_value
        self.epsilon = epsilon

    def _create_slots(self, var_list):
        for var in var_list:
            init = init_ops.constant_initializer(self._initial_accumulator_value, dtype=var.dtype)
            self.add_slot(var, "accumulator", init)

    def _prepare_local(self, var_dtype, c):
        super()._prepare_local(var_dtype, c)
        c["epsilon"] = array_ops.constant(self.epsilon, dtype=var_dtype)

    def _resource_apply_dense(self, grad, var, c):
        acc = self.get_slot(var, "accumulator")
        acc_t = state_ops.assign_add(acc, math_ops.square(grad))
        return state_ops.assign_sub(var, c["lr_t"] * grad / (math_ops.sqrt(acc_t) + c["epsilon"]))

    def get_config(self):
        return {**super().get_config(), "learning_rate": self._serialize_hyperparameter("learning_rate"),
                "decay": self._serialize_hyperparameter("decay"),
                "initial_accumulator_value": self._initial_accumulator_value, "epsilon": self.epsilon}


class Adadelta(OptimizerV2):
    def __init__(self, learning_rate=0.001, rho=0.95, epsilon=1e-7, name="Adadelta", **kwargs):
        super().__init__(name, **kwargs)
        self._set_hyper("learning_rate", kwargs.get("lr", learning_rate))
        self._set_hyper("decay", self._initial_decay)
        self._set_hyper("rho", rho)
        self.epsilon = epsilon or _config.epsilon()

    def _create_slots(self, var_list):
        for var in var_list:
            self.add_slot(var, "accum_grad")
        for var in var_list:
            self.add_slot(var, "accum_var")

    def _prepare_local(self, var_dtype, c):
        super()._prepare_local(var_dtype, c)
        c["epsilon"] = array_ops.constant(self.epsilon, dtype=var_dtype)
        c["rho"] = array_ops.identity(self._get_hyper("rho", var_dtype))

    def _resource_apply_dense(self, grad, var, c):
        return training_ops.apply_adadelta(var, self.get_slot(var, "accum_grad"), self.get_slot(var, "accum_var"),
                                           c["lr_t"], c["rho"], c["epsilon"], grad, use_locking=self._use_locking)

    def get_config(self):
        return {**super().get_config(), "learning_rate": self._serialize_hyperparameter("learning_rate"),
                "decay": self._serialize_hyperparameter("decay"), "rho": self._serialize_hyperparameter("rho"),
                "epsilon": self.epsilon}
