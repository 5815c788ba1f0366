"""The loggers `fit` always adds (TF 1.15): `BaseLogger` (epoch averages), `History` (what `fit` returns) and
`ProgbarLogger` (the progress bar; prints `Epoch i/n` only when training for more than one epoch); and the
optional `CSVLogger` (the epoch logs as CSV rows).

Averages are weighted by the batch `size` in the batch logs (1 per step when counting steps); stateful
metrics are taken as their last value.
"""
from __future__ import annotations

import collections.abc
import csv
import os

import numpy as np

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
        self.log_values = []
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


class CSVLogger(Callback):
    """`CSVLogger(filename, separator=',', append=False)`: one row per epoch, `epoch` then the epoch logs' keys
    in sorted order (fixed by the first epoch; a key missing at an epoch where training stops is 'NA'); arrays
    are written as `"[a, b]"`. With `append`, the header is written only when the file is empty or absent."""

    def __init__(self, filename, separator=",", append=False):
        super().__init__()
        self.sep = separator
        self.filename = os.fspath(filename)
        self.append = append
        self.writer = None
        self.keys = None
        self.append_header = True
        self.csv_file = None

    def on_train_begin(self, logs=None):
        mode = "w"
        if self.append:
            if os.path.exists(self.filename):
                with open(self.filename) as f:
                    self.append_header = not bool(len(f.readline()))
            mode = "a"
        self.csv_file = open(self.filename, mode, newline="\n")

    def on_epoch_end(self, epoch, logs=None):
        logs = logs or {}
        if self.keys is None:
            self.keys = sorted(logs.keys())
        if self.model.stop_training:  # NA, so that csv parsers do not fail on this last epoch
            logs = {k: logs.get(k, "NA") for k in self.keys}
        if not self.writer:
            class CustomDialect(csv.excel):
                delimiter = self.sep

            self.writer = csv.DictWriter(self.csv_file, fieldnames=["epoch"] + self.keys, dialect=CustomDialect)
            if self.append_header:
                self.writer.writeheader()
        row = {"epoch": epoch}
        row.update((key, _csv_value(logs[key])) for key in self.keys)
        self.writer.writerow(row)
        self.csv_file.flush()

    def on_train_end(self, logs=None):
        if self.csv_file is not None:
            self.csv_file.close()
        self.writer = None


def _csv_value(value):
    if isinstance(value, str):
        return value
    if isinstance(value, collections.abc.Iterable) and not (isinstance(value, np.ndarray) and value.ndim == 0):
        return '"[%s]"' % ", ".join(map(str, value))
    return value
