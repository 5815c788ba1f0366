"""`tf.nn` functions that TF 1.15 itself composes from general ops: batch_normalization, fused_batch_norm (NHWC),
sufficient_statistics / normalize_moments, l2_normalize, local_response_normalization / lrn (the CIFAR-10
tutorial's; NHWC), space_to_depth / depth_to_space (NHWC), crelu and log_poisson_loss.

Sits in `ops/` above `math_ops`, `array_ops` and `nn_ops` (no kernels or gradients of its own: the gradients of
the ops they are made of apply). Re-exported by `tensorfleet/nn.py`; the convolutions TF composes the same way
are in `conv_composite.py`.
"""
from __future__ import annotations

__all__ = ["batch_normalization", "l2_normalize", "local_response_normalization", "lrn", "space_to_depth",
           "depth_to_space", "crelu", "sufficient_statistics", "normalize_moments", "log_poisson_loss",
           "fused_batch_norm"]

from ..default_graph import name_scope
from . import array_ops as _a
from . import comparison_ops as _c
from . import math_ops as _m
from . import nn_ops as _n
from .common import convert_to_tensor


def batch_normalization(x, mean, variance, offset, scale, variance_epsilon, name=None):
    """`tf.nn.batch_normalization`: `(x - mean) * scale / sqrt(variance + eps) + offset` (TF's formula)."""
    with name_scope(name, "batchnorm", [x, mean, variance, scale, offset]):
        x = convert_to_tensor(x, name="x")
        inv = _m.rsqrt(variance + variance_epsilon)
        if scale is not None:
            inv = inv * scale
        shift = offset - mean * inv if offset is not None else -mean * inv
        return x * _m.cast(inv, x.dtype) + _m.cast(shift, x.dtype)


def l2_normalize(x, axis=None, epsilon=1e-12, name=None, dim=None):
    """`tf.nn.l2_normalize`: `x / sqrt(max(sum(x**2, axis), epsilon))`."""
    if axis is not None and dim is not None:
        raise ValueError("Cannot specify both 'axis' and 'dim'")
    axis = dim if axis is None else axis
    with name_scope(name, "l2_normalize", [x]):
        x = convert_to_tensor(x, name="x")
        square_sum = _m.reduce_sum(_m.square(x), axis, keepdims=True)
        x_inv_norm = _m.rsqrt(_m.maximum(square_sum, epsilon))
        return _m.multiply(x, x_inv_norm, name=name)


def local_response_normalization(input, depth_radius=5, bias=1, alpha=1, beta=0.5, name=None):
    """`tf.nn.lrn`: x / (bias + alpha * sum of x^2 over channels d-r..d+r) ** beta, on the last axis (NHWC)."""
    with name_scope(name, "LRN", [input]):
        x = convert_to_tensor(input)
        if x.shape.ndims != 4 or x.shape[3] is None:
            raise ValueError(f"lrn: input must be 4-D with a known channel dimension, got {x.shape}")
        r, c = int(depth_radius), x.shape[3]
        sq = _a.pad(_m.square(x), [[0, 0], [0, 0], [0, 0], [r, r]])
        window = _m.add_n([sq[:, :, :, k:k + c] for k in range(2 * r + 1)])
        return _m.multiply(x, _m.pow(_m.add(_m.multiply(window, float(alpha)), float(bias)), -float(beta)))


lrn = local_response_normalization


def _nhwc_static(x, what):
    x = convert_to_tensor(x)
    if x.shape.ndims != 4 or any(d is None for d in x.shape.as_list()[1:]):
        raise ValueError(f"{what}: needs a 4-D NHWC input with known height, width and channels, got {x.shape}")
    return x, x.shape.as_list()


