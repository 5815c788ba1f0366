"""Callbacks that stop `fit` (TF 1.15's keras/callbacks.py): `EarlyStopping` and `TerminateOnNaN`.

Both set `model.stop_training`; the training loop (engine/training_arrays.py) ends the epoch after the batch in
progress (TerminateOnNaN, from a batch hook) or does not start the next epoch (EarlyStopping, from
`on_epoch_end`). `monitor_direction` is the rule both EarlyStopping and ReduceLROnPlateau/ModelCheckpoint use in
'auto' mode: a monitored name containing 'acc' is maximised, anything else minimised.
"""
from __future__ import annotations

import numpy as np

from ... import tf_logging as logging
from .base import Callback


def monitor_direction(mode, monitor, what, accept_fmeasure=False):
    """np.greater or np.less for `mode` ('auto' -> by the monitored name; unknown modes fall back to 'auto'
    with TF's warning naming `what`)."""
    if mode not in ("auto", "min", "max"):
        logging.warning(f"{what} mode {mode} is unknown, fallback to auto mode.")
        mode = "auto"
    if mode == "min":
        return np.less
    if mode == "max":
        return np.greater
    if "acc" in monitor or (accept_fmeasure and monitor.startswith("fmeasure")):
        return np.greater
    return np.less


class EarlyStopping(Callback):
    """`EarlyStopping(monitor='val_loss', min_delta=0, patience=0, verbose=0, mode='auto', baseline=None,
    restore_best_weights=False)`: stops when `monitor` has not improved by more than `min_delta` for `patience`
    epochs (an improvement over `baseline` is needed first when it is given); with `restore_best_weights` the
    weights of the best epoch are set back when it stops."""

    def __init__(self, monitor="val_loss", min_delta=0, patience=0, verbose=0, mode="auto", baseline=None,
                 restore_best_weights=False):
        super().__init__()
        self.monitor = monitor
        self.patience = patience
        self.verbose = verbose
        self.baseline = baseline
        self.min_delta = abs(min_delta)
        self.wait = 0
        self.stopped_epoch = 0
        self.restore_best_weights = restore_best_weights
        self.best_weights = None
        self.monitor_op = monitor_direction(mode, monitor, "EarlyStopping")
        self.min_delta *= 1 if self.monitor_op == np.greater else -1

    def on_train_begin(self, logs=None):
        self.wait = 0
        self.stopped_epoch = 0
        if self.baseline is not None:
            self.best = self.baseline
        else:
            self.best = np.inf if self.monitor_op == np.less else -np.inf

    def on_epoch_end(self, epoch, logs=None):
        current = self.get_monitor_value(logs)
        if current is None:
            return
        if self.monitor_op(current - self.min_delta, self.best):
            self.best = current
            self.wait = 0
            if self.restore_best_weights:
                self.best_weights = self.model.get_weights()
            return
        self.wait += 1
        if self.wait >= self.patience:
            self.stopped_epoch = epoch
            self.model.stop_training = True
            if self.restore_best_weights:
                if self.verbose > 0:
                    print("Restoring model weights from the end of the best epoch.")
                if self.best_weights is not None:  # TF 1.15 fails here when no epoch beat the baseline
                    self.model.set_weights(self.best_weights)

    def on_train_end(self, logs=None):
        if self.stopped_epoch > 0 and self.verbose > 0:
            print("Epoch %05d: early stopping" % (self.stopped_epoch + 1))

    def get_monitor_value(self, logs):
        logs = logs or {}
        value = logs.get(self.monitor)
        if value is None:
            logging.warning(f"Early stopping conditioned on metric `{self.monitor}` which is not available. "
                            f"Available metrics are: {','.join(list(logs.keys()))}")
        return value


class TerminateOnNaN(Callback):
    """Stops training at the first batch whose loss is NaN or infinite."""

    def on_batch_end(self, batch, logs=None):
        loss = (logs or {}).get("loss")
        if loss is not None and (np.isnan(loss) or np.isinf(loss)):
            print("Batch %d: Invalid loss, terminating training" % batch)
            self.model.stop_training = True
