"""Kernels for `ops/conv_ops.py`: Conv2D (+ backprop input/filter), MaxPool, AvgPool and their gradients.

One xp-agnostic code path (numpy / cupy): the padded input is viewed as windows
[N, OH, OW, KH, KW, C] with `as_strided` (no copy), im2col is that view reshaped,
and the convolution is one matmul. Backprop-input scatters the column gradient back
with one strided add per filter tap (KH*KW vectorised adds); pools loop over taps too.
Internally everything is NHWC; NCHW ops are transposed in and out.
"""
from __future__ import annotations

import numpy as np

from .. import errors
from ..conv_geometry import conv_output_hw, spatial_hw
from .registry import host_inputs, register_kernel


def _to_nhwc(x, fmt):
    return x.transpose(0, 2, 3, 1) if fmt == "NCHW" else x


def _from_nhwc(x, fmt):
    return x.transpose(0, 3, 1, 2) if fmt == "NCHW" else x


def _sizes_nhwc(sizes, fmt):
    s = [int(v) for v in (sizes.get() if hasattr(sizes, "get") else np.asarray(sizes)).ravel()]
    return (s[0], s[2], s[3], s[1]) if fmt == "NCHW" else tuple(s)


class _Geom:
    """Output size, padding, strides and dilations of one conv/pool on an NHWC input of (h, w)."""

    def __init__(self, ctx, h, w, kh, kw):
        a = ctx.attrs
        fmt = a["data_format"]
        (self.oh, self.ow), ((self.pt, self.pb), (self.pl, self.pr)) = conv_output_hw(a, (h, w), (kh, kw))
        self.sh, self.sw = spatial_hw(a["strides"], fmt)
        self.dh, self.dw = spatial_hw(a.get("dilations", (1, 1, 1, 1)), fmt)
        self.h, self.w, self.kh, self.kw = h, w, kh, kw
        if self.oh <= 0 or self.ow <= 0:
            raise errors.InvalidArgumentError(
                None, ctx.op, f"Computed output size would be negative: {self.oh} x {self.ow} [input: {h} x {w}, "
                              f"kernel: {kh} x {kw}]\n\t [[node {ctx.op.name}]]")

    @property
    def padded_hw(self):
        # at least what the windows reach; VALID may leave trailing rows unused
        return (max(self.h + self.pt + self.pb, (self.oh - 1) * self.sh + (self.kh - 1) * self.dh + 1),
                max(self.w + self.pl + self.pr, (self.ow - 1) * self.sw + (self.kw - 1) * self.dw + 1))

    def pad(self, xp, x, value=0):
        hp, wp = self.padded_hw
        if (hp, wp) == (self.h, self.w):
            return x
        return xp.pad(x, ((0, 0), (self.pt, hp - self.h - self.pt), (self.pl, wp - self.w - self.pl), (0, 0)),
                      mode="constant", constant_values=value)

    def tap(self, i, j):
        """The (N, OH, OW, C) slice of the padded input that filter tap (i, j) reads."""
        r, c = i * self.dh, j * self.dw
        return (slice(None), slice(r, r + (self.oh - 1) * self.sh + 1, self.sh),
                slice(c, c + (self.ow - 1) * self.sw + 1, self.sw), slice(None))

    def crop(self, xpad):
        return xpad[:, self.pt:self.pt + self.h, self.pl:self.pl + self.w, :]

    def windows(self, xp, xpad):
        """A no-copy [N, OH, OW, KH, KW, C] view of the padded input's windows."""
        xpad = xp.ascontiguousarray(xpad)
        n, _, _, c = xpad.shape
        s0, s1, s2, s3 = xpad.strides
        return xp.lib.stride_tricks.as_strided(
            xpad, (n, self.oh, self.ow, self.kh, self.kw, c),
            (s0, s1 * self.sh, s2 * self.sw, s1 * self.dh, s2 * self.dw, s3))


def _im2col(xp, g, x):
    n, c = x.shape[0], x.shape[3]
    cols = g.windows(xp, g.pad(xp, x))
    return cols.reshape(n * g.oh * g.ow, g.kh * g.kw * c)


# -- convolution --------------------------------------------------------------
@register_kernel("Conv2D")
def conv2d(ctx, x, f):
    xp, fmt = ctx.xp, ctx.attrs["data_format"]
    x_in = x
    x = _to_nhwc(x, fmt)
    n, h, w, c = x.shape
    kh, kw, fc, o = f.shape
    if fc != c:
        raise errors.InvalidArgumentError(
            None, ctx.op, f"input depth must be evenly divisible by filter depth: {c} vs {fc}\n\t "
                          f"[[node {ctx.op.name}]]")
    g = _Geom(ctx, h, w, kh, kw)
    cols = _im2col(xp, g, x)
    key = ctx.attrs.get("_handoff")
    if key is not None:  # this plan's filter gradient of the same input reuses the matrix
        ctx.resources.handoff[key] = (x_in, (kh, kw, c), cols)
    out = cols @ f.reshape(kh * kw * c, o)
    return _from_nhwc(out.reshape(n, g.oh, g.ow, o).astype(x.dtype, copy=False), fmt)


