"""More sparse variable updates: `tf.scatter_mul`, `tf.scatter_div`, `tf.scatter_min`, `tf.scatter_max`
(ScatterMul/Div/Min/Max), `tf.scatter_nd_update`, `tf.scatter_nd_add`, `tf.scatter_nd_sub`
(ScatterNdUpdate/Add/Sub), and `tf.count_up_to` (CountUpTo).

Sits in `ops/` beside scatter_ops.py and follows it: each op carries the variable op in attr `var`
(declared in the registry as the variable it writes, `updates_variables`), is colocated with it, and its
kernel (kernels/scatter_extra_kernels.py) stores the new array with `ctx.resources.store` and returns it.
Duplicate indices, as TF documents: mul/div/min/max combine every contribution (x * a * b, x / a / b,
min(x, a, b), max(x, a, b)); nd_add/nd_sub accumulate; nd_update keeps one of them (TF: unspecified; here
the last). Out-of-range indices raise InvalidArgumentError at run time naming the node.
count_up_to returns the variable's value before the increment and raises OutOfRangeError
"Reached limit of N" once the value is >= limit.
"""
from __future__ import annotations

__all__ = ["scatter_mul", "scatter_div", "scatter_min", "scatter_max", "scatter_nd_update", "scatter_nd_add",
           "scatter_nd_sub", "count_up_to"]

from .. import dtypes as _dtypes
from ..tensor_shape import TensorShape
from .common import NotDifferentiable, make_tensor, register_op
from .scatter_ops import _scatter, _scatter_shape
from .segment_ops import _NUMBER_TYPES, _REAL_TYPES, check_dtype
from .state_ops import _var_op

for _t in ("ScatterMul", "ScatterDiv", "ScatterMin", "ScatterMax"):
    register_op(_t, _scatter_shape, updates_variables=("var",))
    NotDifferentiable(_t)


def _checked_scatter(op_type, ref, indices, updates, use_locking, name, allowed):
    check_dtype("ref", _var_op(ref).outputs[0], allowed)
    return _scatter(op_type, ref, indices, updates, use_locking, name)


def scatter_mul(ref, indices, updates, use_locking=False, name=None):
    """`tf.scatter_mul`: ref[indices, ...] *= updates (repeated indices multiply together)."""
    return _checked_scatter("ScatterMul", ref, indices, updates, use_locking, name, _NUMBER_TYPES)


def scatter_div(ref, indices, updates, use_locking=False, name=None):
    """`tf.scatter_div`: ref[indices, ...] /= updates (repeated indices divide in turn; integers truncate)."""
    return _checked_scatter("ScatterDiv", ref, indices, updates, use_locking, name, _NUMBER_TYPES)


def scatter_min(ref, indices, updates, use_locking=False, name=None):
    """`tf.scatter_min`: ref[indices, ...] = min(ref[indices, ...], updates) (repeated indices combine)."""
    return _checked_scatter("ScatterMin", ref, indices, updates, use_locking, name, _REAL_TYPES)


def scatter_max(ref, indices, updates, use_locking=False, name=None):
    """`tf.scatter_max`: ref[indices, ...] = max(ref[indices, ...], updates) (repeated indices combine)."""
    return _checked_scatter("ScatterMax", ref, indices, updates, use_locking, name, _REAL_TYPES)


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


# -- count_up_to -------------------------------------------------------------------------------------------
def _count_up_to_shape(op):
    var = op.get_attr("var").outputs[0]
    if var.shape.ndims not in (None, 0):
        raise ValueError(f"Shape must be rank 0 but is rank {var.shape.ndims}")
    return [(var.dtype, TensorShape([]))]


register_op("CountUpTo", _count_up_to_shape, updates_variables=("var",))
NotDifferentiable("CountUpTo")


def count_up_to(ref, limit, name=None):
    """`tf.count_up_to`: increments the int scalar variable `ref` and returns its value before the increment;
    OutOfRangeError "Reached limit of <limit>" at run time when the value is already >= limit."""
    var_op = _var_op(ref)
    check_dtype("ref", var_op.outputs[0], (_dtypes.int32, _dtypes.int64))
    with var_op.graph.colocate_with(var_op):
        return make_tensor("CountUpTo", [], {"var": var_op, "limit": int(limit)}, name=name,
                           default_name="CountUpTo")

