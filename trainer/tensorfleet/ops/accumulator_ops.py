"""Gradient accumulators: `tf.ConditionalAccumulator`, `tf.SparseConditionalAccumulator` (TF 1.15).

Op definitions with their Python wrappers; kernels in `kernels/accumulator_kernels.py`
(semantics there). Like a queue, an accumulator is a stateful handle op
(`AccumulatorHandle`) whose kernel creates it in the session's (on a cluster: the
task's) resources under its `resource_name` (`shared_name`, else the node name);
every accumulator op takes the handle as input and is colocated with it, so it runs
where the accumulator lives (e.g. on the ps of the variable it serves).
`take_grad` blocks; it honours `RunOptions(timeout_in_ms=...)` and session close.

Extensions (not in TF): `num_dropped_gradients()` (how many stale gradients this
accumulator dropped) and `cancel_takes()` (a blocked take, and any later one that would
block, fails with `CancelledError` until the next `set_global_step`), used by
`tf.train.SyncReplicasOptimizer`.
"""
from __future__ import annotations

from .. import dtypes as _dtypes
from ..default_graph import convert_to_tensor
from ..indexed_slices import IndexedSlices
from ..tensor_shape import TensorShape, as_shape, unknown_shape
from .arithmetic_ops import cast
from .common import NotDifferentiable, make_op, register_op

__all__ = ["ConditionalAccumulatorBase", "ConditionalAccumulator", "SparseConditionalAccumulator"]

_SCALAR_INT = [(_dtypes.int32, TensorShape([]))]


def _int64(x):
    """A step as int64 (TF casts the global step, often an int32 variable)."""
    t = convert_to_tensor(x)
    return t if t.dtype.base_dtype == _dtypes.int64 else cast(t, _dtypes.int64)


def _sparse_take_outputs(op):
    shape = op.get_attr("out_shape")
    rest = shape[1:] if shape.ndims else unknown_shape()
    return [(_dtypes.int64, TensorShape([None])),
            (op.get_attr("dtype"), TensorShape([None]).concatenate(rest) if rest.ndims is not None else
             unknown_shape()),
            (_dtypes.int64, TensorShape([None]))]


register_op("AccumulatorHandle", lambda op: _SCALAR_INT, stateful=True)
register_op("AccumulatorApplyGradient", lambda op: [], stateful=True)
register_op("AccumulatorTakeGradient", lambda op: [(op.get_attr("dtype"), op.get_attr("out_shape"))], stateful=True)
register_op("AccumulatorNumAccumulated", lambda op: _SCALAR_INT, stateful=True)
register_op("AccumulatorNumDropped", lambda op: [(_dtypes.int64, TensorShape([]))], stateful=True)
register_op("AccumulatorSetGlobalStep", lambda op: [], stateful=True)
register_op("AccumulatorCancelTakes", lambda op: [], stateful=True)
register_op("SparseAccumulatorApplyGradient", lambda op: [], stateful=True)
register_op("SparseAccumulatorTakeGradient", _sparse_take_outputs, stateful=True)
for _t in ("AccumulatorHandle", "AccumulatorApplyGradient", "AccumulatorTakeGradient", "AccumulatorNumAccumulated",
           "AccumulatorNumDropped", "AccumulatorSetGlobalStep", "AccumulatorCancelTakes",
           "SparseAccumulatorApplyGradient", "SparseAccumulatorTakeGradient"):
    NotDifferentiable(_t)

#: what `SparseConditionalAccumulator.take_indexed_slices_grad` returns (TF: an IndexedSlices)