_CONV_ATTRS = ("strides", "padding", "explicit_paddings", "data_format", "dilations")


def _conv2d_prepare(ctx, plan_ops) -> None:
    """Plan-time hook: hand the im2col matrix over when this plan has a filter gradient of the same input.

    The backprop-filter kernel needs exactly the forward's im2col of the same
    input (TF recomputes it); keeping it from the forward pass until that
    kernel pops it trades the matrix's memory for one im2col per step, as
    hand-written numpy does. Only within one plan, so an inference plan keeps
    nothing.
    """
    op = ctx.op
    x = op.inputs[0]
    for c in x.consumers():
        if (c.type == "Conv2DBackpropFilter" and c in plan_ops and c.inputs[0] is x
                and all(c.get_attr(k) == op.get_attr(k) for k in _CONV_ATTRS)):
            ctx.attrs["_handoff"] = ("im2col", x)
            return


conv2d.prepare = _conv2d_prepare


@register_kernel("Conv2DBackpropFilter")
@host_inputs(1)
def conv2d_backprop_filter(ctx, x, filter_sizes, grad):
    xp, fmt = ctx.xp, ctx.attrs["data_format"]
    x_in = x
    x, grad = _to_nhwc(x, fmt), _to_nhwc(grad, fmt)
    kh, kw, c, o = (int(v) for v in (filter_sizes.get() if hasattr(filter_sizes, "get")
                                     else np.asarray(filter_sizes)).ravel())
    n, h, w, _ = x.shape
    g = _Geom(ctx, h, w, kh, kw)
    _check_backprop_shape(ctx, grad.shape, (n, g.oh, g.ow, o))
    handed = ctx.resources.handoff.pop(("im2col", ctx.op.inputs[0]), None)
    if handed is not None and handed[0] is x_in and handed[1] == (kh, kw, c):
        cols = handed[2]  # the forward Conv2D's matrix of this very input array (this run)
    else:
        cols = _im2col(xp, g, x)
    del handed
    df = cols.T @ grad.reshape(n * g.oh * g.ow, o)
    return df.reshape(kh, kw, c, o).astype(x.dtype, copy=False)


@register_kernel("Conv2DBackpropInput")
@host_inputs(0)
def conv2d_backprop_input(ctx, input_sizes, f, grad):
    xp, fmt = ctx.xp, ctx.attrs["data_format"]
    grad = _to_nhwc(grad, fmt)
    n, h, w, c = _sizes_nhwc(input_sizes, fmt)
    kh, kw, fc, o = f.shape
    g = _Geom(ctx, h, w, kh, kw)
    _check_backprop_shape(ctx, grad.shape, (n, g.oh, g.ow, o))
    # one small matmul per tap (cache-friendly; no [M, KH*KW*C] column matrix), added into its strided slice
    g2 = grad.reshape(n * g.oh * g.ow, o)
    hp, wp = g.padded_hw
    dx = xp.zeros((n, hp, wp, fc), dtype=grad.dtype)
    for i in range(kh):
        for j in range(kw):
            dx[g.tap(i, j)] += (g2 @ f[i, j].T).reshape(n, g.oh, g.ow, fc)
    return _from_nhwc(xp.ascontiguousarray(g.crop(dx)), fmt)


def _check_backprop_shape(ctx, got, want):
    if tuple(got) != tuple(want):
        raise errors.InvalidArgumentError(
            None, ctx.op, f"{ctx.op.type}: Size of out_backprop doesn't match computed: actual = {list(got)}, "
                          f"computed = {list(want)}\n\t [[node {ctx.op.name}]]")


@register_kernel("NnShape")
def nn_shape(ctx, x):
    return np.asarray(x.shape, dtype=np.int32)


# -- pooling ------------------------------------------------------------------
def _pool_geom(ctx, x):
    fmt = ctx.attrs["data_format"]
    kh, kw = spatial_hw(ctx.attrs["ksize"], fmt)
    return _Geom(ctx, x.shape[1], x.shape[2], kh, kw)


def _taps(g):
    return [(i, j) for i in range(g.kh) for j in range(g.kw)]


def _lowest(dtype):
    return -np.inf if np.dtype(dtype).kind == "f" else np.iinfo(dtype).min


@register_kernel("MaxPool")
def max_pool(ctx, x):
    xp, fmt = ctx.xp, ctx.attrs["data_format"]
    x = _to_nhwc(x, fmt)
    g = _pool_geom(ctx, x)
    xpad = g.pad(xp, x, _lowest(x.dtype))
    out = None
    for i, j in _taps(g):
        v = xpad[g.tap(i, j)]
        out = v.copy() if out is None else xp.maximum(out, v, out=out)
    return _from_nhwc(out, fmt)


