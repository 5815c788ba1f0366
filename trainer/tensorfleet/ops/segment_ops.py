"""TF 1.15's segment reductions, sorted and unsorted: `tf.(math.)segment_sum`, `segment_mean`, `segment_max`,
`segment_min`, `segment_prod` and `unsorted_segment_sum`, `unsorted_segment_mean`, `unsorted_segment_sqrt_n`,
`unsorted_segment_max`, `unsorted_segment_min`, `unsorted_segment_prod` (ops UnsortedSegmentSum,
SegmentMax/Min/Prod, UnsortedSegmentMax/Min/Prod).

Sits in `ops/`; kernels in kernels/segment_kernels.py. As TF 1.15:
* sums and means: UnsortedSegmentSum drops negative ids, and its gradient gathers the incoming gradient (zero
  for the dropped rows); segment_sum / segment_mean (sorted ids: num_segments is the last id + 1),
  unsorted_segment_mean and unsorted_segment_sqrt_n are composites of it (an empty segment gives 0).
* sorted max / min / prod: segment_ids is a sorted int vector as long as data's first dimension; the output has
  segment_ids[-1] + 1 rows; an empty segment gives 0 (max, min) or 1 (prod). Shape: [?] + data.shape[1:].
* unsorted max / min / prod: segment_ids has any shape that prefixes data's; ids < 0 are dropped; the output has
  num_segments rows; an empty segment gives the dtype's lowest value (max), highest value (min) or 1 (prod).
* gradients are TF's: max/min send each output gradient to the inputs equal to the result, split equally
  among ties (_SegmentMinOrMaxGrad, _UnsortedSegmentMinOrMaxGrad); prod divides the segment product by each
  element, with zeros handled case by case (_UnsortedSegmentProdGrad; for the sorted SegmentProd TF 1.15
  registers no gradient: this is the _SegmentProdGrad of later TF versions).
"""
from __future__ import annotations

__all__ = ["segment_sum", "segment_mean", "unsorted_segment_sum", "unsorted_segment_mean", "unsorted_segment_sqrt_n",
           "segment_max", "segment_min", "segment_prod", "unsorted_segment_max", "unsorted_segment_min",
           "unsorted_segment_prod"]

from .. import dtypes as _dtypes
from ..default_graph import name_scope
from ..tensor_shape import TensorShape, unknown_shape
from . import array_ops as _a
from . import math_ops as _m
from .common import (INDEX_TYPES, NUMBER_TYPES, REAL_TYPES, check_dtype, convert_to_tensor, make_tensor,
                     register_gradient, register_op)
from .shape_util import constant_value

# -- sums and means (UnsortedSegmentSum) ----------------------------------------------------------------------
def _segment_shape(op):
    data, ids = op.inputs[0], op.inputs[1]
    n = constant_value(op.inputs[2])
    rest = data.shape.as_list()[ids.shape.ndims:] if data.shape.ndims is not None and ids.shape.ndims else None
    if rest is None:
        return [(data.dtype, unknown_shape())]
    return [(data.dtype, TensorShape([None if n is None else int(n)] + rest))]


register_op("UnsortedSegmentSum", _segment_shape)


@register_gradient("UnsortedSegmentSum")
def _unsorted_segment_sum_grad(op, grad):
    from .slicing_ops import gather
    ids = op.inputs[1]
    safe = _m.maximum(ids, _a.zeros_like(ids))  # negative ids were dropped: their rows get zero gradient
    kept = _m.cast(_m.greater_equal(ids, _a.zeros_like(ids)), grad.dtype)
    g = gather(grad, safe)
    mask = _a.reshape(kept, _a.concat([_a.shape(ids), _a.ones_like(_a.shape(g)[ids.shape.ndims:])], 0)) \
        if ids.shape.ndims is not None else kept
    return [_m.multiply(g, mask), None, None]


