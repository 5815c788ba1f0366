"""Kernels for the core ops: constants, placeholders, variables/assign/count_up_to, arithmetic, matmul, sums.

Written once against `ctx.xp` so the same code runs on numpy (CPU) and cupy (GPU).
"""
from __future__ import annotations

import numpy as np

from .. import dtypes as _dtypes
from .. import errors
from .backend import to_host
from .math_kernels import broadcast, fast_sum, keepdims_shape
from .ownership import owns
from .registry import host_inputs, register_kernel

_NO_INT32_ON_GPU = [d for d in (_dtypes.float16, _dtypes.float32, _dtypes.float64, _dtypes.int64, _dtypes.bool_)]


def _shape_text(shape) -> str:
    if shape.ndims is None:
        return "<unknown>"
    return "[" + ",".join("?" if d is None else str(d) for d in shape.as_tuple()) + "]"


@register_kernel("Const")
def const(ctx):
    value = ctx.attrs.get("_device_value")
    if value is None:
        value = ctx.op.get_attr("value")
        if ctx.xp is not np:  # upload once per plan, then reuse
            value = ctx.xp.asarray(value)
            ctx.attrs["_device_value"] = value
    return value


@register_kernel("Placeholder")
def placeholder(ctx):
    op = ctx.op
    raise errors.InvalidArgumentError(
        None, op, f"You must feed a value for placeholder tensor '{op.name}' with dtype "
                  f"{op.get_attr('dtype').name} and shape {_shape_text(op.get_attr('shape'))}")


@register_kernel("PlaceholderWithDefault")
@register_kernel("Identity")
@register_kernel("StopGradient")
def identity(ctx, x):
    return x


@register_kernel("IdentityN")
def identity_n(ctx, *xs):
    return tuple(xs)


@register_kernel("NoOp")
def no_op(ctx):
    return None


# -- variables ----------------------------------------------------------------
@register_kernel("VariableV2", devices=("CPU",))
@register_kernel("VariableV2", devices=("GPU",), dtypes=_NO_INT32_ON_GPU)
def variable(ctx):
    return ctx.resources.read(ctx.op.name, ctx.op.name)


def _check_assign_shape(ctx, var_name, old, new):
    if ctx.op.get_attr("validate_shape") and old is not None and old.shape != new.shape:
        raise errors.InvalidArgumentError(
            None, ctx.op, f"Assign requires shapes of both tensors to match. lhs shape= {list(old.shape)} "
                          f"rhs shape= {list(new.shape)}\n\t [[node {ctx.op.name}]]")


def _store(ctx, name, value):
    value = ctx.xp.array(value, dtype=ctx.op.outputs[0].dtype.np_dtype, copy=True)
    ctx.resources.store(name, value)
    return value


@register_kernel("Assign", devices=("CPU",))
@register_kernel("Assign", devices=("GPU",), dtypes=_NO_INT32_ON_GPU)
def assign(ctx, value):
    name = ctx.attrs["var"].name
    with ctx.resources.lock:
        old = ctx.resources.variables.get(name)
        declared = ctx.attrs["var"].outputs[0].shape
        if old is None and ctx.op.get_attr("validate_shape") and not declared.is_compatible_with(value.shape):
            raise errors.InvalidArgumentError(
                None, ctx.op, f"Assign requires shapes of both tensors to match. lhs shape= {declared} "
                              f"rhs shape= {list(value.shape)}\n\t [[node {ctx.op.name}]]")
        _check_assign_shape(ctx, name, old, value)
        return _store(ctx, name, value)


def _update(ctx, delta, sign):
    name = ctx.attrs["var"].name
    with ctx.resources.lock:
        old = ctx.resources.read(name, ctx.op.name)
        new = old + delta if sign > 0 else old - delta
        if new.shape != old.shape:
            raise errors.InvalidArgumentError(None, ctx.op, f"{ctx.op.type} requires shapes of both tensors to "
                                                            f"match. lhs shape= {list(old.shape)} rhs shape= "
                                                            f"{list(delta.shape)}")
        new = ctx.xp.asarray(new).astype(old.dtype, copy=False)
        ctx.resources.store(name, new)
        return new


@register_kernel("AssignAdd", devices=("CPU",))
@register_kernel("AssignAdd", devices=("GPU",), dtypes=_NO_INT32_ON_GPU)
def assign_add(ctx, delta):
    return _update(ctx, delta, +1)


@register_kernel("AssignSub", devices=("CPU",))
@register_kernel("AssignSub", devices=("GPU",), dtypes=_NO_INT32_ON_GPU)
def assign_sub(ctx, delta):
    return _update(ctx, delta, -1)


@register_kernel("InitializedValue")
def initialized_value(ctx, initial):
    value = ctx.resources.variables.get(ctx.attrs["var"].name)
    return initial if value is None else value


@register_kernel("IsVariableInitialized")
def is_variable_initialized(ctx):
    return np.bool_(ctx.attrs["var"].name in ctx.resources.variables)


@register_kernel("CountUpTo", devices=("CPU",))
def count_up_to(ctx):
    name = ctx.attrs["var"].name
    limit = ctx.attrs["limit"]
    with ctx.resources.lock:
        old = np.asarray(to_host(ctx.resources.read(name, ctx.op.name)))
        if old.ndim != 0:
            shape = "[" + ",".join(str(int(d)) for d in old.shape) + "]"
            raise errors.InvalidArgumentError(None, ctx.op,
                                              f"input is not a scalar: {shape}\n\t [[node {ctx.op.name}]]")
        if old >= limit:
            raise errors.OutOfRangeError(None, ctx.op, f"Reached limit of {limit}\n\t [[node {ctx.op.name}]]")
        ctx.resources.store(name, np.asarray(old + 1, dtype=old.dtype))
        return np.array(old, copy=True)


