"""The fit / evaluate / predict loop (TF 1.15's keras/engine/training_arrays.py `model_iteration`).

One loop for the three modes. For numpy data: each epoch shuffles the sample indices (or whole batches with
`shuffle='batch'`), slices every array per batch and runs the model's compiled function once per batch (one
`Session.run`); for a `tf.data` Dataset ("steps" mode): an initializable iterator is created, re-initialised
each epoch when `steps_per_epoch` is None (the epoch ends at OutOfRange), and each step runs the
dataset-connected function. Metrics are reset at each epoch start; validation runs after each epoch
(every `validation_freq` epochs) with the same callbacks' test hooks, its results logged as `val_*`.
"""
from __future__ import annotations

import numpy as np

from ... import errors
from ... import tf_logging as logging
from ..callbacks.base import ModeKeys, configure_callbacks, make_logs
from ..callbacks.loggers import ProgbarLogger
from . import training_utils as tu


def _print_train_info(num, val_num, is_dataset):
    unit = "steps" if is_dataset else "samples"
    msg = f"Train on {num} {unit}"
    if val_num:
        msg += f", validate on {val_num} {unit}"
    print(msg)


def should_run_validation(validation_freq, epoch):
    one_indexed = epoch + 1
    if isinstance(validation_freq, int):
        if validation_freq < 1:
            raise ValueError("`validation_freq` can not be less than 1.")
        return one_indexed % validation_freq == 0
    return one_indexed in validation_freq


def model_iteration(model, inputs, targets=None, sample_weights=None, batch_size=None, epochs=1, verbose=1,
                    callbacks=None, val_inputs=None, val_targets=None, val_sample_weights=None, shuffle=True,
                    initial_epoch=0, steps_per_epoch=None, validation_steps=None, validation_freq=1,
                    mode=ModeKeys.TRAIN, validation_in_fit=False, reset_dataset=False):
    """Runs `mode` over the data; returns the History (train), the results (test) or the outputs (predict).

    `inputs` is a list of numpy arrays (already standardised, targets and weights separate) or a
    `DatasetFeed` (engine/training_dataset.py), whose iterator is initialised here (unless this is the
    validation inside `fit`, which initialises it) and again at each epoch when `reset_dataset`."""
    from .training_dataset import DatasetFeed
    is_dataset = isinstance(inputs, DatasetFeed)
    feed = None
    if is_dataset:
        feed = inputs
        if not validation_in_fit:
            feed.initialize()
        f = feed.function(mode)
        num = steps_per_epoch
    else:
        ins = model._prepare_feed_values(inputs, targets, sample_weights, mode)
        num = tu.check_num_samples(ins, batch_size, steps_per_epoch, "steps_per_epoch")
        f = model._make_execution_function(mode)
    use_steps = is_dataset or steps_per_epoch is not None
    do_validation = val_inputs is not None
    if isinstance(val_inputs, DatasetFeed):
        val_inputs.initialize()
    if mode == ModeKeys.TRAIN and verbose:
        val_num = val_inputs.steps if isinstance(val_inputs, DatasetFeed) else (
            val_inputs[0].shape[0] if do_validation and val_inputs and hasattr(val_inputs[0], "shape") else None)
        _print_train_info(num if num is not None else "unknown", val_num, is_dataset)
    count_mode = "steps" if use_steps else "samples"
    callbacks = configure_callbacks(callbacks, model, do_validation=do_validation, batch_size=batch_size,
                                    epochs=epochs, steps_per_epoch=steps_per_epoch, samples=num, verbose=0,
                                    count_mode=count_mode, mode=mode)
    # The progress bar runs beside the callbacks, in every mode (TF 1.15's training_arrays does the same).
    progbar = ProgbarLogger(count_mode, stateful_metrics=model.metrics_names[1:] if mode != ModeKeys.PREDICT
                            else None)
    progbar.params = dict(callbacks.params, verbose=verbose)  # a copy: the validation run shares the callbacks
    agg_cls = tu.OutputsAggregator if mode == ModeKeys.PREDICT else tu.MetricsAggregator
    aggregator = agg_cls(use_steps, num_samples=None if steps_per_epoch else num, steps=steps_per_epoch)
    model.stop_training = False
    callbacks._call_begin_hook(mode)
    progbar.on_train_begin()
    results = None
    for epoch in range(initial_epoch, epochs):
        if model.stop_training:
            break
        epoch_logs: dict = {}
        if mode != ModeKeys.PREDICT:
            model.reset_metrics()
        if mode == ModeKeys.TRAIN:
            callbacks.on_epoch_begin(epoch, epoch_logs)
        progbar.on_epoch_begin(epoch, epoch_logs)
        hooks = _Hooks(callbacks, progbar, mode, model.metrics_names)
        if use_steps:
            steps = _run_steps(model, f, None if is_dataset else ins, steps_per_epoch, hooks, aggregator, mode,
                               is_dataset, epochs)
            if steps_per_epoch is None and is_dataset:  # an unknown size: the first epoch counted it
                steps_per_epoch = aggregator.steps = steps
        else:
            _run_batches(model, f, ins, num, batch_size, shuffle if mode == ModeKeys.TRAIN else False, hooks,
                         aggregator, mode)  # evaluate/predict never shuffle (TF's test_loop/predict_loop)
        aggregator.finalize()
        results = aggregator.results
        epoch_logs = make_logs(model, epoch_logs, results, mode)
        if len(results) == 1:
            results = results[0]
        if do_validation and should_run_validation(validation_freq, epoch) and not model.stop_training:
            val_results = model_iteration(model, val_inputs, targets=val_targets, sample_weights=val_sample_weights,
                                          batch_size=batch_size, steps_per_epoch=validation_steps,
                                          callbacks=callbacks, verbose=0, mode=ModeKeys.TEST,
                                          validation_in_fit=True)
            if not isinstance(val_results, list):
                val_results = [val_results]
            epoch_logs = make_logs(model, epoch_logs, val_results, mode, prefix="val_")
            if isinstance(val_inputs, DatasetFeed) and epoch < epochs - 1:
                val_inputs.initialize()
        if mode == ModeKeys.TRAIN:
            callbacks.on_epoch_end(epoch, epoch_logs)
        progbar.on_epoch_end(epoch, epoch_logs)
        if reset_dataset and epoch < epochs - 1:
            feed.initialize()
    callbacks._call_end_hook(mode)
    if mode == ModeKeys.TRAIN:
        return model.history
    return results


