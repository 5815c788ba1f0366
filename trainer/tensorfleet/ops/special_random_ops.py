"""TF 1.15's Gamma and Poisson samplers: `tf.random_gamma` / `tf.random.gamma` (RandomGamma) and
`tf.random_poisson` / `tf.random.poisson` (RandomPoissonV2).

Sits in `ops/` beside random_ops (same seed rule, `random_seed.seed_attrs`: a fixed (graph seed, op seed) pair
reproduces in every session); kernels in `kernels/special_kernels.py`. Samples have shape `shape + param.shape`.
RandomGamma is differentiable w.r.t. alpha as in TF 1.15 (random_grad.py): implicit differentiation of the
Gamma CDF (RandomGammaGrad); the division by `beta` differentiates as ordinary ops.
"""
from __future__ import annotations

__all__ = ["random_gamma", "random_poisson"]

import numpy as np

from .. import dtypes as _dtypes
from ..default_graph import control_dependencies, name_scope
from . import array_ops as _a
from . import math_ops as _m
from .common import (NotDifferentiable, TensorShape, convert_to_tensor, is_tensor_like, make_tensor,
                     register_gradient, register_op)
from .random_seed import seed_attrs
from .shape_util import partial_shape_value, shape_arg


def _sample_shape(op):
    """`shape + param.shape`. Inputs: (runtime shape,) param -- TF's order, so a GraphDef written by TF (inputs
    shape, param; no `shape` attr; RandomGamma's dtype in attr T) imports too."""
    static = op.attrs.get("shape")
    if static is not None:
        shape = TensorShape(static)
    elif len(op.inputs) == 2:
        shape = partial_shape_value(op.inputs[0])
    else:
        raise ValueError(f"{op.type} '{op.name}' has neither a shape attribute nor a shape input")
    dtype = op.attrs.get("dtype", op.attrs.get("T"))
    return [(dtype, shape.concatenate(op.inputs[-1].shape))]


register_op("RandomGamma", _sample_shape, stateful=True)
register_op("RandomPoissonV2", _sample_shape, stateful=True)
NotDifferentiable("RandomPoissonV2")
register_op("RandomGammaGrad", lambda op: [(op.inputs[0].dtype, op.inputs[1].shape)])
NotDifferentiable("RandomGammaGrad")


def _sampler(op_type, param, shape, dtype, seed):
    static, dynamic = shape_arg(shape)
    attrs = {"shape": static, "dtype": dtype, **seed_attrs(seed)}
    return make_tensor(op_type, ([] if dynamic is None else [dynamic]) + [param], attrs, name=op_type)


def random_gamma(shape, alpha, beta=None, dtype=_dtypes.float32, seed=None, name=None):
    """`tf.random_gamma(shape, alpha, beta)`: Gamma(alpha, rate beta) samples of shape
    `shape + broadcast(alpha, beta).shape` (mean alpha / beta), at least the dtype's smallest normal number (TF)."""
    dtype = _dtypes.as_dtype(dtype)
    if not dtype.is_floating:
        raise ValueError(f"Invalid dtype {dtype.name} for random_gamma: expected a floating point type")
    with name_scope(name, "random_gamma", [alpha, beta]) as scope:
        alpha = convert_to_tensor(alpha, dtype=None if is_tensor_like(alpha) else dtype)
        beta = convert_to_tensor(1 if beta is None else beta, dtype=None if is_tensor_like(beta) else dtype)
        for t, what in ((alpha, "alpha"), (beta, "beta")):
            if t.dtype is not dtype:
                raise TypeError(f"random_gamma: {what} has dtype {t.dtype.name}, expected {dtype.name}")
        alpha_broadcast = _m.add(alpha, _a.zeros_like(beta))
        sample = _sampler("RandomGamma", alpha_broadcast, shape, dtype, seed)
        tiny = convert_to_tensor(float(np.finfo(dtype.np_dtype).tiny), dtype=dtype)
        return _m.maximum(tiny, _m.realdiv(sample, beta), name=scope)


def random_poisson(lam, shape, dtype=_dtypes.float32, seed=None, name=None):
    """`tf.random_poisson(lam, shape)` (TF 1.15's argument order): Poisson(lam) samples of shape
    `shape + lam.shape` in `dtype` (float16/32/64, int32, int64); a negative rate is an InvalidArgumentError."""
    dtype = _dtypes.as_dtype(dtype)
    if dtype not in (_dtypes.float16, _dtypes.float32, _dtypes.float64, _dtypes.int32, _dtypes.int64):
        raise TypeError(f"random_poisson: dtype {dtype.name} not in float16, float32, float64, int32, int64")
    with name_scope(name, "random_poisson", [lam]):
        lam = convert_to_tensor(lam, dtype=None if is_tensor_like(lam) else _dtypes.float32)
        if lam.dtype not in (_dtypes.float16, _dtypes.float32, _dtypes.float64, _dtypes.int32, _dtypes.int64):
            raise TypeError(f"random_poisson: lam has dtype {lam.dtype.name}, not a float or int32/int64")
        return _sampler("RandomPoissonV2", lam, shape, dtype, seed)


def _random_gamma_grad(alpha, sample):
    return make_tensor("RandomGammaGrad", [alpha, sample], name="RandomGammaGrad")


@register_gradient("RandomGamma")
def _random_gamma_grad_fn(op, grad):
    """d sample / d alpha by implicit differentiation (TF 1.15's random_grad.py), summed over the sample axes;
    alpha broadcasts against the trailing axes of the sample."""
    alpha, sample = op.inputs[-1], op.outputs[0]
    with control_dependencies([grad]):
        partial_alpha = _random_gamma_grad(alpha, sample)
        return [None] * (len(op.inputs) - 1) + [_m.sum_to_shape_of(_m.multiply(grad, partial_alpha), alpha)]
