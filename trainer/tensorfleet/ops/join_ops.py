"""Join/split ops: concat, stack, unstack, split, tile, and the composites built on them: roll (the two parts of
each rolled axis joined in the other order; static shifts) and meshgrid (vectors broadcast into grids).

Sits in `ops/` beside `array_ops` (re-exported from there); kernels in `kernels/array_kernels.py`.
"""
from __future__ import annotations

__all__ = ["concat", "stack", "unstack", "split", "tile", "roll", "meshgrid"]

import numpy as np

from ..default_graph import name_scope
from . import computed_bounds_ops as _bounds
from .common import (TensorShape, convert_to_tensor, is_tensor_like, make_op, make_tensor, register_gradient,
                     register_op, unknown_shape)
from .shape_util import axis_arg, constant_value, normalize_axis


def _merge_except(shapes, axis, what):
    """Merges shapes in all dims but `axis` (TF's concat error text on mismatch)."""
    base = None
    for s in shapes:
        if s.ndims is None:
            continue
        if base is None:
            base = s
            continue
        if s.ndims != base.ndims:
            raise ValueError(f"Shape must be rank {base.ndims} but is rank {s.ndims}")
        merged = []
        for i, (a, b) in enumerate(zip(base.as_tuple(), s.as_tuple())):
            if i == axis:
                merged.append(None if a is None or b is None else a + b if what == "concat" else a)
            elif a is not None and b is not None and a != b:
                raise ValueError(f"Dimension {i} in both shapes must be equal, but are {a} and {b}. "
                                 f"Shapes are {list(base.as_tuple())} and {list(s.as_tuple())}.")
            else:
                merged.append(a if a is not None else b)
        base = TensorShape(merged)
    return base


# -- ConcatV2 -----------------------------------------------------------------
def _concat_shape(op):
    xs = op.inputs
    for t in xs[1:]:
        if t.dtype is not xs[0].dtype:
            raise TypeError(f"ConcatV2: all values must have dtype {xs[0].dtype.name}, got {t.dtype.name}")
    ranks = {t.shape.ndims for t in xs if t.shape.ndims is not None}
    if not ranks:
        return [(xs[0].dtype, unknown_shape())]
    if len(ranks) > 1:
        raise ValueError(f"Shape must be rank {min(ranks)} but is rank {max(ranks)}")
    axis = normalize_axis(op.get_attr("axis"), ranks.pop())
    shape = _merge_except([t.shape for t in xs], axis, "concat")
    if any(t.shape.ndims is None for t in xs):
        shape = TensorShape([None if i == axis else d for i, d in enumerate(shape.as_tuple())])
    return [(xs[0].dtype, shape)]


register_op("ConcatV2", _concat_shape)


def concat(values, axis, name="concat"):
    """`tf.concat(values, axis)`: joins along an existing axis (a single value passes through Identity)."""
    values = [convert_to_tensor(v) for v in values]
    if not values:
        raise ValueError("concat needs at least one value")
    axis = int(axis_arg(axis))
    if len(values) == 1:
        return make_tensor("Identity", values, name=name)
    return make_tensor("ConcatV2", values, {"axis": axis}, name=name)


# ConcatGrad(grad, *values) -> one slice of grad per value, sized like it at run time.
def _concat_grad_shape(op):
    return [(op.inputs[0].dtype, t.shape) for t in op.inputs[1:]]


register_op("ConcatGrad", _concat_grad_shape)


@register_gradient("ConcatV2")
def _concat_grad(op, grad):
    return list(make_op("ConcatGrad", [grad, *op.inputs], {"axis": op.get_attr("axis")}, name="ConcatGrad").outputs)


@register_gradient("ConcatGrad")
def _concat_grad_grad(op, *grads):
    return [make_tensor("ConcatV2", list(grads), {"axis": op.get_attr("axis")}, name="concat")] + \
        [None] * (len(op.inputs) - 1)


# -- Pack / Unpack ------------------------------------------------------------
def _pack_shape(op):
    xs = op.inputs
    for t in xs[1:]:
        if t.dtype is not xs[0].dtype:
            raise TypeError(f"Pack: all values must have dtype {xs[0].dtype.name}, got {t.dtype.name}")
    shape = _merge_except([t.shape for t in xs], -1, "stack")
    if shape is None:
        return [(xs[0].dtype, unknown_shape())]
    n = shape.ndims
    axis = op.get_attr("axis")
    if not -n - 1 <= axis <= n:
        raise ValueError(f"axis = {axis} not in [{-n - 1}, {n + 1})")
    dims = list(shape.as_tuple())
    dims.insert(axis % (n + 1), len(xs))
    return [(xs[0].dtype, TensorShape(dims))]


