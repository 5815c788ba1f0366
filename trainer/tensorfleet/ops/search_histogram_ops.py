"""TF 1.15's `tf.searchsorted` (ops LowerBound / UpperBound), `tf.unravel_index` (UnravelIndex),
`tf.histogram_fixed_width` (HistogramFixedWidth), `tf.histogram_fixed_width_bins`, the counts of integer values
`tf.bincount` (Bincount) and `tf.confusion_matrix` (a scatter_nd of ones), and `tf.batch_gather`.

Sits in `ops/`; kernels in kernels/search_histogram_kernels.py. As TF 1.15:
* searchsorted flattens both inputs to 2-D [batch, n] (sorted along the last axis), runs LowerBound (side='left')
  or UpperBound (side='right') per row and reshapes to values' shape; the leading dimensions must match.
* unravel_index(indices, dims): the coordinates of flat indices in an array of shape dims, shape [len(dims)]
  for a scalar and [len(dims), N] for a vector.
* histogram_fixed_width counts values in nbins equal bins over [lo, hi]; values below lo go to the first bin,
  at or above hi to the last; histogram_fixed_width_bins gives each value's bin (a composite, int32 as TF).
* batch_gather(params, indices): gather along axis rank(indices) - 1 with the leading dimensions as batch
  dimensions (a composite of reshape, range and gather, so it has gather's gradient).
The integer outputs have no gradient.
"""
from __future__ import annotations

__all__ = ["searchsorted", "unravel_index", "histogram_fixed_width", "histogram_fixed_width_bins", "bincount",
           "confusion_matrix", "batch_gather"]

from .. import dtypes as _dtypes
from ..default_graph import name_scope
from ..tensor_shape import TensorShape, unknown_shape
from . import array_ops as _a
from . import math_ops as _m
from .common import INDEX_TYPES, NotDifferentiable, check_dtype, convert_to_tensor, make_tensor, register_op
from .index_ops import scatter_nd
from .shape_util import constant_value


# -- searchsorted --------------------------------------------------------------------------------------
def _bound_shape(op):
    seq, values = op.inputs
    for t in (seq, values):
        if t.shape.ndims not in (None, 2):
            raise ValueError(f"Shape must be rank 2 but is rank {t.shape.ndims}")
    return [(op.get_attr("out_type"), values.shape)]


for _t in ("LowerBound", "UpperBound"):
    register_op(_t, _bound_shape)
    NotDifferentiable(_t)


def searchsorted(sorted_sequence, values, side="left", out_type=_dtypes.int32, name=None):
    """`tf.searchsorted`: for each value, the index in its row of `sorted_sequence` where it would be inserted
    (side='left': before equal entries, 'right': after them)."""
    if side not in ("left", "right"):
        raise ValueError(f"side must be either 'right' or 'left'.  Saw: {side}.")
    out_type = _dtypes.as_dtype(out_type)
    seq = convert_to_tensor(sorted_sequence, name="sorted_sequence")
    values = convert_to_tensor(values, name="values", dtype=seq.dtype)
    if out_type not in INDEX_TYPES:
        raise TypeError(f"Value passed to parameter 'out_type' has DataType {out_type.name} not in list of allowed "
                        f"values: int32, int64")
    seq_2d = _a.reshape(seq, _a.stack([-1, _a.shape(seq)[-1]]))
    values_2d = _a.reshape(values, _a.stack([-1, _a.shape(values)[-1]]))
    op_type = "UpperBound" if side == "right" else "LowerBound"
    out = make_tensor(op_type, [seq_2d, values_2d], {"out_type": out_type}, name=name, default_name=op_type)
    result = _a.reshape(out, _a.shape(values))
    result.set_shape(values.shape)
    return result


# -- unravel_index -------------------------------------------------------------------------------------
def _unravel_shape(op):
    indices, dims = op.inputs
    if dims.shape.ndims not in (None, 1):
        raise ValueError(f"Shape must be rank 1 but is rank {dims.shape.ndims}")
    d = dims.shape.as_list()[0] if dims.shape.ndims == 1 else None
    if indices.shape.ndims == 0:
        return [(indices.dtype, TensorShape([d]))]
    if indices.shape.ndims is not None:
        return [(indices.dtype, TensorShape([d, indices.shape.num_elements()]))]
    return [(indices.dtype, unknown_shape())]


