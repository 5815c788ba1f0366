"""Kernel of ops/sequence_parsing_ops.py (CPU): serialized tf.train.SequenceExample protos -> tensors.

Context features are parsed by parsing_kernels' rules; feature lists follow TF 1.15's
example_proto_fast_parsing.cc for what is an error: a required feature list that is missing, a step of the
wrong kind or with the wrong number of values, bytes that are not a SequenceExample.
"""
from __future__ import annotations

import numpy as np

from .. import dtypes as _dtypes
from .parsing_kernels import _KIND, _KIND_NAME, _bad, _dense, _sparse
from .registry import register_kernel


def _parse_all(ctx, serialized):
    from google.protobuf.message import DecodeError

    from ..protos.example_pb2 import SequenceExample
    out = []
    for i, raw in enumerate(serialized):
        try:
            out.append(SequenceExample.FromString(bytes(raw)))
        except DecodeError:
            raise _bad(ctx, f"Could not parse example input, value: '{bytes(raw)[:40]!r}' (index {i})") from None
    return out


def _steps(ctx, example, key, dtype, index):
    """The feature list's steps as lists of values, or None if the list is absent."""
    lists = example.feature_lists.feature_list
    if key not in lists:
        return None
    steps = []
    for t, feature in enumerate(lists[key].feature):
        kind = feature.WhichOneof("kind")
        if kind is not None and kind != _KIND[dtype]:
            raise _bad(ctx, f"Name: <unknown>, Feature list: {key}, Index: {t}.  Data types don't match. Expected "
                            f"type: {_KIND_NAME[_KIND[dtype]]}, Actual type: {_KIND_NAME[kind]} (example {index})")
        steps.append([] if kind is None else list(getattr(feature, kind).value))
    return steps


def _fill(dtype, default):
    if default is not None:
        return default
    return b"" if dtype is _dtypes.string else 0


def _sequence_dense(ctx, examples, key, dtype, shape, allow_missing, default, batch):
    count = int(np.prod(shape, dtype=np.int64))
    per_example = []
    for i, ex in enumerate(examples):
        steps = _steps(ctx, ex, key, dtype, i)
        if steps is None:
            if not allow_missing:
                raise _bad(ctx, f"Name: <unknown>, Feature list '{key}' is required but could not be found.  Did "
                                f"you mean to include it in feature_list_dense_missing_assumed_empty or "
                                f"feature_list_dense_defaults?")
            steps = []
        for t, vals in enumerate(steps):
            if len(vals) != count:
                raise _bad(ctx, f"Name: <unknown>, Key: {key}, Index: {t}.  Number of {_KIND_NAME[_KIND[dtype]]} "
                                f"values != expected.  values size: {len(vals)} but output shape: {list(shape)}")
        per_example.append(steps)
    longest = max((len(s) for s in per_example), default=0)
    np_dtype = object if dtype is _dtypes.string else dtype.np_dtype
    out = np.full((len(examples), longest, count), _fill(dtype, default), dtype=np_dtype)
    for i, steps in enumerate(per_example):
        for t, vals in enumerate(steps):
            out[i, t] = [bytes(v) for v in vals] if dtype is _dtypes.string else vals
    lengths = np.array([len(s) for s in per_example], dtype=np.int64)
    out = out.reshape((len(examples), longest) + tuple(shape))
    return (out, lengths) if batch else (out[0], None)


def _sequence_sparse(ctx, examples, key, dtype, batch):
    idx, flat, longest_steps, longest_values = [], [], 0, 0
    for i, ex in enumerate(examples):
        steps = _steps(ctx, ex, key, dtype, i) or []
        longest_steps = max(longest_steps, len(steps))
        for t, vals in enumerate(steps):
            longest_values = max(longest_values, len(vals))
            for j, v in enumerate(vals):
                idx.append((i, t, j) if batch else (t, j))
                flat.append(v)
    width = 3 if batch else 2
    indices = np.array(idx, dtype=np.int64).reshape(-1, width)
    shape = [len(examples), longest_steps, longest_values] if batch else [longest_steps, longest_values]
    if dtype is _dtypes.string:
        values = np.empty(len(flat), dtype=object)
        values[:] = [bytes(v) for v in flat]
    else:
        values = np.asarray(flat, dtype=dtype.np_dtype)
    return indices, values, np.array(shape, dtype=np.int64)


@register_kernel("ParseSequenceExample", devices=("CPU",))
def parse_sequence_example(ctx, serialized):
    a = ctx.op.attrs
    batch = a["batch"]
    examples = _parse_all(ctx, np.asarray(serialized, dtype=object).reshape(-1))
    if not batch and len(examples) != 1:
        raise _bad(ctx, "parse_single_sequence_example: serialized must be a scalar")
    contexts = [ex.context.feature for ex in examples]
    outs: list = []
    for key, dtype in a["context_sparse"]:
        outs += list(_sparse(ctx, contexts, key, dtype, batch))
    for key, dtype, shape, default in a["context_dense"]:
        outs.append(_dense(ctx, contexts, key, dtype, shape, default, batch))
    for key, dtype in a["sequence_sparse"]:
        outs += list(_sequence_sparse(ctx, examples, key, dtype, batch))
    lengths = []
    for key, dtype, shape, allow_missing, default in a["sequence_dense"]:
        dense, length = _sequence_dense(ctx, examples, key, dtype, shape, allow_missing, default, batch)
        outs.append(dense)
        lengths.append(length)
    if batch:
        outs += lengths
    return outs[0] if len(outs) == 1 else tuple(outs)
