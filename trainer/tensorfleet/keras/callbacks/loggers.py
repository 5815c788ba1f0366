"""The loggers `fit` always adds (TF 1.15): `BaseLogger` (epoch averages), `History` (what `fit` returns) and
`ProgbarLogger` (the progress bar; prints `Epoch i/n` only when training for more than one epoch).

Averages are weighted by the batch `size` in the batch logs (1 per step when counting steps); stateful
metrics are taken as their last value.
"""
from __future__ import annotations

from ..utils.progbar import Progbar
from .base import Callback


class BaseLogger(Callback):
    """Replaces the epoch logs' non-stateful metrics by their average over the epoch's batches."""

    def __init__(self, stateful_metrics=None):
        super().__init__()
        self.stateful_metrics = set(stateful_metrics or [])

    def on_epoch_begin(self, epoch, logs=None):
        self.seen = 0
        self.totals: dict = {}

    def on_batch_end(self, batch, logs=None):
        logs = logs or {}
        batch_size = logs.get("size", 0)
        self.seen += batch_size * logs.get("num_steps", 1)
        for k, v in logs.items():
            if k in self.stateful_metrics:
                self.totals[k] = v
            elif k in self.totals:
                self.totals[k] += v * batch_size
            else:
                self.totals[k] = v * batch_size

    def on_epoch_end(self, epoch, logs=None):
        if logs is None:
            return
        for k in self.params["metrics"]:
            if k in self.totals:
                logs[k] = self.totals[k] if k in self.stateful_metrics else self.totals[k] / self.seen


class History(Callback):
    """`history.history[metric]` is the list of epoch values; `history.epoch` the epoch indices."""

    def __init__(self):
        super().__init__()
        self.history: dict = {}

    def on_train_begin(self, logs=None):
        self.epoch: list = []

    def on_epoch_end(self, epoch, logs=None):
        logs = logs or {}
        self.epoch.append(epoch)
        for k, v in logs.items():
            self.history.setdefault(k, []).append(v)


class ProgbarLogger(Callback):
    """Prints Keras's progress bar (`count_mode` 'samples' or 'steps')."""

    def __init__(self, count_mode="samples", stateful_metrics=None):
        super().__init__()
        if count_mode == "samples":
            self.use_steps = False
        elif count_mode == "steps":
            self.use_steps = True
        else:
            raise ValueError("Unknown `count_mode`: " + str(count_mode))
        self.stateful_metrics = set(stateful_metrics or [])

    def on_train_begin(self, logs=None):
        self.verbose = self.params["verbose"]
        self.epochs = self.params["epochs"]

    def on_epoch_begin(self, epoch, logs=None):
        self.seen = 0
        self.target = self.params["steps"] if self.use_steps else self.params["samples"]
        if self.verbose and self.epochs > 1:
            print("Epoch %d/%d" % (epoch + 1, self.epochs))
        self.progbar = Progbar(target=self.target, verbose=self.verbose, stateful_metrics=self.stateful_metrics,
                               unit_name="step" if self.use_steps else "sample")

    def on_batch_begin(self, batch, logs=None):
        self.log_values: list = []

    def on_batch_end(self, batch, logs=None):
        logs = logs or {}
        num_steps = logs.get("num_steps", 1)
        self.seen += num_steps if self.use_steps else logs.get("size", 0) * num_steps
        for k in self.params["metrics"]:
            if k in logs:
                self.log_values.append((k, logs[k]))
        if self.verbose and (self.target is None or self.seen < self.target):
            self.progbar.update(self.seen, self.log_values)

    def on_epoch_end(self, epoch, logs=None):
        logs = logs or {}
        for k in self.params["metrics"]:
            if k in logs:
                self.log_values.append((k, logs[k]))
        if self.verbose:
            self.progbar.update(self.seen, self.log_values)
