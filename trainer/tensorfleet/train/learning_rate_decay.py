"""`tf.train` learning-rate schedules of TF 1.15 (exponential_decay, piecewise_constant, ...).

Top layer, beside the optimizers: each schedule builds a scalar graph tensor from the
global step with TF's formulas (learning_rate_schedule.py) out of plain math ops, so
an optimizer given the tensor reads the decayed rate at every step.
"""
from __future__ import annotations

import math

from ..default_graph import convert_to_tensor, name_scope
from ..ops import comparison_ops as _c
from ..ops import math_ops as _m

__all__ = ["exponential_decay", "piecewise_constant", "polynomial_decay", "natural_exp_decay",
           "inverse_time_decay", "cosine_decay"]


def _require_step(global_step, fn):
    if global_step is None:
        raise ValueError(f"global_step is required for {fn}.")


def _decay_p(learning_rate, global_step, decay_steps, staircase):
    lr = convert_to_tensor(learning_rate, name="learning_rate")
    dtype = lr.dtype
    p = _m.cast(global_step, dtype) / _m.cast(decay_steps, dtype)
    return lr, (_m.floor(p) if staircase else p)


def exponential_decay(learning_rate, global_step, decay_steps, decay_rate, staircase=False, name=None):
    """`learning_rate * decay_rate ** (global_step / decay_steps)` (integer division if `staircase`)."""
    _require_step(global_step, "exponential_decay")
    with name_scope(name, "ExponentialDecay", [learning_rate, global_step, decay_steps, decay_rate]) as scope:
        lr, p = _decay_p(learning_rate, global_step, decay_steps, staircase)
        return _m.multiply(lr, _m.pow(_m.cast(decay_rate, lr.dtype), p), name=scope)


def natural_exp_decay(learning_rate, global_step, decay_steps, decay_rate, staircase=False, name=None):
    """`learning_rate * exp(-decay_rate * global_step / decay_steps)`."""
    _require_step(global_step, "natural_exp_decay")
    with name_scope(name, "NaturalExpDecay", [learning_rate, global_step, decay_rate]) as scope:
        lr, p = _decay_p(learning_rate, global_step, decay_steps, staircase)
        return _m.multiply(lr, _m.exp(-_m.cast(decay_rate, lr.dtype) * p), name=scope)


def inverse_time_decay(learning_rate, global_step, decay_steps, decay_rate, staircase=False, name=None):
    """`learning_rate / (1 + decay_rate * global_step / decay_steps)`."""
    _require_step(global_step, "inverse_time_decay")
    with name_scope(name, "InverseTimeDecay", [learning_rate, global_step, decay_rate]) as scope:
        lr, p = _decay_p(learning_rate, global_step, decay_steps, staircase)
        return _m.divide(lr, 1.0 + _m.cast(decay_rate, lr.dtype) * p, name=scope)


def polynomial_decay(learning_rate, global_step, decay_steps, end_learning_rate=0.0001, power=1.0, cycle=False,
                     name=None):
    """`(lr - end) * (1 - step / decay_steps) ** power + end`, step clipped at decay_steps (or cycled)."""
    _require_step(global_step, "polynomial_decay")
    with name_scope(name, "PolynomialDecay", [learning_rate, global_step, decay_steps, end_learning_rate,
                                              power]) as scope:
        lr = convert_to_tensor(learning_rate, name="learning_rate")
        dtype = lr.dtype
        end = _m.cast(end_learning_rate, dtype)
        step = _m.cast(global_step, dtype)
        steps = _m.cast(decay_steps, dtype)
        if cycle:
            multiplier = _c.where_v2(_m.equal(step, 0.0), _m.cast(1.0, dtype), _m.ceil(step / steps))
            steps = steps * multiplier
        else:
            step = _m.minimum(step, steps)
        p = step / steps
        return _m.add(_m.multiply(lr - end, _m.pow(1.0 - p, _m.cast(power, dtype))), end, name=scope)


def cosine_decay(learning_rate, global_step, decay_steps, alpha=0.0, name=None):
    """`lr * ((1 - alpha) * 0.5 * (1 + cos(pi * min(step, decay_steps) / decay_steps)) + alpha)`."""
    _require_step(global_step, "cosine_decay")
    with name_scope(name, "CosineDecay", [learning_rate, global_step]) as scope:
        lr = convert_to_tensor(learning_rate, name="learning_rate")
        dtype = lr.dtype
        steps = _m.cast(decay_steps, dtype)
        fraction = _m.minimum(_m.cast(global_step, dtype), steps) / steps
        cosine = 0.5 * (1.0 + _m.cos(math.pi * fraction))
        return _m.multiply(lr, (1.0 - alpha) * cosine + alpha, name=scope)


def piecewise_constant(x, boundaries, values, name=None):
    """`values[0]` while x <= boundaries[0], `values[i]` while boundaries[i-1] < x <= boundaries[i], else the last."""
    if len(boundaries) != len(values) - 1:
        raise ValueError("The length of boundaries should be 1 less than the length of values")
    with name_scope(name, "PiecewiseConstant", [x] + list(boundaries) + list(values)):
        x = convert_to_tensor(x)
        values = [convert_to_tensor(v) for v in values]
        for v in values[1:]:
            if v.dtype is not values[0].dtype:
                raise ValueError(f"Values must have elements all with the same dtype "
                                 f"({values[0].dtype.name} vs {v.dtype.name}).")
        bounds = [_m.cast(b, x.dtype) for b in boundaries]
        result = values[-1]
        for b, v in zip(reversed(bounds), reversed(values[:-1])):
            result = _c.where_v2(_m.less_equal(x, b), v, result)
        return result

