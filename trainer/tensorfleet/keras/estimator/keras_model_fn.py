"""The Estimator side of `tf.keras.estimator.model_to_estimator` (TF's tensorflow_estimator keras.py): the
model_fn that clones and compiles the Keras model on the input_fn's tensors, and the first checkpoint of the
Keras model's weights that the estimator warm-starts from."""
from __future__ import annotations

import os

from ... import tf_logging as logging
from ...default_graph import add_to_collection, convert_to_tensor, get_collection, set_random_seed
from ...estimator.export.export_output import PredictOutput
from ...estimator.model_fn import EstimatorSpec, ModeKeys
from ...graph import Graph, GraphKeys, Tensor
from ...saved_model.signature_constants import DEFAULT_SERVING_SIGNATURE_DEF_KEY
from ...session import Session
from ...train.checkpoint_management import latest_checkpoint
from ...train.saver import Saver
from ...train.training_util import create_global_step, get_or_create_global_step
from .. import backend as K
from ..cloning import clone_and_build_model


def any_weight_initialized(keras_model) -> bool:
    """Whether the Keras session initialised (or assigned) any of the model's weights."""
    return keras_model is not None and any(getattr(w, "_keras_initialized", False)
                                           for layer in keras_model.layers for w in layer.weights)


def _as_tensor(x):
    return x if isinstance(x, Tensor) else convert_to_tensor(x)


def _ordered(obj, key_order, obj_name, order_name):
    """A list of tensors from a tensor, list or dict (by `key_order`), or None."""
    if obj is None:
        return None
    if isinstance(obj, (list, tuple)):
        return [_as_tensor(x) for x in obj]
    if isinstance(obj, dict):
        missing = set(key_order) - set(obj)
        if missing:
            raise KeyError(f"The dictionary passed into {obj_name} does not cover requested {order_name} keys defined "
                           f"in the keras model.\n\tExpected keys: {set(key_order)}\n\t{obj_name} keys: "
                           f"{set(obj)}\n\tMissed keys: {missing}")
        return [_as_tensor(obj[k]) for k in key_order]
    return [_as_tensor(obj)]


def convert_estimator_io_to_keras(keras_model, features, labels):
    """(input tensors, target tensors, sample weight tensors) in the model's input/output order."""
    sample_weights = None
    if isinstance(features, dict) and set(features) == {"features", "sample_weights"}:
        features, sample_weights = features["features"], features["sample_weights"]
    graph_network = keras_model.__dict__.get("_is_graph_network")
    input_names = (keras_model.input_names if graph_network else
                   [f"input_{i}" for i in range(1, len(features) + 1)]) if isinstance(features, dict) else None
    output_names = (keras_model.output_names if graph_network else
                    [f"output_{i}" for i in range(1, len(labels) + 1)]) if isinstance(labels, dict) else None
    return (_ordered(features, input_names, "features", "inputs"), _ordered(labels, output_names, "labels", "outputs"),
            sample_weights)


def clone_and_build(mode, keras_model, custom_objects, features=None, labels=None, optimizer_config=None):
    """The Keras model rebuilt in the current graph for `mode` (learning phase fixed: 1 in TRAIN, else 0)."""
    K.set_learning_phase(1 if mode == ModeKeys.TRAIN else 0)
    inputs, targets, sample_weights = convert_estimator_io_to_keras(keras_model, features, labels)
    compile_clone = mode != ModeKeys.PREDICT
    global_step = None
    if compile_clone:
        global_step = get_or_create_global_step()
        K.track_variable(global_step)
    if sample_weights is not None:
        sample_weights = sample_weights if isinstance(sample_weights, (dict, list, tuple)) else [sample_weights]
    return clone_and_build_model(keras_model, inputs, targets, custom_objects, compile_clone=compile_clone,
                                 in_place_reset=not keras_model.__dict__.get("_is_graph_network"),
                                 optimizer_iterations=global_step, optimizer_config=optimizer_config,
                                 sample_weight_tensors=sample_weights)


def _keras_metrics_to_estimator(model) -> dict:
    """{metric name: (value, update op)}: the update is the metric tensor compile built (it runs the update),
    the value a fresh read; the metric variables become local variables so that evaluation initialises them."""
    ops = {}
    for metric, update in zip(model._compile_metric_functions, model._metric_results):
        for v in metric.variables:
            if not any(v is x for x in get_collection(GraphKeys.LOCAL_VARIABLES)):
                add_to_collection(GraphKeys.LOCAL_VARIABLES, v)
        ops[metric.name] = (metric.result(), update)
    return ops


def create_keras_model_fn(keras_model, custom_objects=None):
    """The model_fn(features, labels, mode) of the Keras estimator."""
    try:
        optimizer_config = keras_model.optimizer.get_config()
    except (NotImplementedError, AttributeError):  # a tf.train optimizer has no config
        optimizer_config = None

    def model_fn(features, labels, mode):
        model = clone_and_build(mode, keras_model, custom_objects, features, labels, optimizer_config)
        predictions = dict(zip(model.output_names, model.outputs))
        loss = train_op = eval_metric_ops = None
        if mode != ModeKeys.PREDICT:
            if mode == ModeKeys.TRAIN:
                model._make_train_function()
            else:
                model._make_test_function()
            loss = model.total_loss
            eval_metric_ops = _keras_metrics_to_estimator(model)
        if mode == ModeKeys.TRAIN:
            train_op = model.train_function.updates_op
        return EstimatorSpec(mode=mode, predictions=predictions, loss=loss, train_op=train_op,
                             eval_metric_ops=eval_metric_ops,
                             export_outputs={DEFAULT_SERVING_SIGNATURE_DEF_KEY: PredictOutput(predictions)})

    return model_fn


def save_first_checkpoint(keras_model, custom_objects, config) -> str:
    """`<model_dir>/keras/keras_model.ckpt` with the Keras model's weights (unless a checkpoint is there already);
    its path, for the estimator's warm start."""
    keras_model_dir = os.path.join(config.model_dir, "keras")
    latest = latest_checkpoint(keras_model_dir)
    if latest:
        return latest
    weights = keras_model.get_weights() if any_weight_initialized(keras_model) else None
    os.makedirs(keras_model_dir, exist_ok=True)
    with Graph().as_default():
        if config.tf_random_seed is not None:
            set_random_seed(config.tf_random_seed)
        create_global_step()
        model = clone_and_build(ModeKeys.TRAIN, keras_model, custom_objects)
        model._make_train_function()  # the optimizer's variables, before the session
        with Session(config=config.session_config) as sess:
            if weights:
                model.set_weights(weights)
            K.session._initialize_variables(sess)
            path = os.path.join(keras_model_dir, "keras_model.ckpt")
            Saver().save(sess, path)
    logging.info(f"Saved the Keras model's weights for the estimator's warm start: {path}")
    return path
