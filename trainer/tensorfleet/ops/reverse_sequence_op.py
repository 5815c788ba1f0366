"""`tf.reverse_sequence` (op ReverseSequence): reverses each batch entry's first seq_lengths[b] elements along
seq_axis, leaving the rest in place. Used by the bidirectional RNNs (`rnn.py`); kernel in kernels/rnn_kernels.py.
Its gradient is the same reversal of the incoming gradient (the lengths get none).
"""
from __future__ import annotations

from .common import convert_to_tensor, make_tensor, register_gradient, register_op
from .shape_util import normalize_axis

__all__ = ["reverse_sequence"]


def _reverse_sequence_shape(op):
    x, lengths = op.inputs
    seq_axis, batch_axis = op.get_attr("seq_axis"), op.get_attr("batch_axis")
    if x.shape.ndims is not None:
        for what, axis in (("seq_dim", seq_axis), ("batch_dim", batch_axis)):
            if not 0 <= axis < x.shape.ndims:
                raise ValueError(f"Invalid {what} {axis} for input of rank {x.shape.ndims} (ReverseSequence "
                                 f"{op.name})")
        if seq_axis == batch_axis:
            raise ValueError(f"batch_dim == seq_dim == {seq_axis} (ReverseSequence {op.name})")
        n = lengths.shape.as_list()[0] if lengths.shape.ndims == 1 else None
        b = x.shape.as_list()[batch_axis]
        if n is not None and b is not None and n != b:
            raise ValueError(f"Dimension {batch_axis} in both shapes must be equal, but are {b} and {n} "
                             f"(ReverseSequence {op.name}: seq_lengths must have the batch size)")
    if lengths.shape.ndims not in (None, 1):
        raise ValueError(f"Shape must be rank 1 but is rank {lengths.shape.ndims} for seq_lengths of "
                         f"ReverseSequence {op.name}")
    return [(x.dtype, x.shape)]


register_op("ReverseSequence", _reverse_sequence_shape)


def reverse_sequence(input, seq_lengths, seq_axis=None, batch_axis=None, name=None, seq_dim=None,  # noqa: A002
                     batch_dim=None):
    """`tf.reverse_sequence(input, seq_lengths, seq_axis, batch_axis=0)`: per-batch-entry reversal of a prefix."""
    seq_axis = seq_axis if seq_axis is not None else seq_dim
    batch_axis = batch_axis if batch_axis is not None else (batch_dim if batch_dim is not None else 0)
    if seq_axis is None:
        raise ValueError("reverse_sequence: seq_axis (seq_dim) is required")
    x = convert_to_tensor(input, name="input")
    lengths = convert_to_tensor(seq_lengths, name="seq_lengths")
    if not lengths.dtype.is_integer:
        raise TypeError(f"reverse_sequence: seq_lengths must be int32 or int64, got {lengths.dtype.name}")
    if x.shape.ndims is not None:
        seq_axis = normalize_axis(int(seq_axis), x.shape.ndims)
        batch_axis = normalize_axis(int(batch_axis), x.shape.ndims)
    return make_tensor("ReverseSequence", [x, lengths], {"seq_axis": int(seq_axis), "batch_axis": int(batch_axis)},
                       name=name, default_name="ReverseSequence")


@register_gradient("ReverseSequence")
def _reverse_sequence_grad(op, grad):
    return [make_tensor("ReverseSequence", [grad, op.inputs[1]], dict(op.attrs), name="ReverseSequence"), None]

