"""Kernels for math, reduction and comparison ops (ops/math_ops, reduction_ops, comparison_ops).

Written once against `ctx.xp` (numpy on CPU, cupy on GPU). Results keep the op's output dtype:
numpy reductions of small ints widen, so those are cast back. Per-plan precomputations (reshape
targets of reduction gradients) are cached in `ctx.attrs` keyed by the input shapes.
"""
from __future__ import annotations

import numpy as np

from .. import dtypes as _dtypes
from .. import errors
from .registry import register_kernel

_INTS = (_dtypes.int8, _dtypes.int16, _dtypes.int32, _dtypes.int64, _dtypes.uint8)
_FLOATS = (_dtypes.float16, _dtypes.float32, _dtypes.float64)


def fast_sum(xp):
    """np.add.reduce on CPU (skips np.sum's Python wrapper: ~2.5 us per call), xp.sum elsewhere."""
    return np.add.reduce if xp is np else xp.sum


def broadcast(xp, value, shape):
    """A read-only broadcast view of `value` with `shape`; 0-d numpy values take a fast path
    (np.broadcast_to costs ~4.5 us, a zero-strided ndarray ~0.6 us)."""
    if xp is np and not getattr(value, "ndim", 1):
        a = np.asarray(value)
        out = np.ndarray(shape, a.dtype, a, 0, (0,) * len(shape))
        out.flags.writeable = False
        return out
    return xp.broadcast_to(value, shape)


def _check_int_divisor(ctx, y):
    if not ctx.xp.all(y):
        raise errors.InvalidArgumentError(None, ctx.op, f"Integer division by zero\n\t [[node {ctx.op.name}]]")


# -- binary -------------------------------------------------------------------
@register_kernel("RealDiv")
def realdiv(ctx, x, y):
    return x / y


@register_kernel("DivNoNan")
def div_no_nan(ctx, x, y):
    xp = ctx.xp
    if xp is np and y.ndim == 0:   # a scalar divisor (Keras's sum / count every step): no masks, no temporaries
        return (x / y).astype(x.dtype, copy=False) if y != 0 else np.zeros(x.shape, x.dtype)
    zero = y == 0
    out = x / xp.where(zero, xp.ones((), dtype=y.dtype), y)
    return xp.where(zero, xp.zeros((), dtype=out.dtype), out).astype(x.dtype, copy=False)


@register_kernel("FloorDiv", dtypes=_FLOATS)
def floordiv(ctx, x, y):
    return ctx.xp.floor_divide(x, y)


@register_kernel("FloorDiv", dtypes=_INTS)
def floordiv_int(ctx, x, y):
    _check_int_divisor(ctx, y)
    return ctx.xp.floor_divide(x, y)


@register_kernel("FloorMod", dtypes=_FLOATS)
def floormod(ctx, x, y):
    return ctx.xp.mod(x, y)


@register_kernel("FloorMod", dtypes=_INTS)
def floormod_int(ctx, x, y):
    _check_int_divisor(ctx, y)
    return ctx.xp.mod(x, y)


@register_kernel("Pow")
def pow_(ctx, x, y):
    return ctx.xp.power(x, y)


@register_kernel("Maximum")
def maximum(ctx, x, y):
    return ctx.xp.maximum(x, y)


@register_kernel("Minimum")
def minimum(ctx, x, y):
    return ctx.xp.minimum(x, y)


@register_kernel("SquaredDifference")
def squared_difference(ctx, x, y):
    d = x - y
    return d * d


# -- unary --------------------------------------------------------------------
def register_xp_unary(op_type: str, fn_name: str):
    """Registers `op_type`'s kernel: the array module's (numpy / cupy) function `fn_name` of its one input."""
    @register_kernel(op_type)
    def kernel(ctx, x):
        return getattr(ctx.xp, fn_name)(x)
    kernel.__name__ = fn_name
    return kernel