class ConditionalAccumulatorBase:
    """What both accumulators share: the handle, `num_accumulated`, `set_global_step` (TF's base class)."""

    def __init__(self, dtype, shape, name, sparse: bool, shared_name=None, reduction_type="MEAN"):
        if reduction_type != "MEAN":
            raise NotImplementedError(f"{type(self).__name__} reduction_type {reduction_type!r} (only MEAN)")
        self._dtype = _dtypes.as_dtype(dtype)
        self._shape = as_shape(shape) if shape is not None else unknown_shape()
        self._attrs = {"dtype": self._dtype, "sparse": sparse,
                       "shape": tuple(self._shape.as_list()) if self._shape.ndims is not None else None,
                       "out_shape": self._shape}
        op = make_op("AccumulatorHandle", [], dict(self._attrs), name=name)
        self._attrs["resource_name"] = shared_name or op.name
        op._attrs["resource_name"] = self._attrs["resource_name"]
        self._ref = op.outputs[0]
        self._name = op.name
        self._graph = op.graph

    @property
    def accumulator_ref(self):
        return self._ref

    @property
    def name(self) -> str:
        return self._name

    @property
    def dtype(self):
        return self._dtype

    def _op(self, op_type, inputs=(), name=None, **attrs):
        with self._graph.colocate_with(self._ref.op):
            return make_op(op_type, [self._ref] + list(inputs), dict(self._attrs, **attrs), name=name,
                           default_name=f"{self._name}_{op_type}")

    def num_accumulated(self, name=None):
        """Number of gradients accumulated for the current step (int32 scalar)."""
        return self._op("AccumulatorNumAccumulated", (), name).outputs[0]

    def set_global_step(self, new_global_step, name=None):
        """Sets the step gradients are checked against (also re-enables takes after `cancel_takes`)."""
        return self._op("AccumulatorSetGlobalStep", [_int64(new_global_step)], name)

    def num_dropped_gradients(self, name=None):
        """Tensorfleet extension: the number of stale gradients dropped so far (int64 scalar)."""
        return self._op("AccumulatorNumDropped", (), name).outputs[0]

    def cancel_takes(self, name=None):
        """Tensorfleet extension: a blocked take, and any later one that would block, fails with CancelledError
        until the next `set_global_step`."""
        return self._op("AccumulatorCancelTakes", (), name)


class ConditionalAccumulator(ConditionalAccumulatorBase):
    """`tf.ConditionalAccumulator`: averages dense gradients of the current step; stale ones are dropped."""

    def __init__(self, dtype, shape=None, shared_name=None, name="conditional_accumulator",
                 reduction_type="MEAN"):
        super().__init__(dtype, shape, name, False, shared_name, reduction_type)

    def apply_grad(self, grad, local_step=0, name=None):
        grad = convert_to_tensor(grad, dtype=self._dtype)
        if not grad.shape.is_compatible_with(self._shape):
            raise ValueError(f"Shape mismatch: accumulator {self._name} has shape {self._shape}, grad {grad.shape}")
        return self._op("AccumulatorApplyGradient", [_int64(local_step), grad], name)

    def take_grad(self, num_required, name=None):
        """Blocks until `num_required` gradients arrived; their mean (and the accumulator's step advances)."""
        return self._op("AccumulatorTakeGradient", [convert_to_tensor(num_required, dtype=_dtypes.int32)],
                        name).outputs[0]


class SparseConditionalAccumulator(ConditionalAccumulatorBase):
    """`tf.SparseConditionalAccumulator`: accumulates (indices, values) gradients; the mean is taken per row
    over the gradients that had that row (TF's element-wise averaging). Rows repeated within one gradient
    are summed and counted once each."""

    def __init__(self, dtype, shape=None, shared_name=None, name="sparse_conditional_accumulator",
                 reduction_type="MEAN"):
        super().__init__(dtype, shape, name, True, shared_name, reduction_type)

    def apply_indexed_slices_grad(self, grad, local_step=0, name=None):
        """`grad`: anything with `.indices`, `.values` and `.dense_shape` (TF: an IndexedSlices)."""
        return self.apply_grad(grad.indices, grad.values, getattr(grad, "dense_shape", None), local_step, name)

    def apply_grad(self, grad_indices, grad_values, grad_shape=None, local_step=0, name=None):
        values = convert_to_tensor(grad_values, dtype=self._dtype)
        has_shape = grad_shape is not None
        shape = convert_to_tensor(grad_shape if has_shape else [], dtype=_dtypes.int64)
        return self._op("SparseAccumulatorApplyGradient",
                        [_int64(local_step),
                         convert_to_tensor(grad_indices, dtype=_dtypes.int64), values, shape],
                        name, has_known_shape=has_shape)

    def take_grad(self, num_required, name=None):
        """Blocks until `num_required` gradients arrived; (indices, values, shape) of their per-row mean."""
        op = self._op("SparseAccumulatorTakeGradient", [convert_to_tensor(num_required, dtype=_dtypes.int32)], name)
        return tuple(op.outputs)

    def take_indexed_slices_grad(self, num_required, name=None):
        indices, values, shape = self.take_grad(num_required, name)
        return IndexedSlices(values=values, indices=indices, dense_shape=shape)
