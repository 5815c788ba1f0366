"""Keras model saving (TF 1.15's keras/saving and the save/load methods of Network): the entry points.

- `save_weights(model, path, overwrite=True, save_format=None)`: HDF5 when the path ends with `.h5`, `.keras`
  or `.hdf5` (or save_format 'h5'/'hdf5'/'keras'), else TensorFlow's object-based checkpoint
  (tf_format.py); `load_weights(model, path, by_name=False)` picks the format the same way, trying
  TensorFlow's format first for other names.
- `save_model(model, path, overwrite=True, include_optimizer=True, save_format=None)`: 'h5' by default (TF 1.15
  without v2 behaviour), 'tf' writes a SavedModel (saved_model_format.py); `load_model(path, custom_objects=None,
  compile=True)` reads an HDF5 file or such a SavedModel directory.
An existing target with `overwrite=False` asks on stdin, as Keras does.
"""
from __future__ import annotations

import os

from ... import errors
from . import hdf5_format, tf_format

_HDF5_EXTENSIONS = (".h5", ".keras", ".hdf5")


def is_hdf5_filepath(filepath) -> bool:
    return str(filepath).endswith(_HDF5_EXTENSIONS)


def ask_to_proceed_with_overwrite(filepath) -> bool:
    """Asks on stdin whether to overwrite `filepath` (TF's prompt)."""
    overwrite = input(f"[WARNING] {filepath} already exists - overwrite? [y/n]").strip().lower()
    while overwrite not in ("y", "n"):
        overwrite = input('Enter "y" (overwrite) or "n" (cancel).').strip().lower()
    if overwrite == "n":
        return False
    print("[TIP] Next time specify overwrite=True!")
    return True


def _assert_weights_created(model):
    if not model.__dict__.get("_is_graph_network") and not model.built:
        raise ValueError(f"Weights for model {model.name} have not yet been created. Weights are created when the "
                         f"Model is first called on inputs or `build()` is called with an `input_shape`.")


def save_weights(model, filepath, overwrite=True, save_format=None):
    filepath = os.fspath(filepath)
    _assert_weights_created(model)
    filepath_is_h5 = is_hdf5_filepath(filepath)
    if save_format is None:
        save_format = "h5" if filepath_is_h5 else "tf"
    else:
        user_format = save_format.lower().strip()
        if user_format in ("tensorflow", "tf"):
            save_format = "tf"
        elif user_format in ("hdf5", "h5", "keras"):
            save_format = "h5"
        else:
            raise ValueError(f'Unknown format "{save_format}". Was expecting one of {{"tf", "h5"}}.')
    if save_format == "tf" and filepath_is_h5:
        raise ValueError(f'save_weights got save_format="tf"/"tensorflow", but the filepath ("{filepath}") looks '
                         f'like an HDF5 file. Omit the ".h5"/".keras" when saving in TensorFlow format.')
    check = filepath + ".index" if save_format == "tf" else filepath
    if not overwrite and os.path.isfile(check) and not ask_to_proceed_with_overwrite(check):
        return
    if save_format == "h5":
        with hdf5_format.h5py_module().File(filepath, "w") as f:
            hdf5_format.save_weights_to_hdf5_group(f, model.layers)
    else:
        tf_format.save_weights(model, filepath)


def load_weights(model, filepath, by_name=False, skip_mismatch=False):
    filepath = os.fspath(filepath)
    h5py = hdf5_format.h5py_module()
    if is_hdf5_filepath(filepath):
        save_format = "h5"
    elif os.path.isfile(filepath + ".index"):
        save_format = "tf"
    elif os.path.isfile(filepath) and h5py.is_hdf5(filepath):
        save_format = "h5"
    else:
        raise errors.NotFoundError(None, None, f"Unable to open weights {filepath}: neither a TensorFlow checkpoint "
                                               f"({filepath}.index) nor an HDF5 file")
    if save_format == "tf":
        if by_name:
            raise NotImplementedError("Weights may only be loaded based on topology into Models when loading "
                                      "TensorFlow-formatted weights (got by_name=True to load_weights).")
        return tf_format.load_weights(model, filepath).assert_nontrivial_match()
    if not model.__dict__.get("_is_graph_network") and not model.built:
        raise ValueError("Unable to load weights saved in HDF5 format into a subclassed Model which has not created "
                         "its variables yet. Call the Model first, then load the weights.")
    with h5py.File(filepath, "r") as f:
        if "layer_names" not in f.attrs and "model_weights" in f:
            f = f["model_weights"]
        if by_name:
            hdf5_format.load_weights_from_hdf5_group_by_name(f, model.layers, skip_mismatch=skip_mismatch)
        else:
            hdf5_format.load_weights_from_hdf5_group(f, model.layers)
    return None


def save_model(model, filepath, overwrite=True, include_optimizer=True, save_format=None, signatures=None):
    """`tf.keras.models.save_model`: HDF5 (the default) or, with save_format='tf', a SavedModel directory."""
    from ..engine.sequential import Sequential
    h5py = hdf5_format.h5py_module()
    save_format = (save_format or "h5").lower().strip()
    if save_format in ("tensorflow", "tf") and not isinstance(filepath, h5py.File) \
            and os.path.splitext(os.fspath(filepath))[1] not in _HDF5_EXTENSIONS:
        from . import saved_model_format
        return saved_model_format.save(model, os.fspath(filepath), overwrite, include_optimizer, signatures)
    if save_format not in ("h5", "hdf5", "keras", "tf", "tensorflow"):
        raise ValueError(f'Unknown format "{save_format}". Was expecting one of {{"tf", "h5"}}.')
    if not model.__dict__.get("_is_graph_network") and not isinstance(model, Sequential):
        raise NotImplementedError("Saving the model to HDF5 format requires the model to be a Functional model or a "
                                  "Sequential model. It does not work for subclassed models, because such models are "
                                  "defined via the body of a Python method, which isn't safely serializable. "
                                  "Consider saving to the Tensorflow SavedModel format (by setting save_format=\"tf\") "
                                  "or using `save_weights`.")
    if isinstance(filepath, h5py.File):
        hdf5_format.save_model_to_hdf5(model, filepath, include_optimizer)
        return None
    filepath = os.fspath(filepath)
    if not overwrite and os.path.isfile(filepath) and not ask_to_proceed_with_overwrite(filepath):
        return None
    with h5py.File(filepath, "w") as f:
        hdf5_format.save_model_to_hdf5(model, f, include_optimizer)
    return None


def load_model(filepath, custom_objects=None, compile=True):  # noqa: A002  (TF's argument name)
    """`tf.keras.models.load_model`: an HDF5 model file, or a SavedModel directory written by `save_format='tf'`."""
    h5py = hdf5_format.h5py_module()
    if isinstance(filepath, h5py.File):
        return hdf5_format.load_model_from_hdf5(filepath, custom_objects, compile)
    filepath = os.fspath(filepath)
    if os.path.isfile(filepath) and h5py.is_hdf5(filepath):
        with h5py.File(filepath, "r") as f:
            return hdf5_format.load_model_from_hdf5(f, custom_objects, compile)
    if os.path.isdir(filepath):
        from . import saved_model_format
        return saved_model_format.load(filepath, custom_objects, compile)
    raise OSError(f"Unable to load model. Filepath is not an hdf5 file (or h5py is not available) or SavedModel: "
                  f"{filepath}")


__all__ = ["load_model", "load_weights", "save_model", "save_weights"]
