"""`tf.parse_single_example` / `tf.parse_example` with `tf.FixedLenFeature` / `tf.VarLenFeature`: serialized
`tf.train.Example` protos (tf.string) to dense tensors and SparseTensors.

Sits in `ops/`; the kernel (kernels/parsing_kernels.py, CPU) parses with the generated `tf.train.Example` class.
A FixedLenFeature gives a dense tensor of `shape` (its default_value fills in for a missing feature; without
one the feature is required); a VarLenFeature gives a SparseTensor (parse_example: indices [N, 2] of
(example, position), dense_shape [batch, longest]). dtypes: float32, int64, string, as TF.
"""
from __future__ import annotations

__all__ = ["FixedLenFeature", "VarLenFeature", "parse_example", "parse_single_example"]

import collections

import numpy as np

from .. import dtypes as _dtypes
from ..default_graph import name_scope
from ..tensor_shape import TensorShape, as_shape
from .array_ops import _to_numpy
from .common import NotDifferentiable, convert_to_tensor, make_op, register_op
from .string_ops import SparseTensor

_ALLOWED = (_dtypes.float32, _dtypes.int64, _dtypes.string)


class FixedLenFeature(collections.namedtuple("FixedLenFeature", ["shape", "dtype", "default_value"])):
    """`tf.FixedLenFeature(shape, dtype, default_value=None)`."""

    def __new__(cls, shape, dtype, default_value=None):
        return super().__new__(cls, shape, dtype, default_value)


class VarLenFeature(collections.namedtuple("VarLenFeature", ["dtype"])):
    """`tf.VarLenFeature(dtype)`."""


def feature_dtype(key: str, f):
    """The feature's dtype; ValueError naming the feature if examples cannot hold it."""
    dtype = _dtypes.as_dtype(f.dtype)
    if dtype not in _ALLOWED:
        raise ValueError(f"Feature {key!r}: dtype {dtype.name} is not supported (float32, int64 or string)")
    return dtype


def _spec(features: dict):
    dense, sparse = [], []
    for key in sorted(features):
        f = features[key]
        dtype = feature_dtype(key, f)
        if isinstance(f, VarLenFeature):
            sparse.append((key, dtype))
        elif isinstance(f, FixedLenFeature):
            shape = as_shape(f.shape)
            if not shape.is_fully_defined():
                raise ValueError(f"Feature {key!r}: FixedLenFeature needs a fully defined shape, got {shape}")
            default = None
            if f.default_value is not None:
                default = _to_numpy(f.default_value, dtype)
                count = int(np.prod(shape.as_list(), dtype=np.int64))
                if default.size == 1 and count != 1:
                    default = np.full(shape.as_list(), default.reshape(()), dtype=default.dtype)
                if default.size != count:
                    raise ValueError(f"Feature {key!r}: default_value has {default.size} values, shape {shape} "
                                     f"needs {count}")
                default = default.reshape(shape.as_list())
            dense.append((key, dtype, tuple(shape.as_list()), default))
        else:
            raise ValueError(f"Feature {key!r}: unsupported feature type {type(f).__name__} (FixedLenFeature or "
                             f"VarLenFeature)")
    return tuple(dense), tuple(sparse)


def _outputs(op):
    batch = op.get_attr("batch")
    rows = list(op.inputs[0].shape.as_list()) if batch and op.inputs[0].shape.ndims else []
    sparse = op.get_attr("sparse")  # TF's output order: every sparse indices, values, dense_shape; then dense
    outs = [(_dtypes.int64, TensorShape([None, 2 if batch else 1])) for _ in sparse]
    outs += [(dtype, TensorShape([None])) for _, dtype in sparse]
    outs += [(_dtypes.int64, TensorShape([2 if batch else 1])) for _ in sparse]
    for _, dtype, shape, _ in op.get_attr("dense"):
        outs.append((dtype, TensorShape(rows + list(shape))))
    return outs


register_op("ParseExample", _outputs)
NotDifferentiable("ParseExample")


def _parse(serialized, features, name, batch: bool, default_name: str):
    if not features:
        raise ValueError("Missing: features was empty.")
    dense, sparse = _spec(features)
    with name_scope(name, default_name, [serialized]):
        s = convert_to_tensor(serialized, dtype=_dtypes.string)
        want = 1 if batch else 0
        if s.shape.ndims is not None and s.shape.ndims != want:
            raise ValueError(f"{default_name}: serialized must be a {'vector' if batch else 'scalar'}, got shape "
                             f"{s.shape}")
        op = make_op("ParseExample", [s], {"dense": dense, "sparse": sparse, "batch": batch}, name="ParseExample")
    outs = list(op.outputs)
    result = {}
    n = len(sparse)
    for i, (key, _) in enumerate(sparse):
        result[key] = SparseTensor(outs[i], outs[n + i], outs[2 * n + i])
    for j, (key, *_rest) in enumerate(dense):
        result[key] = outs[3 * len(sparse) + j]
    return result


def parse_example(serialized, features, name=None, example_names=None):
    """`tf.parse_example(serialized, features)`: a batch (vector) of serialized Examples -> dict of tensors."""
    return _parse(serialized, features, name, True, "ParseExample")


def parse_single_example(serialized, features, name=None, example_names=None):
    """`tf.parse_single_example(serialized, features)`: one serialized Example (scalar) -> dict of tensors."""
    return _parse(serialized, features, name, False, "ParseSingleExample")
