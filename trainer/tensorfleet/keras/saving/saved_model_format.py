"""`model.save(path, save_format='tf')` and `tf.keras.experimental.export_saved_model` / `load_from_saved_model`:
a SavedModel as TF 1.15's graph-mode Keras exports it (keras/saving/saved_model_experimental.py), for
serving.

The directory: `saved_model.pb` with the meta graph tagged `serve` whose `serving_default` Predict signature
maps the model's input names to its inputs and its output names to its outputs (in TensorFlow's op forms, so
real TensorFlow and TF Serving load it: docs/saved-model.md); its saver restores each weight from its
object-checkpoint key; the serving graph is a clone of the model in a graph of its own with the learning phase
fixed to 0 (TF's PREDICT export); `variables/variables` is the model's object-based checkpoint (`save_weights`
in TensorFlow format, the optimizer's state included); `assets/saved_model.json` is `model.to_json()`.
Loading rebuilds the model from that JSON (names looked up, never evaluated) and loads the checkpoint; the
model comes back uncompiled. Not written: TF's `train` and `eval` meta graphs (their gradient and optimizer
ops have no TensorFlow form here) and TF 2.x's object graph with traced functions.
"""
from __future__ import annotations

import json
import os
import shutil

from ... import tf_logging as logging
from ...graph import Graph
from ...ops.state_ops import Variable
from ...saved_model import constants as sm_constants
from ...saved_model import signature_constants, tag_constants
from ...saved_model.builder import SavedModelBuilder
from ...saved_model.signature_def_utils import predict_signature_def
from ...session import Session
from ...train.saver import Saver
from .. import backend as K
from ..utils.generic_utils import CustomObjectScope
from . import tf_format
from .object_graph import ObjectGraph

MODEL_JSON = "saved_model.json"


def _model_weight_keys(model) -> dict:
    """{object-checkpoint key: variable} of the model's own weights (the serving graph restores these)."""
    graph = ObjectGraph(model)
    return {graph.variable_key(v): v for v in graph.objects
            if isinstance(v, Variable) and any(v is w for w in model.weights)}


def export_saved_model(model, saved_model_path, custom_objects=None, as_text=False, input_signature=None,
                       serving_only=False):
    """`tf.keras.experimental.export_saved_model`: the serving SavedModel described in the module doc. As TF's
    PREDICT export, the model is cloned into a graph of its own with the learning phase fixed to 0 (so a
    Dropout or BatchNormalization serves its inference path, with no condition on the learning phase) and
    given the model's weights."""
    from ..cloning import clone_model
    from ..engine.sequential import Sequential
    saved_model_path = os.fspath(saved_model_path)
    if input_signature is not None:
        raise NotImplementedError("export_saved_model(input_signature=...) is not supported: the model's own "
                                  "inputs are the signature's")
    if not model.__dict__.get("_is_graph_network") and not isinstance(model, Sequential):
        raise NotImplementedError("Subclassed models cannot be exported as a SavedModel by tensorfleet (TF 1.15: "
                                  "only with serving_only=True, a TF 2.x SavedModel); use save_weights.")
    if not model.built:
        raise ValueError("Weights for sequential model have not yet been created. Weights are created when the "
                         "Model is first called on inputs or `build()` is called with an `input_shape`, or the "
                         "first layer in the model has `input_shape` during construction.")
    weights = model.get_weights()
    builder = SavedModelBuilder(saved_model_path)
    graph = Graph()
    with graph.as_default():
        K.set_learning_phase(0)
        with CustomObjectScope(custom_objects or {}):
            clone = clone_model(model)
        with Session(graph=graph) as sess:
            clone.set_weights(weights)
            saver = Saver(var_list=_model_weight_keys(clone), sharded=True, allow_empty=True)
            signature = predict_signature_def(dict(zip(_input_names(clone), clone.inputs)),
                                              dict(zip(clone.output_names, clone.outputs)))
            builder.add_meta_graph_and_variables(
                sess, [tag_constants.SERVING], saver=saver,
                signature_def_map={signature_constants.DEFAULT_SERVING_SIGNATURE_DEF_KEY: signature})
    path = builder.save(as_text)
    # the variables again, as TF writes them: the model's object-based checkpoint with its object graph
    tf_format.save_weights(model, os.path.join(saved_model_path, sm_constants.VARIABLES_DIRECTORY,
                                               sm_constants.VARIABLES_FILENAME))
    assets = os.path.join(saved_model_path, sm_constants.ASSETS_DIRECTORY)
    os.makedirs(assets, exist_ok=True)
    with open(os.path.join(assets, MODEL_JSON), "w") as f:
        f.write(model.to_json())
    return path


def _input_names(model):
    return [getattr(x, "_keras_history", None) and x._keras_history.layer.name or x.op.name for x in model.inputs]


def save(model, filepath, overwrite=True, include_optimizer=True, signatures=None):
    """`model.save(filepath, save_format='tf')`."""
    from . import ask_to_proceed_with_overwrite
    if signatures is not None:
        raise NotImplementedError("save(signatures=...) is not supported: the signature is the model's inputs and "
                                  "outputs (serving_default)")
    if os.path.exists(filepath):
        if not overwrite and not ask_to_proceed_with_overwrite(filepath):
            return None
        shutil.rmtree(filepath) if os.path.isdir(filepath) else os.remove(filepath)
    optimizer = model.__dict__.get("optimizer")
    if not include_optimizer:
        model.__dict__["optimizer"] = None
    try:
        export_saved_model(model, filepath)
    finally:
        model.__dict__["optimizer"] = optimizer
    return None


def load_from_saved_model(saved_model_path, custom_objects=None):
    """`tf.keras.experimental.load_from_saved_model`: the model (uncompiled) from `assets/saved_model.json` and the
    checkpoint `variables/variables`."""
    from ..models import model_from_config
    from .hdf5_format import with_tf2_names
    saved_model_path = os.fspath(saved_model_path)
    json_path = os.path.join(saved_model_path, sm_constants.ASSETS_DIRECTORY, MODEL_JSON)
    if not os.path.isfile(json_path):
        raise OSError(f"Unable to load a Keras model from {saved_model_path}: no {os.path.join('assets', MODEL_JSON)} "
                      f"(a SavedModel not written by Keras's export_saved_model / save(save_format='tf'))")
    with open(json_path) as f:
        config = json.load(f)
    model = model_from_config(config, custom_objects=with_tf2_names(custom_objects))
    tf_format.load_weights(model, os.path.join(saved_model_path, sm_constants.VARIABLES_DIRECTORY,
                                               sm_constants.VARIABLES_FILENAME)).assert_nontrivial_match()
    return model


def load(filepath, custom_objects=None, compile=True):  # noqa: A002  (TF's argument name)
    model = load_from_saved_model(filepath, custom_objects)
    if compile:
        logging.warning("No training configuration found in save file: the model was *not* compiled. Compile it "
                        "manually.")
    return model
