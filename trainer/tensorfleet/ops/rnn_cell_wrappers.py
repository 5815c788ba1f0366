"""`tf.nn.rnn_cell.MultiRNNCell`, `DropoutWrapper`, `ResidualWrapper`, `DeviceWrapper`: cells built from other
cells (TF 1.15 semantics).

Sits in `ops/` on `rnn_cell_impl.RNNCell`. MultiRNNCell opens its own scope (`multi_rnn_cell`) and runs cell i
under `cell_<i>` (so `rnn/multi_rnn_cell/cell_0/basic_lstm_cell/kernel`); the wrappers open no scope, so the
wrapped cell's variables keep their names. DropoutWrapper follows TF: a keep probability that is the float 1.0
adds no op at all; per-step dropout (nn.dropout) or variational-recurrent dropout with one mask drawn per run
(noise [1, size]); by default an LSTM state's c is never dropped, only its h; seeds derived from `seed` as TF does.
"""
from __future__ import annotations

import hashlib
import numbers

from .. import dtypes as _dtypes
from ..default_graph import get_default_graph, name_scope
from ..graph import Tensor
from . import join_ops, math_ops, nn_impl, random_ops
from . import variable_scope as vs
from .array_ops import convert_to_tensor
from .rnn_cell_impl import LSTMStateTuple, RNNCell, is_sequence, nest_flatten, nest_pack, size_list
from .shape_util import constant_value
from .slicing_ops import slice as _slice

__all__ = ["MultiRNNCell", "DropoutWrapper", "ResidualWrapper", "DeviceWrapper", "assert_like_rnncell"]


def assert_like_rnncell(cell_name, cell) -> None:
    """TypeError unless `cell` has output_size, state_size, zero_state and is callable (TF's check)."""
    conditions = [hasattr(cell, "output_size"), hasattr(cell, "state_size"),
                  hasattr(cell, "get_initial_state") or hasattr(cell, "zero_state"), callable(cell)]
    errors = ["'output_size' property is missing", "'state_size' property is missing",
              "either 'zero_state' or 'get_initial_state' method is required", "is not callable"]
    if not all(conditions):
        missing = [e for e, ok in zip(errors, conditions) if not ok]
        raise TypeError(f"The argument {cell_name!r} ({cell}) is not an RNNCell: {', '.join(missing)}.")


class MultiRNNCell(RNNCell):
    """`tf.nn.rnn_cell.MultiRNNCell(cells, state_is_tuple=True)`: the cells stacked; state: a tuple of theirs."""

    def __init__(self, cells, state_is_tuple=True):
        super().__init__()
        if not cells:
            raise ValueError("Must specify at least one cell for MultiRNNCell.")
        if not is_sequence(cells):
            raise TypeError(f"cells must be a list or tuple, but saw: {cells}.")
        for i, cell in enumerate(cells):
            assert_like_rnncell(f"cells[{i}]", cell)
        self._cells = list(cells)
        self._state_is_tuple = state_is_tuple
        if not state_is_tuple and any(is_sequence(c.state_size) for c in self._cells):
            raise ValueError(f"Some cells return tuples of states, but the flag state_is_tuple is not set. "
                             f"State sizes are: {[c.state_size for c in self._cells]}")

    @property
    def state_size(self):
        if self._state_is_tuple:
            return tuple(cell.state_size for cell in self._cells)
        return sum(cell.state_size for cell in self._cells)

    @property
    def output_size(self):
        return self._cells[-1].output_size

    def zero_state(self, batch_size, dtype):
        with name_scope(type(self).__name__ + "ZeroState"):
            if self._state_is_tuple:
                return tuple(cell.zero_state(batch_size, dtype) for cell in self._cells)
            return super().zero_state(batch_size, dtype)

    @property
    def trainable_weights(self) -> list:
        if not self.trainable:
            return []
        return [w for cell in self._cells for w in getattr(cell, "trainable_weights", [])]

    trainable_variables = trainable_weights

    @property
    def weights(self) -> list:
        return [w for cell in self._cells for w in getattr(cell, "weights", [])]

    variables = weights

    def call(self, inputs, state):
        cur_pos, cur_inp, new_states = 0, inputs, []
        for i, cell in enumerate(self._cells):
            with vs.variable_scope(f"cell_{i}"):
                if self._state_is_tuple:
                    if not is_sequence(state):
                        raise ValueError(f"Expected state to be a tuple of length {len(self.state_size)}, but "
                                         f"received: {state}")
                    cur_state = state[i]
                else:
                    cur_state = _slice(state, [0, cur_pos], [-1, cell.state_size])
                    cur_pos += cell.state_size
                cur_inp, new_state = cell(cur_inp, cur_state)
                new_states.append(new_state)
        return cur_inp, (tuple(new_states) if self._state_is_tuple else join_ops.concat(new_states, 1))


