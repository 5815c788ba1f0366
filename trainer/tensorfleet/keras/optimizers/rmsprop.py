"""`tf.keras.optimizers.RMSprop` (TF 1.15): learning_rate 0.001, rho 0.9, momentum 0, epsilon 1e-7.

Without momentum (the default), Keras's assign formulas: rms = rho rms + (1 - rho) g^2 (centered: minus the
square of mg, the mean gradient); var -= lr g / (sqrt(rms) + eps), epsilon outside the square root. With
momentum: TF's ApplyRMSProp / ApplyCenteredRMSProp kernels (epsilon inside the root), slots rms, momentum
(and mg).
"""
from __future__ import annotations

from ...ops import array_ops, math_ops, state_ops
from ...train import training_ops
from ..backend import config as _config
from .optimizer_v2 import OptimizerV2


class RMSprop(OptimizerV2):
    def __init__(self, learning_rate=0.001, rho=0.9, momentum=0.0, epsilon=1e-7, centered=False, name="RMSprop",
                 **kwargs):
        super().__init__(name, **kwargs)
        self._set_hyper("learning_rate", kwargs.get("lr", learning_rate))
        self._set_hyper("decay", self._initial_decay)
        self._set_hyper("rho", rho)
        self._momentum = False
        if callable(momentum) or momentum > 0:
            self._momentum = True
        if isinstance(momentum, (int, float)) and (momentum < 0 or momentum > 1):
            raise ValueError("`momentum` must be between [0, 1].")
        self._set_hyper("momentum", momentum)
        self.epsilon = epsilon or _config.epsilon()
        self.centered = centered

    def _create_slots(self, var_list):
        for var in var_list:
            self.add_slot(var, "rms")
        if self._momentum:
            for var in var_list:
                self.add_slot(var, "momentum")
        if self.centered:
            for var in var_list:
                self.add_slot(var, "mg")

    def _prepare_local(self, var_dtype, c):
        super()._prepare_local(var_dtype, c)
        c["rho"] = array_ops.identity(self._get_hyper("rho", var_dtype))
        c["momentum"] = array_ops.identity(self._get_hyper("momentum", var_dtype))
        c["epsilon"] = array_ops.constant(self.epsilon, dtype=var_dtype)
        c["one_minus_rho"] = 1.0 - c["rho"]

    def _resource_apply_dense(self, grad, var, c):
        rms = self.get_slot(var, "rms")
        if self._momentum:
            mom = self.get_slot(var, "momentum")
            if self.centered:
                return training_ops.apply_centered_rms_prop(var, self.get_slot(var, "mg"), rms, mom, c["lr_t"],
                                                            c["rho"], c["momentum"], c["epsilon"], grad,
                                                            use_locking=self._use_locking)
            return training_ops.apply_rms_prop(var, rms, mom, c["lr_t"], c["rho"], c["momentum"], c["epsilon"],
                                               grad, use_locking=self._use_locking)
        rms_t = state_ops.assign(rms, c["rho"] * rms.value() + c["one_minus_rho"] * math_ops.square(grad))
        denom_t = rms_t
        if self.centered:
            mg = self.get_slot(var, "mg")
            mg_t = state_ops.assign(mg, c["rho"] * mg.value() + c["one_minus_rho"] * grad)
            denom_t = rms_t - math_ops.square(mg_t)
        return state_ops.assign_sub(var, c["lr_t"] * grad / (math_ops.sqrt(denom_t) + c["epsilon"]))

    def get_config(self):
        return {**super().get_config(), "learning_rate": self._serialize_hyperparameter("learning_rate"),
                "decay": self._serialize_hyperparameter("decay"), "rho": self._serialize_hyperparameter("rho"),
                "momentum": self._serialize_hyperparameter("momentum"), "epsilon": self.epsilon,
                "centered": self.centered}
