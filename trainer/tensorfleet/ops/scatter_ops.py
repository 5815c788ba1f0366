"""Sparse variable updates: `tf.scatter_update`, `tf.scatter_add`, `tf.scatter_sub` (ScatterUpdate/Add/Sub),
`tf.scatter_mul`, `tf.scatter_div`, `tf.scatter_min`, `tf.scatter_max` (ScatterMul/Div/Min/Max) and
`tf.scatter_nd_update`, `tf.scatter_nd_add`, `tf.scatter_nd_sub` (ScatterNdUpdate/Add/Sub).

Sits in `ops/` beside state_ops: like Assign, each op carries the variable op in attr `var` (declared in
the op registry as the variable it writes, `updates_variables`) and is colocated with it; the kernel
(kernels/scatter_kernels.py) stores a new array with `ctx.resources.store` and returns it (TF returns the
updated ref). The scatter_* ops index rows along the variable's first axis:
`updates` has shape indices.shape + var.shape[1:] (or is a scalar); scatter_nd_* index with the tuples in the
last K dims of indices. Repeated indices: add/sub and nd_add/nd_sub accumulate; mul/div/min/max combine every
contribution (x * a * b, x / a / b, min(x, a, b), max(x, a, b)), as TF documents; update and nd_update keep
the last (TF leaves the order unspecified). Out-of-range indices raise InvalidArgumentError at run time naming
the node ("indices[1] = 7 is not in [0, 5)").
"""
from __future__ import annotations

__all__ = ["scatter_update", "scatter_add", "scatter_sub", "scatter_mul", "scatter_div", "scatter_min",
           "scatter_max", "scatter_nd_update", "scatter_nd_add", "scatter_nd_sub"]

from .common import (NUMBER_TYPES, REAL_TYPES, NotDifferentiable, check_dtype, convert_to_tensor, make_tensor,
                     register_op)
from .state_ops import _var_op


def _scatter_shape(op):
    var = op.get_attr("var").outputs[0]
    indices, updates = op.inputs
    vshape = var.shape
    if vshape.ndims is not None and vshape.ndims < 1:
        raise ValueError("Shape must be at least rank 1 but is rank 0")
    if updates.shape.ndims not in (None, 0) and indices.shape.ndims is not None and vshape.ndims is not None:
        expected = indices.shape.concatenate(vshape[1:])
        if updates.shape.ndims != expected.ndims:
            raise ValueError(f"Shapes must be equal rank, but are {updates.shape.ndims} and {expected.ndims}")
        for i, (a, b) in enumerate(zip(updates.shape.as_tuple(), expected.as_tuple())):
            if a is not None and b is not None and a != b:
                raise ValueError(f"Dimension {i} in both shapes must be equal, but are {a} and {b}. Shapes are "
                                 f"{updates.shape.as_list()} and {expected.as_list()}.")
    return [(var.dtype, vshape)]


for _t in ("ScatterUpdate", "ScatterAdd", "ScatterSub"):
    register_op(_t, _scatter_shape, updates_variables=("var",))  # (stateful: it writes the variable)
    NotDifferentiable(_t)


def _scatter(op_type, ref, indices, updates, use_locking, name):
    var_op = _var_op(ref)
    indices = convert_to_tensor(indices)
    if not indices.dtype.is_integer:
        raise TypeError(f"Value passed to parameter 'indices' has DataType {indices.dtype.name} not in list of "
                        f"allowed values: int32, int64")
    updates = convert_to_tensor(updates, dtype=var_op.outputs[0].dtype)
    with var_op.graph.colocate_with(var_op):
        return make_tensor(op_type, [indices, updates], {"var": var_op, "use_locking": bool(use_locking)},
                           name=name, default_name=op_type)


def scatter_update(ref, indices, updates, use_locking=True, name=None):
    """`tf.scatter_update`: ref[indices, ...] = updates; returns the variable's new value."""
    return _scatter("ScatterUpdate", ref, indices, updates, use_locking, name)


def scatter_add(ref, indices, updates, use_locking=False, name=None):
    """`tf.scatter_add`: ref[indices, ...] += updates (repeated indices accumulate)."""
    return _scatter("ScatterAdd", ref, indices, updates, use_locking, name)


def scatter_sub(ref, indices, updates, use_locking=False, name=None):
    """`tf.scatter_sub`: ref[indices, ...] -= updates (repeated indices accumulate)."""
    return _scatter("ScatterSub", ref, indices, updates, use_locking, name)


# -- scatter_mul / div / min / max ---------------------------------------------------------------------
for _t in ("ScatterMul", "ScatterDiv", "ScatterMin", "ScatterMax"):
    register_op(_t, _scatter_shape, updates_variables=("var",))
    NotDifferentiable(_t)


