"""`SimpleRNN`, `GRU` and `LSTM` (TF 1.15's v1 layers): an `RNN` over the matching cell, with the cell's arguments
as the layer's own (and read back as properties: `layer.units`, `layer.kernel`, ...).

`layer.get_config()` is the cell's arguments plus the RNN's (no nested `cell`), as TF's. Variables: `lstm/kernel`,
`lstm/recurrent_kernel`, `lstm/bias` (see recurrent_cells.py for layouts and v1 defaults).
"""
from __future__ import annotations

import inspect

from .. import regularizers
from ..engine.input_spec import InputSpec
from .recurrent import RNN
from .recurrent_cells import GRUCell, LSTMCell, SimpleRNNCell

_RNN_ARGS = ("return_sequences", "return_state", "go_backwards", "stateful", "unroll", "time_major")
_CELL_PROPERTIES = ("units", "activation", "recurrent_activation", "use_bias", "kernel_initializer",
                    "recurrent_initializer", "bias_initializer", "unit_forget_bias", "kernel_regularizer",
                    "recurrent_regularizer", "bias_regularizer", "kernel_constraint", "recurrent_constraint",
                    "bias_constraint", "dropout", "recurrent_dropout", "implementation", "reset_after", "kernel",
                    "recurrent_kernel", "bias")


class _CellLayer(RNN):
    """An RNN built from `cell_class(**cell arguments)`."""

    cell_class: type = SimpleRNNCell

    def __init__(self, units, **kwargs):
        rnn_args = {k: kwargs.pop(k) for k in _RNN_ARGS if k in kwargs}
        if "zero_output_for_mask" in kwargs:
            rnn_args["zero_output_for_mask"] = kwargs.pop("zero_output_for_mask")
        activity_regularizer = kwargs.pop("activity_regularizer", None)
        if kwargs.get("implementation") == 0:
            kwargs["implementation"] = 1  # TF: implementation 0 is the deprecated name of 1
        cell_keys = set(inspect.signature(self.cell_class.__init__).parameters) - {"self", "units", "kwargs"}
        if "implementation" not in cell_keys:
            kwargs.pop("implementation", None)  # TF's SimpleRNN ignores it (with a warning)
        cell_args = {k: kwargs.pop(k) for k in list(kwargs) if k in cell_keys}
        cell = self.cell_class(units, dtype=kwargs.get("dtype"), **cell_args)
        super().__init__(cell, **rnn_args, **kwargs)
        self.activity_regularizer = regularizers.get(activity_regularizer)
        self.input_spec = [InputSpec(ndim=3)]

    def call(self, inputs, mask=None, training=None, initial_state=None):
        self.cell.reset_dropout_mask()
        self.cell.reset_recurrent_dropout_mask()
        return super().call(inputs, mask=mask, training=training, initial_state=initial_state)

    def get_config(self):
        config = super().get_config()
        cell_config = config.pop("cell")["config"]
        for key in ("name", "trainable", "dtype"):
            cell_config.pop(key, None)
        config.update(cell_config)
        config["activity_regularizer"] = regularizers.serialize(self.activity_regularizer)
        return config

    @classmethod
    def from_config(cls, config, custom_objects=None):
        return cls(**config)


def _cell_property(name: str) -> property:
    def get(self):
        return getattr(self.cell, name)
    return property(get, doc=f"The cell's `{name}`.")


for _name in _CELL_PROPERTIES:
    setattr(_CellLayer, _name, _cell_property(_name))


class SimpleRNN(_CellLayer):
    cell_class = SimpleRNNCell


class GRU(_CellLayer):
    cell_class = GRUCell


class LSTM(_CellLayer):
    cell_class = LSTMCell
