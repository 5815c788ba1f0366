"""`tf.keras.datasets.imdb` (TF 1.15): not available. Keras stores it as an .npz of pickled Python lists
(object arrays), which tensorfleet does not unpickle; `load_data` and `get_word_index` raise saying so."""
from __future__ import annotations


def _unavailable():
    raise NotImplementedError("tf.keras.datasets.imdb is not available in tensorfleet: Keras ships it as pickled "
                              "object arrays (imdb.npz), and tensorfleet never unpickles files. Load your own copy "
                              "of the data as numpy arrays instead.")


def load_data(*args, **kwargs):
    _unavailable()


def get_word_index(*args, **kwargs):
    _unavailable()
