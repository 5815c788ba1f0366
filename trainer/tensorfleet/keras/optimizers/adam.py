"""`tf.keras.optimizers.Adam`, `Adamax` and `Nadam` (TF 1.15's optimizer_v2 formulas).

- Adam: TF's ApplyAdam with beta powers `beta ** (iterations + 1)`; amsgrad keeps `vhat = max(vhat, v)` and
  divides by sqrt(vhat) (slots m, v[, vhat]). Defaults 0.001, 0.9, 0.999, epsilon 1e-7.
- Adamax: m = b1 m + (1 - b1) g; v = max(b2 v, |g|); var -= lr / (1 - b1^t) * m / (v + eps).
- Nadam: Keras's momentum-cache schedule (a `momentum_cache` variable, decay 0.004); the learning rate
  is not decayed.
"""
from __future__ import annotations

from ... import dtypes as _dtypes
from ...ops import array_ops, math_ops, state_ops
from ...train import training_ops
from ..backend import config as _config
from .optimizer_v2 import OptimizerV2


def _identity(x):
    return array_ops.identity(x)


class _AdamBase(OptimizerV2):
    def __init__(self, name, learning_rate, beta_1, beta_2, epsilon, **kwargs):
        super().__init__(name, **kwargs)
        self._set_hyper("learning_rate", kwargs.get("lr", learning_rate))
        self._set_hyper("decay", self._initial_decay)
        self._set_hyper("beta_1", beta_1)
        self._set_hyper("beta_2", beta_2)
        self.epsilon = epsilon or _config.epsilon()

    def _create_slots(self, var_list):
        for var in var_list:
            self.add_slot(var, "m")
        for var in var_list:
            self.add_slot(var, "v")

    def _prepare_local(self, var_dtype, c):
        super()._prepare_local(var_dtype, c)
        local_step = math_ops.cast(self.iterations + 1, var_dtype)
        c["beta_1_t"] = _identity(self._get_hyper("beta_1", var_dtype))
        c["beta_2_t"] = _identity(self._get_hyper("beta_2", var_dtype))
        c["beta_1_power"] = math_ops.pow(c["beta_1_t"], local_step)
        c["beta_2_power"] = math_ops.pow(c["beta_2_t"], local_step)
        c["epsilon"] = array_ops.constant(self.epsilon, dtype=var_dtype)

    def get_config(self):
        return {**super().get_config(), "learning_rate": self._serialize_hyperparameter("learning_rate"),
                "decay": self._serialize_hyperparameter("decay"), "beta_1": self._serialize_hyperparameter("beta_1"),
                "beta_2": self._serialize_hyperparameter("beta_2"), "epsilon": self.epsilon}


class Adam(_AdamBase):
    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7, amsgrad=False, name="Adam",
                 **kwargs):
        super().__init__(name, learning_rate, beta_1, beta_2, epsilon, **kwargs)
        self.amsgrad = amsgrad

    def _create_slots(self, var_list):
        super()._create_slots(var_list)
        if self.amsgrad:
            for var in var_list:
                self.add_slot(var, "vhat")

    def _resource_apply_dense(self, grad, var, c):
        m, v = self.get_slot(var, "m"), self.get_slot(var, "v")
        if not self.amsgrad:
            return training_ops.apply_adam(var, m, v, c["beta_1_power"], c["beta_2_power"], c["lr_t"], c["beta_1_t"],
                                           c["beta_2_t"], c["epsilon"], grad, use_locking=self._use_locking)
        lr = c["lr_t"] * (math_ops.sqrt(1 - c["beta_2_power"]) / (1 - c["beta_1_power"]))
        m_t = state_ops.assign(m, m.value() * c["beta_1_t"] + grad * (1 - c["beta_1_t"]))
        v_t = state_ops.assign(v, v.value() * c["beta_2_t"] + math_ops.square(grad) * (1 - c["beta_2_t"]))
        vhat = self.get_slot(var, "vhat")
        vhat_t = state_ops.assign(vhat, math_ops.maximum(vhat.value(), v_t))
        return state_ops.assign_sub(var, lr * m_t / (math_ops.sqrt(vhat_t) + c["epsilon"]))

    def get_config(self):
        return {**super().get_config(), "amsgrad": self.amsgrad}


