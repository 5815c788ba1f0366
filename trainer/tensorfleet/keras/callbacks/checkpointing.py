"""`tf.keras.callbacks.ModelCheckpoint` (TF 1.15): saves the model (or its weights) during `fit`.

`filepath` is a format string filled with `epoch` (1-based) and the logs of the moment (`{epoch:02d}`,
`{val_loss:.2f}`, ...). `save_freq='epoch'` saves at each epoch end (every `period` epochs, the deprecated
argument); an integer saves at the end of the batch after which that many samples (steps, when fit counts
steps) were seen since the last save, with that batch's logs. `save_best_only` saves only when `monitor`
improved (mode 'auto': maximise names containing 'acc' or starting with 'fmeasure'). Saving is
`model.save_weights(path)` or `model.save(path)` (engine/saving): the path's suffix chooses the format (`.h5`
HDF5, else a TF checkpoint for weights; `model.save` writes HDF5 unless given `save_format='tf'`). A
subclassed model always saves weights only. `load_weights_on_restart=True` (deprecated in TF 1.15 too) loads
the newest file matching the pattern when training starts.
"""
from __future__ import annotations

import os
import re

from ... import tf_logging as logging
from ...train.checkpoint_management import latest_checkpoint
from .base import Callback
from .stopping import monitor_direction


class ModelCheckpoint(Callback):
    """`ModelCheckpoint(filepath, monitor='val_loss', verbose=0, save_best_only=False, save_weights_only=False,
    mode='auto', save_freq='epoch', **kwargs)` (kwargs: `period`, `load_weights_on_restart`)."""

    def __init__(self, filepath, monitor="val_loss", verbose=0, save_best_only=False, save_weights_only=False,
                 mode="auto", save_freq="epoch", **kwargs):
        super().__init__()
        self.monitor = monitor
        self.verbose = verbose
        self.filepath = os.fspath(filepath)
        self.save_best_only = save_best_only
        self.save_weights_only = save_weights_only
        self.save_freq = save_freq
        self.epochs_since_last_save = 0
        self._samples_seen_since_last_saving = 0
        self._current_epoch = 0
        self.load_weights_on_restart = kwargs.pop("load_weights_on_restart", False)
        if self.load_weights_on_restart:
            logging.warning("`load_weights_on_restart` argument is deprecated. Please use `model.load_weights()` "
                            "for loading weights before the start of `model.fit()`.")
        if "period" in kwargs:
            self.period = kwargs.pop("period")
            logging.warning("`period` argument is deprecated. Please use `save_freq` to specify the frequency in "
                            "number of samples seen.")
        else:
            self.period = 1
        if kwargs:
            raise TypeError(f"Unrecognized keyword arguments: {sorted(kwargs)}")
        self.monitor_op = monitor_direction(mode, monitor, "ModelCheckpoint", accept_fmeasure=True)
        self.best = float("-inf") if self.monitor_op.__name__ == "greater" else float("inf")
        if self.save_freq != "epoch" and not isinstance(self.save_freq, int):
            raise ValueError(f"Unrecognized save_freq: {self.save_freq}")

    def set_model(self, model):
        self.model = model
        if not self.save_weights_only and not model._is_graph_network and type(model).__name__ != "Sequential":
            self.save_weights_only = True

    def on_train_begin(self, logs=None):
        if not self.load_weights_on_restart:
            return
        path = self._get_most_recently_modified_file_matching_pattern(self.filepath)
        if path is not None and (os.path.exists(path) or os.path.exists(path + ".index")):
            try:
                self.model.load_weights(path)
            except (OSError, ValueError) as e:
                raise ValueError(f"Error loading file from {path}. Reason: {e}") from e

    def on_batch_end(self, batch, logs=None):
        logs = logs or {}
        if isinstance(self.save_freq, int):
            self._samples_seen_since_last_saving += logs.get("size", 1)
            if self._samples_seen_since_last_saving >= self.save_freq:
                self._save_model(epoch=self._current_epoch, logs=logs)
                self._samples_seen_since_last_saving = 0

    def on_epoch_begin(self, epoch, logs=None):
        self._current_epoch = epoch

    def on_epoch_end(self, epoch, logs=None):
        self.epochs_since_last_save += 1
        if self.save_freq == "epoch":
            self._save_model(epoch=epoch, logs=logs)

    def _save_model(self, epoch, logs):
        logs = logs or {}
        if not (isinstance(self.save_freq, int) or self.epochs_since_last_save >= self.period):
            return
        self.epochs_since_last_save = 0
        filepath = self._get_file_path(epoch, logs)
        if self.save_best_only:
            current = logs.get(self.monitor)
            if current is None:
                logging.warning(f"Can save best model only with {self.monitor} available, skipping.")
                return
            if not self.monitor_op(current, self.best):
                if self.verbose > 0:
                    print("\nEpoch %05d: %s did not improve from %0.5f" % (epoch + 1, self.monitor, self.best))
                return
            if self.verbose > 0:
                print("\nEpoch %05d: %s improved from %0.5f to %0.5f, saving model to %s"
                      % (epoch + 1, self.monitor, self.best, current, filepath))
            self.best = current
        elif self.verbose > 0:
            print("\nEpoch %05d: saving model to %s" % (epoch + 1, filepath))
        if self.save_weights_only:
            self.model.save_weights(filepath, overwrite=True)
        else:
            self.model.save(filepath, overwrite=True)

    def _get_file_path(self, epoch, logs):
        try:
            return self.filepath.format(epoch=epoch + 1, **logs)
        except KeyError as e:
            raise KeyError(f"Failed to format this callback filepath: \"{self.filepath}\". Reason: {e!r} is not in "
                           f"the logs (available: {sorted(logs)})") from None

    @staticmethod
    def _get_most_recently_modified_file_matching_pattern(pattern):
        """The checkpoint `tf.train.latest_checkpoint` names if it matches the pattern, else the newest file whose
        name matches (the largest name among equally new ones)."""
        dir_name = os.path.dirname(pattern)
        base_name_regex = "^" + re.sub(r"{.*}", r".*", os.path.basename(pattern)) + "$"
        latest = latest_checkpoint(dir_name or ".")
        if latest is not None and re.match(base_name_regex, os.path.basename(latest)):
            return latest
        latest_time, latest_path, n_latest, largest = 0.0, None, 0, None
        if os.path.isdir(dir_name or "."):
            for name in os.listdir(dir_name or "."):
                if not re.match(base_name_regex, name):
                    continue
                path = os.path.join(dir_name, name)
                mtime = os.path.getmtime(path)
                if largest is None or path > largest:
                    largest = path
                if mtime > latest_time:
                    latest_time, latest_path, n_latest = mtime, path, 1
                elif mtime == latest_time:
                    n_latest += 1
        return latest_path if n_latest == 1 else largest
