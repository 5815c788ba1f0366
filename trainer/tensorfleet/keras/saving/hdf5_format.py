"""Keras's HDF5 format (TF 1.15's keras/saving/hdf5_format.py), on h5py.

Weights (`save_weights('w.h5')`, and the `model_weights` group of a saved model): the group's attributes
`layer_names` (every layer of `model.layers`, in order, as bytes), `backend` and `keras_version`; one group per
layer, named after it, with the attribute `weight_names` (`dense/kernel:0`, ...: trainable then non-trainable
weights) and one dataset per weight at that name (so `dense/kernel:0` is the dataset `kernel:0` in the
subgroup `dense`). A name list longer than HDF5's 64 KiB attribute limit is split into `<name>0`, `<name>1`...

A whole model (`model.save('m.h5')`): the attributes `keras_version`, `backend`, `model_config` (the JSON of
`{'class_name', 'config'}`) and, when the model is compiled with a Keras optimizer and `include_optimizer`,
`training_config` (loss, metrics, weighted metrics, sample_weight_mode, loss_weights, optimizer_config), the
group `model_weights` and the group `optimizer_weights` (the optimizer's `weights`: `iter` then the slots,
named by their variables' names). Loading rebuilds the model from its config (names looked up, never
evaluated), sets its weights in order, compiles it and sets the optimizer's weights after building the
training function (a mismatch only warns, as in TF).
"""
from __future__ import annotations

import json

import numpy as np

from ... import tf_logging as logging
from .. import backend as K
from ..optimizers import TFOptimizer

HDF5_OBJECT_HEADER_LIMIT = 64512
keras_version = "2.2.4-tf"  # tf.keras.__version__ in TF 1.15, written into every file


def h5py_module():
    try:
        import h5py
    except ImportError:  # pragma: no cover (a dependency of tensorfleet)
        raise ImportError("Saving and loading Keras HDF5 files requires h5py (pip install h5py).") from None
    return h5py


def _text(value) -> str:
    return value.decode("utf8") if isinstance(value, (bytes, np.bytes_)) else str(value)


def save_attributes_to_hdf5_group(group, name, data):
    bad = [x for x in data if len(x) > HDF5_OBJECT_HEADER_LIMIT]
    if bad:
        raise RuntimeError(f"The following attributes cannot be saved to HDF5 file because they are larger than "
                           f"{HDF5_OBJECT_HEADER_LIMIT} bytes: {', '.join(_text(x) for x in bad)}")
    data_npy = np.asarray(data)
    num_chunks = 1
    chunks = np.array_split(data_npy, num_chunks)
    while any(x.nbytes > HDF5_OBJECT_HEADER_LIMIT for x in chunks):
        num_chunks += 1
        chunks = np.array_split(data_npy, num_chunks)
    if num_chunks > 1:
        for chunk_id, chunk in enumerate(chunks):
            group.attrs[f"{name}{chunk_id}"] = chunk
    else:
        group.attrs[name] = data


def load_attributes_from_hdf5_group(group, name) -> list:
    if name in group.attrs:
        return [_text(n) for n in group.attrs[name]]
    data: list = []
    chunk_id = 0
    while f"{name}{chunk_id}" in group.attrs:
        data.extend(_text(n) for n in group.attrs[f"{name}{chunk_id}"])
        chunk_id += 1
    return data


def _legacy_weights(layer):
    return layer.trainable_weights + layer.non_trainable_weights


def _write_dataset(group, name, value):
    dset = group.create_dataset(name, value.shape, dtype=value.dtype)
    if not value.shape:
        dset[()] = value
    else:
        dset[:] = value


def save_weights_to_hdf5_group(f, layers):
    save_attributes_to_hdf5_group(f, "layer_names", [layer.name.encode("utf8") for layer in layers])
    f.attrs["backend"] = K.backend().encode("utf8")
    f.attrs["keras_version"] = str(keras_version).encode("utf8")
    for layer in layers:
        g = f.create_group(layer.name)
        weights = _legacy_weights(layer)
        names = [w.name.encode("utf8") for w in weights]
        save_attributes_to_hdf5_group(g, "weight_names", names)
        for name, value in zip(names, K.batch_get_value(weights)):
            _write_dataset(g, name, np.asarray(value))


