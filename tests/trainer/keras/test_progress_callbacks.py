"""Keras 1.15's progress bar (byte for byte, on a fake clock), fit/evaluate/predict output, and the callback
protocol (hook order, logs, History, stop_training)."""
import re

import numpy as np
import pytest

import tensorfleet as tf
from tensorfleet.keras.utils import progbar as progbar_module

K = tf.keras.backend
L = tf.keras.layers


class Clock:
    def __init__(self, start=100.0):
        self.now = start

    def __call__(self):
        return self.now


@pytest.fixture
def clock(monkeypatch):
    c = Clock()
    monkeypatch.setattr(progbar_module.time, "time", c)
    return c


def test_progbar_verbose_1_redraws_one_line(clock, capsys):
    bar = tf.keras.utils.Progbar(target=10, stateful_metrics=["acc"])
    clock.now = 101.0
    bar.update(4, [("loss", 1.0), ("acc", 0.5)])
    clock.now = 102.0
    bar.update(10, [("loss", 0.0), ("acc", 1.0)])
    first = " 4/10 [" + "=" * 11 + ">" + "." * 18 + "] - ETA: 1s - loss: 1.0000 - acc: 0.5000"
    final = "10/10 [" + "=" * 30 + "] - 2s 200ms/step - loss: 0.4000 - acc: 1.0000"  # loss: 4 x 1.0 + 6 x 0.0
    assert capsys.readouterr().out == "\r" + first + "\b" * 77 + "\r" + final + "\n"


def test_progbar_verbose_2_and_small_values(clock, capsys):
    bar = tf.keras.utils.Progbar(target=100, verbose=2)
    clock.now = 103.0
    bar.update(50, [("loss", 0.00001)])
    assert capsys.readouterr().out == ""  # verbose=2 writes only at the end
    bar.update(100, [("loss", 0.00001)])
    assert capsys.readouterr().out == "100/100 - 3s - loss: 1.0000e-05\n"


def test_progbar_unknown_target_and_interval(clock, capsys):
    bar = tf.keras.utils.Progbar(target=None, unit_name="sample")
    clock.now = 100.5
    bar.update(3)
    assert capsys.readouterr().out == "\r      3/Unknown - 0s 167ms/sample"
    bar = tf.keras.utils.Progbar(target=10)
    bar.update(1)  # the first update always draws
    assert capsys.readouterr().out.startswith("\r 1/10 [==>")
    clock.now += 0.01
    bar.update(2)  # within `interval` (0.05 s) of the last draw and not done: no redraw
    assert capsys.readouterr().out == ""


def fit_model():
    model = tf.keras.Sequential([L.Dense(2, activation="softmax", input_shape=(3,))])
    model.compile("sgd", "categorical_crossentropy", metrics=["acc"])
    return model


X = np.random.default_rng(5).standard_normal((10, 3)).astype("float32")
Y = np.eye(2, dtype="float32")[[0, 1] * 5]
NUM = r"\d\.\d{4}(e[+-]\d\d)?"


def test_fit_output_verbose_2_and_1(capsys):
    model = fit_model()
    model.fit(X, Y, epochs=2, verbose=2, validation_split=0.2)
    lines = capsys.readouterr().out.splitlines()
    assert lines[:2] == ["Train on 8 samples, validate on 2 samples", "Epoch 1/2"]
    assert re.fullmatch(rf"8/8 - \d+s - loss: {NUM} - acc: {NUM} - val_loss: {NUM} - val_acc: {NUM}", lines[2])
    assert lines[3] == "Epoch 2/2" and len(lines) == 5
    model.fit(X, Y, epochs=1, batch_size=4, verbose=1)
    out = capsys.readouterr().out
    assert out.startswith("Train on 10 samples\n") and "Epoch" not in out  # one epoch: no "Epoch 1/1"
    final = re.split(r"[\r\b]+", out.splitlines()[-1])[-1]
    assert re.fullmatch(rf"10/10 \[={{30}}\] - \d+s \d+(us|ms|s)/sample - loss: {NUM} - acc: {NUM}", final)


def test_evaluate_and_predict_output(capsys):
    model = fit_model()
    model.evaluate(X, Y)
    out = capsys.readouterr().out
    assert re.fullmatch(rf"10/10 \[={{30}}\] - \d+s \d+(us|ms|s)/sample - loss: {NUM} - acc: {NUM}",
                        re.split(r"[\r\b]+", out.strip())[-1])
    model.predict(X)
    assert capsys.readouterr().out == ""
    model.predict(X, verbose=1)
    assert re.fullmatch(r"10/10 \[={30}\] - \d+s \d+(us|ms|s)/sample", re.split(r"[\r\b]+", capsys.readouterr()
                                                                                 .out.strip())[-1])


class Recorder(tf.keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.calls = []

    def __getattribute__(self, name):
        attr = object.__getattribute__(self, name)
        if name.startswith("on_"):
            def record(*args, **kwargs):
                self.calls.append((name, args[0] if args and isinstance(args[0], int) else None,
                                   dict(args[-1]) if args and isinstance(args[-1], dict) else None))
                return attr(*args, **kwargs)
            return record
        return attr


def test_callback_hooks_order_and_logs():
    model = fit_model()
    rec = Recorder()
    history = model.fit(X, Y, batch_size=5, epochs=1, verbose=0, validation_data=(X[:4], Y[:4]), callbacks=[rec])
    names = [c[0] for c in rec.calls]
    assert names == ["on_train_begin", "on_epoch_begin",
                     "on_train_batch_begin", "on_batch_begin", "on_train_batch_end", "on_batch_end",
                     "on_train_batch_begin", "on_batch_begin", "on_train_batch_end", "on_batch_end",
                     "on_test_begin", "on_test_batch_begin", "on_test_batch_end", "on_test_end",
                     "on_epoch_end", "on_train_end"]
    batch_end = rec.calls[4][2]
    assert set(batch_end) == {"batch", "size", "loss", "acc"} and batch_end["size"] == 5
    epoch_logs = rec.calls[-2][2]
    assert set(epoch_logs) == {"loss", "acc", "val_loss", "val_acc"}
    assert rec.model is model and rec.params["metrics"] == ["loss", "acc", "val_loss", "val_acc"]
    assert model.history is history and history.history["val_loss"] == [epoch_logs["val_loss"]]


def test_stop_training_and_evaluate_callbacks():
    class Stop(tf.keras.callbacks.Callback):
        def on_epoch_end(self, epoch, logs=None):
            self.model.stop_training = True

    model = fit_model()
    assert model.fit(X, Y, epochs=5, verbose=0, callbacks=[Stop()]).epoch == [0]
    rec = Recorder()
    model.evaluate(X, Y, batch_size=5, verbose=0, callbacks=[rec])
    assert [c[0] for c in rec.calls] == ["on_test_begin", "on_test_batch_begin", "on_test_batch_end",
                                         "on_test_batch_begin", "on_test_batch_end", "on_test_end"]
    rec = Recorder()
    model.predict(X, batch_size=10, callbacks=[rec])
    assert [c[0] for c in rec.calls] == ["on_predict_begin", "on_predict_batch_begin", "on_predict_batch_end",
                                         "on_predict_end"]
    assert "outputs" in rec.calls[2][2]
