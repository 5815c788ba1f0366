"""`tf.keras.estimator.model_to_estimator` (TF 1.15 with tensorflow_estimator 1.15, `checkpoint_format='saver'`):
a compiled Keras model as a `tf.estimator.Estimator`, so that it trains under `TF_CONFIG` with
`tf.estimator.train_and_evaluate` in every role (keras_model_fn.py holds the model_fn and the first checkpoint).

    estimator = tf.keras.estimator.model_to_estimator(keras_model=model, model_dir=..., config=RunConfig())

- The model_fn clones the model on the input_fn's features (a tensor, or a dict keyed by the model's input
  names; `{'features': ..., 'sample_weights': ...}` adds sample weights) and compiles the clone like the original
  with the labels as targets and the global step as the optimizer's `iterations`; the estimator's loss is the
  Keras `total_loss`, its train op the Keras train function's updates, its eval metrics the compiled Keras
  metrics (`acc`, ...; the estimator adds `loss`), its predictions `{output name: output}`, exported as
  `serving_default` (PredictOutput). Variables are created inside the model_fn, so in a cluster the
  estimator's replica_device_setter puts them on the ps tasks.
- Weights: the chief writes the Keras model's current weights (or the clone's fresh ones when the model was
  never initialised) to `<model_dir>/keras/keras_model.ckpt` once, and the estimator warm-starts its trainable
  variables from it when it starts training without a checkpoint of its own (TF's `_save_first_checkpoint`).
- `keras_model_path`: an HDF5 file written by `model.save` is loaded with `tf.keras.models.load_model`.
Differences: `checkpoint_format='checkpoint'` (object-based estimator checkpoints) raises NotImplementedError; a
subclassed model is rebuilt with `from_config` (it must implement `get_config`); only the chief writes the
warm-start checkpoint (TF 1.15 let every task write it to the shared model_dir; later TF versions do the same
as here).
"""
from __future__ import annotations

from ... import tf_logging as logging
from ...config import ConfigProto
from ...estimator.estimator import Estimator
from ...estimator.run_config import RunConfig
from ...session import Session
from .. import backend as K
from ..engine.sequential import Sequential
from ..utils.generic_utils import CustomObjectScope
from .keras_model_fn import any_weight_initialized, create_keras_model_fn, save_first_checkpoint

__all__ = ["model_to_estimator"]


def _overwrite_model_dir_and_session_config(config, model_dir):
    """TF's `maybe_overwrite_model_dir_and_session_config`."""
    import tempfile
    if config is None:
        config = RunConfig()
    elif not isinstance(config, RunConfig):
        raise ValueError(f"config must be an instance of `RunConfig`, but provided {config}.")
    if model_dir is not None:
        if config.model_dir is not None and config.model_dir != model_dir:
            raise ValueError("`model_dir` are set both in constructor and `RunConfig`, but with different values. In "
                             f"constructor: '{model_dir}', in `RunConfig`: '{config.model_dir}' ")
        config = config.replace(model_dir=model_dir)
    elif config.model_dir is None:
        model_dir = tempfile.mkdtemp()
        logging.warning(f"Using temporary folder as model directory: {model_dir}")
        config = config.replace(model_dir=model_dir)
    if config.session_config is None:
        config = config.replace(session_config=ConfigProto(allow_soft_placement=True))
    return config


def _assert_valid_model(model, custom_objects=None):
    if not model.__dict__.get("_is_graph_network") and not isinstance(model, Sequential):
        try:
            with CustomObjectScope(custom_objects or {}):
                model.__class__.from_config(model.get_config())
        except NotImplementedError:
            raise ValueError("Subclassed `Model`s passed to `model_to_estimator` must implement `Model.get_config` "
                             "and `Model.from_config`.") from None


def model_to_estimator(keras_model=None, keras_model_path=None, custom_objects=None, model_dir=None, config=None,
                       checkpoint_format="saver"):
    """An `Estimator` that trains, evaluates, predicts and exports `keras_model` (see the module doc)."""
    if not (keras_model or keras_model_path):
        raise ValueError("Either `keras_model` or `keras_model_path` needs to be provided.")
    if keras_model and keras_model_path:
        raise ValueError("Please specity either `keras_model` or `keras_model_path`, but not both.")
    if keras_model:
        _assert_valid_model(keras_model, custom_objects)
    config = _overwrite_model_dir_and_session_config(config, model_dir)
    if not keras_model:
        if str(keras_model_path).startswith("gs://") or "storage.googleapis.com" in str(keras_model_path):
            raise ValueError(f"{keras_model_path} is on Google Cloud Storage: tensorfleet reads local files only")
        logging.info(f"Loading models from {keras_model_path}")
        from ..saving import load_model
        keras_model = load_model(keras_model_path, custom_objects=custom_objects)
    else:
        logging.info("Using the Keras model provided.")
    if checkpoint_format == "checkpoint":
        raise NotImplementedError("model_to_estimator(checkpoint_format='checkpoint'): object-based estimator "
                                  "checkpoints are not supported by tensorfleet; use 'saver' (TF 1.15's default)")
    if checkpoint_format != "saver":
        raise ValueError(f'Checkpoint format must be one of "checkpoint" or "saver". Got {checkpoint_format}')
    if not getattr(keras_model, "optimizer", None):
        raise ValueError("The given keras model has not been compiled yet. Please compile the model with "
                         "`model.compile()` before calling `model_to_estimator()`.")
    keras_model_fn = create_keras_model_fn(keras_model, custom_objects)
    if any_weight_initialized(keras_model):
        gpu_options = getattr(config.session_config, "gpu_options", None)
        if gpu_options is not None and gpu_options != type(gpu_options)():  # (TF: HasField('gpu_options'))
            logging.warning("The Keras backend session has already been set. The _session_config passed to "
                            "model_to_estimator will not be used.")
    else:
        K.set_session(Session(config=config.session_config))
    warm_start_path = None
    if keras_model.__dict__.get("_is_graph_network") or isinstance(keras_model, Sequential):
        if config.is_chief:
            warm_start_path = save_first_checkpoint(keras_model, custom_objects, config)
    elif keras_model.built:
        logging.warning("You are creating an Estimator from a Keras model manually subclassed from `Model`, that was "
                        "already called on some inputs (and thus already had weights). We are currently unable to "
                        "preserve the model's state (its weights) as part of the estimator in this case. Be warned "
                        "that the estimator has been created using a freshly initialized version of your model.\n"
                        "Note that this doesn't affect the state of the model instance you passed as `keras_model` "
                        "argument.")
    return Estimator(keras_model_fn, config=config, warm_start_from=warm_start_path)