def _saved_layers(f):
    """[(layer name, [weight values])] of the layers that have weights, in the file's order."""
    out = []
    for name in load_attributes_from_hdf5_group(f, "layer_names"):
        g = f[name]
        weight_names = load_attributes_from_hdf5_group(g, "weight_names")
        if weight_names:
            out.append((name, [np.asarray(g[w]) for w in weight_names]))
    return out


def load_weights_from_hdf5_group(f, layers):
    """Sets the weights of `layers` (those with weights, in order) from the file's layers with weights."""
    filtered = [layer for layer in layers if _legacy_weights(layer)]
    saved = _saved_layers(f)
    if len(saved) != len(filtered):
        raise ValueError(f"You are trying to load a weight file containing {len(saved)} layers into a model with "
                         f"{len(filtered)} layers.")
    pairs = []
    for k, ((name, values), layer) in enumerate(zip(saved, filtered)):
        symbolic = _legacy_weights(layer)
        if len(values) != len(symbolic):
            raise ValueError(f'Layer #{k} (named "{layer.name}" in the current model) was found to correspond to '
                             f"layer {name} in the save file. However the new layer {layer.name} expects "
                             f"{len(symbolic)} weights, but the saved weights have {len(values)} elements.")
        for w, v in zip(symbolic, values):
            _check_shape(w, v, layer.name, name)
            pairs.append((w, v))
    K.batch_set_value(pairs)


def _check_shape(weight, value, layer_name, saved_name):
    if not weight.shape.is_compatible_with(value.shape):
        raise ValueError(f"Layer {layer_name}: weight {weight.name} has shape {weight.shape.as_list()}, the saved "
                         f"weight of layer {saved_name} has shape {list(value.shape)}")


def load_weights_from_hdf5_group_by_name(f, layers, skip_mismatch=False):
    """Sets the weights of the layers whose names are in the file (several layers may share a name)."""
    by_name: dict = {}
    for layer in layers:
        if layer.name:
            by_name.setdefault(layer.name, []).append(layer)
    pairs = []
    for name, values in _saved_layers(f):
        for layer in by_name.get(name, []):
            symbolic = _legacy_weights(layer)
            if len(values) != len(symbolic):
                msg = (f"Layer named \"{layer.name}\" expects {len(symbolic)} weight(s), but the saved weights have "
                       f"{len(values)} element(s).")
                if skip_mismatch:
                    logging.warning(f"Skipping loading of weights for layer {layer.name} due to mismatch in number "
                                    f"of weights ({len(symbolic)} vs {len(values)}).")
                    continue
                raise ValueError(msg)
            for w, v in zip(symbolic, values):
                if not w.shape.is_compatible_with(v.shape):
                    if skip_mismatch:
                        logging.warning(f"Skipping loading of weights for layer {layer.name} due to mismatch in "
                                        f"shape ({w.shape} vs {v.shape}).")
                        continue
                    _check_shape(w, v, layer.name, name)
                pairs.append((w, v))
    K.batch_set_value(pairs)


def json_default(obj):
    """TF's `get_json_type`: configs, numpy values, functions and shapes as JSON."""
    if hasattr(obj, "get_config"):
        return {"class_name": obj.__class__.__name__, "config": obj.get_config()}
    if type(obj).__module__ == np.__name__:
        return obj.tolist() if isinstance(obj, np.ndarray) else obj.item()
    if callable(obj):
        return obj.__name__
    if hasattr(obj, "as_list"):
        return obj.as_list()
    if isinstance(obj, type):
        return obj.__name__
    if hasattr(obj, "name") and hasattr(obj, "as_numpy_dtype"):
        return obj.name
    raise TypeError("Not JSON Serializable:", obj)


