"""`tf.contrib.layers.optimize_loss`: a training op from a loss, an optimizer given by name, class, instance or
function, and TF 1.15's options (contrib/layers/python/layers/optimizers.py).

In variable scope `name` or `OptimizeLoss`: the loss first depends on `update_ops` (default: the
UPDATE_OPS collection, e.g. batch_norm's moving averages); a float learning rate becomes the non-trainable
variable `OptimizeLoss/learning_rate` (a scalar Tensor is used as is), passed through
`learning_rate_decay_fn(lr, global_step)` when given. Gradients of `variables` (default: the trainable
ones) get optional truncated-normal noise (`gradient_noise_scale`), `gradient_multipliers`
({variable or name: factor}), and clipping: a float clips by global norm, a callable maps the
(gradient, variable) list. `apply_gradients(..., name='train')` increments `global_step` (default: the
graph's, if any) unless increment_global_step is False. The result is the loss tensor with the update as a
control dependency: running it trains one step and returns the loss.

Summaries (OPTIMIZER_SUMMARIES; default loss, learning_rate, global_gradient_norm), tags under the scope:
`loss`, `learning_rate` (only with a decay function, as TF), `global_norm/gradient_norm` and, with
clipping, `global_norm/clipped_gradient_norm`, plus per variable `gradients/<var>` histograms and
`gradient_norm/<var>` scalars (":" in variable names becomes "_").
"""
from __future__ import annotations

from ...graph import GraphKeys, Tensor
from ...default_graph import control_dependencies, convert_to_tensor, get_collection
from ...indexed_slices import IndexedSlices
from ...ops import clip_ops, init_ops, math_ops, random_ops
from ...ops import variable_scope as _vs
from ...ops.array_ops import constant, identity
from ...ops.state_ops import trainable_variables
from ...summary import summary_api as summary
from ...tf1_aliases import assert_scalar
from ...train.adagrad import AdagradOptimizer
from ...train.adam import AdamOptimizer
from ...train.ftrl import FtrlOptimizer
from ...train.gradient_descent import GradientDescentOptimizer
from ...train.momentum import MomentumOptimizer
from ...train.optimizer import Optimizer
from ...train.rmsprop import RMSPropOptimizer
from ...train.training_util import assert_global_step, get_global_step

__all__ = ["optimize_loss", "OPTIMIZER_CLS_NAMES", "OPTIMIZER_SUMMARIES"]

OPTIMIZER_CLS_NAMES = {
    "Adagrad": AdagradOptimizer,
    "Adam": AdamOptimizer,
    "Ftrl": FtrlOptimizer,
    "Momentum": lambda learning_rate: MomentumOptimizer(learning_rate, momentum=0.9),
    "RMSProp": RMSPropOptimizer,
    "SGD": GradientDescentOptimizer,
}

OPTIMIZER_SUMMARIES = ["learning_rate", "loss", "gradients", "gradient_norm", "global_gradient_norm"]


def _with_dependencies(dependencies, output):
    with control_dependencies(dependencies):
        return identity(output)


def _learning_rate(learning_rate):
    if learning_rate is None:
        return None
    if isinstance(learning_rate, Tensor) and learning_rate.get_shape().ndims == 0:
        return learning_rate
    if isinstance(learning_rate, float):
        if learning_rate < 0.0:
            raise ValueError(f"Invalid learning_rate {learning_rate}.")
        return _vs.get_variable("learning_rate", [], trainable=False,
                                initializer=init_ops.constant_initializer(learning_rate))
    raise ValueError(f"Learning rate should be 0d Tensor or float. Got {learning_rate} of type {type(learning_rate)}")


def _make_optimizer(optimizer, lr, learning_rate):
    if isinstance(optimizer, str):
        if lr is None:
            raise ValueError(f"Learning rate is None, but should be specified if optimizer is string ({optimizer}).")
        if optimizer not in OPTIMIZER_CLS_NAMES:
            raise ValueError(f"Optimizer name should be one of [{', '.join(OPTIMIZER_CLS_NAMES)}], you provided "
                             f"{optimizer}.")
        return OPTIMIZER_CLS_NAMES[optimizer](learning_rate=lr)
    if isinstance(optimizer, type) and issubclass(optimizer, Optimizer):
        if lr is None:
            raise ValueError(f"Learning rate is None, but should be specified if optimizer is class ({optimizer}).")
        return optimizer(learning_rate=lr)
    if isinstance(optimizer, Optimizer):
        return optimizer
    if callable(optimizer):
        opt = optimizer(lr) if learning_rate is not None else optimizer()
        if not isinstance(opt, Optimizer):
            raise ValueError(f"Unrecognized optimizer: function should return subclass of Optimizer. Got {opt}.")
        return opt
    raise ValueError(f"Unrecognized optimizer: should be string, subclass of Optimizer, instance of subclass of "
                     f"Optimizer or function with one argument. Got {optimizer}.")


