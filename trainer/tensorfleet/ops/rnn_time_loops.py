"""dynamic_rnn's loops over time (TF's `_dynamic_rnn_loop` contract) and the per-step helpers the RNNs share.

Ops layer, below `rnn.py` (static_rnn, dynamic_rnn and the bidirectional RNNs call into it), above the cells and
`while_ops`/`tensor_array_ops`. Both loops take time-major inputs and return time-major outputs and the final state:

- `unrolled_time_loop`: one cell step per time step, built when the graph is built (static time dimension).
- `while_time_loop`: a `tf.while_loop` over `tf.TensorArray`s as TF 1.15's `_dynamic_rnn_loop` (any time
  dimension, fed at run time). Variables the cell creates in the body are lifted to the outer graph
  (`func_graph.lift_out_of_function`, TF's init_scope), so their names are the unrolled loop's.

`time_loop` picks: the unrolled loop when the time dimension is static (faster here: see docs/rnn.md), else the
while loop. With `sequence_length`, every step past a sequence's length outputs zeros and copies the state through.
"""
from __future__ import annotations

from .. import dtypes as _dtypes
from ..graph import Tensor
from ..tensor_shape import TensorShape
from . import comparison_ops, join_ops
from . import variable_scope as vs
from .arithmetic_ops import maximum, minimum
from .array_ops import shape as _shape, zeros
from .reduction_ops import reduce_max
from .rnn_cell_impl import nest_flatten, nest_map, nest_pack, size_list
from .tensor_array_ops import TensorArray
from .while_ops import while_loop

__all__ = ["time_loop", "unrolled_time_loop", "while_time_loop", "rnn_step", "zero_output", "infer_state_dtype",
           "batch_size_of", "static_batch"]


def infer_state_dtype(explicit_dtype, state):
    if explicit_dtype is not None:
        return _dtypes.as_dtype(explicit_dtype)
    flat = nest_flatten(state)
    if not flat or not all(isinstance(s, Tensor) for s in flat):
        raise ValueError(f"Unable to infer dtype from empty state: {state}")
    dtype = flat[0].dtype
    if any(s.dtype != dtype for s in flat):
        raise ValueError(f"State has tensors of different inferred_dtypes. Unable to infer a single "
                         f"representative dtype. Dtypes: {[s.dtype for s in flat]}")
    return dtype


def zero_output(cell, batch_size, static_batch, dtype):
    def one(size):
        inner = size_list(size)
        if isinstance(batch_size, int):
            out = zeros([batch_size] + inner, dtype=dtype)
        else:
            out = zeros(join_ops.stack([batch_size] + inner), dtype=dtype)
        out.set_shape([static_batch] + inner)
        return out

    return nest_map(one, cell.output_size)


def rnn_step(time, sequence_length, zero_out, state, call_cell):
    """One step; with sequence_length, batch entries with time >= length get zero output and the old state."""
    new_output, new_state = call_cell()
    if sequence_length is None:
        return new_output, new_state
    nest_map(lambda _a, _b: None, state, new_state)  # same structure, or ValueError
    done = comparison_ops.greater_equal(time, sequence_length)

    def copy_through(old, new):
        if isinstance(new, Tensor) and new.shape.ndims == 0:
            return new
        out = comparison_ops.where(done, old, new)
        out.set_shape(new.shape)
        return out

    return nest_map(copy_through, zero_out, new_output), nest_map(copy_through, state, new_state)


def batch_size_of(flat_inputs, batch_axis):
    """The static batch size when any input knows it, else a scalar int32 tensor from the first input."""
    for x in flat_inputs:
        if x.shape.ndims is not None and x.shape.as_list()[batch_axis] is not None:
            return x.shape.as_list()[batch_axis]
    return _shape(flat_inputs[0])[batch_axis]


def static_batch(batch_size):
    return batch_size if isinstance(batch_size, int) else None




def _check_time_major(flat_inputs) -> object:
    """The static number of time steps (None when unknown); TF's errors for a bad rank or an unknown depth."""
    steps = None
    for x in flat_inputs:
        dims = x.shape.as_list() if x.shape.ndims is not None else None
        if dims is None or len(dims) < 3:
            raise ValueError(f"dynamic_rnn: input {x.name} must be [time, batch, depth] (time-major here), saw "
                             f"shape {x.shape}")
        if any(d is None for d in dims[2:]):
            raise ValueError("Input size (depth of inputs) must be accessible via shape inference, but saw value "
                             "None.")
        if dims[0] is not None and steps is not None and dims[0] != steps:
            raise ValueError("Time steps is not the same for all the elements in the input in a batch.")
        steps = dims[0] if dims[0] is not None else steps
    return steps


def time_loop(cell, inputs, initial_state, sequence_length=None, dtype=None, parallel_iterations=None,
              swap_memory=False):
    """dynamic_rnn's loop: unrolled when every input's time dimension is static, else a tf.while_loop."""
    flat = nest_flatten(inputs)
    _check_time_major(flat)
    if all(x.shape.as_list()[0] is not None for x in flat):
        return unrolled_time_loop(cell, inputs, initial_state, sequence_length, dtype)
    return while_time_loop(cell, inputs, initial_state, sequence_length, dtype, parallel_iterations, swap_memory)


