"""Candidate sampling for large-vocabulary softmax (the word2vec tutorials): `tf.nn.log_uniform_candidate_sampler`,
`uniform_candidate_sampler`, `compute_accidental_hits`, `nce_loss` and `sampled_softmax_loss`.

Sits in `ops/`; the samplers' kernel is in kernels/sampling_kernels.py (CPU, seeded by TF1's seed rule). The
losses follow TF 1.15's `_compute_sampled_logits` (nn_impl.py): logits of the true and the sampled classes,
each minus log(expected count) (subtract_log_q), accidental hits masked for sampled softmax; their gradients
come from the ops they are made of (the sampled ids are constants of the step, as in TF). `weights` may be a
list of shards, looked up by `tf.nn.embedding_lookup` with the loss's `partition_strategy` (as TF).
"""
from __future__ import annotations

__all__ = ["log_uniform_candidate_sampler", "uniform_candidate_sampler", "compute_accidental_hits", "nce_loss",
           "sampled_softmax_loss"]

from .. import dtypes as _dtypes
from ..default_graph import name_scope
from ..tensor_shape import TensorShape
from . import array_ops as _a
from . import comparison_ops as _c
from . import math_ops as _m
from . import nn_impl as _ni
from . import nn_ops as _n
from .common import NotDifferentiable, convert_to_tensor, make_op, register_op
from .random_seed import seed_attrs


def _sampler_shapes(op):
    t = op.inputs[0].shape
    s = op.get_attr("num_sampled")
    return [(_dtypes.int64, TensorShape([s])), (_dtypes.float32, t), (_dtypes.float32, TensorShape([s]))]


register_op("CandidateSampler", _sampler_shapes, stateful=True)
NotDifferentiable("CandidateSampler")


def _sampler(kind, true_classes, num_true, num_sampled, unique, range_max, seed, name):
    t = convert_to_tensor(true_classes, dtype=_dtypes.int64)
    if t.shape.ndims not in (None, 2):
        raise ValueError(f"true_classes must be a matrix [batch, num_true], got {t.shape}")
    if unique and num_sampled > range_max:
        raise ValueError(f"num_sampled ({num_sampled}) cannot exceed range_max ({range_max}) when unique=True")
    attrs = {"kind": kind, "num_true": int(num_true), "num_sampled": int(num_sampled), "unique": bool(unique),
             "range_max": int(range_max)}
    attrs.update(seed_attrs(seed))
    op = make_op("CandidateSampler", [t], attrs, name=name, default_name=f"{kind.capitalize()}CandidateSampler")
    return tuple(op.outputs)


def log_uniform_candidate_sampler(true_classes, num_true, num_sampled, unique, range_max, seed=None, name=None):
    """`tf.nn.log_uniform_candidate_sampler`: P(k) = log((k + 2) / (k + 1)) / log(range_max + 1) (Zipfian);
    returns (sampled_candidates, true_expected_count, sampled_expected_count)."""
    return _sampler("log_uniform", true_classes, num_true, num_sampled, unique, range_max, seed, name)


def uniform_candidate_sampler(true_classes, num_true, num_sampled, unique, range_max, seed=None, name=None):
    """`tf.nn.uniform_candidate_sampler`: P(k) = 1 / range_max."""
    return _sampler("uniform", true_classes, num_true, num_sampled, unique, range_max, seed, name)


def compute_accidental_hits(true_classes, sampled_candidates, num_true, seed=None, name=None):
    """`tf.nn.compute_accidental_hits`, dense form: a [batch, num_sampled] bool mask of sampled ids that equal
    one of the row's true classes (TF returns its sparse coordinates; the losses here use the mask)."""
    with name_scope(name, "compute_accidental_hits", [true_classes, sampled_candidates]):
        t = _a.expand_dims(convert_to_tensor(true_classes, dtype=_dtypes.int64), 2)
        s = _a.reshape(convert_to_tensor(sampled_candidates, dtype=_dtypes.int64), [1, 1, -1])
        return _m.reduce_any(_c.equal(t, s), axis=1)


