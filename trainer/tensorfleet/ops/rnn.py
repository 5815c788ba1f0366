"""`tf.nn.static_rnn`, `static_bidirectional_rnn`, `dynamic_rnn`, `bidirectional_dynamic_rnn` (TF 1.15 semantics).

Sits in `ops/` above the cells (`rnn_cell_impl`, `rnn_cell_wrappers`) and `reverse_sequence_op`. Scopes as TF:
`rnn` (or `scope`), `bidirectional_rnn/fw` and `.../bw`, so variables are e.g. `rnn/basic_lstm_cell/kernel`.
With `sequence_length`, every step past a sequence's length outputs zeros and copies the state through, so the
final state is the one at each sequence's last valid step (TF's `_rnn_step`).

dynamic_rnn's loop over time is `rnn_time_loops.time_loop` (TF's `_dynamic_rnn_loop` contract): unrolled when
the time dimension is static, a tf.while_loop over TensorArrays when it is unknown.
"""
from __future__ import annotations

from .. import dtypes as _dtypes
from . import join_ops, math_ops
from . import variable_scope as vs
from .array_ops import convert_to_tensor, identity, transpose
from .reverse_sequence_op import reverse_sequence
from .slicing_ops import reverse
from .rnn_cell_impl import is_sequence, nest_flatten, nest_map, nest_pack
from .rnn_cell_wrappers import assert_like_rnncell
from .rnn_time_loops import batch_size_of, infer_state_dtype, rnn_step, static_batch, time_loop, zero_output

__all__ = ["static_rnn", "static_bidirectional_rnn", "dynamic_rnn", "bidirectional_dynamic_rnn"]


def _initial_state(cell, initial_state, dtype, batch_size):
    if initial_state is not None:
        return initial_state
    if not dtype:
        raise ValueError("If there is no initial_state, you must give a dtype.")
    return cell.zero_state(batch_size, dtype)


def _sequence_length_arg(sequence_length):
    if sequence_length is None:
        return None
    sequence_length = convert_to_tensor(sequence_length, name="sequence_length")
    if sequence_length.shape.ndims not in (None, 1):
        raise ValueError(f"sequence_length must be a vector of length batch_size, but saw shape: "
                         f"{sequence_length.shape}")
    return identity(math_ops.cast(sequence_length, _dtypes.int32), name="sequence_length")


def static_rnn(cell, inputs, initial_state=None, dtype=None, sequence_length=None, scope=None):
    """`tf.nn.static_rnn`: the cell applied to each element of the list `inputs` ([batch, depth] each), sharing
    variables; returns (list of outputs, final state)."""
    assert_like_rnncell("cell", cell)
    if not is_sequence(inputs):
        raise TypeError("inputs must be a sequence")
    if not inputs:
        raise ValueError("inputs must not be empty")
    outputs = []
    with vs.variable_scope(scope or "rnn") as varscope:
        first = nest_flatten(inputs[0])
        first = [convert_to_tensor(x) for x in first]
        for x in first:
            if x.shape.ndims is not None and x.shape.ndims < 2:
                raise ValueError(f"Expected inputs to have rank at least 2, saw shape {x.shape}")
            if x.shape.ndims is not None and x.shape.as_list()[1] is None:
                raise ValueError("Input size (second dimension of inputs[0]) must be accessible via shape "
                                 "inference, but saw value None.")
        batch_size = batch_size_of(first, 0)
        state = _initial_state(cell, initial_state, dtype, batch_size)
        sequence_length = _sequence_length_arg(sequence_length)
        zero_out = None
        if sequence_length is not None:
            zero_out = zero_output(cell, batch_size, static_batch(batch_size), infer_state_dtype(dtype, state))
        for time, input_ in enumerate(inputs):
            if time > 0:
                varscope.reuse_variables()
            output, state = rnn_step(time, sequence_length, zero_out, state,
                                      lambda input_=input_, state=state: cell(input_, state))
            outputs.append(output)
    return outputs, state


def _reverse_seq(input_seq, lengths):
    """Reverses a list of [batch, ...] tensors in time (each sequence within its length when lengths are given)."""
    if lengths is None:
        return list(reversed(input_seq))
    flat_per_step = [nest_flatten(x) for x in input_seq]
    columns = list(zip(*flat_per_step))
    reversed_columns = []
    for column in columns:
        stacked = join_ops.stack(list(column))
        rev = reverse_sequence(stacked, lengths, seq_axis=0, batch_axis=1)
        steps = join_ops.unstack(rev, num=len(column))
        for s, orig in zip(steps, column):
            s.set_shape(orig.shape)
        reversed_columns.append(steps)
    return [nest_pack(input_seq[0], [col[t] for col in reversed_columns]) for t in range(len(input_seq))]