def unrolled_time_loop(cell, inputs, initial_state, sequence_length=None, dtype=None):
    """dynamic_rnn's loop over time, unrolled at graph-construction time (TF's `_dynamic_rnn_loop` contract).

    inputs: time-major nested structure of [time, batch, depth...] tensors whose time dimension is static;
    returns (outputs: time-major [time, batch, output...] tensors shaped like cell.output_size, final_state).
    The cell shares its variables across steps (the enclosing variable scope is set to reuse after step 0).
        """
    flat_inputs = nest_flatten(inputs)
    steps = _check_time_major(flat_inputs)
    unknown = [x for x in flat_inputs if x.shape.as_list()[0] is None]
    if unknown:
        raise ValueError(f"unrolled_time_loop: the time dimension of input {unknown[0].name} is unknown; use "
                         f"while_time_loop")
    if steps == 0:
        raise ValueError("dynamic_rnn: inputs have zero time steps")
    batch_size = batch_size_of(flat_inputs, 1)
    state = initial_state
    zero_out = None
    if sequence_length is not None:
        zero_out = zero_output(cell, batch_size, static_batch(batch_size), infer_state_dtype(dtype, state))
    per_step = [join_ops.unstack(x, num=steps) for x in flat_inputs]
    varscope = vs.get_variable_scope()
    outputs = []
    for time in range(steps):
        if time > 0:
            varscope.reuse_variables()
        input_t = nest_pack(inputs, [col[time] for col in per_step])
        output, state = rnn_step(time, sequence_length, zero_out, state,
                                  lambda input_t=input_t, state=state: cell(input_t, state))
        outputs.append(output)
    flat_outputs = [nest_flatten(o) for o in outputs]
    stacked = [join_ops.stack([step[k] for step in flat_outputs]) for k in range(len(flat_outputs[0]))]
    return nest_pack(outputs[0], stacked), state



def while_time_loop(cell, inputs, initial_state, sequence_length=None, dtype=None, parallel_iterations=None,
                    swap_memory=False):
    """TF 1.15's `_dynamic_rnn_loop`: a tf.while_loop over the time steps, inputs read from TensorArrays and
    outputs written to one; the loop runs min(time, max(1, max(sequence_length))) steps
    (`maximum_iterations` = time), and output rows it never reaches are zeros. Same contract as
    `unrolled_time_loop`; the time dimension may be unknown."""
    flat_inputs = nest_flatten(inputs)
    _check_time_major(flat_inputs)
    static_steps = next((x.shape.as_list()[0] for x in flat_inputs if x.shape.as_list()[0] is not None), None)
    time_steps = _shape(flat_inputs[0], out_type=_dtypes.int32)[0]
    batch_size = batch_size_of(flat_inputs, 1)
    state = initial_state
    out_dtype = infer_state_dtype(dtype, state)
    zero_out = None
    if sequence_length is not None:
        zero_out = zero_output(cell, batch_size, static_batch(batch_size), out_dtype)
        loop_bound = minimum(time_steps, maximum(1, reduce_max(sequence_length)))
    else:
        loop_bound = time_steps
    input_tas = [TensorArray(x.dtype, size=time_steps, element_shape=x.shape[1:]).unstack(x)
                 for x in flat_inputs]
    flat_sizes = nest_flatten(cell.output_size) if not isinstance(cell.output_size, int) else [cell.output_size]
    output_tas = [TensorArray(out_dtype, size=time_steps,  # preallocated: zeros past the loop, also 0 steps
                              element_shape=TensorShape([static_batch(batch_size)] + size_list(size)),
                              flow=zeros(join_ops.stack([time_steps, batch_size] + size_list(size)), dtype=out_dtype))
                  for size in flat_sizes]
    varscope = vs.get_variable_scope()
    calls = []

    def body(time, output_tas, state):
        if calls:  # the body is traced once; a second trace must not create the variables again
            varscope.reuse_variables()
        calls.append(time)
        input_t = [ta.read(time) for ta in input_tas]
        for x_t, x in zip(input_t, flat_inputs):
            x_t.set_shape(x.shape[1:])
        input_t = nest_pack(inputs, input_t)
        output, new_state = rnn_step(time, sequence_length, zero_out, state, lambda: cell(input_t, state))
        flat_out = nest_flatten(output)
        return time + 1, [ta.write(time, o) for ta, o in zip(output_tas, flat_out)], new_state

    _, final_tas, final_state = while_loop(
        lambda time, *_: comparison_ops.less(time, loop_bound), body,
        [0, output_tas, state], parallel_iterations=parallel_iterations or 32, swap_memory=swap_memory,
        maximum_iterations=time_steps, name="while")
    outputs = []
    for ta, size in zip(final_tas, flat_sizes):
        out = ta.stack()
        out.set_shape(TensorShape([static_steps, static_batch(batch_size)] + size_list(size)))
        outputs.append(out)
    return nest_pack(cell.output_size, outputs) if not isinstance(cell.output_size, int) else outputs[0], final_state