def model_metadata(model, include_optimizer=True):
    """keras_version, backend, model_config and (compiled, Keras optimizer) training_config."""
    metadata = {"keras_version": str(keras_version), "backend": K.backend(),
                "model_config": {"class_name": model.__class__.__name__, "config": model.get_config()}}
    optimizer = getattr(model, "optimizer", None)
    if optimizer is not None and include_optimizer:
        if isinstance(optimizer, TFOptimizer):
            logging.warning("TensorFlow optimizers do not make it possible to access optimizer attributes or "
                            "optimizer state after instantiation. As a result, we cannot save the optimizer as part "
                            "of the model save file. You will have to compile your model again after loading it. "
                            "Prefer using a Keras optimizer instead (see keras.io/optimizers).")
        else:
            args = getattr(model, "_compile_args", {})
            metadata["training_config"] = {
                "loss": model.loss, "metrics": args.get("metrics"), "weighted_metrics": args.get("weighted_metrics"),
                "sample_weight_mode": args.get("sample_weight_mode"), "loss_weights": args.get("loss_weights"),
                "optimizer_config": {"class_name": optimizer.__class__.__name__, "config": optimizer.get_config()}}
    return metadata


def save_model_to_hdf5(model, f, include_optimizer=True):
    """Writes the model (config, weights, training config, optimizer weights) into the open h5py File `f`."""
    for key, value in model_metadata(model, include_optimizer).items():
        f.attrs[key] = json.dumps(value, default=json_default).encode("utf8") if isinstance(value, dict) else value
    save_weights_to_hdf5_group(f.create_group("model_weights"), model.layers)
    optimizer = getattr(model, "optimizer", None)
    if include_optimizer and optimizer is not None and not isinstance(optimizer, TFOptimizer):
        weights = optimizer.weights
        if weights:
            group = f.create_group("optimizer_weights")
            names = [str(w.name).encode("utf8") for w in weights]
            save_attributes_to_hdf5_group(group, "weight_names", names)
            for name, value in zip(names, K.batch_get_value(weights)):
                _write_dataset(group, name, np.asarray(value))
    f.flush()


def compile_args_from_training_config(training_config, custom_objects=None):
    from .. import losses, optimizers
    custom_objects = custom_objects or {}
    optimizer = optimizers.deserialize(training_config["optimizer_config"], custom_objects=custom_objects)
    loss = training_config["loss"]
    if isinstance(loss, dict) and "class_name" in loss:
        loss = losses.get(loss)
    return dict(optimizer=optimizer, loss=_map_custom(loss, custom_objects),
                metrics=_map_custom(training_config.get("metrics"), custom_objects),
                weighted_metrics=_map_custom(training_config.get("weighted_metrics"), custom_objects),
                loss_weights=training_config.get("loss_weights"),
                sample_weight_mode=training_config.get("sample_weight_mode"))


def _map_custom(obj, custom_objects):
    if isinstance(obj, list):
        return [_map_custom(x, custom_objects) for x in obj]
    if isinstance(obj, dict) and "class_name" not in obj:
        return {k: _map_custom(v, custom_objects) for k, v in obj.items()}
    if isinstance(obj, str):
        return custom_objects.get(obj, obj)
    return obj


def with_tf2_names(custom_objects):
    """`custom_objects` plus the class names TF 2.x writes for TF 1.15's classes ('Functional' is a Model)."""
    from ..engine.training import Model
    return {"Functional": Model, **(custom_objects or {})}


def load_model_from_hdf5(f, custom_objects=None, compile=True):  # noqa: A002  (TF's argument name)
    """The model saved in the open h5py File `f` (compiled when it has a training config and `compile`)."""
    from ..models import model_from_config
    raw = f.attrs.get("model_config")
    if raw is None:
        raise ValueError("No model found in config file.")
    model = model_from_config(json.loads(_text(raw)), custom_objects=with_tf2_names(custom_objects))
    load_weights_from_hdf5_group(f["model_weights"], model.layers)
    if not compile:
        return model
    raw = f.attrs.get("training_config")
    if raw is None:
        logging.warning("No training configuration found in save file: the model was *not* compiled. Compile it "
                        "manually.")
        return model
    model.compile(**compile_args_from_training_config(json.loads(_text(raw)), custom_objects))
    if "optimizer_weights" in f:
        model._make_train_function()
        group = f["optimizer_weights"]
        values = [np.asarray(group[n]) for n in load_attributes_from_hdf5_group(group, "weight_names")]
        try:
            model.optimizer.set_weights(values)
        except ValueError:
            logging.warning("Error in loading the saved optimizer state. As a result, your model is starting with a "
                            "freshly initialized optimizer.")
    return model
