"""Kernels for array ops (ops/array_ops, slicing_ops, join_ops, linalg_ops), written against `ctx.xp`.

Reshape/transpose/slice results are views of their input where numpy allows (safe: a kernel writes
into an input only when `ownership.owns` says nothing else, a view's base included, can see it).
Shape arguments arrive as static attrs, or as a runtime int tensor for dynamic shapes.
"""
from __future__ import annotations

import numpy as np

from .. import errors
from .backend import to_host
from .registry import host_inputs, register_kernel
from ..ops.computed_bounds_ops import key_from_values
from ..ops.shape_util import range_values


def _dims(t) -> tuple:
    return tuple(int(d) for d in np.atleast_1d(to_host(t)))


@register_kernel("Reshape")
@host_inputs(1)
def reshape(ctx, x, shape=None):
    static = ctx.attrs["shape"]
    return ctx.xp.reshape(x, static if static is not None else _dims(shape))


@register_kernel("ReshapeLike")
def reshape_like(ctx, x, like):
    return ctx.xp.reshape(x, like.shape)


@register_kernel("Squeeze")
def squeeze(ctx, x):
    axes = ctx.attrs["squeeze_dims"]
    return ctx.xp.squeeze(x, axis=axes or None)


@register_kernel("ExpandDims")
def expand_dims(ctx, x):
    return ctx.xp.expand_dims(x, ctx.attrs["axis"])


@register_kernel("Transpose")
def transpose(ctx, x):
    return ctx.xp.transpose(x, ctx.attrs["perm"])


@register_kernel("Shape")
def shape(ctx, x):
    return np.asarray(x.shape, dtype=ctx.attrs["out_type"].np_dtype)


@register_kernel("Size")
def size(ctx, x):
    return np.asarray(x.size, dtype=ctx.attrs["out_type"].np_dtype)


@register_kernel("Rank")
def rank(ctx, x):
    return np.asarray(x.ndim, dtype=np.int32)


@register_kernel("Fill")
@host_inputs(1)
def fill(ctx, value, dims=None):
    static = ctx.attrs["shape"]
    if static is None:
        static = _dims(dims)
        if min(static, default=0) < 0:  # TF's TensorShapeUtils::MakeShape
            raise errors.InvalidArgumentError(None, ctx.op, f"Dimension {min(static)} must be >= 0 (dims "
                                                            f"{list(static)})\n\t [[node {ctx.op.name}]]")
    return ctx.xp.full(static, value, dtype=value.dtype)


@register_kernel("ZerosLike")
def zeros_like(ctx, x):
    return ctx.xp.zeros(x.shape, dtype=ctx.attrs["dtype"].np_dtype)


@register_kernel("OnesLike")
def ones_like(ctx, x):
    return ctx.xp.ones(x.shape, dtype=ctx.attrs["dtype"].np_dtype)


@register_kernel("Range")
@host_inputs(0, 1, 2)
def range_(ctx, start, limit, delta):
    """TF's RangeOp (`shape_util.range_values`: its length rule, float accumulation); errors name the op."""
    start, limit, delta = (np.asarray(to_host(v)).item() for v in (start, limit, delta))
    try:
        values = range_values(start, limit, delta, ctx.attrs["Tidx"].np_dtype)
    except ValueError as e:
        raise errors.InvalidArgumentError(None, ctx.op, str(e)) from None
    return values if ctx.xp is np else ctx.xp.asarray(values)


@register_kernel("LinSpace")
def linspace(ctx):
    a = ctx.attrs
    return ctx.xp.linspace(a["start"], a["stop"], a["num"], dtype=a["dtype"].np_dtype)


# -- slicing ------------------------------------------------------------------
def _key(ctx, bounds) -> tuple:
    """The op's indexing key: its attr, or (TF's form, computed bounds) built from begin/end/strides values."""
    if not bounds:
        return ctx.attrs["key"]
    begin, end, strides = (np.atleast_1d(to_host(b)) for b in bounds)
    if (strides == 0).any():
        raise errors.InvalidArgumentError(None, ctx.op, f"strides[{int(np.argmax(strides == 0))}] must be non-zero")
    return key_from_values(begin, end, strides, ctx.attrs)


@register_kernel("StridedSlice")
@register_kernel("Slice")
@host_inputs(1, 2, 3)
def strided_slice(ctx, x, *bounds):
    key = _key(ctx, bounds)
    try:
        out = x[key]
    except IndexError as e:
        raise errors.InvalidArgumentError(None, ctx.op, f"slice index out of bounds: {e}") from None
    return out if isinstance(out, ctx.xp.ndarray) else ctx.xp.asarray(out)