def _checked_scatter(op_type, ref, indices, updates, use_locking, name, allowed):
    check_dtype("ref", _var_op(ref).outputs[0], allowed)
    return _scatter(op_type, ref, indices, updates, use_locking, name)


def scatter_mul(ref, indices, updates, use_locking=False, name=None):
    """`tf.scatter_mul`: ref[indices, ...] *= updates (repeated indices multiply together)."""
    return _checked_scatter("ScatterMul", ref, indices, updates, use_locking, name, NUMBER_TYPES)


def scatter_div(ref, indices, updates, use_locking=False, name=None):
    """`tf.scatter_div`: ref[indices, ...] /= updates (repeated indices divide in turn; integers truncate)."""
    return _checked_scatter("ScatterDiv", ref, indices, updates, use_locking, name, NUMBER_TYPES)


def scatter_min(ref, indices, updates, use_locking=False, name=None):
    """`tf.scatter_min`: ref[indices, ...] = min(ref[indices, ...], updates) (repeated indices combine)."""
    return _checked_scatter("ScatterMin", ref, indices, updates, use_locking, name, REAL_TYPES)


def scatter_max(ref, indices, updates, use_locking=False, name=None):
    """`tf.scatter_max`: ref[indices, ...] = max(ref[indices, ...], updates) (repeated indices combine)."""
    return _checked_scatter("ScatterMax", ref, indices, updates, use_locking, name, REAL_TYPES)


# -- scatter_nd_* ----------------------------------------------------------------------------------------
def _dims_text(shape):
    return "?" if shape.ndims is None else "[" + ",".join("?" if d is None else str(d) for d in shape.as_list()) \
        + "]"


def _merge_text(a, b):
    """'' when the dimension lists agree where both are known, else TF's Merge message."""
    if len(a) != len(b):
        return f"Shapes must be equal rank, but are {len(a)} and {len(b)}"
    for i, (x, y) in enumerate(zip(a, b)):
        if x is not None and y is not None and x != y:
            return f"Dimension {i} in both shapes must be equal, but are {x} and {y}. Shapes are {a} and {b}."
    return ""


def _scatter_nd_shape(op):
    """TF's ScatterNdUpdateShape: indices [..., K], updates = indices.shape[:-1] + ref.shape[K:]."""
    ref = op.get_attr("var").outputs[0].shape
    indices, updates = op.inputs
    for t in (indices, updates):
        if t.shape.ndims == 0:
            raise ValueError("Shape must be at least rank 1 but is rank 0")
    if ref.ndims is not None and ref.num_elements() == 0 and (
            indices.shape.num_elements() or updates.shape.num_elements()):
        raise ValueError("Indices and updates specified for empty output shape")
    if indices.shape.ndims is not None and updates.shape.ndims is not None and indices.shape[-1] is not None:
        outer = indices.shape.ndims - 1
        k = int(indices.shape[-1])
        why = _merge_text(indices.shape.as_list()[:outer], updates.shape.as_list()[:outer])
        if why:
            raise ValueError(f"The outer {outer} dimensions of indices.shape={_dims_text(indices.shape)} must match "
                             f"the outer {outer} dimensions of updates.shape={_dims_text(updates.shape)}: {why}")
        if ref.ndims is not None:
            if k > ref.ndims:
                raise ValueError(f"Shape must be at least rank {k} but is rank {ref.ndims}")
            why = _merge_text(ref.as_list()[k:], updates.shape.as_list()[outer:])
            if why:
                raise ValueError(f"The inner {ref.ndims - k} dimensions of input.shape={_dims_text(ref)} must match "
                                 f"the inner {updates.shape.ndims - outer} dimensions of updates.shape="
                                 f"{_dims_text(updates.shape)}: {why}")
    return [(op.get_attr("var").outputs[0].dtype, ref)]


for _t in ("ScatterNdUpdate", "ScatterNdAdd", "ScatterNdSub"):
    register_op(_t, _scatter_nd_shape, updates_variables=("var",))
    NotDifferentiable(_t)


def scatter_nd_update(ref, indices, updates, use_locking=True, name=None):
    """`tf.scatter_nd_update`: ref[indices[i]] = updates[i] for each index tuple (the last K dims of indices)."""
    return _scatter("ScatterNdUpdate", ref, indices, updates, use_locking, name)


def scatter_nd_add(ref, indices, updates, use_locking=False, name=None):
    """`tf.scatter_nd_add`: ref[indices[i]] += updates[i] (repeated index tuples accumulate)."""
    return _scatter("ScatterNdAdd", ref, indices, updates, use_locking, name)


def scatter_nd_sub(ref, indices, updates, use_locking=False, name=None):
    """`tf.scatter_nd_sub`: ref[indices[i]] -= updates[i] (repeated index tuples accumulate)."""
    return _scatter("ScatterNdSub", ref, indices, updates, use_locking, name)
