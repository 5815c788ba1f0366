"""The recurrent layer base (TF 1.15's keras/layers/recurrent.py): `RNN` (a cell run over time with
`backend.rnn`), `StackedRNNCells`, and the cells' dropout-mask mixin. The cells and the SimpleRNN/GRU/LSTM layers
are in `recurrent_cells.py` and `recurrent_layers.py`.

As TF 1.15 (v1 Keras): the cell's weights are built in the RNN layer's name scope (`lstm/kernel:0`, not
`lstm/lstm_cell/kernel:0` as TF 2 names them); `return_sequences`, `return_state`, `go_backwards`, `unroll`,
`time_major`, masks (a masked step keeps the previous output and states), `initial_state` and `constants`
(also as Keras tensors: extra inputs of the layer's node) and `stateful` (states kept in variables, assigned as
updates; `reset_states`). Dropout masks are drawn once per call and shared by every time step (TF's
`DropoutRNNCellMixin`: made by the step `backend.rnn` runs once outside its loop).
"""
from __future__ import annotations

import numpy as np

from ...ops import array_ops, join_ops, state_ops
from ...ops.functional_ops import nest_flatten
from ...tensor_shape import TensorShape
from .. import backend as K
from ..backend.rnn import rnn as K_rnn
from ..engine.base_layer import Layer
from ..engine.input_spec import InputSpec
from ..utils.generic_utils import has_arg


def is_multiple_state(state_size):
    return hasattr(state_size, "__len__") and not isinstance(state_size, TensorShape)


def _state_sizes(cell):
    return list(cell.state_size) if is_multiple_state(cell.state_size) else [cell.state_size]


def _dims(size):
    return TensorShape(size).as_list() if not isinstance(size, int) else [size]


def generate_dropout_mask(ones, rate, training=None, count=1):
    """`count` masks (1 / (1 - rate) or 0) in training, `ones` otherwise."""
    def dropped_inputs():
        return K.dropout(ones, rate)

    if count > 1:
        return [K.in_train_phase(dropped_inputs, ones, training=training) for _ in range(count)]
    return K.in_train_phase(dropped_inputs, ones, training=training)


class DropoutRNNCellMixin:
    """Masks for a cell's inputs and recurrent state, made on first use in a layer call and then reused by
    every step (`reset_*` at the start of each call)."""

    _dropout_mask = None
    _recurrent_dropout_mask = None

    def reset_dropout_mask(self):
        self._dropout_mask = None

    def reset_recurrent_dropout_mask(self):
        self._recurrent_dropout_mask = None

    def get_dropout_mask_for_cell(self, inputs, training, count=1):
        if self.dropout == 0:
            return None
        if self._dropout_mask is None:
            self._dropout_mask = generate_dropout_mask(array_ops.ones_like(inputs), self.dropout, training, count)
        return self._dropout_mask

    def get_recurrent_dropout_mask_for_cell(self, inputs, training, count=1):
        if self.recurrent_dropout == 0:
            return None
        if self._recurrent_dropout_mask is None:
            self._recurrent_dropout_mask = generate_dropout_mask(array_ops.ones_like(inputs), self.recurrent_dropout,
                                                                 training, count)
        return self._recurrent_dropout_mask