register_op("UnravelIndex", _unravel_shape)
NotDifferentiable("UnravelIndex")


def unravel_index(indices, dims, name=None):
    """`tf.unravel_index`: the coordinates of the flat `indices` in an array of shape `dims`."""
    indices = convert_to_tensor(indices, name="indices")
    check_dtype("indices", indices, INDEX_TYPES)
    dims = convert_to_tensor(dims, name="dims", dtype=indices.dtype)
    return make_tensor("UnravelIndex", [indices, dims], name=name, default_name="UnravelIndex")


# -- histograms ----------------------------------------------------------------------------------------------
def _histogram_shape(op):
    values, value_range, nbins = op.inputs
    if value_range.shape.ndims not in (None, 1):
        raise ValueError(f"Shape must be rank 1 but is rank {value_range.shape.ndims}")
    if nbins.shape.ndims not in (None, 0):
        raise ValueError(f"Shape must be rank 0 but is rank {nbins.shape.ndims}")
    n = constant_value(nbins)
    if n is not None and int(n) < 0:
        raise ValueError(f"Dimension size, given by scalar input 2, must be non-negative but is {int(n)}")
    return [(op.get_attr("dtype"), TensorShape([None if n is None else int(n)]))]


register_op("HistogramFixedWidth", _histogram_shape)
NotDifferentiable("HistogramFixedWidth")


def histogram_fixed_width(values, value_range, nbins=100, dtype=_dtypes.int32, name=None):
    """`tf.histogram_fixed_width`: counts of `values` in `nbins` equal bins over value_range = [lo, hi]
    (values < lo count in bin 0, values >= hi in the last bin)."""
    dtype = _dtypes.as_dtype(dtype)
    with name_scope(name, "histogram_fixed_width", [values, value_range, nbins]) as scope:
        values = convert_to_tensor(values, name="values")
        check_dtype("values", values, (_dtypes.int32, _dtypes.int64, _dtypes.float32, _dtypes.float64))
        value_range = convert_to_tensor(value_range, name="value_range", dtype=values.dtype)
        nbins = convert_to_tensor(nbins, name="nbins", dtype=_dtypes.int32)
        if dtype not in INDEX_TYPES:
            raise TypeError(f"Value passed to parameter 'dtype' has DataType {dtype.name} not in list of allowed "
                            f"values: int32, int64")
        return make_tensor("HistogramFixedWidth", [values, value_range, nbins], {"dtype": dtype},
                           name=scope)


def histogram_fixed_width_bins(values, value_range, nbins=100, dtype=_dtypes.int32, name=None):
    """`tf.histogram_fixed_width_bins`: the bin of each value (int32, shape of `values`; as TF, `dtype` is
    accepted but the result is int32): floor(nbins * (v - lo) / (hi - lo)) clipped to [0, nbins - 1]."""
    from .clip_ops import clip_by_value
    with name_scope(name, "histogram_fixed_width_bins", [values, value_range, nbins]):
        values = convert_to_tensor(values, name="values")
        shape = _a.shape(values)
        flat = _a.reshape(values, [-1])
        value_range = convert_to_tensor(value_range, name="value_range")
        nbins = convert_to_tensor(nbins, dtype=_dtypes.int32, name="nbins")
        nbins_float = _m.cast(nbins, values.dtype)
        scaled = _m.truediv(flat - value_range[0], value_range[1] - value_range[0], name="scaled_values")
        indices = _m.floor(nbins_float * scaled, name="indices")
        indices = _m.cast(clip_by_value(indices, 0, nbins_float - 1), _dtypes.int32)
        out = _a.reshape(indices, shape)
        out.set_shape(values.shape)
        return out


