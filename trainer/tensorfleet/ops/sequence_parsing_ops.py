"""`tf.parse_single_sequence_example` / `tf.io.parse_sequence_example` with `tf.FixedLenSequenceFeature`:
serialized `tf.train.SequenceExample` protos to tensors.

Sits in `ops/` beside parsing_ops.py (whose FixedLenFeature / VarLenFeature describe the context features);
the kernel is kernels/sequence_parsing_kernels.py (CPU, the generated SequenceExample class). A
FixedLenSequenceFeature gives a dense [steps, *shape] tensor per example (batched: padded to the longest
with `default_value`, or 0 / b"", plus each example's length); a VarLenFeature in `sequence_features`
gives a SparseTensor with indices (step, position) ((example, step, position) batched). A missing feature
list is an error unless `allow_missing=True` (then 0 steps), as in TF.
"""
from __future__ import annotations

__all__ = ["FixedLenSequenceFeature", "parse_single_sequence_example", "parse_sequence_example"]

import collections


from .. import dtypes as _dtypes
from ..default_graph import name_scope
from ..tensor_shape import TensorShape, as_shape
from .array_ops import _to_numpy
from .common import NotDifferentiable, convert_to_tensor, make_op, register_op
from .parsing_ops import _spec, feature_dtype
from .string_ops import SparseTensor


class FixedLenSequenceFeature(collections.namedtuple("FixedLenSequenceFeature",
                                                     ["shape", "dtype", "allow_missing", "default_value"])):
    """`tf.FixedLenSequenceFeature(shape, dtype, allow_missing=False, default_value=None)`."""

    def __new__(cls, shape, dtype, allow_missing=False, default_value=None):
        return super().__new__(cls, shape, dtype, allow_missing, default_value)


def _sequence_spec(features: dict):
    dense, sparse = [], []
    for key in sorted(features or {}):
        f = features[key]
        dtype = feature_dtype(key, f)
        if isinstance(f, FixedLenSequenceFeature):
            shape = as_shape(f.shape)
            if not shape.is_fully_defined():
                raise ValueError(f"Feature {key!r}: FixedLenSequenceFeature needs a fully defined shape, got {shape}")
            default = None if f.default_value is None else _to_numpy(f.default_value, dtype).reshape(())
            dense.append((key, dtype, tuple(shape.as_list()), bool(f.allow_missing), default))
        elif type(f).__name__ == "VarLenFeature":
            sparse.append((key, dtype))
        else:
            raise ValueError(f"Sequence feature {key!r}: unsupported feature type {type(f).__name__} "
                             f"(FixedLenSequenceFeature or VarLenFeature)")
    return tuple(dense), tuple(sparse)


def _outputs(op):
    batch = op.get_attr("batch")
    rows = [None] if batch else []
    outs = []
    for _, dtype in op.get_attr("context_sparse"):
        outs += [(_dtypes.int64, TensorShape([None, 2 if batch else 1])), (dtype, TensorShape([None])),
                 (_dtypes.int64, TensorShape([2 if batch else 1]))]
    for _, dtype, shape, _ in op.get_attr("context_dense"):
        outs.append((dtype, TensorShape(rows + list(shape))))
    for _, dtype in op.get_attr("sequence_sparse"):
        outs += [(_dtypes.int64, TensorShape([None, 3 if batch else 2])), (dtype, TensorShape([None])),
                 (_dtypes.int64, TensorShape([3 if batch else 2]))]
    for _, dtype, shape, _, _ in op.get_attr("sequence_dense"):
        outs.append((dtype, TensorShape(rows + [None] + list(shape))))
    if batch:
        outs += [(_dtypes.int64, TensorShape([None])) for _ in op.get_attr("sequence_dense")]
    return outs


register_op("ParseSequenceExample", _outputs)
NotDifferentiable("ParseSequenceExample")


def _parse(serialized, context_features, sequence_features, name, batch: bool, default_name: str):
    if not context_features and not sequence_features:
        raise ValueError("Missing features.")
    c_dense, c_sparse = _spec(context_features) if context_features else ((), ())
    s_dense, s_sparse = _sequence_spec(sequence_features)
    with name_scope(name, default_name, [serialized]):
        s = convert_to_tensor(serialized, dtype=_dtypes.string)
        want = 1 if batch else 0
        if s.shape.ndims is not None and s.shape.ndims != want:
            raise ValueError(f"{default_name}: serialized must be a {'vector' if batch else 'scalar'}, got shape "
                             f"{s.shape}")
        attrs = {"context_dense": c_dense, "context_sparse": c_sparse, "sequence_dense": s_dense,
                 "sequence_sparse": s_sparse, "batch": batch}
        outs = list(make_op("ParseSequenceExample", [s], attrs, name="ParseSequenceExample").outputs)
    context, sequence, lengths = {}, {}, {}
    for key, _ in c_sparse:
        context[key] = SparseTensor(*outs[:3])
        outs = outs[3:]
    for key, *_ in c_dense:
        context[key] = outs.pop(0)
    for key, _ in s_sparse:
        sequence[key] = SparseTensor(*outs[:3])
        outs = outs[3:]
    for key, *_ in s_dense:
        sequence[key] = outs.pop(0)
    for key, *_ in s_dense if batch else ():
        lengths[key] = outs.pop(0)
    return context, sequence, lengths


def parse_single_sequence_example(serialized, context_features=None, sequence_features=None, example_name=None,
                                  name=None):
    """One serialized SequenceExample (scalar) -> (context dict, feature-list dict)."""
    context, sequence, _ = _parse(serialized, context_features, sequence_features, name, False,
                                  "ParseSingleSequenceExample")
    return context, sequence


def parse_sequence_example(serialized, context_features=None, sequence_features=None, example_names=None,
                           name=None):
    """`tf.io.parse_sequence_example`: a batch (vector) -> (context dict, padded feature-list dict, lengths)."""
    return _parse(serialized, context_features, sequence_features, name, True, "ParseSequenceExample")


