"""`tf.keras.models` (TF 1.15): Model, Sequential, models from configs (`model_from_config`, `model_from_json`:
JSON text, parsed, never evaluated), `clone_model` (same architecture, new weights), and `save_model` /
`load_model` (keras/saving: HDF5 or a SavedModel).
"""
from __future__ import annotations

import json

from .cloning import clone_and_build_model, clone_model  # noqa: F401  (clone_and_build_model: TF's internal name)
from .engine.sequential import Sequential
from .engine.training import Model
from .layers.serialization import deserialize as _deserialize_layer
from .saving import load_model, save_model


def model_from_config(config, custom_objects=None):
    if isinstance(config, list):
        raise TypeError("`model_from_config` expects a dictionary, not a list. Maybe you meant to use "
                        "`Sequential.from_config(config)`?")
    return _deserialize_layer(config, custom_objects=custom_objects)


def model_from_json(json_string, custom_objects=None):
    return _deserialize_layer(json.loads(json_string), custom_objects=custom_objects)


__all__ = ["Model", "Sequential", "clone_model", "load_model", "model_from_config", "model_from_json", "save_model"]
