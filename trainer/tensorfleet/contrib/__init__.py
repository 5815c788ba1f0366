"""`tf.contrib`: the parts of TF 1.15's contrib that TF1 scripts use most -- `tf.contrib.layers`,
`tf.contrib.framework` and `tf.contrib.rnn` (aliases of the core RNN cells).

Top layer beside `layers/` and `train/`: contrib's layers build on `tf.layers` and `tf.get_variable`,
`optimize_loss` on `tf.train`'s optimizers and `tf.summary`. Any other `tf.contrib.X` (slim, learn,
seq2seq, ...) raises an AttributeError naming it. See docs/contrib.md.
"""
from . import framework, layers, rnn

__all__ = ["framework", "layers", "rnn"]


def __getattr__(name):  # PEP 562: called for names the package does not have
    if name.startswith("__"):
        raise AttributeError(name)
    raise AttributeError(f"tf.contrib.{name} is not supported: tensorfleet provides tf.contrib.layers, "
                         f"tf.contrib.framework and tf.contrib.rnn only (docs/contrib.md). Use the core TF 1.15 "
                         f"name instead where there is one (e.g. tf.layers, tf.nn, tf.train).")