def unsorted_segment_sum(data, segment_ids, num_segments, name=None):
    """`tf.math.unsorted_segment_sum`: out[i] = sum of data[j] with segment_ids[j] == i (negative ids dropped)."""
    data = convert_to_tensor(data)
    ids = convert_to_tensor(segment_ids)
    if not ids.dtype.is_integer:
        raise TypeError(f"segment_ids must be int32 or int64, got {ids.dtype.name}")
    num = convert_to_tensor(num_segments)  # TF: its own int32/int64 type (Tnumsegments), not ids' type
    if num.dtype not in (_dtypes.int32, _dtypes.int64):
        raise TypeError(f"num_segments must be int32 or int64, got {num.dtype.name}")
    return make_tensor("UnsortedSegmentSum", [data, ids, num], name=name, default_name="UnsortedSegmentSum")


def _segment_counts(segment_ids, num_segments, dtype):
    ones = _a.ones_like(_m.cast(convert_to_tensor(segment_ids), dtype))
    return unsorted_segment_sum(ones, segment_ids, num_segments)


def _broadcast_counts(counts, data):
    data = convert_to_tensor(data)
    extra = data.shape.ndims - 1 if data.shape.ndims else 0
    return _a.reshape(counts, [-1] + [1] * extra)


def unsorted_segment_mean(data, segment_ids, num_segments, name=None):
    """`tf.math.unsorted_segment_mean` (empty segments give 0)."""
    with name_scope(name, "UnsortedSegmentMean", [data, segment_ids]):
        data = convert_to_tensor(data)
        counts = _m.maximum(_segment_counts(segment_ids, num_segments, data.dtype), 1.0)
        return _m.divide(unsorted_segment_sum(data, segment_ids, num_segments), _broadcast_counts(counts, data))


def unsorted_segment_sqrt_n(data, segment_ids, num_segments, name=None):
    """`tf.math.unsorted_segment_sqrt_n`: the segment sum divided by sqrt(count)."""
    with name_scope(name, "UnsortedSegmentSqrtN", [data, segment_ids]):
        data = convert_to_tensor(data)
        counts = _m.maximum(_segment_counts(segment_ids, num_segments, data.dtype), 1.0)
        return _m.divide(unsorted_segment_sum(data, segment_ids, num_segments),
                         _broadcast_counts(_m.sqrt(counts), data))


def _num_segments(segment_ids):
    ids = convert_to_tensor(segment_ids)
    return _m.add(_m.reduce_max(ids), _a.constant(1, dtype=ids.dtype))


def segment_sum(data, segment_ids, name=None):
    """`tf.math.segment_sum` (sorted ids: num_segments is the last id + 1)."""
    with name_scope(name, "SegmentSum", [data, segment_ids]):
        return unsorted_segment_sum(data, segment_ids, _num_segments(segment_ids))


def segment_mean(data, segment_ids, name=None):
    """`tf.math.segment_mean`."""
    with name_scope(name, "SegmentMean", [data, segment_ids]):
        return unsorted_segment_mean(data, segment_ids, _num_segments(segment_ids))


# -- max / min / prod: shape functions ------------------------------------------------------------------------
def _sorted_shape(op):
    data, ids = op.inputs[0], op.inputs[1]
    if data.shape.ndims is not None and data.shape.ndims < 1:
        raise ValueError(f"Shape must be at least rank 1 but is rank {data.shape.ndims}")
    if ids.shape.ndims is not None and ids.shape.ndims != 1:
        raise ValueError(f"Shape must be rank 1 but is rank {ids.shape.ndims}")
    if data.shape.ndims is None:
        return [(data.dtype, unknown_shape())]
    return [(data.dtype, TensorShape([None] + data.shape.as_list()[1:]))]


def _unsorted_shape(op):
    data, ids, num = op.inputs
    if num.shape.ndims not in (None, 0):
        raise ValueError(f"Shape must be rank 0 but is rank {num.shape.ndims}")
    if ids.shape.ndims is None:
        return [(data.dtype, unknown_shape())]
    k = ids.shape.ndims
    if data.shape.ndims is not None:
        if data.shape.ndims < k:
            raise ValueError(f"Shape must be at least rank {k} but is rank {data.shape.ndims}")
        for i, (a, b) in enumerate(zip(data.shape.as_list()[:k], ids.shape.as_list())):
            if a is not None and b is not None and a != b:
                raise ValueError(f"Dimension {i} in both shapes must be equal, but are {a} and {b}. Shapes are "
                                 f"{data.shape.as_list()[:k]} and {ids.shape.as_list()}.")
    n = constant_value(num)
    if n is not None and int(n) < 0:
        raise ValueError(f"Dimension size, given by scalar input 2, must be non-negative but is {int(n)}")
    if data.shape.ndims is None:
        return [(data.dtype, unknown_shape())]
    return [(data.dtype, TensorShape([None if n is None else int(n)] + data.shape.as_list()[k:]))]


