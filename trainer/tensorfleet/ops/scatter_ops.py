"""Sparse variable updates: `tf.scatter_update`, `tf.scatter_add`, `tf.scatter_sub` (ScatterUpdate/Add/Sub).

Sits in `ops/` beside state_ops: like Assign, each op carries the variable op in attr `var` (declared in
the op registry as the variable it writes, `updates_variables`) and is colocated with it; the kernel
(kernels/index_kernels.py) stores a new array with `ctx.resources.store` and returns it (TF returns the
updated ref). Rows are indexed along the variable's first axis;
`updates` has shape indices.shape + var.shape[1:] (or is a scalar). Repeated indices: add/sub
accumulate; update keeps the last (TF leaves the order unspecified). Out-of-range indices raise
InvalidArgumentError at run time ("indices[1] = 7 is not in [0, 5)").
"""
from __future__ import annotations

__all__ = ["scatter_update", "scatter_add", "scatter_sub"]

from .common import NotDifferentiable, convert_to_tensor, make_tensor, register_op
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
