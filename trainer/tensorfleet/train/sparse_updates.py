"""The optimizers' updates for an IndexedSlices gradient: only the gradient's rows change, as TF's
SparseApply* kernels do (TF 1.15 training_ops.cc), so a worker sends the ps only those rows.

Train layer, beside `training_ops` (the dense fused updates). `Optimizer.apply_gradients` merges duplicate
indices first (`indexed_slices_ops.deduplicate`) and calls an optimizer's `_apply_sparse`, which builds one
of these from gathers and scatters on the variable and its slots, colocated with the variable:
- gradient descent: var[i] -= lr * g (repeated indices add up: no merging needed);
- momentum: accum[i] = accum[i] * momentum + g; var[i] -= lr * accum[i] (Nesterov:
  var[i] -= lr * g + lr * momentum * accum[i]);
- adagrad: accum[i] += g^2; var[i] -= lr * g / sqrt(accum[i]);
- RMSProp (centered or not): ms[i] = rho * ms[i] + (1 - rho) g^2 [mg[i] = rho * mg[i] + (1 - rho) g];
  mom[i] = momentum * mom[i] + lr * g / sqrt(ms[i] [- mg[i]^2] + eps); var[i] -= mom[i];
- Adadelta: accum[i] = rho accum[i] + (1 - rho) g^2; u = sqrt(accum_update[i] + eps) / sqrt(accum[i] + eps) g;
  var[i] -= lr u; accum_update[i] = rho accum_update[i] + (1 - rho) u^2;
- proximal gradient descent / proximal Adagrad (lr_i = lr, or lr / sqrt(accum[i]) after accum[i] += g^2):
  p = var[i] - lr_i g; var[i] = sign(p) max(|p| - lr_i l1, 0) / (1 + lr_i l2);
- Adam is TF's non-lazy sparse Adam: m and v decay everywhere, the gradient's rows are added, and every
  row of var moves (`adam_non_lazy`).
Rows that the gradient does not name are left alone, which matters for momentum and RMSProp: a dense
update with zero rows would still move them.
"""
from __future__ import annotations

from ..indexed_slices import IndexedSlices
from ..ops import array_ops, control_flow_ops, math_ops, scatter_ops, state_ops
from ..ops.slicing_ops import gather
from .training_ops import cast_like

__all__ = ["gradient_descent", "momentum", "adagrad", "rms_prop", "adam_non_lazy", "adadelta", "proximal"]


def gradient_descent(var, lr, grad: IndexedSlices, use_locking=False):
    return scatter_ops.scatter_sub(var, grad.indices, grad.values * cast_like(lr, var), use_locking=use_locking).op


def momentum(var, accum, lr, grad: IndexedSlices, mu, use_nesterov=False, use_locking=False):
    lr, mu, idx = cast_like(lr, var), cast_like(mu, var), grad.indices
    new_accum = gather(accum.value(), idx) * mu + grad.values
    step = lr * grad.values + lr * mu * new_accum if use_nesterov else lr * new_accum
    return control_flow_ops.group(scatter_ops.scatter_update(accum, idx, new_accum, use_locking=use_locking),
                                  scatter_ops.scatter_sub(var, idx, step, use_locking=use_locking))


def adagrad(var, accum, lr, grad: IndexedSlices, use_locking=False):
    lr, idx = cast_like(lr, var), grad.indices
    new_accum = gather(accum.value(), idx) + math_ops.square(grad.values)
    step = lr * grad.values * math_ops.rsqrt(new_accum)
    return control_flow_ops.group(scatter_ops.scatter_update(accum, idx, new_accum, use_locking=use_locking),
                                  scatter_ops.scatter_sub(var, idx, step, use_locking=use_locking))