register_op("Pack", _pack_shape)


def stack(values, axis=0, name="stack"):
    """`tf.stack(values, axis=0)`: joins along a new axis (op Pack)."""
    values = [convert_to_tensor(v) for v in values]
    if not values:
        raise ValueError("stack needs at least one value")
    return make_tensor("Pack", values, {"axis": int(axis_arg(axis))}, name=name)


@register_gradient("Pack")
def _pack_grad(op, grad):
    return list(make_op("Unpack", [grad], {"num": len(op.inputs), "axis": op.get_attr("axis")},
                        name="unstack").outputs)


def _unpack_shape(op):
    x = op.inputs[0]
    num, axis = op.get_attr("num"), op.get_attr("axis")
    if x.shape.ndims is None:
        return [(x.dtype, unknown_shape())] * num
    dims = list(x.shape.as_tuple())
    axis = normalize_axis(axis, len(dims))
    if dims[axis] is not None and dims[axis] != num:
        raise ValueError(f"Dimension must be {num} but is {dims[axis]}")
    del dims[axis]
    return [(x.dtype, TensorShape(dims))] * num


register_op("Unpack", _unpack_shape)


def unstack(value, num=None, axis=0, name="unstack"):
    """`tf.unstack`: splits along `axis` into a list of tensors (num inferred from the static shape)."""
    value = convert_to_tensor(value)
    axis = int(axis_arg(axis))
    if num is None:
        if value.shape.ndims is None:
            raise ValueError(f"Cannot infer num from shape {value.shape}")
        num = value.shape[normalize_axis(axis, value.shape.ndims)]
        if num is None:
            raise ValueError(f"Cannot infer num from shape {value.shape}")
    return list(make_op("Unpack", [value], {"num": int(num), "axis": axis}, name=name).outputs)


@register_gradient("Unpack")
def _unpack_grad(op, *grads):
    return [make_tensor("Pack", list(grads), {"axis": op.get_attr("axis")}, name="stack")]


