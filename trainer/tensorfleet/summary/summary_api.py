"""`tf.summary.scalar/histogram/image/audio/merge/merge_all`: name the summary, build its op, collect it.

Top layer (uses `graph` and `ops/summary_ops`). As TF 1.15's summary.py and summary_op_util.py:
* a name is cleaned (characters outside `[-/\\w.]` become `_`, leading `/` dropped) and opened as a name scope
  (`family/name` when a family is given); the tag is that scope (made unique: `loss`, `loss_1`, ...,
  inside any outer scope), prefixed again by the family so TensorBoard groups it in that tab; the op is named
  after the scope;
* each summary is added to `collections` (default `[GraphKeys.SUMMARIES]`);
* `merge_all(key)` merges the collection (None when it is empty).
"""
from __future__ import annotations

import contextlib
import re

from .. import tf_logging
from ..graph import GraphKeys
from ..default_graph import add_to_collection, get_collection, name_scope
from ..default_graph import convert_to_tensor
from ..ops import summary_ops
from ..protos import summary_pb2

__all__ = ["scalar", "histogram", "image", "audio", "text", "tensor_summary", "merge", "merge_all"]

_INVALID_TAG_CHARACTERS = re.compile(r"[^-/\w.]")


def clean_tag(name):
    """TF's summary_op_util.clean_tag: illegal characters become '_', leading slashes go (logged at INFO)."""
    if name is not None:
        new_name = _INVALID_TAG_CHARACTERS.sub("_", name).lstrip("/")
        if new_name != name:
            tf_logging.info("Summary name %s is illegal; using %s instead." % (name, new_name))
            name = new_name
    return name


@contextlib.contextmanager
def summary_scope(name, family=None, default_name=None, values=None):
    """Yields (tag, scope) for a summary op, as TF's summary_op_util.summary_scope."""
    name, family = clean_tag(name), clean_tag(family)
    scope_base_name = name if family is None else f"{family}/{name}"
    with name_scope(scope_base_name, default_name, values) as scope:
        tag = scope.rstrip("/") if family is None else f"{family}/{scope.rstrip('/')}"
        yield tag, scope


def _collect(value, collections, default_collections) -> None:
    for key in default_collections if collections is None else collections:
        add_to_collection(key, value)


def scalar(name, tensor, collections=None, family=None):
    """`tf.summary.scalar`: a Summary with one simple value (the tensor must hold a single real number)."""
    with summary_scope(name, family, values=[tensor]) as (tag, scope):
        val = summary_ops.scalar_summary(tag, tensor, name=scope)
        _collect(val, collections, [GraphKeys.SUMMARIES])
    return val


def histogram(name, values, collections=None, family=None):
    """`tf.summary.histogram`: a Summary with a histogram of every value of `values` (NaN/Inf fail at run)."""
    with summary_scope(name, family, values=[values], default_name="HistogramSummary") as (tag, scope):
        val = summary_ops.histogram_summary(tag, values, name=scope)
        _collect(val, collections, [GraphKeys.SUMMARIES])
    return val


def image(name, tensor, max_outputs=3, collections=None, family=None):
    """`tf.summary.image`: up to `max_outputs` PNG images of a [batch, height, width, 1|3|4] tensor."""
    with summary_scope(name, family, values=[tensor]) as (tag, scope):
        val = summary_ops.image_summary(tag, tensor, max_images=max_outputs, name=scope)
        _collect(val, collections, [GraphKeys.SUMMARIES])
    return val


def audio(name, tensor, sample_rate, max_outputs=3, collections=None, family=None):
    """`tf.summary.audio`: up to `max_outputs` WAV clips of a [batch, frames(, channels)] float tensor."""
    with summary_scope(name, family=family, values=[tensor]) as (tag, scope):
        val = summary_ops.audio_summary(tag, tensor, sample_rate, max_outputs=max_outputs, name=scope)
        _collect(val, collections, [GraphKeys.SUMMARIES])
    return val


def tensor_summary(name, tensor, summary_description=None, collections=None, summary_metadata=None, family=None,
                   display_name=None):
    """`tf.summary.tensor_summary`: the whole tensor, with a SummaryMetadata (plugin name, description)."""
    metadata = summary_pb2.SummaryMetadata() if summary_metadata is None else summary_metadata
    if summary_description is not None:
        metadata.summary_description = summary_description
    if display_name is not None:
        metadata.display_name = display_name
    with summary_scope(name, family, values=[tensor]) as (tag, scope):
        val = summary_ops.tensor_summary(tag, tensor, metadata.SerializeToString(), name=scope)
        _collect(val, collections, [GraphKeys.SUMMARIES])
    return val


def text(name, tensor, collections=None):
    """`tf.summary.text`: a string tensor for TensorBoard's Text dashboard (markdown)."""
    tensor = convert_to_tensor(tensor)
    if tensor.dtype.name != "string":
        raise ValueError(f"Expected tensor {tensor.name} to have dtype string, got {tensor.dtype.name}")
    metadata = summary_pb2.SummaryMetadata(plugin_data=summary_pb2.SummaryMetadata.PluginData(plugin_name="text"))
    return tensor_summary(name=name, tensor=tensor, summary_metadata=metadata, collections=collections)


def merge(inputs, collections=None, name=None):
    """`tf.summary.merge`: one Summary with every value of `inputs` (duplicate tags fail at run time)."""
    with name_scope(name, "Merge", inputs):
        val = summary_ops.merge_summary(inputs, name=name)
        _collect(val, collections, [])
    return val


def merge_all(key=GraphKeys.SUMMARIES, scope=None, name=None):
    """`tf.summary.merge_all`: merges the summaries in collection `key` (optionally filtered by `scope`);
    None when there are none."""
    summary_ops_ = get_collection(key, scope=scope)
    if not summary_ops_:
        return None
    return merge(summary_ops_, name=name)