for _t in ("SegmentMax", "SegmentMin", "SegmentProd"):
    register_op(_t, _sorted_shape)
for _t in ("UnsortedSegmentMax", "UnsortedSegmentMin", "UnsortedSegmentProd"):
    register_op(_t, _unsorted_shape)


# -- max / min / prod: wrappers -------------------------------------------------------------------------------
def _sorted(op_type, data, segment_ids, name, allowed):
    data = convert_to_tensor(data, name="data")
    ids = convert_to_tensor(segment_ids, name="segment_ids")
    check_dtype("data", data, allowed)
    check_dtype("segment_ids", ids, INDEX_TYPES)
    return make_tensor(op_type, [data, ids], name=name, default_name=op_type)


def _unsorted(op_type, data, segment_ids, num_segments, name, allowed):
    data = convert_to_tensor(data, name="data")
    ids = convert_to_tensor(segment_ids, name="segment_ids")
    num = convert_to_tensor(num_segments, name="num_segments")
    check_dtype("data", data, allowed)
    check_dtype("segment_ids", ids, INDEX_TYPES)
    check_dtype("num_segments", num, INDEX_TYPES)
    return make_tensor(op_type, [data, ids, num], name=name, default_name=op_type)


def segment_max(data, segment_ids, name=None):
    """`tf.math.segment_max`: output[i] = max of data[j] over j with segment_ids[j] == i (sorted ids; empty: 0)."""
    return _sorted("SegmentMax", data, segment_ids, name, REAL_TYPES)


def segment_min(data, segment_ids, name=None):
    """`tf.math.segment_min`: output[i] = min of data[j] over j with segment_ids[j] == i (sorted ids; empty: 0)."""
    return _sorted("SegmentMin", data, segment_ids, name, REAL_TYPES)


def segment_prod(data, segment_ids, name=None):
    """`tf.math.segment_prod`: output[i] = product of data[j] with segment_ids[j] == i (sorted ids; empty: 1)."""
    return _sorted("SegmentProd", data, segment_ids, name, NUMBER_TYPES)


def unsorted_segment_max(data, segment_ids, num_segments, name=None):
    """`tf.math.unsorted_segment_max`: per segment maximum; an empty segment gives the dtype's lowest value."""
    return _unsorted("UnsortedSegmentMax", data, segment_ids, num_segments, name, REAL_TYPES)


def unsorted_segment_min(data, segment_ids, num_segments, name=None):
    """`tf.math.unsorted_segment_min`: per segment minimum; an empty segment gives the dtype's highest value."""
    return _unsorted("UnsortedSegmentMin", data, segment_ids, num_segments, name, REAL_TYPES)


def unsorted_segment_prod(data, segment_ids, num_segments, name=None):
    """`tf.math.unsorted_segment_prod`: per segment product; an empty segment gives 1."""
    return _unsorted("UnsortedSegmentProd", data, segment_ids, num_segments, name, NUMBER_TYPES)


# -- max / min / prod: gradients (TF's math_grad.py) ----------------------------------------------------------
def _gather(params, indices):
    from .slicing_ops import gather
    return gather(params, indices)


def _sorted_sum(x, ids):
    return segment_sum(x, ids)


def _unsorted_sum(x, ids, n):
    return unsorted_segment_sum(x, ids, n)


def _segment_min_or_max_grad(op, grad):
    data, ids = op.inputs
    gathered_outputs = _gather(op.outputs[0], ids)
    is_selected = _m.equal(data, gathered_outputs)
    num_selected = _sorted_sum(_m.cast(is_selected, grad.dtype), ids)
    weighted_grads = _m.divide(grad, num_selected)  # the gradient of a segment, split equally among its ties
    gathered_grads = _gather(weighted_grads, ids)
    return [_m.where(is_selected, gathered_grads, _a.zeros_like(data)), None]


