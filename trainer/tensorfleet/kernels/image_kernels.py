"""Kernels of the resize ops (`ops/image_resize_ops.py`): TF 1.15's sampling math, per axis.

Every TF resize is separable: along each spatial axis an output position reads a few input positions with
weights ("taps"). `taps(method, in_size, out_size, align_corners, half_pixel_centers)` builds them once per
shape (cached) exactly as TF's kernels compute them, in float32:
- scale = (in - 1) / (out - 1) with `align_corners` (and out > 1), else in / out;
- bilinear: source = out * scale (legacy) or (out + 0.5) * scale - 0.5 (half-pixel centers); taps
  floor(source) (at least 0) and ceil(source) (at most in - 1) weighted by the fraction;
- nearest: min(floor(out * scale), in - 1) (legacy), round half away from zero with `align_corners`,
  floor((out + 0.5) * scale) with half-pixel centers;
- bicubic: TF's table of 1025 cubic-convolution coefficients (A = -0.75 legacy, the Keys kernel A = -0.5
  with half-pixel centers, whose taps outside the image get weight 0 and the rest are renormalized), looked
  up at round(fraction * 1024), four taps clamped to the image;
- area: each output cell averages the input cells it overlaps, weighted by the overlap (TF's ResizeArea).
The forward pass applies the taps along width then height (bilinear) or height then width (the others),
as TF's loops do; gradients apply the transposed taps (TF's Resize*Grad). Written against `ctx.xp`.
"""
from __future__ import annotations

import functools

import numpy as np

from .. import errors
from .backend import to_host
from .registry import host_inputs, register_kernel

_TABLE_SIZE = 1024


def _scale(in_size: int, out_size: int, align_corners: bool) -> np.float32:
    if align_corners and out_size > 1:
        return np.float32(in_size - 1) / np.float32(out_size - 1)
    return np.float32(in_size) / np.float32(out_size)


@functools.lru_cache(maxsize=None)
def _cubic_table(a: float) -> np.ndarray:
    x = (np.arange(_TABLE_SIZE + 1) / _TABLE_SIZE).astype(np.float32).astype(np.float64)
    near = ((a + 2) * x - (a + 3)) * x * x + 1
    x1 = x + 1.0
    far = ((a * x1 - 5 * a) * x1 + 8 * a) * x1 - 4 * a
    return np.stack([near, far], axis=1).astype(np.float32)  # [i, 0]: |d| = i/1024, [i, 1]: |d| = 1 + i/1024


@functools.lru_cache(maxsize=256)
def taps(method: str, in_size: int, out_size: int, align_corners: bool, half_pixel: bool) -> tuple:
    """(indices [out, k] int64, weights [out, k] float32) of one axis."""
    scale = _scale(in_size, out_size, align_corners)
    o = np.arange(out_size, dtype=np.float32)
    if method == "nearest":
        src = (o + np.float32(0.5)) * scale if half_pixel else o * scale
        idx = np.floor(src + np.float32(0.5)) if align_corners else np.floor(src)
        idx = np.clip(idx.astype(np.int64), 0, in_size - 1)
        return idx[:, None], np.ones((out_size, 1), np.float32)
    if method == "bilinear":
        src = (o + np.float32(0.5)) * scale - np.float32(0.5) if half_pixel else o * scale
        floor = np.floor(src)
        lo = np.maximum(floor.astype(np.int64), 0)
        hi = np.minimum(np.ceil(src).astype(np.int64), in_size - 1)
        frac = (src - floor).astype(np.float32)
        return np.stack([lo, hi], 1), np.stack([np.float32(1) - frac, frac], 1).astype(np.float32)
    if method == "bicubic":
        return _bicubic_taps(in_size, out_size, scale, half_pixel)
    if method == "area":
        return _area_taps(in_size, out_size, scale)
    raise ValueError(f"unknown resize method {method!r}")


def _bicubic_taps(in_size, out_size, scale, half_pixel) -> tuple:
    o = np.arange(out_size, dtype=np.float32)
    src = (o + np.float32(0.5)) * scale - np.float32(0.5) if half_pixel else o * scale
    base = np.floor(src).astype(np.int64)
    offset = np.rint((src - base) * np.float32(_TABLE_SIZE)).astype(np.int64)  # lrintf: half to even
    table = _cubic_table(-0.5 if half_pixel else -0.75)
    weights = np.stack([table[offset, 1], table[offset, 0], table[_TABLE_SIZE - offset, 0],
                        table[_TABLE_SIZE - offset, 1]], 1)
    raw = base[:, None] + np.arange(-1, 3)[None, :]
    idx = np.clip(raw, 0, in_size - 1)
    if half_pixel:  # Keys: taps outside the image weigh nothing, the others are renormalized
        weights = np.where(idx == raw, weights, np.float32(0))
        total = weights.sum(1, keepdims=True)
        weights = np.where(np.abs(total) >= 1000 * np.finfo(np.float32).tiny, weights / total, weights)
    return idx, weights.astype(np.float32)


