"""`tf.keras.datasets` (TF 1.15), offline: `load_data()` returns Keras's arrays, never downloads.

- `mnist`: the project's hash-pinned MNIST copy (`python -m tensorfleet.datasets fetch`, which `make install`
  runs), or a `mnist.npz` Keras itself downloaded earlier into `~/.keras/datasets/` (read without pickle).
- `fashion_mnist`, `cifar10`, `cifar100`, `boston_housing`: read when their files are in a data directory
  (`$TENSORFLEET_DATA_DIR/<set>` or Keras's cache `~/.keras/datasets/<set>`); otherwise a `MissingDataError`
  names the files and where to put them. CIFAR is read from its binary distribution (`cifar-10-binary.tar.gz`
  extracted), never from the pickled python one.
- `imdb`, `reuters`: Keras ships them as pickled object arrays, which tensorfleet does not unpickle: a clear
  error.
"""
from . import boston_housing, cifar10, cifar100, fashion_mnist, imdb, mnist, reuters
from .files import MissingDataError

__all__ = ["MissingDataError", "boston_housing", "cifar10", "cifar100", "fashion_mnist", "imdb", "mnist", "reuters"]