@register_kernel("StridedSliceGrad")
@host_inputs(2, 3, 4)
def strided_slice_grad(ctx, grad, like, *bounds):
    out = ctx.xp.zeros(like.shape, dtype=grad.dtype)
    out[_key(ctx, bounds)] = grad
    return out


def _check_indices(ctx, indices, n):
    if indices.size and (int(indices.min()) < 0 or int(indices.max()) >= n):
        bad = int(indices[(indices < 0) | (indices >= n)].ravel()[0])
        pos = np.argwhere(to_host((indices < 0) | (indices >= n)))[0]
        raise errors.InvalidArgumentError(None, ctx.op, f"indices[{','.join(map(str, pos))}] = {bad} is not in "
                                                        f"[0, {n})")


def take_unchecked(xp, params, indices, axis):
    """`take` along `axis` with TF's GPU rule for bad indices: a zero row, no error.

    TF's GPU gather does not check indices (that would be a device->host sync per
    step): an out-of-range index gives zeros. Used when `xp` is not numpy.
    """
    n = params.shape[axis]
    valid = (indices >= 0) & (indices < n)
    out = xp.take(params, xp.where(valid, indices, 0), axis=axis)
    mask = valid.reshape((1,) * axis + valid.shape + (1,) * (params.ndim - axis - 1))
    return xp.where(mask, out, xp.zeros((), dtype=out.dtype))


@register_kernel("GatherV2")
def gather(ctx, params, indices):
    axis = ctx.attrs["axis"]
    if ctx.xp is not np:
        return take_unchecked(ctx.xp, params, indices, axis)
    _check_indices(ctx, indices, params.shape[axis])
    return np.take(params, indices, axis=axis)


@register_kernel("GatherGrad")
def gather_grad(ctx, grad, indices, params):
    """Dense scatter-add of grad rows into zeros shaped like params (repeated indices accumulate).

    On a GPU, rows of out-of-range indices (zeros in the forward pass) add nothing.
    """
    xp = ctx.xp
    axis = ctx.attrs["axis"]
    out = xp.zeros(params.shape, dtype=grad.dtype)
    if xp is not np:
        valid = (indices >= 0) & (indices < params.shape[axis])
        indices = xp.where(valid, indices, 0)
        mask = valid.reshape((1,) * axis + valid.shape + (1,) * (params.ndim - axis - 1))
        grad = xp.where(mask, grad, xp.zeros((), dtype=grad.dtype))
    if axis == 0 and indices.ndim == 1:
        xp.add.at(out, indices, grad)
    else:
        xp.add.at(out, (slice(None),) * axis + (indices,), grad)
    return out


@register_kernel("BooleanMask")
def boolean_mask(ctx, x, mask):
    axis = ctx.attrs["axis"]
    if x.shape[axis:axis + mask.ndim] != mask.shape:
        raise errors.InvalidArgumentError(None, ctx.op, f"Shapes {list(x.shape[axis:axis + mask.ndim])} and "
                                                        f"{list(mask.shape)} are incompatible")
    return x[(slice(None),) * axis + (mask,)]


@register_kernel("BooleanMaskGrad")
def boolean_mask_grad(ctx, grad, mask, like):
    out = ctx.xp.zeros(like.shape, dtype=grad.dtype)
    out[(slice(None),) * ctx.attrs["axis"] + (mask,)] = grad
    return out


@register_kernel("ReverseV2")
def reverse(ctx, x):
    return ctx.xp.flip(x, ctx.attrs["axis"])


@register_kernel("Pad")
def pad(ctx, x):
    return ctx.xp.pad(x, ctx.attrs["paddings"], mode="constant", constant_values=ctx.attrs["constant_values"])


@register_kernel("MirrorPad")
def mirror_pad(ctx, x):
    return ctx.xp.pad(x, ctx.attrs["paddings"], mode=ctx.attrs["mode"])


@register_kernel("MirrorPadGrad")
def mirror_pad_grad(ctx, grad, like):
    """Adjoint of MirrorPad: each padded border is flipped and added onto the elements it mirrors."""
    off = 1 if ctx.attrs["mode"] == "reflect" else 0  # REFLECT skips the edge element, SYMMETRIC repeats it
    out = grad
    for axis, (a, b) in enumerate(ctx.attrs["paddings"]):
        if not a and not b:
            continue
        d = like.shape[axis]

        def sl(lo, hi, axis=axis):
            return (slice(None),) * axis + (slice(lo, hi),)

        core = out[sl(a, a + d)].copy()
        if a:
            core[sl(off, off + a)] += ctx.xp.flip(out[sl(0, a)], axis=axis)
        if b:
            core[sl(d - off - b, d - off)] += ctx.xp.flip(out[sl(a + d, a + d + b)], axis=axis)
        out = core
    return out


