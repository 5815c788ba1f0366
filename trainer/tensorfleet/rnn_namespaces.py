"""`tf.nn.rnn_cell` and `tf.contrib` (only `tf.contrib.rnn`): namespaces over ops/rnn_cell_impl, rnn_cell_wrappers
and rnn.

Top layer, beside `namespaces.py`. Each namespace is a module registered in `sys.modules`
(`tensorfleet.nn.rnn_cell`, `tensorfleet.contrib`, `tensorfleet.contrib.rnn`). `tf.contrib` is not supported
beyond the `tf.contrib.rnn` aliases listed here: any other `tf.contrib.X` (or a `tf.contrib.rnn` name not listed)
raises an AttributeError that says so.
"""
from __future__ import annotations

import sys
import types

from .ops import rnn as _rnn
from .ops import rnn_cell_impl as _cells
from .ops import rnn_cell_wrappers as _wrappers

_RNN_CELL = {name: getattr(_cells, name) for name in ("RNNCell", "BasicRNNCell", "BasicLSTMCell", "LSTMCell",
                                                      "GRUCell", "LSTMStateTuple")}
_RNN_CELL.update({name: getattr(_wrappers, name) for name in ("MultiRNNCell", "DropoutWrapper", "ResidualWrapper",
                                                                "DeviceWrapper")})

# TF 1.15's tf.contrib.rnn names that tensorfleet has (its other contrib cells are not provided).
_CONTRIB_RNN = dict(_RNN_CELL, LayerRNNCell=_cells.LayerRNNCell, LSTMBlockCell=_cells.LSTMBlockCell,
                    static_rnn=_rnn.static_rnn, static_bidirectional_rnn=_rnn.static_bidirectional_rnn)


def _module(name: str, members: dict, doc: str, missing=None) -> types.ModuleType:
    mod = types.ModuleType(name, doc)
    for k, v in members.items():
        setattr(mod, k, v)
    mod.__all__ = sorted(members)
    if missing is not None:
        mod.__getattr__ = missing  # PEP 562: called for names the module does not have
    sys.modules[name] = mod
    return mod


def _contrib_missing(name: str):
    if name.startswith("__"):
        raise AttributeError(name)
    raise AttributeError(f"tf.contrib.{name} is not supported: tensorfleet provides tf.contrib only as the alias "
                         f"namespace tf.contrib.rnn (= {', '.join(sorted(_CONTRIB_RNN))}). Use the core TF 1.15 "
                         f"name instead (e.g. tf.layers, tf.nn, tf.train).")


def _contrib_rnn_missing(name: str):
    if name.startswith("__"):
        raise AttributeError(name)
    raise AttributeError(f"tf.contrib.rnn.{name} is not supported: tf.contrib is supported only for the aliases "
                         f"tf.contrib.rnn.{{{', '.join(sorted(_CONTRIB_RNN))}}}.")


rnn_cell = _module("tensorfleet.nn.rnn_cell", _RNN_CELL,
                   "`tf.nn.rnn_cell`: TF 1.15's RNN cells (ops/rnn_cell_impl.py, ops/rnn_cell_wrappers.py).")
_contrib_rnn = _module("tensorfleet.contrib.rnn", _CONTRIB_RNN,
                       "`tf.contrib.rnn`: aliases of the tf.nn.rnn_cell cells, LSTMBlockCell and static_rnn.",
                       _contrib_rnn_missing)
contrib = _module("tensorfleet.contrib", {"rnn": _contrib_rnn},
                  "`tf.contrib`: only `tf.contrib.rnn`; everything else raises a clear AttributeError.",
                  _contrib_missing)
