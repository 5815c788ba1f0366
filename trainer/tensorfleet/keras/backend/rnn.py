"""`tf.keras.backend.rnn` (TF 1.15): iterates a step function over the time axis of its inputs.

`keras/layers/recurrent.py` runs its cells with it. As TF 1.15's: the step function is called once on the first
time step *outside* the loop (its output is discarded; a cell creates its dropout masks there, so every time step
of the loop reuses the same masks, captured into the loop), then over the time steps in a `tf.while_loop` over
`tf.TensorArray`s; with a mask, a masked step keeps the previous output (or zeros with `zero_output_for_mask`)
and the previous states. `unroll=True` builds one step per time step instead; so does a short static time axis
(`UNROLL_STATIC_STEPS`): the values are the same, and an unrolled graph trains faster here than the loop's
replaying gradient (docs/rnn.md).
"""
from __future__ import annotations

from ... import dtypes as _dtypes
from ...graph import Tensor
from ...ops import array_ops, comparison_ops, join_ops, math_ops, slicing_ops
from ...ops.functional_ops import nest_flatten, nest_pack
from ...ops.tensor_array_ops import TensorArray
from ...ops.while_ops import while_loop

#: static time axes up to this length are unrolled even when `unroll=False` (same values, faster here)
UNROLL_STATIC_STEPS = 32


def _swap_batch_time(x):
    axes = list(range(x.shape.ndims))
    axes[0], axes[1] = 1, 0
    return array_ops.transpose(x, axes)


def _match_rank(mask_t, like):
    """A [batch, 1] mask broadcast against `like` ([batch, ...])."""
    for _ in range(like.shape.ndims - mask_t.shape.ndims):
        mask_t = array_ops.expand_dims(mask_t, -1)
    return mask_t


def _where(mask_t, new, old):
    return comparison_ops.where_v2(_match_rank(mask_t, new), new, old)


def rnn(step_function, inputs, initial_states, go_backwards=False, mask=None, constants=None, unroll=False,
        input_length=None, time_major=False, zero_output_for_mask=False):
    """Returns (last_output, outputs [batch, time, ...], new_states).

    `step_function(inputs_t, states + constants) -> (output_t, new_states)`; `inputs` [batch, time, ...] (or
    time-major), possibly a nested structure; `mask` [batch, time] bool.
    """
    flat_inputs = nest_flatten(inputs)
    if not time_major:
        flat_inputs = [_swap_batch_time(x) for x in flat_inputs]
    for x in flat_inputs:
        if x.shape.ndims is not None and x.shape.ndims < 3:
            raise ValueError("Input should be at least 3D.")
    time_steps = flat_inputs[0].shape[0]
    constants = list(constants or [])
    states = tuple(initial_states)
    if mask is not None:
        if mask.dtype != _dtypes.bool_:
            mask = math_ops.cast(mask, _dtypes.bool_)
        if mask.shape.ndims == 2:
            mask = array_ops.expand_dims(mask, -1)
        if not time_major:
            mask = _swap_batch_time(mask)
        if not states:
            raise ValueError("No initial states given: masking needs states.")
    if unroll and not time_steps:
        raise ValueError("Unrolling requires a fixed number of timesteps.")
    if unroll or (time_steps is not None and 0 < time_steps <= UNROLL_STATIC_STEPS):
        last, outputs, states = _unrolled(step_function, inputs, flat_inputs, states, constants, mask, go_backwards,
                                          zero_output_for_mask)
    else:
        last, outputs, states = _while(step_function, inputs, flat_inputs, states, constants, mask, go_backwards,
                                       zero_output_for_mask)
    if not time_major:
        outputs = _swap_batch_time(outputs)
    return last, outputs, list(states)


def _unrolled(step_function, inputs, flat_inputs, states, constants, mask, go_backwards, zero_output_for_mask):
    per_input = [join_ops.unstack(x) for x in flat_inputs]
    if go_backwards:
        for steps in per_input:
            steps.reverse()
    masks = None
    if mask is not None:
        masks = join_ops.unstack(mask)
        if go_backwards:
            masks.reverse()
    outputs: list = []
    for i in range(len(per_input[0])):
        step_in = nest_pack(inputs, [steps[i] for steps in per_input])
        output, new_states = step_function(step_in, tuple(states) + tuple(constants))
        new_states = nest_flatten(new_states)
        if masks is not None:
            prev = outputs[-1] if outputs else array_ops.zeros_like(output)
            output = _where(masks[i], output, prev)
            new_states = [_where(masks[i], s, p) for s, p in zip(new_states, nest_flatten(states), strict=True)]
        outputs.append(output)
        states = tuple(new_states)
    stacked = join_ops.stack(outputs)
    last = outputs[-1]
    if masks is not None and zero_output_for_mask:
        last = _where(masks[-1], last, array_ops.zeros_like(last))
        stacked = _where(mask if not go_backwards else slicing_ops.reverse(mask, [0]), stacked,
                         array_ops.zeros_like(stacked))
    return last, stacked, states


def _while(step_function, inputs, flat_inputs, states, constants, mask, go_backwards, zero_output_for_mask):
    time_steps_t = array_ops.shape(flat_inputs[0])[0]
    if go_backwards:
        flat_inputs = [slicing_ops.reverse(x, [0]) for x in flat_inputs]
        if mask is not None:
            mask = slicing_ops.reverse(mask, [0])
    input_tas = [TensorArray(x.dtype, size=time_steps_t, element_shape=x.shape[1:]).unstack(x) for x in flat_inputs]
    # the step once outside the loop: the output's shape and dtype, and the cell's dropout masks made here
    output_time_zero, _ = step_function(nest_pack(inputs, [x[0] for x in flat_inputs]),
                                        tuple(states) + tuple(constants))
    output_ta = TensorArray(output_time_zero.dtype, size=time_steps_t, element_shape=output_time_zero.shape)
    mask_ta = None
    if mask is not None:
        mask_ta = TensorArray(_dtypes.bool_, size=time_steps_t).unstack(mask)
    zero_output = array_ops.zeros_like(output_time_zero)
    n_states = len(states)

    def body(time, out_ta, prev_output, *loop_states):
        step_in = nest_pack(inputs, [ta.read(time) for ta in input_tas])
        output, new_states = step_function(step_in, tuple(loop_states) + tuple(constants))
        new_states = nest_flatten(new_states)
        for old, new in zip(loop_states, new_states, strict=True):
            if isinstance(new, Tensor):
                new.set_shape(old.shape)
        if mask_ta is not None:
            mask_t = mask_ta.read(time)
            output = _where(mask_t, output, zero_output if zero_output_for_mask else prev_output)
            new_states = [_where(mask_t, s, p) for s, p in zip(new_states, loop_states, strict=True)]
        output.set_shape(output_time_zero.shape)
        return (time + 1, out_ta.write(time, output), output) + tuple(new_states)

    time = array_ops.constant(0, dtype=_dtypes.int32, name="time")
    final = while_loop(lambda time, *_: comparison_ops.less(time, time_steps_t), body,
                       (time, output_ta, zero_output) + tuple(states), parallel_iterations=32, swap_memory=True)
    outputs = final[1].stack()
    outputs.set_shape(flat_inputs[0].shape[:1].concatenate(output_time_zero.shape))
    new_states = tuple(final[3:3 + n_states])
    return outputs[-1], outputs, new_states
