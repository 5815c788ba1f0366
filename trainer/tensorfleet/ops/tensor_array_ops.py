"""`tf.TensorArray` as a value: its *flow* is one stacked tensor, written row by row with `LoopAccumulatorWrite`.

Ops layer, below `while_ops` (which carries TensorArrays through loops as their
flow tensors) and `functional_map_ops` (map_fn/scan accumulate with the same
op). A write returns a new TensorArray whose flow has row `index` set; an empty
flow (`[0]`) is allocated as `[size] + element shape` at the first write (grown
to fit with `dynamic_size=True`). `read`/`gather` are `gather` on the flow,
`stack` is the flow, `unstack` makes a TensorArray whose flow is the value,
`scatter` is a while loop of writes, `concat` reshapes the flow.
Differences from TF: reading or stacking rows never written gives zeros (TF
raises), and `clear_after_read` is accepted and ignored.
"""
from __future__ import annotations

from .. import dtypes as _dtypes
from ..default_graph import convert_to_tensor
from ..graph import Tensor
from ..tensor_shape import TensorShape, as_shape
from .array_ops import identity, reshape, shape as _shape, zeros
from .comparison_ops import less
from .join_ops import concat
from .common import make_tensor, register_gradient, register_op, static_value
from .control_flow_ops import no_op
from .slicing_ops import gather

__all__ = ["TensorArray"]


def _acc_shape(op):
    acc, _, value, _ = op.inputs
    rows = acc.shape.as_tuple()[0] if acc.shape.ndims else None
    shape = TensorShape([rows or None]).concatenate(value.shape)  # an empty accumulator gets n rows
    return [(acc.dtype, acc.shape.merge_with(shape) if rows else shape)]


register_op("LoopAccumulatorWrite", _acc_shape)
register_op("LoopAccumulatorWriteGrad", lambda op: [(op.inputs[0].dtype, op.inputs[2].shape)])


@register_gradient("LoopAccumulatorWrite")
def _acc_write_grad(op, grad):
    acc, index, _, _ = op.inputs
    return [make_tensor("LoopAccumulatorWriteGrad", [grad, index, acc]), None, gather(grad, index), None]


@register_gradient("LoopAccumulatorWriteGrad")
def _acc_write_grad_grad(op, grad):
    """The op is linear in its gradient input: zero the same row again (padded back to grad's rows)."""
    g, index, acc = op.inputs
    return [make_tensor("LoopAccumulatorWriteGrad", [grad, index, g]), None, None]


def accumulator_write(acc, index, value, n) -> Tensor:
    """`acc` with row `index` set to `value`; an empty `acc` becomes `[n] + value.shape` (n < 0: grow to fit)."""
    index = convert_to_tensor(index, dtype=_dtypes.int32)
    n = convert_to_tensor(n, dtype=_dtypes.int32)
    return make_tensor("LoopAccumulatorWrite", [acc, index, value, n])


def empty_accumulator(dtype) -> Tensor:
    return zeros([0], dtype=dtype)


