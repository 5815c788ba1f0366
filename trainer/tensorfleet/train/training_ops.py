"""Fused optimizer update ops (TF's `training_ops`): ApplyGradientDescent, ApplyMomentum, ApplyAdam, ...

Sits in `train/`, beside the optimizers that build these ops: one op per
(variable, step), like TF. The variable and its slot variables are not inputs:
like `Assign` (ops/state_ops.py) the op carries the variable op in attr `var`
and each slot's variable op in its own attr (`accum`, `m`, `v`, `ms`, `mom`,
`mg`), and is created under `colocate_with(var)` so the placer keeps the update
next to the state. Inputs are the hyper-parameters (scalars, already cast to
the variable's dtype; ApplyAdagradDA's `global_step` stays int64) and then the
gradient, always last (TF's ApplyAdagradDA takes grad before its scalars; the
Python wrapper keeps TF's argument order). The output is the variable's new value.
Kernels: `kernels/train_kernels.py` (read var + slots from the session's
ResourceStore; update them in place when no reader holds them, else store NEW arrays).
Each op declares the variables it writes (`updates_variables`) in the op registry.
"""
from __future__ import annotations

from .. import dtypes as _dtypes
from ..graph import Operation, Tensor
from ..default_graph import convert_to_tensor
from ..ops import math_ops
from ..ops.common import NotDifferentiable, make_tensor, register_op

__all__: list = []

#: op type -> (slot attrs in order, scalar inputs before the gradient)
APPLY_OPS = {
    "ApplyGradientDescent": ((), ("alpha",)),
    "ApplyMomentum": (("accum",), ("lr", "momentum")),
    "ApplyAdam": (("m", "v"), ("beta1_power", "beta2_power", "lr", "beta1", "beta2", "epsilon")),
    "ApplyAdagrad": (("accum",), ("lr",)),
    "ApplyRMSProp": (("ms", "mom"), ("lr", "rho", "momentum", "epsilon")),
    "ApplyCenteredRMSProp": (("mg", "ms", "mom"), ("lr", "rho", "momentum", "epsilon")),
    "ApplyAdadelta": (("accum", "accum_update"), ("lr", "rho", "epsilon")),
    "ApplyProximalGradientDescent": ((), ("alpha", "l1", "l2")),
    "ApplyProximalAdagrad": (("accum",), ("lr", "l1", "l2")),
    "ApplyAdagradDA": (("gradient_accumulator", "gradient_squared_accumulator"), ("lr", "l1", "l2", "global_step")),
}

#: scalar inputs that keep their own dtype instead of the variable's (TF: ApplyAdagradDA's int64 global_step)
INT64_SCALARS = frozenset({"global_step"})


def _shape_text(shape) -> str:
    if shape.ndims is None:
        return "?"
    return "[" + ",".join("?" if d is None else str(d) for d in shape.as_tuple()) + "]"


def _apply_shape(op: Operation):
    var: Operation = op.get_attr("var")
    vt = var.outputs[0]
    slots, scalars = APPLY_OPS[op.type]
    for attr in slots:
        st = op.get_attr(attr).outputs[0]
        if not st.shape.is_compatible_with(vt.shape):
            raise ValueError(f"Shapes of var and {attr} must be equal: {_shape_text(vt.shape)} vs "
                             f"{_shape_text(st.shape)}")
    *scalar_ts, grad = op.inputs
    for name, t in zip(scalars, scalar_ts):
        if t.shape.ndims not in (None, 0):
            raise ValueError(f"{name} is not a scalar: {_shape_text(t.shape)}")
        want = _dtypes.int64 if name in INT64_SCALARS else vt.dtype
        if t.dtype is not want:
            raise ValueError(f"{name} has dtype {t.dtype.name}, expected {want.name}")
    if not grad.shape.is_compatible_with(vt.shape):
        raise ValueError(f"var and grad do not have the same shape: {_shape_text(vt.shape)} "
                         f"{_shape_text(grad.shape)}")
    return [(vt.dtype, vt.shape)]


for _op_type, (_slots, _) in APPLY_OPS.items():
    register_op(_op_type, _apply_shape, stateful=True, updates_variables=("var",) + _slots)
    NotDifferentiable(_op_type)


def cast_like(value, var) -> Tensor:
    """`value` as a tensor of `var`'s dtype (a Cast op only when the dtypes differ, like TF's math_ops.cast)."""
    t = convert_to_tensor(value)
    if t.dtype is not var.dtype:
        t = math_ops.cast(t, var.dtype)
    return t


def _int64(value) -> Tensor:
    t = convert_to_tensor(value)
    if t.dtype is not _dtypes.int64:
        if not t.dtype.is_integer:
            raise TypeError(f"global_step must be an integer tensor, got {t.dtype.name}")
        t = math_ops.cast(t, _dtypes.int64)
    return t


def _var_op(ref) -> Operation:
    op = getattr(ref, "op", None)
    if isinstance(op, Operation) and op.type == "VariableV2":
        return op
    raise TypeError(f"Expected a variable, got {ref!r}")