@register_kernel("OneHot")
def one_hot(ctx, indices):
    a = ctx.attrs
    xp = ctx.xp
    hot = indices[..., None] == xp.arange(a["depth"], dtype=indices.dtype)
    out = xp.where(hot, xp.asarray(a["on"]), xp.asarray(a["off"]))
    if a["axis"] != -1:
        out = xp.moveaxis(out, -1, a["axis"])
    return out


# -- join / split -------------------------------------------------------------
@register_kernel("ConcatV2")
def concat(ctx, *xs):
    return ctx.xp.concatenate(xs, axis=ctx.attrs["axis"])


@register_kernel("ConcatGrad")
def concat_grad(ctx, grad, *xs):
    axis = ctx.attrs["axis"]
    offsets = np.cumsum([x.shape[axis] for x in xs[:-1]]).tolist()
    return tuple(ctx.xp.split(grad, offsets, axis=axis))


@register_kernel("Pack")
def pack(ctx, *xs):
    return ctx.xp.stack(xs, axis=ctx.attrs["axis"])


@register_kernel("Unpack")
def unpack(ctx, x):
    axis = ctx.attrs["axis"]
    if x.shape[axis] != ctx.attrs["num"]:
        raise errors.InvalidArgumentError(None, ctx.op, f"Input shape axis {axis} must equal {ctx.attrs['num']}, "
                                                        f"got shape {list(x.shape)}")
    return tuple(ctx.xp.moveaxis(x, axis, 0))


@register_kernel("Split")
def split(ctx, x):
    n = len(ctx.attrs["size_splits"])
    axis = ctx.attrs["axis"]
    if x.shape[axis] % n:
        raise errors.InvalidArgumentError(None, ctx.op, f"Number of ways to split should evenly divide the split "
                                                        f"dimension, but got split_dim {axis} (size = "
                                                        f"{x.shape[axis]}) and num_split {n}")
    return tuple(ctx.xp.split(x, n, axis=axis))


@register_kernel("SplitV")
def split_v(ctx, x):
    sizes, axis = ctx.attrs["size_splits"], ctx.attrs["axis"]
    d = x.shape[axis]
    known = sum(s for s in sizes if s != -1)
    sizes = [d - known if s == -1 else s for s in sizes]
    if sum(sizes) != d or min(sizes) < 0:
        raise errors.InvalidArgumentError(None, ctx.op, f"Determined shape must either match input shape along "
                                                        f"split_dim exactly if fully specified, or be less than the "
                                                        f"size of the input along split_dim if not fully specified. "
                                                        f"Got: {known}")
    return tuple(ctx.xp.split(x, np.cumsum(sizes[:-1]).tolist(), axis=axis))


def _multiples(ctx, computed) -> tuple:
    if not computed:
        return ctx.attrs["multiples"]
    m = tuple(int(k) for k in np.atleast_1d(to_host(computed[0])))
    if any(k < 0 for k in m):
        raise errors.InvalidArgumentError(None, ctx.op, f"Expected multiples >= 0, got {list(m)}")
    return m


@register_kernel("Tile")
@host_inputs(1)
def tile(ctx, x, *computed):
    m = _multiples(ctx, computed)
    if len(m) != x.ndim:
        raise errors.InvalidArgumentError(None, ctx.op, f"Expected multiples argument to be a vector of length "
                                                        f"{x.ndim} but got length {len(m)}")
    return ctx.xp.tile(x, m)


@register_kernel("TileGrad")
@host_inputs(2)
def tile_grad(ctx, grad, like, *computed):
    m = _multiples(ctx, computed)
    interleaved = []
    for k, d in zip(m, like.shape):
        interleaved += [k, d]
    summed = ctx.xp.sum(grad.reshape(interleaved), axis=tuple(range(0, 2 * len(m), 2)))
    return summed.astype(grad.dtype, copy=False)


# -- linalg -------------------------------------------------------------------
@register_kernel("Diag")
def diag(ctx, x):
    n = x.size
    out = ctx.xp.zeros((n, n), dtype=x.dtype)
    idx = ctx.xp.arange(n)
    out[idx, idx] = x.ravel()
    return out.reshape(x.shape + x.shape)


@register_kernel("DiagPart")
def diag_part(ctx, x):
    half = x.shape[:x.ndim // 2]
    n = int(np.prod(half))
    idx = ctx.xp.arange(n)
    return x.reshape(n, n)[idx, idx].reshape(half)


@register_kernel("Einsum")
def einsum(ctx, *xs):
    return ctx.xp.einsum(ctx.attrs["equation"], *xs)