def optimize_loss(loss, global_step, learning_rate, optimizer, gradient_noise_scale=None,
                  gradient_multipliers=None, clip_gradients=None, learning_rate_decay_fn=None, update_ops=None,
                  variables=None, name=None, summaries=None, colocate_gradients_with_ops=False,
                  increment_global_step=True):
    """The loss tensor, with one optimizer step (and `update_ops`) as its control dependencies."""
    loss = convert_to_tensor(loss)
    assert_scalar(loss)
    if global_step is None:
        global_step = get_global_step()
    else:
        assert_global_step(global_step)
    with _vs.variable_scope(name, "OptimizeLoss", [loss, global_step]):
        if update_ops is None:
            update_ops = list(dict.fromkeys(get_collection(GraphKeys.UPDATE_OPS)))
        if update_ops:
            loss = _with_dependencies(list(update_ops), loss)
        lr = _learning_rate(learning_rate)
        if summaries is None:
            summaries = ["loss", "learning_rate", "global_gradient_norm"]
        for summ in summaries:
            if summ not in OPTIMIZER_SUMMARIES:
                raise ValueError(f"Summaries should be one of [{', '.join(OPTIMIZER_SUMMARIES)}], you provided "
                                 f"{summ}.")
        if learning_rate is not None and learning_rate_decay_fn is not None:
            if global_step is None:
                raise ValueError("global_step is required for learning_rate_decay_fn.")
            lr = learning_rate_decay_fn(lr, global_step)
            if "learning_rate" in summaries:
                summary.scalar("learning_rate", lr)
        opt = _make_optimizer(optimizer, lr, learning_rate)
        if variables is None:
            variables = trainable_variables()
        gradients = opt.compute_gradients(loss, variables, colocate_gradients_with_ops=colocate_gradients_with_ops)
        if gradient_noise_scale is not None:
            gradients = _add_scaled_noise_to_gradients(gradients, gradient_noise_scale)
        if gradient_multipliers is not None:
            gradients = _multiply_gradients(gradients, gradient_multipliers)
            if not gradients:
                raise ValueError("Empty list of (gradient, var) pairs encountered. This is most likely to be caused "
                                 "by an improper value of gradient_multipliers.")
        norm_summaries = "global_gradient_norm" in summaries or "gradient_norm" in summaries
        if norm_summaries:
            summary.scalar("global_norm/gradient_norm", clip_ops.global_norm([g for g, _ in gradients]))
        gradients = _clip(gradients, clip_gradients)
        if "loss" in summaries:
            summary.scalar("loss", loss)
        _per_variable_summaries(gradients, summaries)
        if clip_gradients is not None and norm_summaries:
            summary.scalar("global_norm/clipped_gradient_norm", clip_ops.global_norm([g for g, _ in gradients]))
        grad_updates = opt.apply_gradients(gradients, global_step=global_step if increment_global_step else None,
                                           name="train")
        return _with_dependencies([grad_updates], loss)


def _clip(gradients, clip_gradients):
    if isinstance(clip_gradients, float):
        grads, variables = zip(*gradients)
        clipped, _ = clip_ops.clip_by_global_norm(list(grads), clip_gradients)
        return list(zip(clipped, variables))
    if callable(clip_gradients):
        return clip_gradients(gradients)
    if clip_gradients is not None:
        raise ValueError(f"Unknown type {type(clip_gradients)} for clip_gradients")
    return gradients


def _per_variable_summaries(gradients, summaries) -> None:
    for gradient, variable in gradients:
        values = gradient.values if isinstance(gradient, IndexedSlices) else gradient
        if values is None:
            continue
        var_name = variable.name.replace(":", "_")
        if "gradients" in summaries:
            summary.histogram(f"gradients/{var_name}", values)
        if "gradient_norm" in summaries:
            summary.scalar(f"gradient_norm/{var_name}", clip_ops.global_norm([values]))


def _add_scaled_noise_to_gradients(grads_and_vars, gradient_noise_scale):
    """Each gradient plus truncated-normal noise * scale (an IndexedSlices gradient becomes dense, as TF's)."""
    out = []
    for gradient, variable in grads_and_vars:
        if gradient is not None:
            shape = gradient.dense_shape if isinstance(gradient, IndexedSlices) else gradient.get_shape()
            noise = random_ops.truncated_normal(shape) * gradient_noise_scale
            gradient = math_ops.add(convert_to_tensor(gradient), noise)
        out.append((gradient, variable))
    return out


def _multiply_gradients(grads_and_vars, gradient_multipliers):
    """Gradients of the variables named in `gradient_multipliers` (by variable or name) times the factor."""
    out = []
    for grad, var in grads_and_vars:
        if grad is not None and (var in gradient_multipliers or var.name in gradient_multipliers):
            key = var if var in gradient_multipliers else var.name
            multiplier = constant(gradient_multipliers[key], dtype="float32")
            if isinstance(grad, IndexedSlices):
                grad = grad.with_values(grad.values * multiplier)
            else:
                grad = grad * multiplier
        out.append((grad, var))
    return out