def _first_max_taps(geom, xpad, y):
    """Yields (tap slice, hit) per window tap; `hit` marks the outputs whose first (row-major) maximum is that tap."""
    pending = None  # outputs whose maximum no earlier tap held
    for i, j in _taps(geom):
        idx = geom.tap(i, j)
        hit = xpad[idx] == y
        if pending is None:
            pending = ~hit
        else:
            hit &= pending
            pending ^= hit  # hit is a subset of pending: this clears it, with no temporary
        yield idx, hit


@register_kernel("MaxPoolGrad")
def max_pool_grad(ctx, x, y, grad):
    """Routes each output's gradient to the first (row-major) maximal element of its window."""
    xp, fmt = ctx.xp, ctx.attrs["data_format"]
    x, y, grad = _to_nhwc(x, fmt), _to_nhwc(y, fmt), _to_nhwc(grad, fmt)
    g = _pool_geom(ctx, x)
    xpad = g.pad(xp, x, _lowest(x.dtype))
    disjoint = g.sh >= g.kh and g.sw >= g.kw  # windows do not overlap: each slice is written once
    # windows that tile the input exactly (e.g. 2x2/2 on even sizes) write every element: no zero fill
    tiled = g.sh == g.kh and g.sw == g.kw and xpad.shape[1:3] == (g.oh * g.kh, g.ow * g.kw)
    dx = (xp.empty if tiled else xp.zeros)(xpad.shape, dtype=grad.dtype)
    for idx, hit in _first_max_taps(g, xpad, y):
        if disjoint:
            xp.multiply(grad, hit, out=dx[idx])
        else:
            dx[idx] += grad * hit
    return _from_nhwc(xp.ascontiguousarray(g.crop(dx)), fmt)


@register_kernel("MaxPoolGradGrad")
def max_pool_grad_grad(ctx, x, y, g):
    """The adjoint of MaxPoolGrad: each output gathers g at the first (row-major) maximum of its window."""
    xp, fmt = ctx.xp, ctx.attrs["data_format"]
    x, y, g = _to_nhwc(x, fmt), _to_nhwc(y, fmt), _to_nhwc(g, fmt)
    geom = _pool_geom(ctx, x)
    xpad = geom.pad(xp, x, _lowest(x.dtype))
    gpad = geom.pad(xp, g, 0)
    out = xp.zeros(y.shape, dtype=g.dtype)
    for idx, hit in _first_max_taps(geom, xpad, y):
        out += gpad[idx] * hit
    return _from_nhwc(xp.ascontiguousarray(out), fmt)


def _valid_counts(ctx, xp, g, dtype):
    """Per-output count of unpadded elements in its window (TF's AvgPool SAME divisor), cached per plan."""
    key = ("_counts", g.h, g.w, np.dtype(dtype).str)
    counts = ctx.attrs.get(key)
    if counts is None:
        ones = g.pad(np, np.ones((1, g.h, g.w, 1), dtype=np.float64), 0)
        acc = np.zeros((1, g.oh, g.ow, 1))
        for i, j in _taps(g):
            acc += ones[g.tap(i, j)]
        counts = xp.asarray(acc.astype(dtype))
        ctx.attrs[key] = counts
    return counts


@register_kernel("AvgPool")
def avg_pool(ctx, x):
    xp, fmt = ctx.xp, ctx.attrs["data_format"]
    x = _to_nhwc(x, fmt)
    g = _pool_geom(ctx, x)
    xpad = g.pad(xp, x, 0)
    out = None
    for i, j in _taps(g):
        v = xpad[g.tap(i, j)]
        out = v.copy() if out is None else xp.add(out, v, out=out)
    return _from_nhwc((out / _valid_counts(ctx, xp, g, x.dtype)).astype(x.dtype, copy=False), fmt)


@register_kernel("AvgPoolGrad")
@host_inputs(0)
def avg_pool_grad(ctx, orig_input_shape, grad):
    xp, fmt = ctx.xp, ctx.attrs["data_format"]
    n, h, w, c = _sizes_nhwc(orig_input_shape, fmt)
    grad = _to_nhwc(grad, fmt)
    kh, kw = spatial_hw(ctx.attrs["ksize"], fmt)
    g = _Geom(ctx, h, w, kh, kw)
    scaled = (grad / _valid_counts(ctx, xp, g, grad.dtype)).astype(grad.dtype, copy=False)
    hp, wp = g.padded_hw
    dx = xp.zeros((n, hp, wp, c), dtype=grad.dtype)
    for i, j in _taps(g):
        dx[g.tap(i, j)] += scaled
    return _from_nhwc(xp.ascontiguousarray(g.crop(dx)), fmt)