# -- arithmetic ---------------------------------------------------------------
def _broadcasts_into(y, x) -> bool:
    """True when `y` broadcasts to exactly `x`'s shape."""
    xs, ys = x.shape, y.shape
    n = len(xs) - len(ys)
    if n < 0:
        return False
    if xs[n:] == ys:  # the common cases: same shape, or a bias along the last axes
        return True
    return all(b == a or b == 1 for a, b in zip(xs[n:], ys))


@register_kernel("Add")
@register_kernel("AddV2")
def add(ctx, x, y):
    if x.dtype == y.dtype and owns(x) and _broadcasts_into(y, x):
        x += y  # x is a dead temporary of the result's shape (e.g. a matmul result + bias)
        return x
    return x + y


@register_kernel("Sub")
def sub(ctx, x, y):
    return x - y


@register_kernel("Mul")
def mul(ctx, x, y):
    return x * y


@register_kernel("Neg")
def neg(ctx, x):
    return -x


@register_kernel("AddN")
def add_n(ctx, *xs):
    out = xs[0] + xs[1]
    for x in xs[2:]:
        out += x
    return out


@register_kernel("MatMul")
def matmul(ctx, a, b):
    if a.ndim != 2 or b.ndim != 2:  # possible when a placeholder of unknown rank is fed
        which, bad = ("In[0]", a) if a.ndim != 2 else ("In[1]", b)
        raise errors.InvalidArgumentError(None, ctx.op, f"{which} is not a matrix. Instead it has shape "
                                                        f"{_shape_text(bad.shape)}\n\t [[node {ctx.op.name}]]")
    ta, tb = a.T if ctx.attrs["transpose_a"] else a, b.T if ctx.attrs["transpose_b"] else b
    try:
        return ta @ tb
    except ValueError:  # TF's message; the shapes as given, before any transpose
        raise errors.InvalidArgumentError(
            None, ctx.op, f"Matrix size-incompatible: In[0]: {_shape_text(a.shape)}, In[1]: {_shape_text(b.shape)}"
                          f"\n\t [[node {ctx.op.name}]]") from None


def _shape_text(shape) -> str:
    return "[" + ",".join(str(d) for d in shape) + "]"


@register_kernel("Sum")
def reduce_sum(ctx, x):
    return fast_sum(ctx.xp)(x, axis=ctx.attrs["axis"], keepdims=ctx.attrs["keepdims"]).astype(x.dtype, copy=False)


@register_kernel("Cast")
def cast(ctx, x):
    return ctx.xp.asarray(x).astype(ctx.attrs["DstT"].np_dtype)


def _prod(dims) -> int:
    n = 1
    for d in dims:
        n *= d
    return n


def _sum_axes(grad_shape, shape):
    lead = len(grad_shape) - len(shape)
    return tuple(range(lead)) + tuple(lead + i for i, d in enumerate(shape) if d == 1 and grad_shape[lead + i] != 1)


@register_kernel("SumToShapeOf")
@host_inputs(1)
def sum_to_shape_of(ctx, grad, like_shape):
    """Sums the broadcast axes away.

    A fully defined static `like_shape` is the runtime shape: reading the shape tensor
    instead would be a device->host sync per step on a GPU (and breaks CUDA-graph capture).
    The reduction chosen for a (grad shape, dtype) is kept, so a step that sees the same
    shapes as the last one goes straight to it: one dict lookup, then numpy/BLAS.
    """
    last = ctx.attrs.get("_last")
    if last is not None and last[0] == grad.shape and last[1] == grad.dtype:
        return last[2](grad)
    shape = ctx.attrs.get("_static_shape")
    if shape is None:
        static = ctx.attrs.get("like_shape")
        full = static is not None and static.is_fully_defined()
        shape = ctx.attrs["_static_shape"] = tuple(int(d) for d in static.as_tuple()) if full else False
    static = shape is not False
    if not static:
        shape = tuple(like_shape.tolist())
    reduce = _sum_to(ctx.xp, grad, shape)
    if static:  # the target is fixed: the choice depends on the grad's shape and dtype only
        ctx.attrs["_last"] = (grad.shape, grad.dtype, reduce)
    return reduce(grad)


def _sum_to(xp, grad, shape):
    """A function summing arrays shaped and typed like `grad` down to `shape`."""
    if grad.shape == shape:
        return _identity
    axes = _sum_axes(grad.shape, shape)
    if axes == tuple(range(len(axes))) and axes and grad.size and grad.dtype.kind == "f":
        # A bias gradient (dense: [batch, units]; conv: [batch, h, w, channels]): the leading axes
        # summed away. A BLAS gemv with a ones vector is 2-10x faster than numpy's reduction.
        rows = grad.size // _prod(grad.shape[len(axes):])
        ones = xp.ones(rows, grad.dtype)
        return lambda g: (ones @ g.reshape(rows, -1)).reshape(shape)
    if not axes:  # same elements, another rank (e.g. [1, n] to [n])
        return lambda g: g.reshape(shape)
    total = fast_sum(xp)
    return lambda g: total(g, axis=axes, keepdims=True).reshape(shape).astype(g.dtype, copy=False)


def _identity(x):
    return x


@register_kernel("BroadcastLike")
def broadcast_like(ctx, x, like):
    return broadcast(ctx.xp, x, like.shape)


@register_kernel("ReductionGrad")
def reduction_grad(ctx, grad, like):
    if grad.ndim:
        grad = grad.reshape(keepdims_shape(ctx, grad.shape, like.shape))
    return broadcast(ctx.xp, grad, like.shape)