for _op, _fn in (("Abs", "abs"), ("Sign", "sign"), ("Exp", "exp"), ("Log", "log"), ("Log1p", "log1p"),
                 ("Sqrt", "sqrt"), ("Square", "square"), ("Reciprocal", "reciprocal"), ("Floor", "floor"),
                 ("Ceil", "ceil"), ("Round", "round"), ("Sin", "sin"), ("Cos", "cos"), ("IsNan", "isnan"),
                 ("IsInf", "isinf"), ("IsFinite", "isfinite"), ("LogicalNot", "logical_not")):
    register_xp_unary(_op, _fn)


@register_kernel("Rsqrt")
def rsqrt(ctx, x):
    return ctx.xp.reciprocal(ctx.xp.sqrt(x))


# -- comparison / logical / select --------------------------------------------
for _op, _fn in (("Equal", "equal"), ("NotEqual", "not_equal"), ("Less", "less"), ("LessEqual", "less_equal"),
                 ("Greater", "greater"), ("GreaterEqual", "greater_equal"), ("LogicalAnd", "logical_and"),
                 ("LogicalOr", "logical_or")):
    def _make(fn_name):
        def kernel(ctx, x, y):
            return getattr(ctx.xp, fn_name)(x, y)
        kernel.__name__ = fn_name
        return kernel
    register_kernel(_op)(_make(_fn))


@register_kernel("Select")
def select(ctx, cond, x, y):
    if cond.ndim == 1 and x.ndim > 1:
        if cond.shape[0] != x.shape[0]:
            raise errors.InvalidArgumentError(None, ctx.op, f"Select: condition has {cond.shape[0]} elements, "
                                                            f"but x has {x.shape[0]} rows")
        cond = cond.reshape((-1,) + (1,) * (x.ndim - 1))
    elif cond.ndim and cond.shape != x.shape:
        raise errors.InvalidArgumentError(None, ctx.op, f"condition and then must be the same shape: "
                                                        f"{list(cond.shape)} vs. {list(x.shape)}")
    if x.shape != y.shape:
        raise errors.InvalidArgumentError(None, ctx.op, f"'then' and 'else' must have the same size. but "
                                                        f"received: {list(x.shape)} vs. {list(y.shape)}")
    return ctx.xp.where(cond, x, y)


@register_kernel("SelectV2")
def select_v2(ctx, cond, x, y):
    return ctx.xp.where(cond, x, y)


@register_kernel("Where")
def where(ctx, cond):
    return ctx.xp.argwhere(cond).astype(np.int64, copy=False)


# -- reductions ---------------------------------------------------------------
def _count(ctx, x):
    """Number of reduced elements per output element (cached per input shape)."""
    cached = ctx.attrs.get("_count")
    if cached is None or cached[0] != x.shape:
        axis = ctx.attrs["axis"]
        if axis is None:
            n = x.size
        else:
            n = 1
            for a in {a % x.ndim for a in (axis if isinstance(axis, tuple) else (axis,))}:
                n *= x.shape[a]
        cached = ctx.attrs["_count"] = (x.shape, n)
    return cached[1]


@register_kernel("Mean", dtypes=_FLOATS)
def mean(ctx, x):
    """sum / count (np.mean's wrapper costs ~15 us); float16 accumulates in float32 as numpy's mean."""
    if x.dtype == np.float16:
        return ctx.xp.mean(x, axis=ctx.attrs["axis"], keepdims=ctx.attrs["keepdims"], dtype=np.float32).astype(
            np.float16)
    s = fast_sum(ctx.xp)(x, axis=ctx.attrs["axis"], keepdims=ctx.attrs["keepdims"])
    return s / _count(ctx, x)