class StackedRNNCells(Layer):
    """Cells stacked into one cell: each cell's output is the next one's input; the states are concatenated."""

    def __init__(self, cells, **kwargs):
        for cell in cells:
            if not hasattr(cell, "call") or not hasattr(cell, "state_size"):
                raise ValueError(f"All cells must have a `call` method and a `state_size` attribute. Received "
                                 f"cells: {cells}")
        self.reverse_state_order = kwargs.pop("reverse_state_order", False)
        super().__init__(**kwargs)
        self.cells = cells  # tracked: the cells' weights are this layer's

    @property
    def state_size(self):
        return tuple(s for cell in self.cells for s in _state_sizes(cell))

    @property
    def output_size(self):
        last = self.cells[-1]
        return getattr(last, "output_size", None) or _state_sizes(last)[0]

    def get_initial_state(self, inputs=None, batch_size=None, dtype=None):
        return None

    def call(self, inputs, states, constants=None, training=None, **kwargs):
        nested, k = [], 0
        for cell in self.cells:
            n = len(_state_sizes(cell))
            nested.append(list(states[k:k + n]))
            k += n
        new_states = []
        for cell, cell_states in zip(self.cells, nested):
            extra = {"training": training} if has_arg(cell.call, "training") else {}
            if constants is not None:
                extra["constants"] = constants
            inputs, out_states = cell.call(inputs, cell_states if is_multiple_state(cell.state_size)
                                           else cell_states[0], **extra)
            new_states.extend(nest_flatten(out_states))
        return inputs, new_states

    def build(self, input_shape):
        shape = TensorShape(input_shape)
        for cell in self.cells:
            if isinstance(cell, Layer) and not cell.built:
                cell.build(shape)
                cell.built = True
            out_dim = getattr(cell, "output_size", None) or _state_sizes(cell)[0]
            shape = TensorShape([shape[0]] + _dims(out_dim))
        self.built = True

    def get_config(self):
        cells = [{"class_name": c.__class__.__name__, "config": c.get_config()} for c in self.cells]
        return {**super().get_config(), "cells": cells}

    @classmethod
    def from_config(cls, config, custom_objects=None):
        from .serialization import deserialize
        cells = [deserialize(c, custom_objects=custom_objects) for c in config.pop("cells")]
        return cls(cells, **config)


def _standardize_args(inputs, initial_state, constants, num_constants):
    """Splits a list input [inputs, *initial_state, *constants] (a functional model's node) as TF does."""
    if isinstance(inputs, list):
        if initial_state is not None or constants is not None:
            raise ValueError("initial_state and constants must not be given when inputs is a list")
        if num_constants:
            constants = inputs[-num_constants:]
            inputs = inputs[:-num_constants]
        if len(inputs) > 1:
            initial_state = inputs[1:]
        inputs = inputs[0]

    def to_list_or_none(x):
        if x is None or isinstance(x, list):
            return x
        if isinstance(x, tuple):
            return list(x)
        return [x]

    return inputs, to_list_or_none(initial_state), to_list_or_none(constants)