def static_bidirectional_rnn(cell_fw, cell_bw, inputs, initial_state_fw=None, initial_state_bw=None, dtype=None,
                             sequence_length=None, scope=None):
    """`tf.nn.static_bidirectional_rnn`: (outputs: per step concat([fw, bw], 1), final fw state, final bw state)."""
    assert_like_rnncell("cell_fw", cell_fw)
    assert_like_rnncell("cell_bw", cell_bw)
    if not is_sequence(inputs):
        raise TypeError("inputs must be a sequence")
    if not inputs:
        raise ValueError("inputs must not be empty")
    with vs.variable_scope(scope or "bidirectional_rnn"):
        with vs.variable_scope("fw") as fw_scope:
            output_fw, state_fw = static_rnn(cell_fw, inputs, initial_state_fw, dtype, sequence_length, fw_scope)
        with vs.variable_scope("bw") as bw_scope:
            lengths = _sequence_length_arg(sequence_length)
            tmp, state_bw = static_rnn(cell_bw, _reverse_seq(inputs, lengths), initial_state_bw, dtype,
                                       sequence_length, bw_scope)
    output_bw = _reverse_seq(tmp, lengths)
    outputs = [nest_pack(fw, [join_ops.concat([a, b], 1) for a, b in zip(nest_flatten(fw), nest_flatten(bw))])
               for fw, bw in zip(output_fw, output_bw)]
    return outputs, state_fw, state_bw


def _transpose_batch_time(x):
    """[batch, time, ...] <-> [time, batch, ...]."""
    ndims = x.shape.ndims
    if ndims is not None and ndims < 2:
        raise ValueError(f"Expected input tensor {x} to have rank at least 2, but saw shape: {x.shape}")
    if ndims is None:
        raise ValueError(f"dynamic_rnn needs inputs of known rank, but {x.name} has unknown shape")
    out = transpose(x, [1, 0] + list(range(2, ndims)))
    dims = x.shape.as_list()
    out.set_shape([dims[1], dims[0]] + dims[2:])
    return out


def dynamic_rnn(cell, inputs, sequence_length=None, initial_state=None, dtype=None, parallel_iterations=None,
                swap_memory=False, time_major=False, scope=None):
    """`tf.nn.dynamic_rnn`: (outputs [batch, time, out] (or [time, batch, out] if time_major), final state).

    The time dimension may be unknown (a tf.while_loop then runs the steps, see `rnn_time_loops`);
    `parallel_iterations` and `swap_memory` are passed to that loop (accepted, iterations run one after another).
    """
    assert_like_rnncell("cell", cell)
    with vs.variable_scope(scope or "rnn"):
        flat_input = [convert_to_tensor(x) for x in nest_flatten(inputs)]
        if not time_major:
            flat_input = [_transpose_batch_time(x) for x in flat_input]
        for x in flat_input:
            if x.shape.ndims is None:
                raise ValueError(f"dynamic_rnn needs inputs of known rank, but {x.name} has unknown shape")
        sequence_length = _sequence_length_arg(sequence_length)
        batch_size = batch_size_of(flat_input, 1)
        if sequence_length is not None and isinstance(batch_size, int):
            n = sequence_length.shape.as_list()[0] if sequence_length.shape.ndims == 1 else None
            if n is not None and n != batch_size:
                raise ValueError(f"Expected shape for Tensor sequence_length is [{batch_size}] but saw shape: "
                                 f"[{n}]")
        state = _initial_state(cell, initial_state, dtype, batch_size)
        inputs_tm = nest_pack(inputs, flat_input)
        outputs, final_state = time_loop(cell, inputs_tm, state, sequence_length, dtype, parallel_iterations,
                                          swap_memory)
        if not time_major:
            outputs = nest_map(_transpose_batch_time, outputs)
        return outputs, final_state


def bidirectional_dynamic_rnn(cell_fw, cell_bw, inputs, sequence_length=None, initial_state_fw=None,
                              initial_state_bw=None, dtype=None, parallel_iterations=None, swap_memory=False,
                              time_major=False, scope=None):
    """`tf.nn.bidirectional_dynamic_rnn`: ((output_fw, output_bw), (state_fw, state_bw)); the backward pass runs
    on each sequence reversed within its length, and its outputs are reversed back."""
    assert_like_rnncell("cell_fw", cell_fw)
    assert_like_rnncell("cell_bw", cell_bw)
    time_axis, batch_axis = (0, 1) if time_major else (1, 0)

    def _reverse(x, lengths):
        if lengths is not None:
            return reverse_sequence(x, lengths, seq_axis=time_axis, batch_axis=batch_axis)
        return reverse(x, axis=[time_axis])

    with vs.variable_scope(scope or "bidirectional_rnn"):
        with vs.variable_scope("fw") as fw_scope:
            output_fw, state_fw = dynamic_rnn(cell_fw, inputs, sequence_length=sequence_length,
                                              initial_state=initial_state_fw, dtype=dtype,
                                              parallel_iterations=parallel_iterations, swap_memory=swap_memory,
                                              time_major=time_major, scope=fw_scope)
        with vs.variable_scope("bw") as bw_scope:
            lengths = _sequence_length_arg(sequence_length)
            inputs_reverse = nest_map(lambda x: _reverse(convert_to_tensor(x), lengths), inputs)
            tmp, state_bw = dynamic_rnn(cell_bw, inputs_reverse, sequence_length=sequence_length,
                                        initial_state=initial_state_bw, dtype=dtype,
                                        parallel_iterations=parallel_iterations, swap_memory=swap_memory,
                                        time_major=time_major, scope=bw_scope)
    output_bw = nest_map(lambda x: _reverse(x, lengths), tmp)
    return (output_fw, output_bw), (state_fw, state_bw)

