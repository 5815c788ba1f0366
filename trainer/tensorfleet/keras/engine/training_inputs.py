"""How `fit`/`evaluate`/`predict` read their arguments (TF 1.15's `_standardize_user_data`, `_set_inputs`,
`_unpack_validation_data` and the validation split).

- numpy data: standardized per model input/output (training_utils.py); `batch_size` defaults to 32;
  `validation_split` takes the LAST fraction of the samples (x, y and weights alike), before any shuffling;
  `class_weight` applies to the training data only.
- a `tf.data.Dataset`: wrapped in a `DatasetFeed` (one per dataset object and model); `y`, `batch_size`,
  `sample_weight` and `validation_split` are errors, as in TF; an infinitely repeated dataset needs
  `steps_per_epoch`.
- a model without inputs (subclassed, or Sequential without an input shape) gets placeholders made from the
  first data (`input_1`, ... of shape (None,) + the data's, floatx for floating data) and is called on them
  (its weights are created inside its name scope); a pending `compile` then completes.
"""
from __future__ import annotations

import collections

import numpy as np

from ... import dtypes as _dtypes
from ...data.dataset_ops import Dataset
from ...graph import Tensor
from ...ops.functional_ops import nest_flatten
from .. import backend as K
from . import training_utils as tu

# What model_iteration runs on: `steps` is the steps per epoch (inferred from a dataset's size when not given),
# `reset` whether a dataset iterator is re-initialised at each epoch (no steps given).
Feeds = collections.namedtuple("Feeds", ["x", "y", "sample_weights", "batch_size", "steps", "reset", "val_x", "val_y",
                                         "val_sample_weights", "validation_steps"], defaults=(None, None, None, None))


def set_inputs(model, inputs, outputs=None, training=None):
    """Sets `model.inputs` (placeholders for numpy data), calls the model when `outputs` is None, sets
    `model.outputs` / `output_names` (`output_1`, ...)."""
    if model.inputs:
        raise ValueError("Model inputs are already set.")
    if isinstance(inputs, dict):
        names = sorted(inputs)
        flat = [inputs[n] for n in names]
    else:
        flat = nest_flatten(inputs)
        names = [f"input_{i + 1}" for i in range(len(flat))]
    symbolic = []
    with K.get_graph().as_default():
        for name, v in zip(names, flat):
            if not isinstance(v, Tensor):
                v = np.asarray(v)
                if v.ndim == 1:
                    v = np.expand_dims(v, 1)
                shape = (None,) + tuple(v.shape[1:])
                dt = _dtypes.as_dtype(v.dtype)
                v = K.placeholder(shape=shape, name=name, dtype=K.floatx() if dt.is_floating else dt)
            symbolic.append(v)
    with model._no_tracking():
        model.inputs = symbolic
        model.input_names = names
        model._feed_inputs = [v for v in symbolic if K.is_placeholder(v)]
        model._feed_input_names = [n for n, v in zip(names, symbolic) if K.is_placeholder(v)]
        model._feed_input_shapes = [K.int_shape(v) for v in model._feed_inputs]
    if outputs is None:
        if isinstance(inputs, dict):
            call_inputs = dict(zip(names, symbolic))
        else:
            call_inputs = symbolic[0] if len(symbolic) == 1 and not isinstance(inputs, (list, tuple)) else symbolic
        kwargs = {}
        if model._expects_training_arg and "training" in model._call_fn_args:
            kwargs["training"] = K.learning_phase() if training is None else training
        outputs = model(call_inputs, **kwargs)
    with model._no_tracking():
        model.outputs = nest_flatten(outputs)
        model.output_names = [f"output_{i + 1}" for i in range(len(model.outputs))]
        model._nested_outputs = outputs
    model.built = True


def _ensure_ready(model, x):
    if not model.inputs:
        model._set_inputs(x)
    if model._is_compiled and not model._endpoints:
        model._compile_endpoints()