class Adamax(_AdamBase):
    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7, name="Adamax", **kwargs):
        super().__init__(name, learning_rate, beta_1, beta_2, epsilon, **kwargs)

    def _resource_apply_dense(self, grad, var, c):
        m, v = self.get_slot(var, "m"), self.get_slot(var, "v")
        m_t = state_ops.assign(m, m.value() * c["beta_1_t"] + grad * (1 - c["beta_1_t"]))
        v_t = state_ops.assign(v, math_ops.maximum(v.value() * c["beta_2_t"], math_ops.abs(grad)))
        return state_ops.assign_sub(var, c["lr_t"] / (1 - c["beta_1_power"]) * (m_t / (v_t + c["epsilon"])))


class Nadam(_AdamBase):
    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7, name="Nadam", **kwargs):
        kwargs["decay"] = kwargs.pop("schedule_decay", 0.004)
        super().__init__(name, learning_rate, beta_1, beta_2, epsilon, **kwargs)
        self._m_cache = None

    def _create_slots(self, var_list):
        if self._m_cache is None:
            self._m_cache = self.add_weight("momentum_cache", shape=[], dtype=_dtypes.float32, initializer="ones")
            self._weights.append(self._m_cache)
        super()._create_slots(var_list)

    def _prepare(self, var_list):
        self._m_cache_read = _identity(self._m_cache)
        return super()._prepare(var_list)

    def _prepare_local(self, var_dtype, c):
        lr_t = _identity(self._get_hyper("learning_rate", var_dtype))
        beta_1_t = _identity(self._get_hyper("beta_1", var_dtype))
        beta_2_t = _identity(self._get_hyper("beta_2", var_dtype))
        local_step = math_ops.cast(self.iterations + 1, var_dtype)
        next_step = math_ops.cast(self.iterations + 2, var_dtype)
        decay_base = math_ops.cast(0.96, var_dtype)
        m_t = beta_1_t * (1.0 - 0.5 * math_ops.pow(decay_base, self._initial_decay * local_step))
        m_t_1 = beta_1_t * (1.0 - 0.5 * math_ops.pow(decay_base, self._initial_decay * next_step))
        m_schedule_new = math_ops.cast(self._m_cache_read, var_dtype) * m_t
        if var_dtype == self._m_cache.dtype:
            m_schedule_new = _identity(state_ops.assign(self._m_cache, m_schedule_new))
        m_schedule_next = m_schedule_new * m_t_1
        c.update(lr_t=lr_t, epsilon=array_ops.constant(self.epsilon, dtype=var_dtype), beta_1_t=beta_1_t,
                 beta_2_t=beta_2_t, m_t=m_t, m_t_1=m_t_1, one_minus_m_schedule_new=1.0 - m_schedule_new,
                 one_minus_m_schedule_next=1.0 - m_schedule_next,
                 v_t_prime_denominator=1.0 - math_ops.pow(beta_2_t, local_step))

    def _resource_apply_dense(self, grad, var, c):
        m, v = self.get_slot(var, "m"), self.get_slot(var, "v")
        g_prime = grad / c["one_minus_m_schedule_new"]
        m_t = state_ops.assign(m, c["beta_1_t"] * m.value() + (1 - c["beta_1_t"]) * grad)
        m_t_prime = m_t / c["one_minus_m_schedule_next"]
        v_t = state_ops.assign(v, c["beta_2_t"] * v.value() + (1 - c["beta_2_t"]) * math_ops.square(grad))
        v_t_prime = v_t / c["v_t_prime_denominator"]
        m_t_bar = (1.0 - c["m_t"]) * g_prime + c["m_t_1"] * m_t_prime
        return state_ops.assign_sub(var, c["lr_t"] * m_t_bar / (math_ops.sqrt(v_t_prime) + c["epsilon"]))

    def get_config(self):
        config = super().get_config()
        config.pop("decay", None)
        return {**config, "schedule_decay": self._initial_decay}