def _area_taps(in_size, out_size, scale) -> tuple:
    rows = []
    for o in range(out_size):
        start, end = np.float32(o) * scale, np.float32(o + 1) * scale
        cells = range(int(np.floor(start)), int(np.ceil(end)))
        rows.append([(min(i, in_size - 1), float(min(np.float32(i + 1), end) - max(np.float32(i), start)))
                     for i in cells])
    k = max(len(r) for r in rows)
    idx = np.zeros((out_size, k), np.int64)
    weights = np.zeros((out_size, k), np.float32)
    for o, r in enumerate(rows):
        for j, (i, w) in enumerate(r):
            idx[o, j], weights[o, j] = i, w / scale
    return idx, weights


def _apply(xp, x, axis, idx, weights):
    """sum_k weights[:, k] * x.take(idx[:, k], axis), in float32."""
    shape = [1] * x.ndim
    shape[axis] = idx.shape[0]
    out = None
    for k in range(idx.shape[1]):
        term = xp.take(x, xp.asarray(idx[:, k]), axis=axis) * xp.asarray(weights[:, k].reshape(shape))
        out = term if out is None else out + term
    return out


def _apply_transposed(xp, g, axis, idx, weights, in_size):
    """The gradient of `_apply`: each output's gradient, weighted, summed onto the positions it read."""
    dense = np.zeros((idx.shape[0], in_size), np.float32)
    np.add.at(dense, (np.repeat(np.arange(idx.shape[0]), idx.shape[1]), idx.ravel()), weights.ravel())
    return xp.moveaxis(xp.tensordot(xp.moveaxis(g, axis, -1), xp.asarray(dense), axes=([-1], [0])), -1, axis)


def _check(ctx, images, size):
    a = ctx.attrs
    if a.get("half_pixel_centers") and a.get("align_corners"):
        raise errors.InvalidArgumentError(None, ctx.op, "If half_pixel_centers is True, align_corners must be "
                                                        "False.")
    if images.ndim != 4:
        raise errors.InvalidArgumentError(None, ctx.op, f"input must be 4-dimensional{list(images.shape)}")
    out_h, out_w = (int(v) for v in np.asarray(to_host(size)).reshape(-1)[:2])
    if out_h <= 0 or out_w <= 0:
        raise errors.InvalidArgumentError(None, ctx.op, "output dimensions must be positive")
    if images.shape[1] == 0 or images.shape[2] == 0:
        raise errors.InvalidArgumentError(None, ctx.op, "input image must be of non-zero size")
    return out_h, out_w


def _resize(method):
    def kernel(ctx, images, size):
        out_h, out_w = _check(ctx, images, size)
        xp, a = ctx.xp, ctx.attrs
        align, half = bool(a.get("align_corners")), bool(a.get("half_pixel_centers"))
        th = taps(method, images.shape[1], out_h, align, half)
        tw = taps(method, images.shape[2], out_w, align, half)
        if method == "nearest":  # a selection: the input's dtype, exact
            return xp.take(xp.take(images, xp.asarray(th[0][:, 0]), axis=1), xp.asarray(tw[0][:, 0]), axis=2)
        x = images.astype(np.float32, copy=False)
        if method == "bilinear":  # TF lerps along x within rows, then along y
            return _apply(xp, _apply(xp, x, 2, *tw), 1, *th)
        return _apply(xp, _apply(xp, x, 1, *th), 2, *tw)
    return kernel


for _op, _method in (("ResizeBilinear", "bilinear"), ("ResizeNearestNeighbor", "nearest"),
                     ("ResizeBicubic", "bicubic"), ("ResizeArea", "area")):
    register_kernel(_op)(host_inputs(1)(_resize(_method)))


def _resize_grad(method):
    def kernel(ctx, grads, like):
        xp, a = ctx.xp, ctx.attrs
        align, half = bool(a.get("align_corners")), bool(a.get("half_pixel_centers"))
        in_h, in_w = (int(v) for v in np.asarray(to_host(like)).reshape(-1)[:2]) if method == "nearest" \
            else like.shape[1:3]
        th = taps(method, in_h, grads.shape[1], align, half)
        tw = taps(method, in_w, grads.shape[2], align, half)
        g = grads.astype(np.float32, copy=False)
        out = _apply_transposed(xp, _apply_transposed(xp, g, 1, *th, in_h), 2, *tw, in_w)
        dtype = grads.dtype if method == "nearest" else like.dtype
        return out.astype(dtype, copy=False)
    return kernel


register_kernel("ResizeBilinearGrad")(_resize_grad("bilinear"))
register_kernel("ResizeBicubicGrad")(_resize_grad("bicubic"))
register_kernel("ResizeNearestNeighborGrad")(host_inputs(1)(_resize_grad("nearest")))
