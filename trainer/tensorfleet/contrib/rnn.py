"""`tf.contrib.rnn`: aliases of the tf.nn.rnn_cell cells, LayerRNNCell, LSTMBlockCell and static_rnn (the
rest of TF 1.15's contrib RNN cells is not provided: an AttributeError names it)."""
from ..ops import rnn as _rnn
from ..ops import rnn_cell_impl as _cells
from ..rnn_namespaces import rnn_cell as _rnn_cell

_ALIASES = dict({name: getattr(_rnn_cell, name) for name in _rnn_cell.__all__},
                LayerRNNCell=_cells.LayerRNNCell, LSTMBlockCell=_cells.LSTMBlockCell,
                static_rnn=_rnn.static_rnn, static_bidirectional_rnn=_rnn.static_bidirectional_rnn)
globals().update(_ALIASES)
__all__ = sorted(_ALIASES)


def __getattr__(name):  # PEP 562: called for names the module does not have
    if name.startswith("__"):
        raise AttributeError(name)
    raise AttributeError(f"tf.contrib.rnn.{name} is not supported: tensorfleet's tf.contrib.rnn has only the "
                         f"aliases tf.contrib.rnn.{{{', '.join(__all__)}}}.")
