"""Where `tf.keras.datasets` finds its files: `$TENSORFLEET_DATA_DIR/<set>/`, then Keras's own cache
`~/.keras/datasets/<keras subdir>/` (what an earlier `load_data()` of real Keras downloaded); and the error
naming what is missing. Nothing is downloaded and nothing is unpickled."""
from __future__ import annotations

import os

import numpy as np

from ...datasets.mnist import MissingDataError


def keras_cache_dir() -> str:
    return os.path.join(os.path.expanduser("~"), ".keras", "datasets")


def candidate_dirs(dataset: str, keras_subdir: str = "") -> list:
    out = []
    root = os.environ.get("TENSORFLEET_DATA_DIR")
    if root:
        out.append(os.path.join(os.path.expanduser(root), dataset))
    out.append(os.path.join(keras_cache_dir(), keras_subdir) if keras_subdir else keras_cache_dir())
    return out


def find_files(dataset: str, names: list, keras_subdir: str = "", origin: str = "") -> dict:
    """{name: path} from the first directory holding every one of `names` (a name may be a list of
    alternatives); MissingDataError naming the files, the directories searched and where they come from."""
    dirs = candidate_dirs(dataset, keras_subdir)
    for d in dirs:
        found = {}
        for name in names:
            options = name if isinstance(name, (list, tuple)) else [name]
            path = next((os.path.join(d, o) for o in options if os.path.isfile(os.path.join(d, o))), None)
            if path is None:
                break
            found[options[0]] = path
        else:
            return found
    listed = ", ".join(n if isinstance(n, str) else n[0] for n in names)
    raise MissingDataError(
        f"tf.keras.datasets.{dataset}: its files ({listed}) are not in {' nor '.join(dirs)}. tensorfleet never "
        f"downloads data at run time: put them in one of these directories" + (f" (from {origin})" if origin else "")
        + ".")


def load_npz(path: str, keys: list) -> list:
    """The arrays `keys` of an .npz file, read without unpickling (object arrays are refused)."""
    try:
        with np.load(path, allow_pickle=False) as f:
            return [np.array(f[k]) for k in keys]
    except ValueError as e:
        raise ValueError(f"{path}: {e} (tensorfleet reads .npz files without pickle)") from None
    except KeyError as e:
        raise ValueError(f"{path}: no array {e} in it; expected {keys}") from None
