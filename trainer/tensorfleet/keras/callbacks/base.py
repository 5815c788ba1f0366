"""`tf.keras.callbacks.Callback` and `CallbackList` (TF 1.15's keras/callbacks.py), and how `fit`/`evaluate`/
`predict` set them up (`configure_callbacks`).

Hooks: `on_{train,test,predict}_{begin,end}`, `on_epoch_{begin,end}` (training only), and
`on_{train,test,predict}_batch_{begin,end}`; the train batch hooks call the legacy `on_batch_begin/end`.
`fit` runs `[BaseLogger()] + callbacks + [model.history]` (+ `ProgbarLogger` when verbose), with
`params = {batch_size, epochs, steps, samples, verbose, do_validation, metrics}`; every metric but `loss` is
treated as stateful by the loggers (its value is already the running epoch value). Validation inside `fit`
reuses the same list with the test hooks.
"""
from __future__ import annotations

import copy


class ModeKeys:
    TRAIN = "train"
    TEST = "test"
    PREDICT = "predict"


class Callback:
    """Base class: override the hooks you need; `self.model` and `self.params` are set before training."""

    def __init__(self):
        self.validation_data = None
        self.model = None
        self.params = None

    def set_params(self, params):
        self.params = params

    def set_model(self, model):
        self.model = model

    def on_batch_begin(self, batch, logs=None):
        """Legacy alias of on_train_batch_begin."""

    def on_batch_end(self, batch, logs=None):
        """Legacy alias of on_train_batch_end."""

    def on_epoch_begin(self, epoch, logs=None):
        pass

    def on_epoch_end(self, epoch, logs=None):
        pass

    def on_train_batch_begin(self, batch, logs=None):
        self.on_batch_begin(batch, logs=logs)

    def on_train_batch_end(self, batch, logs=None):
        self.on_batch_end(batch, logs=logs)

    def on_test_batch_begin(self, batch, logs=None):
        pass

    def on_test_batch_end(self, batch, logs=None):
        pass

    def on_predict_batch_begin(self, batch, logs=None):
        pass

    def on_predict_batch_end(self, batch, logs=None):
        pass

    def on_train_begin(self, logs=None):
        pass

    def on_train_end(self, logs=None):
        pass

    def on_test_begin(self, logs=None):
        pass

    def on_test_end(self, logs=None):
        pass

    def on_predict_begin(self, logs=None):
        pass

    def on_predict_end(self, logs=None):
        pass


class CallbackList:
    """Calls every callback's hook in order."""

    def __init__(self, callbacks=None, queue_length=10):
        self.callbacks = list(callbacks or [])
        self.queue_length = queue_length
        self.params: dict = {}
        self.model = None

    def append(self, callback):
        self.callbacks.append(callback)

    def set_params(self, params):
        self.params = params
        for callback in self.callbacks:
            callback.set_params(params)

    def set_model(self, model):
        self.model = model
        for callback in self.callbacks:
            callback.set_model(model)

    def _call_batch_hook(self, mode, hook, batch, logs=None):
        logs = logs or {}
        name = f"on_{mode}_batch_{hook}"
        for callback in self.callbacks:
            getattr(callback, name)(batch, logs)

    def _call_begin_hook(self, mode):
        for callback in self.callbacks:
            getattr(callback, f"on_{mode}_begin")(None)

    def _call_end_hook(self, mode):
        for callback in self.callbacks:
            getattr(callback, f"on_{mode}_end")(None)

    def on_batch_begin(self, batch, logs=None):
        self._call_batch_hook(ModeKeys.TRAIN, "begin", batch, logs=logs)

    def on_batch_end(self, batch, logs=None):
        self._call_batch_hook(ModeKeys.TRAIN, "end", batch, logs=logs)

    def on_epoch_begin(self, epoch, logs=None):
        logs = logs or {}
        for callback in self.callbacks:
            callback.on_epoch_begin(epoch, logs)

    def on_epoch_end(self, epoch, logs=None):
        logs = logs or {}
        for callback in self.callbacks:
            callback.on_epoch_end(epoch, logs)

    def on_train_batch_begin(self, batch, logs=None):
        self._call_batch_hook(ModeKeys.TRAIN, "begin", batch, logs=logs)

    def on_train_batch_end(self, batch, logs=None):
        self._call_batch_hook(ModeKeys.TRAIN, "end", batch, logs=logs)

    def on_test_batch_begin(self, batch, logs=None):
        self._call_batch_hook(ModeKeys.TEST, "begin", batch, logs=logs)

    def on_test_batch_end(self, batch, logs=None):
        self._call_batch_hook(ModeKeys.TEST, "end", batch, logs=logs)

    def on_predict_batch_begin(self, batch, logs=None):
        self._call_batch_hook(ModeKeys.PREDICT, "begin", batch, logs=logs)

    def on_predict_batch_end(self, batch, logs=None):
        self._call_batch_hook(ModeKeys.PREDICT, "end", batch, logs=logs)

    def on_train_begin(self, logs=None):
        for callback in self.callbacks:
            callback.on_train_begin(logs)

    def on_train_end(self, logs=None):
        for callback in self.callbacks:
            callback.on_train_end(logs)

    def on_test_begin(self, logs=None):
        for callback in self.callbacks:
            callback.on_test_begin(logs)

    def on_test_end(self, logs=None):
        for callback in self.callbacks:
            callback.on_test_end(logs)

    def on_predict_begin(self, logs=None):
        for callback in self.callbacks:
            callback.on_predict_begin(logs)

    def on_predict_end(self, logs=None):
        for callback in self.callbacks:
            callback.on_predict_end(logs)

    def __iter__(self):
        return iter(self.callbacks)


