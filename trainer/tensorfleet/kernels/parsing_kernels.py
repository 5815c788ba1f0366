"""Kernel of ops/parsing_ops.py (CPU): serialized tf.train.Example protos -> dense tensors and SparseTensors.

Follows TF 1.15's example parsing (example_proto_fast_parsing.cc) for what is an error: a required feature
that is missing, a feature of the wrong kind, a FixedLenFeature with the wrong number of values, bytes that are
not an Example.
"""
from __future__ import annotations

import numpy as np

from .. import dtypes as _dtypes
from .. import errors
from .registry import register_kernel

_KIND = {_dtypes.float32: "float_list", _dtypes.int64: "int64_list", _dtypes.string: "bytes_list"}
_KIND_NAME = {"float_list": "float", "int64_list": "int64", "bytes_list": "string"}


def _bad(ctx, msg):
    return errors.InvalidArgumentError(None, ctx.op, f"{msg}\n\t [[node {ctx.op.name}]]")


def _values(ctx, feature_map, key, dtype, example_index):
    """The feature's values as a list, or None if absent; wrong kinds raise TF's error."""
    if key not in feature_map:
        return None
    feature = feature_map[key]
    kind = feature.WhichOneof("kind")
    if kind is None:
        return []
    if kind != _KIND[dtype]:
        raise _bad(ctx, f"Name: <unknown>, Key: {key}, Index: {example_index}.  Data types don't match. Data type: "
                        f"{_KIND_NAME[kind]} but expected type: {_KIND_NAME[_KIND[dtype]]}")
    return list(getattr(feature, kind).value)


def _parse_all(ctx, serialized):
    from ..protos.example_pb2 import Example
    from google.protobuf.message import DecodeError
    examples = []
    for i, raw in enumerate(serialized):
        try:
            examples.append(Example.FromString(bytes(raw)).features.feature)
        except DecodeError:
            raise _bad(ctx, f"Could not parse example input, value: '{bytes(raw)[:40]!r}' (index {i})") from None
    return examples


def _dense(ctx, examples, key, dtype, shape, default, batch):
    count = int(np.prod(shape, dtype=np.int64))
    out = np.empty((len(examples), count), dtype=dtype.np_dtype)
    for i, fm in enumerate(examples):
        vals = _values(ctx, fm, key, dtype, i)
        if vals is None:
            if default is None:
                raise _bad(ctx, f"Name: <unknown>, Feature: {key} (data type: {dtype.name}) is required but could "
                                f"not be found.")
            out[i] = default.reshape(-1)
            continue
        if len(vals) != count:
            raise _bad(ctx, f"Name: <unknown>, Key: {key}, Index: {i}.  Number of {_KIND_NAME[_KIND[dtype]]} values "
                            f"!= expected.  values size: {len(vals)} but output shape: {list(shape)}")
        out[i] = vals
    out = out.reshape((len(examples),) + tuple(shape))
    return out if batch else out[0]


def _sparse(ctx, examples, key, dtype, batch):
    rows = []
    for i, fm in enumerate(examples):
        vals = _values(ctx, fm, key, dtype, i)
        rows.append([] if vals is None else vals)
    longest = max((len(r) for r in rows), default=0)
    if batch:
        idx = np.array([(i, j) for i, r in enumerate(rows) for j in range(len(r))], dtype=np.int64).reshape(-1, 2)
        shape = np.array([len(rows), longest], dtype=np.int64)
    else:
        idx = np.arange(len(rows[0]), dtype=np.int64).reshape(-1, 1)
        shape = np.array([longest], dtype=np.int64)
    flat = [v for r in rows for v in r]
    values = np.empty(len(flat), dtype=object) if dtype is _dtypes.string else np.asarray(flat, dtype=dtype.np_dtype)
    if dtype is _dtypes.string:
        values[:] = [bytes(v) for v in flat]
    return idx, values, shape


@register_kernel("ParseExample", devices=("CPU",))
def parse_example(ctx, serialized):
    a = ctx.op.attrs
    batch = a["batch"]
    examples = _parse_all(ctx, np.asarray(serialized, dtype=object).reshape(-1))
    if not batch and len(examples) != 1:
        raise _bad(ctx, "parse_single_example: serialized must be a scalar")
    triples = [_sparse(ctx, examples, key, dtype, batch) for key, dtype in a["sparse"]]
    outs = [t[i] for i in range(3) for t in triples]  # TF's order: every indices, then values, then shapes
    for key, dtype, shape, default in a["dense"]:
        outs.append(_dense(ctx, examples, key, dtype, shape, default, batch))
    return outs[0] if len(outs) == 1 else tuple(outs)