def apply_op(op_type: str, var, slots: dict, scalars: list, grad, use_locking=False, name=None,
             extra_attrs=None) -> Tensor:
    """Creates a fused `op_type` update of `var`, colocated with it; returns the new value."""
    var_op = _var_op(var)
    slot_names, scalar_names = APPLY_OPS[op_type]
    if set(slots) != set(slot_names) or len(scalars) != len(scalar_names):
        raise ValueError(f"{op_type} needs slots {slot_names} and scalars {scalar_names}")
    attrs = {"var": var_op, "use_locking": bool(use_locking), **(extra_attrs or {})}
    for k in slot_names:
        attrs[k] = _var_op(slots[k])
    inputs = [_int64(s) if n in INT64_SCALARS else cast_like(s, var) for n, s in zip(scalar_names, scalars)]
    inputs.append(convert_to_tensor(grad, dtype=var.dtype))
    with var_op.graph.colocate_with(var_op):
        return make_tensor(op_type, inputs, attrs, name=name, default_name=op_type)


def apply_gradient_descent(var, alpha, delta, use_locking=False, name=None) -> Tensor:
    """var -= alpha * delta."""
    return apply_op("ApplyGradientDescent", var, {}, [alpha], delta, use_locking, name)


def apply_momentum(var, accum, lr, grad, momentum, use_locking=False, use_nesterov=False, name=None) -> Tensor:
    """accum = accum * momentum + grad; var -= lr * accum (nesterov: var -= lr * grad + lr * momentum * accum)."""
    return apply_op("ApplyMomentum", var, {"accum": accum}, [lr, momentum], grad, use_locking, name,
                    {"use_nesterov": bool(use_nesterov)})


def apply_adam(var, m, v, beta1_power, beta2_power, lr, beta1, beta2, epsilon, grad, use_locking=False,
               use_nesterov=False, name=None) -> Tensor:
    """lr_t = lr * sqrt(1 - beta2_power) / (1 - beta1_power); m, v moments; var -= lr_t * m / (sqrt(v) + eps)."""
    return apply_op("ApplyAdam", var, {"m": m, "v": v}, [beta1_power, beta2_power, lr, beta1, beta2, epsilon], grad,
                    use_locking, name, {"use_nesterov": bool(use_nesterov)})


def apply_adagrad(var, accum, lr, grad, use_locking=False, update_slots=True, name=None) -> Tensor:
    """accum += grad^2; var -= lr * grad / sqrt(accum)."""
    return apply_op("ApplyAdagrad", var, {"accum": accum}, [lr], grad, use_locking, name,
                    {"update_slots": bool(update_slots)})


def apply_rms_prop(var, ms, mom, lr, rho, momentum, epsilon, grad, use_locking=False, name=None) -> Tensor:
    return apply_op("ApplyRMSProp", var, {"ms": ms, "mom": mom}, [lr, rho, momentum, epsilon], grad,
                    use_locking, name)


def apply_centered_rms_prop(var, mg, ms, mom, lr, rho, momentum, epsilon, grad, use_locking=False,
                            name=None) -> Tensor:
    return apply_op("ApplyCenteredRMSProp", var, {"mg": mg, "ms": ms, "mom": mom}, [lr, rho, momentum, epsilon],
                    grad, use_locking, name)


def apply_adadelta(var, accum, accum_update, lr, rho, epsilon, grad, use_locking=False, name=None) -> Tensor:
    """accum = rho * accum + (1 - rho) * g^2; update = sqrt(accum_update + eps) / sqrt(accum + eps) * g;
    var -= lr * update; accum_update = rho * accum_update + (1 - rho) * update^2."""
    return apply_op("ApplyAdadelta", var, {"accum": accum, "accum_update": accum_update}, [lr, rho, epsilon], grad,
                    use_locking, name)


def apply_proximal_gradient_descent(var, alpha, l1, l2, delta, use_locking=False, name=None) -> Tensor:
    """prox = var - alpha * delta; var = sign(prox) * max(|prox| - alpha * l1, 0) / (1 + alpha * l2)."""
    return apply_op("ApplyProximalGradientDescent", var, {}, [alpha, l1, l2], delta, use_locking, name)


def apply_proximal_adagrad(var, accum, lr, l1, l2, grad, use_locking=False, name=None) -> Tensor:
    """accum += g^2; lr_t = lr / sqrt(accum); prox = var - lr_t * g;
    var = sign(prox) * max(|prox| - lr_t * l1, 0) / (1 + lr_t * l2)."""
    return apply_op("ApplyProximalAdagrad", var, {"accum": accum}, [lr, l1, l2], grad, use_locking, name)


def apply_adagrad_da(var, gradient_accumulator, gradient_squared_accumulator, grad, lr, l1, l2, global_step,
                     use_locking=False, name=None) -> Tensor:
    """(TF's argument order.) g_acc += g; gg_acc += g^2;
    var = -lr * sign(g_acc) * max(|g_acc| - l1 * T, 0) / (l2 * T * lr + sqrt(gg_acc)), T = global_step."""
    return apply_op("ApplyAdagradDA", var, {"gradient_accumulator": gradient_accumulator,
                                            "gradient_squared_accumulator": gradient_squared_accumulator},
                    [lr, l1, l2, global_step], grad, use_locking, name)