def standardize_user_data(model, x, y=None, sample_weight=None, class_weight=None):
    """(input arrays, target arrays, per-sample weight arrays or None) for the model's feeds."""
    _ensure_ready(model, x)
    x = tu.standardize_input_data(x, model._feed_input_names, model._feed_input_shapes, check_batch_axis=False,
                                  exception_prefix="input")
    if y is None:
        return x, [], []
    if not model._is_compiled:
        raise RuntimeError("You must compile your model before training/testing. Use `model.compile(optimizer, "
                           "loss)`.")
    endpoints = [e for e in model._endpoints if e.loss_fn is not None]
    names = [e.output_name for e in endpoints]
    y = tu.standardize_input_data(y, names, [e.feed_output_shape() for e in endpoints], check_batch_axis=False,
                                  exception_prefix="target")
    sample_weights = tu.standardize_sample_or_class_weights(sample_weight, names, "sample_weight")
    class_weights = tu.standardize_sample_or_class_weights(class_weight, names, "class_weight")
    weights = [tu.standardize_weights(ref, sw, cw, e.sample_weight_mode)
               for ref, sw, cw, e in zip(y, sample_weights, class_weights, endpoints)]
    tu.check_array_lengths(x, y, weights)
    _check_loss_and_target_compatibility(y, endpoints)
    return x, y, weights


def _check_loss_and_target_compatibility(targets, endpoints):
    from .. import losses
    key_fns = (losses.mean_squared_error, losses.binary_crossentropy, losses.categorical_crossentropy)
    key_classes = (losses.MeanSquaredError, losses.BinaryCrossentropy, losses.CategoricalCrossentropy)
    for y, e in zip(targets, endpoints):
        if y is None or isinstance(y, Tensor):
            continue
        loss = e.loss_fn
        wrapper = isinstance(loss, losses.LossFunctionWrapper)
        if (wrapper and loss.fn is losses.categorical_crossentropy) or isinstance(loss, losses.CategoricalCrossentropy):
            if y.shape[-1] == 1:
                raise ValueError(f"You are passing a target array of shape {y.shape} while using as loss "
                                 "`categorical_crossentropy`. `categorical_crossentropy` expects targets to be binary "
                                 "matrices (1s and 0s) of shape (samples, classes). If your targets are integer "
                                 "classes, you can convert them to the expected format via:\n```\nfrom keras.utils "
                                 "import to_categorical\ny_binary = to_categorical(y_int)\n```\n\nAlternatively, you "
                                 "can use the loss function `sparse_categorical_crossentropy` instead, which does "
                                 "expect integer targets.")
        if isinstance(loss, key_classes) or (wrapper and loss.fn in key_fns):
            shape = tuple(e.output.shape.as_list())
            for target_dim, out_dim in zip(y.shape[1:], shape[1:]):
                if out_dim is not None and target_dim != out_dim:
                    raise ValueError(f"A target array with shape {y.shape} was passed for an output of shape {shape} "
                                     f"while using as loss `{loss.name}`. This loss expects targets to have the same "
                                     "shape as the output.")


def _dataset_feed(model, dataset, steps, steps_name, epochs=1):
    """(the model's DatasetFeed for this dataset, the number of steps per epoch or None when unknown)."""
    from .training_dataset import DatasetFeed, infer_steps
    steps = infer_steps(dataset, steps, epochs, steps_name)
    feeds = model.__dict__.setdefault("_dataset_feeds", {})
    key = id(dataset)
    if key not in feeds or feeds[key].dataset is not dataset:
        feeds[key] = DatasetFeed(model, dataset)
    feeds[key].steps = steps
    return feeds[key], steps