def rms_prop(var, ms, mom, mg, lr, rho, mu, epsilon, grad: IndexedSlices, use_locking=False):
    """`mg` is None unless centered."""
    lr, rho, mu, eps = (cast_like(x, var) for x in (lr, rho, mu, epsilon))
    idx, g = grad.indices, grad.values
    one = array_ops.constant(1, dtype=var.dtype)
    new_ms = gather(ms.value(), idx) * rho + math_ops.square(g) * (one - rho)
    updates = [scatter_ops.scatter_update(ms, idx, new_ms, use_locking=use_locking)]
    denominator = new_ms
    if mg is not None:
        new_mg = gather(mg.value(), idx) * rho + g * (one - rho)
        updates.append(scatter_ops.scatter_update(mg, idx, new_mg, use_locking=use_locking))
        denominator = new_ms - math_ops.square(new_mg)
    new_mom = gather(mom.value(), idx) * mu + lr * g * math_ops.rsqrt(denominator + eps)
    updates += [scatter_ops.scatter_update(mom, idx, new_mom, use_locking=use_locking),
                scatter_ops.scatter_sub(var, idx, new_mom, use_locking=use_locking)]
    return control_flow_ops.group(*updates)


def adam_non_lazy(var, m, v, beta1_power, beta2_power, lr, beta1, beta2, epsilon, grad: IndexedSlices,
                  use_locking=False):
    """TF's AdamOptimizer._apply_sparse_shared."""
    b1p, b2p, lr, b1, b2, eps = (cast_like(x, var) for x in (beta1_power, beta2_power, lr, beta1, beta2, epsilon))
    one = array_ops.constant(1, dtype=var.dtype)
    lr = lr * math_ops.sqrt(one - b2p) / (one - b1p)
    g = var.op.graph
    m_decayed = state_ops.assign(m, m.value() * b1, use_locking=use_locking)
    with g.control_dependencies([m_decayed]):
        m_t = scatter_ops.scatter_add(m, grad.indices, grad.values * (one - b1), use_locking=use_locking)
    v_decayed = state_ops.assign(v, v.value() * b2, use_locking=use_locking)
    with g.control_dependencies([v_decayed]):
        v_t = scatter_ops.scatter_add(v, grad.indices, math_ops.square(grad.values) * (one - b2),
                                      use_locking=use_locking)
    var_update = state_ops.assign_sub(var, lr * m_t / (math_ops.sqrt(v_t) + eps), use_locking=use_locking)
    return control_flow_ops.group(var_update, m_t, v_t)


def adadelta(var, accum, accum_update, lr, rho, epsilon, grad: IndexedSlices, use_locking=False):
    lr, rho, eps = (cast_like(x, var) for x in (lr, rho, epsilon))
    idx, g = grad.indices, grad.values
    one = array_ops.constant(1, dtype=var.dtype)
    new_accum = gather(accum.value(), idx) * rho + math_ops.square(g) * (one - rho)
    old_update = gather(accum_update.value(), idx)
    update = math_ops.sqrt(old_update + eps) * math_ops.rsqrt(new_accum + eps) * g
    new_update = old_update * rho + math_ops.square(update) * (one - rho)
    return control_flow_ops.group(scatter_ops.scatter_update(accum, idx, new_accum, use_locking=use_locking),
                                  scatter_ops.scatter_update(accum_update, idx, new_update, use_locking=use_locking),
                                  scatter_ops.scatter_sub(var, idx, lr * update, use_locking=use_locking))


def proximal(var, accum, lr, l1, l2, grad: IndexedSlices, use_locking=False):
    """TF's SparseApplyProximalGradientDescent (`accum` None) and SparseApplyProximalAdagrad."""
    lr, l1, l2 = (cast_like(x, var) for x in (lr, l1, l2))
    idx, g = grad.indices, grad.values
    updates = []
    if accum is not None:
        new_accum = gather(accum.value(), idx) + math_ops.square(g)
        updates.append(scatter_ops.scatter_update(accum, idx, new_accum, use_locking=use_locking))
        lr = lr * math_ops.rsqrt(new_accum)
    one = array_ops.constant(1, dtype=var.dtype)
    prox = gather(var.value(), idx) - lr * g
    shrunk = math_ops.maximum(math_ops.abs(prox) - lr * l1, array_ops.zeros_like(prox))
    new_rows = math_ops.sign(prox) * shrunk / (one + lr * l2)
    updates.append(scatter_ops.scatter_update(var, idx, new_rows, use_locking=use_locking))
    return control_flow_ops.group(*updates)