def _sampled_logits(weights, biases, labels, inputs, num_sampled, num_classes, num_true, sampled_values,
                    subtract_log_q, remove_accidental_hits, name, seed=None, partition_strategy="mod"):
    if hasattr(weights, "_get_variable_list"):  # a PartitionedVariable: its parts are the shards, as in TF
        weights = weights._get_variable_list()
    shards = list(weights) if isinstance(weights, (list, tuple)) else [weights]
    with name_scope(name, "compute_sampled_logits", shards + [biases, inputs, labels]):
        inputs = convert_to_tensor(inputs)
        labels = _m.cast(convert_to_tensor(labels), _dtypes.int64)
        if sampled_values is None:
            sampled_values = log_uniform_candidate_sampler(labels, num_true, num_sampled, True, num_classes, seed=seed)
        sampled, true_expected, sampled_expected = (_a.stop_gradient(v) for v in sampled_values)
        sampled = _m.cast(sampled, _dtypes.int64)
        labels_flat = _a.reshape(labels, [-1])
        true_w = _ni.embedding_lookup(shards, labels_flat, partition_strategy)      # [batch * num_true, dim]
        true_b = _ni.embedding_lookup(biases, labels_flat, partition_strategy)
        sampled_w = _ni.embedding_lookup(shards, sampled, partition_strategy)          # [num_sampled, dim]
        sampled_b = _ni.embedding_lookup(biases, sampled, partition_strategy)
        dim = _a.shape(true_w)[1:2]
        true_w = _a.reshape(true_w, _a.concat([[-1, num_true], dim], 0))
        true_logits = _m.reduce_sum(_m.multiply(_a.expand_dims(inputs, 1), true_w), axis=2)
        true_logits = _m.add(true_logits, _a.reshape(true_b, [-1, num_true]))
        sampled_logits = _m.add(_m.matmul(inputs, sampled_w, transpose_b=True), sampled_b)
        if remove_accidental_hits:
            hits = compute_accidental_hits(labels, sampled, num_true)
            sampled_logits = _c.where_v2(hits, _m.add(_m.multiply(sampled_logits, 0.0), -3.4e38 if
                                                      inputs.dtype is _dtypes.float32 else -1.7e308), sampled_logits)
        if subtract_log_q:
            true_logits = _m.subtract(true_logits, _m.log(_m.cast(true_expected, inputs.dtype)))
            sampled_logits = _m.subtract(sampled_logits, _m.log(_m.cast(sampled_expected, inputs.dtype)))
        out_logits = _a.concat([true_logits, sampled_logits], 1)
        out_labels = _a.concat([_m.divide(_a.ones_like(true_logits), float(num_true)), _a.zeros_like(sampled_logits)],
                               1)
        return out_logits, out_labels


def nce_loss(weights, biases, labels, inputs, num_sampled, num_classes, num_true=1, sampled_values=None,
             remove_accidental_hits=False, partition_strategy="mod", name="nce_loss"):
    """`tf.nn.nce_loss`: per-example noise-contrastive loss [batch] (sum of sigmoid cross-entropies)."""
    logits, labels_ = _sampled_logits(weights, biases, labels, inputs, num_sampled, num_classes, num_true,
                                      sampled_values, True, remove_accidental_hits, name,
                                      partition_strategy=partition_strategy)
    xent = _n.sigmoid_cross_entropy_with_logits(labels=labels_, logits=logits)
    return _m.reduce_sum(xent, axis=1)


def sampled_softmax_loss(weights, biases, labels, inputs, num_sampled, num_classes, num_true=1, sampled_values=None,
                         remove_accidental_hits=True, partition_strategy="mod", name="sampled_softmax_loss",
                         seed=None):
    """`tf.nn.sampled_softmax_loss`: per-example softmax cross-entropy over the true and sampled classes."""
    logits, labels_ = _sampled_logits(weights, biases, labels, inputs, num_sampled, num_classes, num_true,
                                      sampled_values, True, remove_accidental_hits, name, seed=seed,
                                      partition_strategy=partition_strategy)
    return _n.softmax_cross_entropy_with_logits_v2(labels=_a.stop_gradient(labels_), logits=logits)