def _default_state_filter(substate):
    """TF's default: never drop an LSTM state's c (memory), drop everything else."""
    if isinstance(substate, LSTMStateTuple):
        return LSTMStateTuple(c=False, h=True)
    return True


def _leaf_flags(visitor, structure) -> list:
    """One bool per leaf of `structure`: whether dropout applies to it, per the filter visitor."""
    decision = visitor(structure)
    if not is_sequence(structure):
        return [bool(decision)]
    if decision is True:
        return [f for sub in structure for f in _leaf_flags(visitor, sub)]
    if decision is False:
        return [False] * len(nest_flatten(structure))
    if not is_sequence(decision) or len(decision) != len(structure):
        raise ValueError(f"dropout_state_filter_visitor returned {decision!r} for {structure!r}: expected a bool "
                         f"or a structure of bools of the state's shape")
    return [bool(d) for d, sub in zip(decision, structure) for _ in nest_flatten(sub)]


class DropoutWrapper(RNNCell):
    """`tf.nn.rnn_cell.DropoutWrapper(cell, input_keep_prob=1.0, output_keep_prob=1.0, state_keep_prob=1.0, ...)`:
    dropout on the cell's inputs, outputs and (filtered) new state."""

    def __init__(self, cell, input_keep_prob=1.0, output_keep_prob=1.0, state_keep_prob=1.0,
                 variational_recurrent=False, input_size=None, dtype=None, seed=None,
                 dropout_state_filter_visitor=None):
        super().__init__()
        assert_like_rnncell("cell", cell)
        self.cell = cell
        self._seed = seed
        self._variational_recurrent = variational_recurrent
        self._dropout_state_filter = dropout_state_filter_visitor or _default_state_filter
        if not callable(self._dropout_state_filter):
            raise TypeError("dropout_state_filter_visitor must be callable")
        with name_scope("DropoutWrapperInit"):
            for attr, prob in (("input_keep_prob", input_keep_prob), ("state_keep_prob", state_keep_prob),
                               ("output_keep_prob", output_keep_prob)):
                setattr(self, "_" + attr, self._keep_prob(attr, prob))
        self._recurrent_input_noise = self._recurrent_state_noise = self._recurrent_output_noise = None
        if variational_recurrent:
            self._make_recurrent_noise(dtype, input_size)

    @staticmethod
    def _keep_prob(attr, prob):
        if isinstance(prob, numbers.Real) and not isinstance(prob, bool):
            value = float(prob)
        else:
            tensor = convert_to_tensor(prob)
            const = constant_value(tensor) if isinstance(tensor, Tensor) else None
            if const is None:
                return tensor
            value = float(const)
        if value < 0 or value > 1:
            raise ValueError(f"Parameter {attr} must be between 0 and 1: {value:g}")
        return value

    def _gen_seed(self, salt_prefix, index):
        """TF's per-tensor seed: md5(str(seed) + '<salt>_<index>'), first 8 hex digits, masked to 31 bits."""
        if self._seed is None:
            return None
        digest = hashlib.md5((str(self._seed) + f"{salt_prefix}_{index}").encode("utf-8")).hexdigest()
        return int(digest[:8], 16) & 0x7FFFFFFF

    def _make_recurrent_noise(self, dtype, input_size):
        if dtype is None:
            raise TypeError("When variational_recurrent=True, dtype must be provided")
        dtype = _dtypes.as_dtype(dtype)

        def noise_for(sizes, salt):
            flat = [random_ops.random_uniform([1] + size_list(s), seed=self._gen_seed(salt, i), dtype=dtype)
                    for i, s in enumerate(nest_flatten(sizes))]
            return nest_pack(sizes, flat)

        if not isinstance(self._input_keep_prob, float) or self._input_keep_prob < 1.0:
            if input_size is None:
                raise ValueError("When variational_recurrent=True and input_keep_prob < 1.0 or is unknown, "
                                 "input_size must be provided")
            self._recurrent_input_noise = noise_for(input_size, "input")
        self._recurrent_state_noise = noise_for(self.cell.state_size, "state")
        self._recurrent_output_noise = noise_for(self.cell.output_size, "output")

    @property
    def wrapped_cell(self):
        return self.cell

    state_size = property(lambda self: self.cell.state_size)
    output_size = property(lambda self: self.cell.output_size)
    trainable_weights = property(lambda self: getattr(self.cell, "trainable_weights", []))
    trainable_variables = trainable_weights
    weights = property(lambda self: getattr(self.cell, "weights", []))
    variables = weights

    def zero_state(self, batch_size, dtype):
        with name_scope(type(self).__name__ + "ZeroState"):
            return self.cell.zero_state(batch_size, dtype)

    def _dropout(self, values, salt, noise, keep_prob, flags=None):
        flat = nest_flatten(values)
        flags = flags if flags is not None else [True] * len(flat)
        noise_flat = nest_flatten(noise) if noise is not None else [None] * len(flat)
        out = []
        for i, (v, do, n) in enumerate(zip(flat, flags, noise_flat)):
            if not do:
                out.append(v)
            elif not self._variational_recurrent:
                out.append(nn_impl.dropout(v, rate=1.0 - keep_prob, seed=self._gen_seed(salt, i)))
            else:
                binary = math_ops.floor(keep_prob + n)
                dropped = math_ops.divide(v, keep_prob) * binary
                dropped.set_shape(v.shape)
                out.append(dropped)
        return nest_pack(values, out)

    def __call__(self, inputs, state, scope=None):
        def should_dropout(p):
            return not isinstance(p, float) or p < 1

        if should_dropout(self._input_keep_prob):
            inputs = self._dropout(inputs, "input", self._recurrent_input_noise, self._input_keep_prob)
        output, new_state = self.cell(inputs, state, scope=scope)
        if should_dropout(self._state_keep_prob):
            flags = _leaf_flags(self._dropout_state_filter, new_state)
            new_state = self._dropout(new_state, "state", self._recurrent_state_noise, self._state_keep_prob, flags)
        if should_dropout(self._output_keep_prob):
            output = self._dropout(output, "output", self._recurrent_output_noise, self._output_keep_prob)
        return output, new_state



