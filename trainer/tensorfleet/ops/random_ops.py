"""Random ops: random_normal, truncated_normal, random_uniform, random_shuffle, multinomial, random_crop.

Sits in `ops/`; kernels in `kernels/random_kernels.py`. Seeds follow TF1's rule (`random_seed.seed_attrs`):
a fixed (graph seed, op seed) pair gives the same sequence in every session and process, and each
run of an op draws fresh values from its per-session stream. Ops are stateful (never folded).
"""
from __future__ import annotations

__all__ = ["random_normal", "truncated_normal", "random_uniform", "random_shuffle", "multinomial",
           "random_crop"]

from .. import dtypes as _dtypes
from ..default_graph import name_scope
from .common import (NotDifferentiable, TensorShape, convert_to_tensor, is_tensor_like, make_tensor,
                     register_gradient, register_op)
from .random_seed import seed_attrs
from .shape_util import partial_shape_value, shape_arg
from . import math_ops as _m


def _random_shape(op):
    static = op.get_attr("shape")
    shape = TensorShape(static) if static is not None else partial_shape_value(op.inputs[-1])
    return [(op.get_attr("dtype"), shape)]


for _t in ("RandomStandardNormal", "TruncatedNormal", "RandomUniform", "RandomUniformInt"):
    register_op(_t, _random_shape, stateful=True)
    NotDifferentiable(_t)


def _float_dtype(dtype, fn):
    dtype = _dtypes.as_dtype(dtype)
    if not dtype.is_floating:
        raise ValueError(f"Invalid dtype {dtype.name} for {fn}: expected a floating point type")
    return dtype


def _random_tensor(op_type, shape, dtype, seed, extra=None):
    static, dynamic = shape_arg(shape)
    attrs = {"shape": static, "dtype": dtype, **seed_attrs(seed), **(extra or {})}
    return make_tensor(op_type, [] if dynamic is None else [dynamic], attrs, name=op_type)


def _scale_shift(rnd, scale, shift, dtype, scope):
    scale = convert_to_tensor(scale, dtype=None if is_tensor_like(scale) else dtype)
    shift = convert_to_tensor(shift, dtype=None if is_tensor_like(shift) else dtype)
    return _m.add(_m.multiply(rnd, scale), shift, name=scope)


def random_normal(shape, mean=0.0, stddev=1.0, dtype=_dtypes.float32, seed=None, name=None):
    """`tf.random_normal`: normal values; output op named `random_normal` (RandomStandardNormal * std + mean)."""
    dtype = _float_dtype(dtype, "random_normal")
    with name_scope(name, "random_normal", []) as scope:
        rnd = _random_tensor("RandomStandardNormal", shape, dtype, seed)
        return _scale_shift(rnd, stddev, mean, dtype, scope)


def truncated_normal(shape, mean=0.0, stddev=1.0, dtype=_dtypes.float32, seed=None, name=None):
    """`tf.truncated_normal`: normal values, redrawn where more than 2 stddevs from the mean (as TF)."""
    dtype = _float_dtype(dtype, "truncated_normal")
    with name_scope(name, "truncated_normal", []) as scope:
        rnd = _random_tensor("TruncatedNormal", shape, dtype, seed)
        return _scale_shift(rnd, stddev, mean, dtype, scope)


def random_uniform(shape, minval=0, maxval=None, dtype=_dtypes.float32, seed=None, name=None):
    """`tf.random_uniform`: floats in [minval, maxval) (maxval default 1); ints need maxval."""
    dtype = _dtypes.as_dtype(dtype)
    if dtype.is_bool or not (dtype.is_floating or dtype in (_dtypes.int32, _dtypes.int64)):
        raise ValueError(f"Invalid dtype {dtype.name} for random_uniform")
    with name_scope(name, "random_uniform", []) as scope:
        if dtype.is_integer:
            if maxval is None:
                raise ValueError(f"Must specify maxval for integer dtype {dtype.name}")
            if is_tensor_like(minval) or is_tensor_like(maxval):
                raise TypeError("random_uniform with an integer dtype needs static minval/maxval")
            if int(maxval) <= int(minval):
                raise ValueError(f"Need minval < maxval, got {minval} >= {maxval}")
            static, dynamic = shape_arg(shape)
            attrs = {"shape": static, "dtype": dtype, "minval": int(minval), "maxval": int(maxval),
                     **seed_attrs(seed)}
            return make_tensor("RandomUniformInt", [] if dynamic is None else [dynamic], attrs, name=scope)
        maxval = 1 if maxval is None else maxval
        rnd = _random_tensor("RandomUniform", shape, dtype, seed)
        lo = convert_to_tensor(minval, dtype=None if is_tensor_like(minval) else dtype)
        hi = convert_to_tensor(maxval, dtype=None if is_tensor_like(maxval) else dtype)
        return _m.add(_m.multiply(rnd, _m.subtract(hi, lo)), lo, name=scope)