def configure_callbacks(callbacks, model, do_validation=False, batch_size=None, epochs=None, steps_per_epoch=None,
                        samples=None, verbose=1, count_mode="steps", mode=ModeKeys.TRAIN):
    """The CallbackList a training/test/predict loop runs (see the module doc)."""
    from .loggers import BaseLogger, History, ProgbarLogger
    if isinstance(callbacks, CallbackList):
        return callbacks
    callbacks = list(callbacks or [])
    if mode == ModeKeys.TRAIN:
        model.history = History()
        callbacks = [BaseLogger()] + callbacks + [model.history]
        if verbose:
            callbacks.append(ProgbarLogger(count_mode))
    callback_list = CallbackList(callbacks)
    callback_list.set_model(model)
    for cbk in callback_list:
        if isinstance(cbk, (BaseLogger, ProgbarLogger)):
            cbk.stateful_metrics = set(model.metrics_names[1:])
    metrics = []
    if mode != ModeKeys.PREDICT and hasattr(model, "metrics_names"):
        metrics = copy.copy(model.metrics_names)
        if do_validation:
            metrics += ["val_" + n for n in model.metrics_names]
    callback_list.set_params({"batch_size": batch_size, "epochs": epochs, "steps": steps_per_epoch,
                              "samples": samples, "verbose": verbose, "do_validation": do_validation,
                              "metrics": metrics})
    model.stop_training = False
    return callback_list


def make_logs(model, logs, outputs, mode, prefix="", names=None):
    """logs[prefix + metric name] = output (train/test), or logs['outputs'] (predict); `names` defaults to
    `model.metrics_names` (loops pass them, computed once)."""
    names = model.metrics_names if names is None else names
    if mode in (ModeKeys.TRAIN, ModeKeys.TEST) and names:
        for label, output in zip(names, outputs):
            logs[prefix + label] = output
    else:
        logs["outputs"] = outputs
    return logs


class LambdaCallback(Callback):
    """`LambdaCallback(on_epoch_begin=None, on_epoch_end=None, on_batch_begin=None, on_batch_end=None,
    on_train_begin=None, on_train_end=None, **kwargs)`: the given functions as hooks (epoch/batch hooks take
    `(index, logs)`, train hooks `(logs)`); other keyword arguments become attributes."""

    def __init__(self, on_epoch_begin=None, on_epoch_end=None, on_batch_begin=None, on_batch_end=None,
                 on_train_begin=None, on_train_end=None, **kwargs):
        super().__init__()
        self.__dict__.update(kwargs)
        self.on_epoch_begin = on_epoch_begin or (lambda epoch, logs: None)
        self.on_epoch_end = on_epoch_end or (lambda epoch, logs: None)
        self.on_batch_begin = on_batch_begin or (lambda batch, logs: None)
        self.on_batch_end = on_batch_end or (lambda batch, logs: None)
        self.on_train_begin = on_train_begin or (lambda logs: None)
        self.on_train_end = on_train_end or (lambda logs: None)
