"""`tf.nn.rnn_cell`: a namespace over ops/rnn_cell_impl and rnn_cell_wrappers.

Top layer, beside `namespaces.py`: a module registered in `sys.modules` as `tensorfleet.nn.rnn_cell`.
`tf.contrib.rnn` (aliases of these cells, LSTMBlockCell and static_rnn) is `contrib/rnn.py`.
"""
from __future__ import annotations

import sys
import types

from .ops import rnn_cell_impl as _cells
from .ops import rnn_cell_wrappers as _wrappers

_RNN_CELL = {name: getattr(_cells, name) for name in ("RNNCell", "BasicRNNCell", "BasicLSTMCell", "LSTMCell",
                                                      "GRUCell", "LSTMStateTuple")}
_RNN_CELL.update({name: getattr(_wrappers, name) for name in ("MultiRNNCell", "DropoutWrapper", "ResidualWrapper",
                                                                "DeviceWrapper")})


def _module(name: str, members: dict, doc: str) -> types.ModuleType:
    mod = types.ModuleType(name, doc)
    for k, v in members.items():
        setattr(mod, k, v)
    mod.__all__ = sorted(members)
    sys.modules[name] = mod
    return mod


rnn_cell = _module("tensorfleet.nn.rnn_cell", _RNN_CELL,
                   "`tf.nn.rnn_cell`: TF 1.15's RNN cells (ops/rnn_cell_impl.py, ops/rnn_cell_wrappers.py).")