register_op("RandomShuffle", lambda op: [(op.inputs[0].dtype, op.inputs[0].shape)], stateful=True)
NotDifferentiable("RandomShuffle")


def random_shuffle(value, seed=None, name=None):
    """`tf.random_shuffle`: permutes `value` along its first dimension."""
    return make_tensor("RandomShuffle", [convert_to_tensor(value)], seed_attrs(seed), name=name,
                       default_name="RandomShuffle")


def _multinomial_shape(op):
    logits = op.inputs[0]
    if logits.shape.ndims not in (None, 2):
        raise ValueError(f"Shape must be rank 2 but is rank {logits.shape.ndims} for 'logits' of 'Multinomial'")
    batch = None if logits.shape.ndims is None else logits.shape[0]
    return [(op.get_attr("output_dtype"), TensorShape([batch, op.get_attr("num_samples")]))]


register_op("Multinomial", _multinomial_shape, stateful=True)
NotDifferentiable("Multinomial")


def multinomial(logits, num_samples, seed=None, name=None, output_dtype=_dtypes.int64):
    """`tf.multinomial(logits, num_samples)`: class indices drawn from softmax(logits) per row."""
    logits = convert_to_tensor(logits)
    attrs = {"num_samples": int(num_samples), "output_dtype": _dtypes.as_dtype(output_dtype), **seed_attrs(seed)}
    with name_scope(name, "multinomial", [logits]) as scope:
        return make_tensor("Multinomial", [logits], attrs, name=scope)


def random_crop(value, size, seed=None, name=None):
    """`tf.random_crop`: a random `size` slice of `value` (static size and shape only)."""
    value = convert_to_tensor(value)
    size = tuple(int(s) for s in size)
    if not value.shape.is_fully_defined():
        raise ValueError("random_crop here needs a fully defined static shape")
    dims = value.shape.as_list()
    if len(size) != len(dims) or any(s > d for s, d in zip(size, dims)):
        raise ValueError(f"Need value.shape >= size, got {dims} and {list(size)}")
    with name_scope(name, "random_crop", [value]) as scope:
        offsets = [random_uniform([], 0, d - s + 1, dtype=_dtypes.int32, seed=seed) for d, s in zip(dims, size)]
        return make_tensor("DynamicSlice", [value, *offsets], {"size": size}, name=scope)


register_op("DynamicSlice", lambda op: [(op.inputs[0].dtype, TensorShape(op.get_attr("size")))])
# DynamicSliceGrad(grad, like, *offsets): zeros of like's shape with grad at the crop (the offsets are the
# forward's random draws of the same run, so forward and backward see the same crop)
register_op("DynamicSliceGrad", lambda op: [(op.inputs[0].dtype, op.inputs[1].shape)])


@register_gradient("DynamicSlice")
def _dynamic_slice_grad(op, grad):
    value, *offsets = op.inputs
    return [make_tensor("DynamicSliceGrad", [grad, value, *offsets], dict(op.attrs), name="DynamicSliceGrad")] + \
        [None] * len(offsets)


@register_gradient("DynamicSliceGrad")
def _dynamic_slice_grad_grad(op, grad):
    _, _, *offsets = op.inputs
    return [make_tensor("DynamicSlice", [grad, *offsets], dict(op.attrs), name="DynamicSlice"), None] + \
        [None] * len(offsets)