register_gradient("SegmentMax")(_segment_min_or_max_grad)
register_gradient("SegmentMin")(_segment_min_or_max_grad)


def _gather_drop_negatives(params, ids, zero_clipped_indices=None, is_positive=None):
    """params gathered at max(ids, 0), with zero rows where ids < 0 (TF's _GatherDropNegatives)."""
    if zero_clipped_indices is None:
        zero_clipped_indices = _m.maximum(ids, _a.zeros_like(ids))
    gathered = _gather(params, zero_clipped_indices)
    if is_positive is None:
        is_positive = _m.greater_equal(ids, _a.zeros_like(ids))
        if gathered.shape.ndims is None or ids.shape.ndims is None:
            raise ValueError("unsorted segment gradient: the ranks of data and segment_ids must be known")
        for _ in range(gathered.shape.ndims - ids.shape.ndims):
            is_positive = _a.expand_dims(is_positive, -1)
        is_positive = _m.logical_and(is_positive, _m.cast(_a.ones_like(gathered), _dtypes.bool_))
    return _m.where(is_positive, gathered, _a.zeros_like(gathered)), zero_clipped_indices, is_positive


def _unsorted_segment_min_or_max_grad(op, grad):
    data, ids, n = op.inputs
    gathered_outputs, zero_clipped_indices, is_positive = _gather_drop_negatives(op.outputs[0], ids)
    is_selected = _m.logical_and(_m.equal(data, gathered_outputs), is_positive)
    num_selected = _unsorted_sum(_m.cast(is_selected, grad.dtype), ids, n)
    weighted_grads = _m.divide(grad, num_selected)
    gathered_grads, _, _ = _gather_drop_negatives(weighted_grads, None, zero_clipped_indices, is_positive)
    return [_m.where(is_selected, gathered_grads, _a.zeros_like(gathered_grads)), None, None]


register_gradient("UnsortedSegmentMax")(_unsorted_segment_min_or_max_grad)
register_gradient("UnsortedSegmentMin")(_unsorted_segment_min_or_max_grad)


def _prod_partials(op, grad, num_zeros, non_zero_prod, ids):
    """(grad with segments of 2+ zeros zeroed, d product / d element) -- the three cases of TF's prod gradient:
    no zero in the segment: product / element; one zero: 0, except at the zero: the product of the others;
    two or more zeros: 0 everywhere."""
    data = op.inputs[0]
    is_zero = _m.equal(data, _a.zeros_like(data))
    grad = _m.where(_m.greater(num_zeros, 1), _a.zeros_like(grad), grad)
    safe_data = _m.where(is_zero, _a.ones_like(data), data)
    clipped = _m.maximum(ids, _a.zeros_like(ids))
    gathered_prod = _gather(op.outputs[0], clipped)
    gathered_non_zero_prod = _gather(non_zero_prod, clipped)
    partial = _m.where(is_zero, gathered_non_zero_prod, _m.divide(gathered_prod, safe_data))
    return grad, partial


@register_gradient("SegmentProd")
def _segment_prod_grad(op, grad):
    data, ids = op.inputs
    is_zero = _m.equal(data, _a.zeros_like(data))
    num_zeros = _sorted_sum(_m.cast(is_zero, _dtypes.int32), ids)
    non_zero_prod = segment_prod(_m.where(is_zero, _a.ones_like(data), data), ids)
    grad, partial = _prod_partials(op, grad, num_zeros, non_zero_prod, ids)
    return [_m.multiply(_gather(grad, ids), partial), None]


@register_gradient("UnsortedSegmentProd")
def _unsorted_segment_prod_grad(op, grad):
    data, ids, n = op.inputs
    is_zero = _m.equal(data, _a.zeros_like(data))
    num_zeros = _unsorted_sum(_m.cast(is_zero, _dtypes.int32), ids, n)  # negative ids are dropped here
    non_zero_prod = unsorted_segment_prod(_m.where(is_zero, _a.ones_like(data), data), ids, n)
    grad, partial = _prod_partials(op, grad, num_zeros, non_zero_prod, ids)
    gathered_grad = _gather_drop_negatives(grad, ids)[0]
    return [_m.multiply(gathered_grad, partial), None, None]