class RNN(Layer):
    """Runs `cell` over the time axis of [batch, time, ...] inputs."""

    def __init__(self, cell, return_sequences=False, return_state=False, go_backwards=False, stateful=False,
                 unroll=False, time_major=False, **kwargs):
        if isinstance(cell, (list, tuple)):
            cell = StackedRNNCells(cell)
        if not hasattr(cell, "call"):
            raise ValueError("`cell` should have a `call` method. The RNN was passed:", cell)
        if not hasattr(cell, "state_size"):
            raise ValueError("The RNN cell should have an attribute `state_size` (tuple of integers, one integer "
                             "per RNN state).")
        self.zero_output_for_mask = kwargs.pop("zero_output_for_mask", False)
        super().__init__(**kwargs)
        self.cell = cell
        self.return_sequences, self.return_state = return_sequences, return_state
        self.go_backwards, self.stateful, self.unroll, self.time_major = go_backwards, stateful, unroll, time_major
        self.supports_masking = True
        self.input_spec = None
        self.state_spec = None
        self.constants_spec = None
        self._num_constants = None
        with self._no_tracking():
            self._states = None

    @property
    def states(self):
        if self._states is None:
            return [None] * len(_state_sizes(self.cell))
        return self._states

    @states.setter
    def states(self, states):
        with self._no_tracking():
            self._states = states

    def compute_output_shape(self, input_shape):
        if isinstance(input_shape, list) and input_shape and not isinstance(input_shape[0], (int, type(None))):
            input_shape = input_shape[0]
        shape = TensorShape(input_shape).as_list()
        batch, time = (shape[1], shape[0]) if self.time_major else (shape[0], shape[1])
        out_dim = _dims(getattr(self.cell, "output_size", None) or _state_sizes(self.cell)[0])
        if self.return_sequences:
            output = TensorShape(([time, batch] if self.time_major else [batch, time]) + out_dim)
        else:
            output = TensorShape([batch] + out_dim)
        if self.return_state:
            return [output] + [TensorShape([batch] + _dims(s)) for s in _state_sizes(self.cell)]
        return output

    def compute_mask(self, inputs, mask):
        if isinstance(mask, list):
            mask = mask[0]
        output_mask = mask if self.return_sequences else None
        if self.return_state:
            return [output_mask] + [None for _ in self.states]
        return output_mask

    def build(self, input_shape):
        if isinstance(input_shape, list):
            input_shape = input_shape[0]
        shape = TensorShape(input_shape).as_list()
        batch = shape[1] if self.time_major else shape[0]
        spec_shape = [None, batch] + shape[2:] if self.time_major else [batch, None] + shape[2:]
        self.input_spec = [InputSpec(shape=spec_shape)]
        step_input_shape = TensorShape([batch] + shape[2:])
        if isinstance(self.cell, Layer) and not self.cell.built:
            if self._num_constants:
                self.cell.build([step_input_shape] + [s.shape for s in self.constants_spec])
            else:
                self.cell.build(step_input_shape)
            self.cell.built = True
        sizes = _state_sizes(self.cell)
        if self.state_spec is not None:
            self._validate_state_spec(sizes, self.state_spec)
        else:
            self.state_spec = [InputSpec(shape=[None] + _dims(s)) for s in sizes]
        if self.stateful:
            self.reset_states()
        self.built = True

    @staticmethod
    def _validate_state_spec(cell_state_sizes, init_state_specs):
        error = ValueError(f"An `initial_state` was passed that is not compatible with `cell.state_size`. Received "
                           f"`state_spec`={init_state_specs}; however `cell.state_size` is {cell_state_sizes}")
        if len(cell_state_sizes) != len(init_state_specs):
            raise error
        for size, spec in zip(cell_state_sizes, init_state_specs):
            if not TensorShape(spec.shape[1:]).is_compatible_with(TensorShape(_dims(size))):
                raise error

    def get_initial_state(self, inputs):
        """The cell's `get_initial_state` when it has one, else zeros of [batch] + each state size (the batch
        read from `inputs` at run time)."""
        batch = array_ops.shape(inputs)[1 if self.time_major else 0]
        get = getattr(self.cell, "get_initial_state", None)
        states = get(inputs=None, batch_size=batch, dtype=inputs.dtype) if get is not None else None
        if states is not None:
            return nest_flatten(states)
        return [array_ops.zeros(join_ops.stack([batch] + _dims(size)), dtype=inputs.dtype)
                for size in _state_sizes(self.cell)]

    def __call__(self, inputs, initial_state=None, constants=None, **kwargs):
        inputs, initial_state, constants = _standardize_args(inputs, initial_state, constants, self._num_constants)
        if initial_state is None and constants is None:
            return super().__call__(inputs, **kwargs)
        extra, specs = [], []
        if initial_state is not None:
            extra += initial_state
            self.state_spec = [InputSpec(shape=K.int_shape(s)) for s in initial_state]
            specs += self.state_spec
        if constants is not None:
            extra += constants
            self.constants_spec = [InputSpec(shape=K.int_shape(c)) for c in constants]
            self._num_constants = len(constants)
            specs += self.constants_spec
        keras_tensor = K.is_keras_tensor(extra[0])
        if any(K.is_keras_tensor(t) != keras_tensor for t in extra):
            raise ValueError("The initial state or constants of an RNN layer cannot be specified with a mix of Keras "
                             "tensors and non-Keras tensors (a \"Keras tensor\" is a tensor that was returned by a "
                             "Keras layer, or by `Input`)")
        if keras_tensor:  # extra inputs of the node: a model re-applying the layer passes them again
            original = self.input_spec
            self.input_spec = (original or [None]) + specs
            try:
                return super().__call__([inputs] + extra, **kwargs)
            finally:
                self.input_spec = original
        if initial_state is not None:
            kwargs["initial_state"] = initial_state
        if constants is not None:
            kwargs["constants"] = constants
        return super().__call__(inputs, **kwargs)

    def _process_inputs(self, inputs, initial_state, constants):
        if isinstance(inputs, list):
            n_states = len(_state_sizes(self.cell))
            if self._num_constants:
                constants = inputs[-self._num_constants:]
                inputs = inputs[:-self._num_constants]
            if len(inputs) > 1:
                initial_state = inputs[1:1 + n_states]
            inputs = inputs[0]
        if initial_state is not None:
            pass
        elif self.stateful:
            initial_state = self.states
        else:
            initial_state = self.get_initial_state(inputs)
        if len(initial_state) != len(self.states):
            raise ValueError(f"Layer has {len(self.states)} states but was passed {len(initial_state)} initial "
                             f"states.")
        return inputs, initial_state, constants

    def call(self, inputs, mask=None, training=None, initial_state=None, constants=None):
        inputs, initial_state, constants = self._process_inputs(inputs, initial_state, constants)
        if isinstance(mask, list):
            mask = mask[0]
        timesteps = inputs.shape[0 if self.time_major else 1]
        if self.unroll and timesteps in (None, 1):
            raise ValueError("Cannot unroll a RNN if the time dimension is undefined or equal to 1. \n- If using a "
                             "Sequential model, specify the time dimension by passing an `input_shape` or "
                             "`batch_input_shape` argument to your first layer. If your first layer is an Embedding, "
                             "you can also use the `input_length` argument.\n- If using the functional API, specify "
                             "the time dimension by passing a `shape` or `batch_shape` argument to your Input layer.")
        kwargs = {"training": training} if has_arg(self.cell.call, "training") else {}
        multiple = is_multiple_state(self.cell.state_size)
        if constants:
            if not has_arg(self.cell.call, "constants"):
                raise ValueError("RNN cell does not support constants")
            n = self._num_constants

            def step(step_inputs, states):
                return self.cell.call(step_inputs, list(states[:-n]) if multiple else states[0],
                                      constants=list(states[-n:]), **kwargs)
        else:
            def step(step_inputs, states):
                return self.cell.call(step_inputs, list(states) if multiple else states[0], **kwargs)

        last_output, outputs, states = K_rnn(step, inputs, initial_state, constants=constants,
                                             go_backwards=self.go_backwards, mask=mask, unroll=self.unroll,
                                             input_length=timesteps, time_major=self.time_major,
                                             zero_output_for_mask=self.zero_output_for_mask)
        if self.stateful:
            self.add_update([state_ops.assign(v, s) for v, s in zip(self.states, states)], inputs)
        output = outputs if self.return_sequences else last_output
        if self.return_state:
            return [output] + list(states)
        return output

    def reset_states(self, states=None):
        """Zeros the states of a stateful RNN (or sets them to `states`, numpy values)."""
        if not self.stateful:
            raise AttributeError("Layer must be stateful.")
        spec = self.input_spec[0].shape if self.input_spec else None
        batch_size = spec[1 if self.time_major else 0] if spec else None
        if not batch_size:
            raise ValueError("If a RNN is stateful, it needs to know its batch size. Specify the batch size of your "
                             "input tensors: \n- If using a Sequential model, specify the batch size by passing a "
                             "`batch_input_shape` argument to your first layer.\n- If using the functional API, "
                             "specify the batch size by passing a `batch_shape` argument to your Input layer.")
        shapes = [[batch_size] + _dims(s) for s in _state_sizes(self.cell)]
        if self._states is None:
            self.states = [K.zeros(shape) for shape in shapes]
            return
        if states is None:
            values = [np.zeros(shape) for shape in shapes]
        else:
            values = states if isinstance(states, (list, tuple)) else [states]
            if len(values) != len(shapes):
                raise ValueError(f"Layer {self.name} expects {len(shapes)} states, but it received {len(values)} "
                                 f"state values. Input received: {states}")
            for i, (value, shape) in enumerate(zip(values, shapes)):
                if tuple(np.shape(value)) != tuple(shape):
                    raise ValueError(f"State {i} is incompatible with layer {self.name}: expected shape={tuple(shape)}"
                                     f", found shape={np.shape(value)}")
        K.batch_set_value(list(zip(self._states, values)))

    def get_config(self):
        config = {"return_sequences": self.return_sequences, "return_state": self.return_state,
                  "go_backwards": self.go_backwards, "stateful": self.stateful, "unroll": self.unroll,
                  "time_major": self.time_major}
        if self._num_constants is not None:
            config["num_constants"] = self._num_constants
        if self.zero_output_for_mask:
            config["zero_output_for_mask"] = self.zero_output_for_mask
        config["cell"] = {"class_name": self.cell.__class__.__name__, "config": self.cell.get_config()}
        return {**super().get_config(), **config}

    @classmethod
    def from_config(cls, config, custom_objects=None):
        from .serialization import deserialize
        cell = deserialize(config.pop("cell"), custom_objects=custom_objects)
        num_constants = config.pop("num_constants", None)
        layer = cls(cell, **config)
        layer._num_constants = num_constants
        return layer
