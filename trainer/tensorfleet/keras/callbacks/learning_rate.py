"""Callbacks that change the optimizer's learning rate between epochs (TF 1.15's keras/callbacks.py):
`LearningRateScheduler` and `ReduceLROnPlateau`.

Both read and assign `model.optimizer.lr` with `K.get_value` / `K.set_value`: for the Keras optimizers that is
the `learning_rate` variable (`training/Adam/learning_rate`), created when `fit` builds the train function, so
the new rate is used from the next step on without rebuilding anything. Both log the rate as `lr` in the epoch
logs (History, CSVLogger and TensorBoard then see it). A `tf.train` optimizer given to `compile` has no `lr`:
`LearningRateScheduler` raises TF's ValueError.
"""
from __future__ import annotations

import numpy as np

from ... import tf_logging as logging
from .. import backend as K
from .base import Callback


def _has_lr(optimizer):
    return hasattr(optimizer, "lr")


class LearningRateScheduler(Callback):
    """`LearningRateScheduler(schedule, verbose=0)`: at each epoch start the rate becomes `schedule(epoch, lr)`
    (or `schedule(epoch)`, the older signature); it must return a float."""

    def __init__(self, schedule, verbose=0):
        super().__init__()
        self.schedule = schedule
        self.verbose = verbose

    def on_epoch_begin(self, epoch, logs=None):
        if not _has_lr(self.model.optimizer):
            raise ValueError('Optimizer must have a "lr" attribute.')
        try:  # the (epoch, lr) signature
            lr = float(K.get_value(self.model.optimizer.lr))
            lr = self.schedule(epoch, lr)
        except TypeError:  # the older (epoch) one
            lr = self.schedule(epoch)
        if not isinstance(lr, (float, np.float32, np.float64)):
            raise ValueError('The output of the "schedule" function should be float.')
        K.set_value(self.model.optimizer.lr, lr)
        if self.verbose > 0:
            print("\nEpoch %05d: LearningRateScheduler reducing learning rate to %s." % (epoch + 1, lr))

    def on_epoch_end(self, epoch, logs=None):
        logs = logs if logs is not None else {}
        logs["lr"] = K.get_value(self.model.optimizer.lr)


class ReduceLROnPlateau(Callback):
    """`ReduceLROnPlateau(monitor='val_loss', factor=0.1, patience=10, verbose=0, mode='auto', min_delta=1e-4,
    cooldown=0, min_lr=0)`: multiplies the rate by `factor` (not below `min_lr`) after `patience` epochs
    without an improvement of more than `min_delta`, then waits `cooldown` epochs. (`epsilon` is the
    deprecated name of `min_delta`.)"""

    def __init__(self, monitor="val_loss", factor=0.1, patience=10, verbose=0, mode="auto", min_delta=1e-4,
                 cooldown=0, min_lr=0, **kwargs):
        super().__init__()
        self.monitor = monitor
        if factor >= 1.0:
            raise ValueError("ReduceLROnPlateau does not support a factor >= 1.0.")
        if "epsilon" in kwargs:
            min_delta = kwargs.pop("epsilon")
            logging.warning("`epsilon` argument is deprecated and will be removed, use `min_delta` instead.")
        self.factor = factor
        self.min_lr = min_lr
        self.min_delta = min_delta
        self.patience = patience
        self.verbose = verbose
        self.cooldown = cooldown
        self.cooldown_counter = 0
        self.wait = 0
        self.best = 0
        self.mode = mode
        self.monitor_op = None
        self._reset()

    def _reset(self):
        if self.mode not in ("auto", "min", "max"):
            logging.warning(f"Learning Rate Plateau Reducing mode {self.mode} is unknown, fallback to auto mode.")
            self.mode = "auto"
        if self.mode == "min" or (self.mode == "auto" and "acc" not in self.monitor):
            self.monitor_op = lambda a, b: np.less(a, b - self.min_delta)
            self.best = np.inf
        else:
            self.monitor_op = lambda a, b: np.greater(a, b + self.min_delta)
            self.best = -np.inf
        self.cooldown_counter = 0
        self.wait = 0

    def on_train_begin(self, logs=None):
        self._reset()

    def on_epoch_end(self, epoch, logs=None):
        logs = logs if logs is not None else {}
        logs["lr"] = K.get_value(self.model.optimizer.lr)
        current = logs.get(self.monitor)
        if current is None:
            logging.warning(f"Reduce LR on plateau conditioned on metric `{self.monitor}` which is not available. "
                            f"Available metrics are: {','.join(list(logs.keys()))}")
            return
        if self.in_cooldown():
            self.cooldown_counter -= 1
            self.wait = 0
        if self.monitor_op(current, self.best):
            self.best = current
            self.wait = 0
        elif not self.in_cooldown():
            self.wait += 1
            if self.wait >= self.patience:
                old_lr = float(K.get_value(self.model.optimizer.lr))
                if old_lr > self.min_lr:
                    new_lr = max(old_lr * self.factor, self.min_lr)
                    K.set_value(self.model.optimizer.lr, new_lr)
                    if self.verbose > 0:
                        print("\nEpoch %05d: ReduceLROnPlateau reducing learning rate to %s." % (epoch + 1, new_lr))
                    self.cooldown_counter = self.cooldown
                    self.wait = 0

    def in_cooldown(self):
        return self.cooldown_counter > 0