class TensorArray:
    """`tf.TensorArray` (TF 1.15 signature); a value object: every write returns a new TensorArray."""

    def __init__(self, dtype, size=None, dynamic_size=None, clear_after_read=None, tensor_array_name=None,
                 handle=None, flow=None, infer_shape=True, element_shape=None, colocate_with_first_write_call=True,
                 name=None):
        self._dtype = _dtypes.as_dtype(dtype)
        self._dynamic = bool(dynamic_size)
        if size is None and not self._dynamic and flow is None:
            raise ValueError("Size must be provided if dynamic_size is False")
        self._size = None if size is None else convert_to_tensor(size, dtype=_dtypes.int32)
        self._element_shape = as_shape(element_shape) if element_shape is not None else TensorShape(None)
        self._infer_shape = infer_shape
        self._name = name or tensor_array_name or "TensorArray"
        self._flow = flow if flow is not None else empty_accumulator(self._dtype)

    def _with_flow(self, flow: Tensor, element_shape=None) -> "TensorArray":
        ta = TensorArray.__new__(TensorArray)
        ta.__dict__.update(self.__dict__)
        ta._flow = flow
        if element_shape is not None:
            ta._element_shape = element_shape
        return ta

    @property
    def flow(self) -> Tensor:
        return self._flow

    @property
    def dtype(self):
        return self._dtype

    @property
    def element_shape(self) -> TensorShape:
        return self._element_shape

    @property
    def dynamic_size(self) -> bool:
        return self._dynamic

    def _rows(self):
        return -1 if self._dynamic or self._size is None else self._size

    def write(self, index, value, name=None) -> "TensorArray":
        value = convert_to_tensor(value, dtype=self._dtype)
        if self._infer_shape and not self._element_shape.is_compatible_with(value.shape):
            raise ValueError(f"Inconsistent shapes: saw {value.shape} but expected {self._element_shape} "
                             f"(TensorArray {self._name})")
        flow = accumulator_write(self._flow, index, value, self._rows())
        return self._with_flow(flow, self._element_shape.merge_with(value.shape) if self._infer_shape else None)

    def read(self, index, name=None) -> Tensor:
        out = gather(self._flow, convert_to_tensor(index, dtype=_dtypes.int32), name=name)
        out.set_shape(out.shape.merge_with(self._element_shape) if out.shape.ndims is None or
                      self._element_shape.ndims is None or out.shape.ndims == self._element_shape.ndims
                      else out.shape)
        return out

    def gather(self, indices, name=None) -> Tensor:
        return gather(self._flow, convert_to_tensor(indices, dtype=_dtypes.int32), name=name)

    def stack(self, name=None) -> Tensor:
        out = identity(self._flow, name=name or "TensorArrayStack")
        n = static_value(self._size) if self._size is not None and not self._dynamic else None
        if self._element_shape.ndims is not None:
            out.set_shape(TensorShape([None if n is None else int(n)]).concatenate(self._element_shape))
        return out

    def unstack(self, value, name=None) -> "TensorArray":
        value = convert_to_tensor(value, dtype=self._dtype)
        rows = value.shape.ndims
        element = value.shape[1:] if rows else TensorShape(None)
        return self._with_flow(identity(value, name=name or "TensorArrayUnstack"),
                               self._element_shape.merge_with(element))

    def scatter(self, indices, value, name=None) -> "TensorArray":
        """Writes `value[k]` to index `indices[k]` for each k (a tf.while_loop of writes)."""
        from .while_ops import while_loop  # late: while_ops imports this module

        indices = convert_to_tensor(indices, dtype=_dtypes.int32)
        value = convert_to_tensor(value, dtype=self._dtype)
        count = _shape(indices, out_type=_dtypes.int32)[0]
        elem = value.shape[1:] if value.shape.ndims else TensorShape(None)
        _, ta = while_loop(lambda k, ta: less(k, count),
                           lambda k, ta: (k + 1, ta.write(gather(indices, k), gather(value, k))),
                           [0, self._with_flow(self._flow, self._element_shape.merge_with(elem))],
                           name=name or "TensorArrayScatter")
        return ta

    def concat(self, name=None) -> Tensor:
        """The elements joined along their first dimension."""
        shape = _shape(self._flow, out_type=_dtypes.int32)
        return reshape(self._flow, concat([[-1], shape[2:]], 0), name=name or "TensorArrayConcat")

    def size(self, name=None) -> Tensor:
        if self._size is not None and not self._dynamic:
            return self._size
        return _shape(self._flow, out_type=_dtypes.int32)[0]

    def identity(self) -> "TensorArray":
        return self._with_flow(identity(self._flow))

    def close(self, name=None):
        return no_op(name=name)

    def __repr__(self):
        return f"<TensorArray '{self._name}' dtype={self._dtype.name} flow={self._flow.name}>"