# -- bincount, confusion_matrix --------------------------------------------------------------------------
register_op("Bincount", lambda op: [(op.get_attr("dtype"), TensorShape([None]))])
NotDifferentiable("Bincount")


def bincount(arr, weights=None, minlength=None, maxlength=None, dtype=_dtypes.int32):
    """`tf.bincount`: counts (or summed weights) of each value in arr; output dtype = weights' or `dtype`."""
    arr = _m.cast(convert_to_tensor(arr), _dtypes.int32)
    if weights is None:
        w, dt = _a.constant(0, dtype=_dtypes.as_dtype(dtype)), _dtypes.as_dtype(dtype)
    else:
        w = convert_to_tensor(weights)
        dt = w.dtype
    return make_tensor("Bincount", [arr, w], {"minlength": minlength, "maxlength": maxlength, "dtype": dt,
                                              "unweighted": weights is None}, name="bincount")


def confusion_matrix(labels, predictions, num_classes=None, dtype=_dtypes.int32, name=None, weights=None):
    """`tf.confusion_matrix`: [num_classes, num_classes], rows are labels, columns predictions."""
    with name_scope(name, "confusion_matrix", [labels, predictions]):
        lab = _m.cast(_a.reshape(convert_to_tensor(labels), [-1]), _dtypes.int64)
        pred = _m.cast(_a.reshape(convert_to_tensor(predictions), [-1]), _dtypes.int64)
        if num_classes is None:
            n = _m.add(_m.maximum(_m.reduce_max(lab), _m.reduce_max(pred)), _a.constant(1, dtype=_dtypes.int64))
        else:
            n = _a.constant(int(num_classes), dtype=_dtypes.int64)
        dt = _dtypes.as_dtype(dtype)
        w = _a.ones_like(_m.cast(lab, dt)) if weights is None else _m.cast(_a.reshape(weights, [-1]), dt)
        return scatter_nd(_a.stack([lab, pred], axis=1), w, _a.stack([n, n]))


# -- batch_gather -----------------------------------------------------------------------------------------
def batch_gather(params, indices, name=None):
    """`tf.batch_gather`: result[b..., j...] = params[b..., indices[b..., j...], ...] with the first
    rank(indices) - 1 dimensions as batch dimensions (TF 1.15's deprecated batch gather)."""
    from .slicing_ops import gather
    with name_scope(name, "BatchGather", [params, indices]):
        indices = convert_to_tensor(indices, name="indices")
        params = convert_to_tensor(params, name="params")
        check_dtype("indices", indices, INDEX_TYPES)
        if indices.shape.ndims is None:
            raise ValueError("batch_gather does not allow indices with unknown shape.")
        batch_dims = indices.shape.ndims - 1
        if params.shape.ndims is not None and batch_dims >= params.shape.ndims:
            raise ValueError(f"batch_dims = {batch_dims} must be less than rank(params) = {params.shape.ndims}")
        if batch_dims == 0:
            return gather(params, indices)
        p_shape, i_shape = _a.shape(params), _a.shape(indices)
        batch_size = _m.reduce_prod(i_shape[:batch_dims])
        rows = _m.cast(p_shape[batch_dims], indices.dtype)  # the length of the gathered axis
        from .scan_sort_ops import cumsum
        ones = _a.fill(_a.reshape(batch_size, [1]), _a.constant(1, dtype=indices.dtype))
        offsets = _m.multiply(cumsum(ones, exclusive=True), rows)  # each batch's first row: 0, rows, 2 * rows, ...
        flat_indices = _a.reshape(_m.add(_a.reshape(indices, _a.stack([batch_size, -1])),
                                         _a.reshape(offsets, [-1, 1])), [-1])
        flat_params = _a.reshape(params, _a.concat([[-1], p_shape[batch_dims + 1:]], 0))
        out = gather(flat_params, flat_indices)
        result = _a.reshape(out, _a.concat([i_shape, p_shape[batch_dims + 1:]], 0))
        if params.shape.ndims is not None:
            result.set_shape(indices.shape.concatenate(params.shape[batch_dims + 1:]))
        return result