@register_kernel("Mean", dtypes=_INTS)
def mean_int(ctx, x):
    """Integer mean truncates toward zero, as TF's."""
    xp = ctx.xp
    s = xp.sum(x, axis=ctx.attrs["axis"], keepdims=ctx.attrs["keepdims"], dtype=np.int64)
    n = max(x.size // max(s.size, 1), 1)
    return (xp.sign(s) * (xp.abs(s) // n)).astype(x.dtype)


def _reduction(op_type, fn_name, cast=False):
    def kernel(ctx, x):
        out = getattr(ctx.xp, fn_name)(x, axis=ctx.attrs["axis"], keepdims=ctx.attrs["keepdims"])
        return out.astype(x.dtype, copy=False) if cast else out
    kernel.__name__ = fn_name
    register_kernel(op_type)(kernel)


_reduction("Max", "max")
_reduction("Min", "min")
_reduction("Prod", "prod", cast=True)
_reduction("Any", "any")
_reduction("All", "all")


@register_kernel("ArgMax")
def argmax(ctx, x):
    return ctx.xp.argmax(x, axis=ctx.attrs["axis"]).astype(ctx.attrs["output_type"].np_dtype, copy=False)


@register_kernel("ArgMin")
def argmin(ctx, x):
    return ctx.xp.argmin(x, axis=ctx.attrs["axis"]).astype(ctx.attrs["output_type"].np_dtype, copy=False)


def keepdims_shape(ctx, grad_shape, like_shape):
    """The shape `grad` takes with the reduced axes re-inserted as 1s (cached per input shapes)."""
    key = (grad_shape, like_shape)
    cached = ctx.attrs.get("_kd_shape")
    if cached is not None and cached[0] == key:
        return cached[1]
    axis, keepdims = ctx.attrs["axis"], ctx.attrs["keepdims"]
    if keepdims:
        shape = grad_shape
    elif axis is None:
        shape = (1,) * len(like_shape)
    else:
        axes = {a % len(like_shape) for a in (axis if isinstance(axis, tuple) else (axis,))}
        shape = tuple(1 if i in axes else d for i, d in enumerate(like_shape))
    ctx.attrs["_kd_shape"] = (key, shape)
    return shape


@register_kernel("MeanGrad")
def mean_grad(ctx, grad, like):
    cached = ctx.attrs.get("_const_result")
    if cached is not None and cached[0] is grad and cached[1] == like.shape:
        return cached[2]  # the same frozen constant grad (tf.gradients' ones) and shape as last time
    scaled = grad / _count(ctx, like)
    if scaled.ndim:
        scaled = scaled.reshape(keepdims_shape(ctx, grad.shape, like.shape))
    out = broadcast(ctx.xp, scaled, like.shape)
    if isinstance(grad, np.ndarray) and not grad.flags.writeable and grad.base is None:
        ctx.attrs["_const_result"] = (grad, like.shape, out)  # `out` is a read-only view: safe to hand out again
    return out


@register_kernel("ProdGrad")
def prod_grad(ctx, grad, x):
    """grad * product of the other reduced elements, via exclusive cumulative products (zero-safe)."""
    xp = ctx.xp
    axis = ctx.attrs["axis"]
    nd = x.ndim
    axes = tuple(range(nd)) if axis is None else tuple(sorted({a % nd for a in (
        axis if isinstance(axis, tuple) else (axis,))}))
    rest = tuple(i for i in range(nd) if i not in axes)
    perm = rest + axes
    xt = xp.transpose(x, perm)
    flat = xt.reshape(xt.shape[:len(rest)] + (-1,))
    ones = xp.ones(flat.shape[:-1] + (1,), dtype=x.dtype)
    left = xp.cumprod(xp.concatenate([ones, flat[..., :-1]], axis=-1), axis=-1)
    right = xp.flip(xp.cumprod(xp.concatenate([ones, xp.flip(flat, -1)[..., :-1]], axis=-1), axis=-1), -1)
    others = xp.transpose((left * right).reshape(xt.shape), tuple(np.argsort(perm)))
    g = xp.broadcast_to(xp.reshape(grad, keepdims_shape(ctx, grad.shape, x.shape)), x.shape)
    return (g * others).astype(x.dtype, copy=False)