# -- Split / SplitV -----------------------------------------------------------
def _split_shape(op):
    x = op.inputs[0]
    sizes = op.get_attr("size_splits")
    n = len(sizes)
    if x.shape.ndims is None:
        return [(x.dtype, unknown_shape())] * n
    dims = list(x.shape.as_tuple())
    axis = normalize_axis(op.get_attr("axis"), len(dims))
    d = dims[axis]
    if op.type == "Split":
        if d is not None and d % n:
            raise ValueError(f"Dimension size must be evenly divisible by {n} but is {d}")
        sizes = [None if d is None else d // n] * n
    else:
        if sum(1 for s in sizes if s == -1) > 1:
            raise ValueError("Only one dimension can have a value of -1 in size_splits")
        known = sum(s for s in sizes if s != -1)
        if d is not None and (known > d or (-1 not in sizes and known != d)):
            raise ValueError(f"Determined shape must either match input shape along split_dim exactly if fully "
                             f"specified, or be less than the size of the input along split_dim if not fully "
                             f"specified.  Got: {known}")
        sizes = [(None if d is None else d - known) if s == -1 else s for s in sizes]
    return [(x.dtype, TensorShape(dims[:axis] + [s] + dims[axis + 1:])) for s in sizes]


register_op("Split", _split_shape)
register_op("SplitV", _split_shape)


def split(value, num_or_size_splits, axis=0, num=None, name="split"):
    """`tf.split`: an int splits evenly (op Split), a list gives the sizes (op SplitV, one -1 allowed)."""
    value = convert_to_tensor(value)
    axis = int(axis_arg(axis))
    sizes = axis_arg(num_or_size_splits, "num_or_size_splits")
    if isinstance(sizes, int):
        if sizes <= 0:
            raise ValueError(f"num_or_size_splits must be positive, got {sizes}")
        op = make_op("Split", [value], {"axis": axis, "size_splits": (None,) * sizes}, name=name)
    else:
        op = make_op("SplitV", [value], {"axis": axis, "size_splits": tuple(sizes)}, name=name)
    return list(op.outputs)


def _split_grad(op, *grads):
    return [make_tensor("ConcatV2", list(grads), {"axis": op.get_attr("axis")}, name="concat")]


register_gradient("Split")(_split_grad)
register_gradient("SplitV")(_split_grad)


# -- Tile ---------------------------------------------------------------------
def _tile_shape(op):
    x = op.inputs[0]
    if len(op.inputs) == 2:  # computed multiples (computed_bounds_ops)
        return [(x.dtype, _bounds.dynamic_tile_shape(op))]
    m = op.get_attr("multiples")
    if x.shape.ndims is None:
        return [(x.dtype, unknown_shape(len(m)))]
    if len(m) != x.shape.ndims:
        raise ValueError(f"Shape must be rank 1 with {x.shape.ndims} elements (multiples has {len(m)}) for 'Tile'")
    if any(k < 0 for k in m):
        raise ValueError(f"Expected multiples >= 0, got {list(m)}")
    return [(x.dtype, TensorShape([None if d is None else d * k for d, k in zip(x.shape.as_tuple(), m)]))]


register_op("Tile", _tile_shape)
register_op("TileGrad", lambda op: [(op.inputs[0].dtype, op.inputs[1].shape)])


def tile(input, multiples, name=None):
    """`tf.tile(input, multiples)`: repeats the tensor `multiples[i]` times along dim i (multiples may be
    computed in the graph, e.g. `[tf.shape(y)[0], 1]`)."""
    if is_tensor_like(multiples) or isinstance(multiples, (list, tuple)):
        m_t = convert_to_tensor(multiples, name="multiples")
        if constant_value(m_t) is None:
            return _bounds.tile_computed(input, m_t, name=name)
    m = axis_arg(multiples, "multiples")
    m = (m,) if isinstance(m, int) else tuple(m)
    return make_tensor("Tile", [convert_to_tensor(input)], {"multiples": m}, name=name, default_name="Tile")


@register_gradient("Tile")
def _tile_grad(op, grad):
    extra = list(op.inputs[1:])  # computed multiples
    return [make_tensor("TileGrad", [grad, op.inputs[0]] + extra, dict(op.attrs), name="TileGrad")] + \
        [None] * len(extra)


@register_gradient("TileGrad")
def _tile_grad_grad(op, grad):
    extra = list(op.inputs[2:])
    return [make_tensor("Tile", [grad] + extra, dict(op.attrs), name="Tile"), None] + [None] * len(extra)


# -- roll, meshgrid (composites) ----------------------------------------------
def roll(input, shift, axis, name=None):
    """`tf.roll` with static shifts: elements leaving one end come back at the other (numpy's np.roll)."""
    with name_scope(name, "Roll", [input]):
        x = convert_to_tensor(input)
        shifts, axes = np.atleast_1d(shift).tolist(), np.atleast_1d(axis).tolist()
        for s, ax in zip(shifts, axes, strict=True):
            n = x.shape.as_list()[ax]
            if n is None:
                raise ValueError("roll: the rolled dimensions must be known")
            s = int(s) % n
            if s:
                begin = [slice(None)] * x.shape.ndims
                head, tail = list(begin), list(begin)
                head[ax], tail[ax] = slice(n - s, None), slice(None, n - s)
                x = concat([x[tuple(head)], x[tuple(tail)]], ax)
        return x


def meshgrid(*args, **kwargs):
    """`tf.meshgrid(*vectors, indexing='xy')`, as numpy.meshgrid."""
    from . import array_ops as _a, math_ops as _m  # late: array_ops imports this module
    indexing = kwargs.pop("indexing", "xy")
    name = kwargs.pop("name", "meshgrid")
    if kwargs:
        raise TypeError(f"meshgrid got unexpected keyword arguments {sorted(kwargs)}")
    if indexing not in ("xy", "ij"):
        raise ValueError("indexing parameter must be either 'xy' or 'ij'")
    with name_scope(name, "meshgrid", args):
        vecs = [_a.reshape(convert_to_tensor(v), [-1]) for v in args]
        n = len(vecs)
        shapes = [_a.size(v) for v in vecs]
        if indexing == "xy" and n > 1:
            shapes[0], shapes[1] = shapes[1], shapes[0]
        out = []
        for i, v in enumerate(vecs):
            axis = (1 - i if i < 2 else i) if indexing == "xy" and n > 1 else i
            shape = [1] * n
            shape[axis] = -1
            out.append(_m.add(_a.reshape(v, shape), _a.zeros(_a.stack(shapes), dtype=v.dtype)))
        return out