def _reject_for_dataset(x, y=None, batch_size=None, sample_weight=None, validation_split=0.0):
    if y is not None:
        raise ValueError(f"You passed a dataset or dataset iterator ({x}) as input `x` to your model. In that case, "
                         f"you should not specify a target (`y`) argument, since the dataset or dataset iterator "
                         f"generates both input data and target data. Received: {y}")
    if batch_size is not None:
        raise ValueError(f"The `batch_size` argument must not be specified for the given input type. Received input: "
                         f"{x}, batch_size: {batch_size}")
    if sample_weight is not None:
        raise ValueError("`sample_weight` argument is not supported when input `x` is a dataset or a dataset "
                         "iterator. Instead, you can provide sample_weight as the third element  of yourdataset, "
                         "i.e. (inputs, targets, sample_weight).")
    if validation_split:
        raise ValueError("`validation_split` argument is not supported when input `x` is a dataset or a dataset "
                         "iterator. Received: x=%s, validation_split=%f" % (x, validation_split))


def _unpack_validation_data(validation_data):
    if isinstance(validation_data, Dataset):
        return validation_data, None, None
    if isinstance(validation_data, (tuple, list)) and len(validation_data) in (2, 3):
        if len(validation_data) == 2:
            return validation_data[0], validation_data[1], None
        return tuple(validation_data)
    raise ValueError("When passing a `validation_data` argument, it must contain either 2 items (x_val, y_val), or "
                     "3 items (x_val, y_val, val_sample_weights), or alternatively it could be a dataset or a dataset "
                     f"or a dataset iterator. However we received `validation_data={validation_data}`")


def fit_inputs(model, x, y, batch_size, sample_weight, class_weight, validation_split, validation_data,
               steps_per_epoch, validation_steps, epochs):
    val_x = val_y = val_w = None
    steps, reset = steps_per_epoch, False
    if isinstance(x, Dataset):
        _reject_for_dataset(x, y, batch_size, sample_weight, validation_split)
        x_in, steps = _dataset_feed(model, x, steps_per_epoch, "steps_per_epoch", epochs)
        y_in = w_in = None
        reset = steps_per_epoch is None
    else:
        if batch_size is None and steps_per_epoch is None:
            batch_size = 32
        x_in, y_in, w_in = standardize_user_data(model, x, y, sample_weight, class_weight)
    if validation_data is not None:
        vx, vy, vw = _unpack_validation_data(validation_data)
        if isinstance(vx, Dataset):
            val_x, validation_steps = _dataset_feed(model, vx, validation_steps, "validation_steps")
        else:
            val_x, val_y, val_w = standardize_user_data(model, vx, vy, vw)
    elif validation_split and 0.0 < validation_split < 1.0:
        split_at = int(x_in[0].shape[0] * (1.0 - validation_split))
        x_in, val_x = tu.slice_arrays(x_in, 0, split_at), tu.slice_arrays(x_in, split_at)
        y_in, val_y = tu.slice_arrays(y_in, 0, split_at), tu.slice_arrays(y_in, split_at)
        w_in, val_w = tu.slice_arrays(w_in, 0, split_at), tu.slice_arrays(w_in, split_at)
    return Feeds(x_in, y_in, w_in, batch_size, steps, reset, val_x, val_y, val_w, validation_steps)


def eval_inputs(model, x, y, batch_size, sample_weight, steps):
    if isinstance(x, Dataset):
        _reject_for_dataset(x, y, batch_size, sample_weight)
        feed, inferred = _dataset_feed(model, x, steps, "steps")
        return Feeds(feed, None, None, None, inferred, steps is None)
    if batch_size is None and steps is None:
        batch_size = 32
    x_in, y_in, w_in = standardize_user_data(model, x, y, sample_weight)
    return Feeds(x_in, y_in, w_in, batch_size, steps, False)


def predict_inputs(model, x, batch_size, steps):
    if isinstance(x, Dataset):
        _reject_for_dataset(x, None, batch_size)
        feed, inferred = _dataset_feed(model, x, steps, "steps")
        return Feeds(feed, None, None, None, inferred, steps is None)
    if batch_size is None and steps is None:
        batch_size = 32
    x_in, _, _ = standardize_user_data(model, x)
    return Feeds(x_in, None, None, batch_size, steps, False)