class _Hooks:
    """The batch hooks of the callbacks, then of the progress bar (which shows nothing at verbose=0: skipped)."""

    def __init__(self, callbacks, progbar, mode, names):
        self.callbacks, self.mode, self.names = callbacks, mode, names
        self.progbar = progbar if progbar.params.get("verbose") else None

    def begin(self, batch, logs):
        self.callbacks._call_batch_hook(self.mode, "begin", batch, logs)
        if self.progbar is not None:
            self.progbar.on_batch_begin(batch, logs)

    def end(self, batch, logs):
        self.callbacks._call_batch_hook(self.mode, "end", batch, logs)
        if self.progbar is not None:
            self.progbar.on_batch_end(batch, logs)


def _run_steps(model, f, ins, steps_per_epoch, hooks, aggregator, mode, is_dataset, epochs):
    target = np.inf if steps_per_epoch is None else steps_per_epoch
    step = 0
    while step < target:
        batch_logs = {"batch": step, "size": 1}
        hooks.begin(step, batch_logs)
        try:
            batch_outs = f(ins) if ins is not None else f()
        except errors.OutOfRangeError:
            if steps_per_epoch:
                model.stop_training = True
                logging.warning(f"Your dataset ran out of data; interrupting training. Make sure that your dataset "
                                f"can generate at least `steps_per_epoch * epochs` batches (in this case, "
                                f"{steps_per_epoch * epochs} batches). You may need to use the repeat() function "
                                f"when building your dataset.")
            break
        if not isinstance(batch_outs, list):
            batch_outs = [batch_outs]
        if step == 0:
            aggregator.create(batch_outs)
        aggregator.aggregate(batch_outs)
        batch_logs = make_logs(model, batch_logs, batch_outs, mode, names=hooks.names)
        hooks.end(step, batch_logs)
        step += 1
        if model.stop_training:
            break
    if step == 0 and not aggregator.results:
        raise ValueError("Empty training data." if is_dataset else "No steps were run.")
    return step


def _run_batches(model, f, ins, num_samples, batch_size, shuffle, hooks, aggregator, mode):
    index_array = np.arange(num_samples)
    if shuffle == "batch":
        index_array = tu.batch_shuffle(index_array, batch_size)
    elif shuffle:
        np.random.shuffle(index_array)
    batches = tu.make_batches(num_samples, batch_size)
    fixed = [x for x in ins if not hasattr(x, "shape")]  # a trailing learning-phase value
    arrays = ins[:len(ins) - len(fixed)]
    for batch_index, (start, end) in enumerate(batches):
        if len(batches) == 1:
            ins_batch = ins
        else:
            if shuffle or shuffle == "batch":
                ids = index_array[start:end]
                ins_batch = [None if x is None else x[ids] for x in arrays] + fixed
            else:
                ins_batch = [None if x is None else x[start:end] for x in arrays] + fixed
        batch_logs = {"batch": batch_index, "size": end - start}
        hooks.begin(batch_index, batch_logs)
        batch_outs = f(ins_batch)
        if not isinstance(batch_outs, list):
            batch_outs = [batch_outs]
        if batch_index == 0:
            aggregator.create(batch_outs)
        aggregator.aggregate(batch_outs, start, end)
        batch_logs = make_logs(model, batch_logs, batch_outs, mode, names=hooks.names)
        hooks.end(batch_index, batch_logs)
        if model.stop_training:
            break
