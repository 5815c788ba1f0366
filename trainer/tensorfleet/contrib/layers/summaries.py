"""`tf.contrib.layers` summary helpers (TF 1.15's contrib/layers/python/layers/summaries.py).

`summarize_tensor(t, tag=None)`: a scalar summary for a rank-0 tensor, else a histogram; string and bool
tensors are skipped (None); the tag defaults to `<op name>_summary`. `summarize_activation(t)` adds the
histogram `<op name>/activation` and, for Relu/Relu6/Softplus outputs, the fraction of negative
pre-activations `<op name>/zeros` (and above 6, `<op name>/sixes`, for Relu6). `summarize_collection`
summarizes the tensors of a graph collection whose op names `re.match` name_filter;
summarize_variables/weights/biases/activations do so for GLOBAL_VARIABLES, WEIGHTS, BIASES, ACTIVATIONS.
The summary ops are `tf.summary.scalar`/`histogram` (SUMMARIES collection; the tag is prefixed by the
enclosing name scope, as TF's).
"""
from __future__ import annotations

import functools
import re

from ... import dtypes as _dtypes
from ...graph import GraphKeys
from ...default_graph import get_collection
from ...ops import math_ops
from ...summary import summary_api as summary

__all__ = ["summarize_tensor", "summarize_tensors", "summarize_activation", "summarize_activations",
           "summarize_collection", "summarize_variables", "summarize_weights", "summarize_biases"]


def _add_scalar_summary(tensor, tag=None):
    tensor.get_shape().assert_has_rank(0)
    return summary.scalar(tag or f"{tensor.op.name}_summary", tensor)


def _add_histogram_summary(tensor, tag=None):
    return summary.histogram(tag or f"{tensor.op.name}_summary", tensor)


def summarize_activation(op):
    """Histogram of an activation (plus its zero/six fractions for Relu, Relu6 and Softplus outputs)."""
    if op.op.type in ("Relu", "Softplus", "Relu6"):
        pre = op.op.inputs[0]
        _add_scalar_summary(math_ops.reduce_mean(math_ops.to_float(math_ops.less(pre, math_ops.cast(0.0, pre.dtype)))),
                            f"{op.op.name}/zeros")
    if op.op.type == "Relu6":
        pre = op.op.inputs[0]
        _add_scalar_summary(math_ops.reduce_mean(math_ops.to_float(math_ops.greater(pre, math_ops.cast(6.0,
                                                                                                     pre.dtype)))),
                            f"{op.op.name}/sixes")
    return _add_histogram_summary(op, f"{op.op.name}/activation")


def summarize_tensor(tensor, tag=None):
    """A scalar summary (rank 0) or a histogram (otherwise) of `tensor`; None for string and bool tensors."""
    if tensor.dtype.base_dtype in (_dtypes.string, _dtypes.bool_):
        return None
    if tensor.get_shape().ndims == 0:
        return _add_scalar_summary(tensor, tag)
    return _add_histogram_summary(tensor, tag)


def summarize_tensors(tensors, summarizer=summarize_tensor) -> list:
    """[summarizer(t) for t in tensors]."""
    return [summarizer(tensor) for tensor in tensors]


def summarize_collection(collection, name_filter=None, summarizer=summarize_tensor) -> list:
    """Summaries of the tensors in `collection` whose op names match `name_filter` (all when None)."""
    tensors = [t for t in get_collection(collection) if name_filter is None or re.match(name_filter, t.op.name)]
    return summarize_tensors(tensors, summarizer)


summarize_variables = functools.partial(summarize_collection, GraphKeys.GLOBAL_VARIABLES)
summarize_weights = functools.partial(summarize_collection, GraphKeys.WEIGHTS)
summarize_biases = functools.partial(summarize_collection, GraphKeys.BIASES)


def summarize_activations(name_filter=None, summarizer=summarize_activation) -> list:
    """`summarize_activation` for every tensor of the ACTIVATIONS collection (matching name_filter)."""
    return summarize_collection(GraphKeys.ACTIVATIONS, name_filter, summarizer)
