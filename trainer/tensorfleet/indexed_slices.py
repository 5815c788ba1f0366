"""`tf.IndexedSlices`: a sparse slice of a dense tensor along its first dimension (the gradient of a gather).

Framework layer beside `graph`: `values[i]` is row `indices[i]` of a tensor of shape `dense_shape`;
duplicated indices add up. `tf.gradients` returns one for a variable read through `tf.gather` /
`tf.nn.embedding_lookup`, so optimizers update only those rows (train/optimizer.py `_apply_sparse`) and a
worker sends the ps only those rows. Where a dense Tensor is needed it converts to one
(ops/indexed_slices_ops.py registers the conversion: an IndexedSlicesToDense op).
"""
from __future__ import annotations

from collections import namedtuple
from typing import Optional

from .graph import Tensor
from .tensor_shape import TensorShape, unknown_shape

__all__ = ["IndexedSlices", "IndexedSlicesValue"]

#: what `Session.run` returns for a fetched IndexedSlices (numpy arrays; dense_shape None if it had none)
IndexedSlicesValue = namedtuple("IndexedSlicesValue", ["values", "indices", "dense_shape"])


class IndexedSlices:
    """`tf.IndexedSlices(values, indices, dense_shape=None)`."""

    def __init__(self, values: Tensor, indices: Tensor, dense_shape: Optional[Tensor] = None,
                 static_dense_shape: Optional[TensorShape] = None):
        self._values, self._indices, self._dense_shape = values, indices, dense_shape
        #: the dense shape as far as it is known when the graph is built (conversion sets it on the result)
        self._static_dense_shape: TensorShape = static_dense_shape or unknown_shape()

    def with_values(self, values: Tensor, indices: Optional[Tensor] = None) -> "IndexedSlices":
        """The same slices of the same dense tensor with other values (and indices)."""
        return IndexedSlices(values, self._indices if indices is None else indices, self._dense_shape,
                             self._static_dense_shape)

    values = property(lambda self: self._values)
    indices = property(lambda self: self._indices)
    dense_shape = property(lambda self: self._dense_shape)
    name = property(lambda self: self._values.name)
    dtype = property(lambda self: self._values.dtype)
    op = property(lambda self: self._values.op)
    graph = property(lambda self: self._values.graph)
    device = property(lambda self: self._values.device)

    def __neg__(self) -> "IndexedSlices":
        from .ops import math_ops
        return self.with_values(math_ops.negative(self._values))

    def __repr__(self) -> str:
        shape = "None" if self._dense_shape is None else self._dense_shape.name
        return f"IndexedSlices(indices={self._indices.name}, values={self._values.name}, dense_shape={shape})"