class _PassThroughWrapper(RNNCell):
    """A wrapper with the wrapped cell's sizes, zero state and variables, opening no scope of its own."""

    def __init__(self, cell):
        super().__init__()
        assert_like_rnncell("cell", cell)
        self.cell = cell

    state_size = property(lambda self: self.cell.state_size)
    output_size = property(lambda self: self.cell.output_size)
    trainable_weights = property(lambda self: getattr(self.cell, "trainable_weights", []))
    weights = property(lambda self: getattr(self.cell, "weights", []))

    def zero_state(self, batch_size, dtype):
        with name_scope(type(self).__name__ + "ZeroState"):
            return self.cell.zero_state(batch_size, dtype)


class ResidualWrapper(_PassThroughWrapper):
    """`tf.nn.rnn_cell.ResidualWrapper(cell, residual_fn=None)`: output = residual_fn(inputs, cell output),
    by default inputs + output (same structure and shapes)."""

    def __init__(self, cell, residual_fn=None):
        super().__init__(cell)
        self._residual_fn = residual_fn

    def __call__(self, inputs, state, scope=None):
        outputs, new_state = self.cell(inputs, state, scope=scope)
        if self._residual_fn is not None:
            return self._residual_fn(inputs, outputs), new_state

        def add(inp, out):
            inp = convert_to_tensor(inp)
            if not inp.shape.is_compatible_with(out.shape):
                raise ValueError(f"ResidualWrapper: inputs of shape {inp.shape} cannot be added to the cell's "
                                 f"outputs of shape {out.shape}")
            return inp + out

        flat_in, flat_out = nest_flatten(inputs), nest_flatten(outputs)
        if len(flat_in) != len(flat_out):
            raise ValueError("ResidualWrapper: inputs and outputs don't have the same nested structure")
        return nest_pack(outputs, [add(i, o) for i, o in zip(flat_in, flat_out)]), new_state


class DeviceWrapper(_PassThroughWrapper):
    """`tf.nn.rnn_cell.DeviceWrapper(cell, device)`: the cell's ops (and zero state) placed on `device`."""

    def __init__(self, cell, device):
        super().__init__(cell)
        self._device = device

    def zero_state(self, batch_size, dtype):
        with name_scope(type(self).__name__ + "ZeroState"), get_default_graph().device(self._device):
            return self.cell.zero_state(batch_size, dtype)

    def __call__(self, inputs, state, scope=None):
        with get_default_graph().device(self._device):
            return self.cell(inputs, state, scope=scope)