def space_to_depth(input, block_size, name=None, data_format="NHWC"):
    """`tf.nn.space_to_depth` (NHWC): [N, H, W, C] -> [N, H/b, W/b, b*b*C], TF's element order."""
    if data_format != "NHWC":
        raise ValueError("space_to_depth: only data_format='NHWC' is supported")
    with name_scope(name, "SpaceToDepth", [input]):
        x, (_, h, w, c) = _nhwc_static(input, "space_to_depth")
        b = int(block_size)
        if b < 2 or h % b or w % b:
            raise ValueError(f"space_to_depth: height {h} and width {w} must be divisible by block_size {b} (>= 2)")
        y = _a.reshape(x, [-1, h // b, b, w // b, b, c])
        return _a.reshape(_a.transpose(y, [0, 1, 3, 2, 4, 5]), [-1, h // b, w // b, b * b * c])


def depth_to_space(input, block_size, name=None, data_format="NHWC"):
    """`tf.nn.depth_to_space` (NHWC): the inverse of space_to_depth."""
    if data_format != "NHWC":
        raise ValueError("depth_to_space: only data_format='NHWC' is supported")
    with name_scope(name, "DepthToSpace", [input]):
        x, (_, h, w, c) = _nhwc_static(input, "depth_to_space")
        b = int(block_size)
        if b < 2 or c % (b * b):
            raise ValueError(f"depth_to_space: channels {c} must be divisible by block_size**2 ({b * b})")
        y = _a.reshape(x, [-1, h, w, b, b, c // (b * b)])
        return _a.reshape(_a.transpose(y, [0, 1, 3, 2, 4, 5]), [-1, h * b, w * b, c // (b * b)])


def crelu(features, name=None, axis=-1):
    """`tf.nn.crelu`: concat(relu(x), relu(-x)) along `axis`."""
    from .join_ops import concat
    with name_scope(name, "CRelu", [features]):
        x = convert_to_tensor(features)
        return concat([_n.relu(x), _n.relu(_m.negative(x))], axis)


def sufficient_statistics(x, axes, shift=None, keep_dims=None, name=None, keepdims=None):
    """`tf.nn.sufficient_statistics`: (count, sum of x - shift, sum of squares, shift)."""
    keep = bool(keepdims if keepdims is not None else keep_dims)
    with name_scope(name, "sufficient_statistics", [x, shift]):
        x = convert_to_tensor(x)
        axes = [int(a) for a in axes]
        dims = x.shape.as_list() if x.shape.ndims is not None else None
        if dims is not None and all(dims[a] is not None for a in axes):
            n = 1
            for a in axes:
                n *= dims[a]
            count = _a.constant(float(n), dtype=x.dtype)
        else:
            shp = _m.cast(_a.shape(x), x.dtype)
            count = _m.reduce_prod(_a.gather(shp, axes))
        centered = x if shift is None else _m.subtract(x, shift)
        m_ss = _m.reduce_sum(centered, axes, keepdims=keep)
        v_ss = _m.reduce_sum(_m.square(centered), axes, keepdims=keep)
        return count, m_ss, v_ss, (None if shift is None else convert_to_tensor(shift, dtype=x.dtype))


def normalize_moments(counts, mean_ss, variance_ss, shift, name=None):
    """`tf.nn.normalize_moments`: (mean, variance) from sufficient statistics."""
    with name_scope(name, "normalize", [counts, mean_ss, variance_ss, shift]):
        divisor = _m.reciprocal(counts)
        shifted_mean = _m.multiply(mean_ss, divisor)
        mean = shifted_mean if shift is None else _m.add(shifted_mean, shift)
        variance = _m.subtract(_m.multiply(variance_ss, divisor), _m.square(shifted_mean))
        return mean, variance


def log_poisson_loss(targets, log_input, compute_full_loss=False, name=None):
    """`tf.nn.log_poisson_loss`: exp(c) - z * c, plus Stirling's term z log z - z + 0.5 log(2 pi z) for z > 1."""
    import math
    with name_scope(name, "log_poisson_loss", [targets, log_input]):
        c = convert_to_tensor(log_input)
        z = convert_to_tensor(targets, dtype=c.dtype)
        loss = _m.subtract(_m.exp(c), _m.multiply(z, c))
        if not compute_full_loss:
            return loss
        safe_z = _c.where_v2(_c.greater(z, 1.0), z, _m.add(_m.multiply(z, 0.0), 1.0))
        stirling = _m.add(_m.subtract(_m.multiply(safe_z, _m.log(safe_z)), safe_z),
                          _m.multiply(0.5, _m.log(_m.multiply(2.0 * math.pi, safe_z))))
        zeros = _m.multiply(z, 0.0)
        return _m.add(loss, _c.where_v2(_c.greater(z, 1.0), stirling, zeros))


def fused_batch_norm(x, scale, offset, mean=None, variance=None, epsilon=0.001, data_format="NHWC",
                     is_training=True, name=None):
    """`tf.nn.fused_batch_norm` (NHWC): (y, batch or given mean, batch (Bessel-corrected) or given variance)."""
    from .nn_impl import moments
    if data_format != "NHWC":
        raise ValueError("fused_batch_norm: only data_format='NHWC' is supported")
    with name_scope(name, "FusedBatchNorm", [x, scale, offset]):
        x = convert_to_tensor(x)
        if is_training:
            if mean is not None or variance is not None:
                raise ValueError("Both 'mean' and 'variance' must be None when is_training is True")
            bm, bv = moments(x, [0, 1, 2])
            n = _m.cast(_a.size(x) // _a.shape(x)[3], x.dtype)
            y = batch_normalization(x, bm, bv, offset, scale, epsilon)
            return y, bm, _m.multiply(bv, _m.divide(n, _m.maximum(_m.subtract(n, 1.0), 1.0)))
        if mean is None or variance is None:
            raise ValueError("Both 'mean' and 'variance' must be a 1D tensor when is_training is False")
        y = batch_normalization(x, mean, variance, offset, scale, epsilon)
        return y, convert_to_tensor(mean), convert_to_tensor(variance)
