"""The callbacks' rules one by one (TF 1.15's keras/callbacks.py): schedules, stopping, checkpoint naming and
frequency, CSV appending, TensorBoard steps; test_callbacks_against_tf.py compares a whole run with real TF."""
import csv
import os

import numpy as np
import pytest

import tensorfleet as tf

K = tf.keras.backend
C = tf.keras.callbacks
ea = pytest.importorskip("tensorboard.backend.event_processing.event_accumulator")


def _data(n=40):
    rng = np.random.RandomState(0)
    x = rng.randn(n, 5).astype(np.float32)
    y = (x[:, :1] > 0).astype(np.float32)
    return x, y


def _model(lr=0.1, optimizer=None):
    model = tf.keras.Sequential([tf.keras.layers.Dense(4, activation="relu", input_shape=(5,)),
                                 tf.keras.layers.Dense(1, activation="sigmoid")])
    model.compile(optimizer or tf.keras.optimizers.SGD(lr), "binary_crossentropy", metrics=["accuracy"])
    return model


def test_learning_rate_scheduler_sets_the_optimizer_variable_each_epoch():
    x, y = _data()
    model = _model()
    seen = []
    record = C.LambdaCallback(on_epoch_begin=lambda e, logs: seen.append(float(K.get_value(model.optimizer.lr))))
    old_api = C.LearningRateScheduler(lambda epoch: 0.1 / (epoch + 1))
    history = model.fit(x, y, epochs=3, verbose=0, callbacks=[old_api, record])
    np.testing.assert_allclose(seen, [0.1, 0.05, 0.1 / 3], rtol=1e-6)
    np.testing.assert_allclose(history.history["lr"], [0.1, 0.05, 0.1 / 3], rtol=1e-6)
    new_api = C.LearningRateScheduler(lambda epoch, lr: lr * 0.5)
    history = model.fit(x, y, epochs=2, verbose=0, callbacks=[new_api])
    np.testing.assert_allclose(history.history["lr"], [0.1 / 6, 0.1 / 12], rtol=1e-6)
    with pytest.raises(ValueError, match="should be float"):
        model.fit(x, y, epochs=1, verbose=0, callbacks=[C.LearningRateScheduler(lambda e: "fast")])


def test_learning_rate_callbacks_need_an_lr_attribute():
    x, y = _data()
    model = _model(optimizer=tf.train.GradientDescentOptimizer(0.1))
    with pytest.raises(ValueError, match='must have a "lr" attribute'):
        model.fit(x, y, epochs=1, verbose=0, callbacks=[C.LearningRateScheduler(lambda e: 0.1)])


class _Feed(C.Callback):
    """Replaces the monitored value in the epoch logs by a scripted sequence (runs before the callback tested)."""

    def __init__(self, key, values):
        super().__init__()
        self.key, self.values = key, values

    def on_epoch_end(self, epoch, logs=None):
        logs[self.key] = self.values[epoch]


def test_reduce_lr_on_plateau_patience_cooldown_min_lr():
    x, y = _data()
    model = _model(lr=1.0)
    values = [1.0, 0.9, 0.95, 0.95, 0.95, 0.95, 0.95, 0.95]
    rlr = C.ReduceLROnPlateau(monitor="m", factor=0.5, patience=1, cooldown=1, min_lr=0.3, min_delta=0.0)
    history = model.fit(x, y, epochs=8, verbose=0, callbacks=[_Feed("m", values), rlr])
    # epoch 2: no improvement -> 0.5 and cooldown 1; epoch 3 spends the cooldown, then (TF's order) counts the
    # epoch as not improving: -> 0.25, floored to min_lr 0.3; the rate is logged before the epoch's change
    np.testing.assert_allclose(history.history["lr"], [1.0, 1.0, 1.0, 0.5, 0.3, 0.3, 0.3, 0.3], rtol=1e-6)
    with pytest.raises(ValueError, match="factor >= 1.0"):
        C.ReduceLROnPlateau(factor=1.0)


@pytest.mark.parametrize("monitor,values,kwargs,stopped", [
    ("val_loss", [1.0, 0.8, 0.81, 0.82, 0.7], {"patience": 2}, 3),
    ("val_loss", [1.0, 0.99, 0.985, 0.98], {"patience": 1, "min_delta": 0.02}, 1),
    ("val_acc", [0.5, 0.6, 0.6, 0.7], {"patience": 1}, 2),            # 'acc' in the name: maximised
    ("m", [0.5, 0.6, 0.7, 0.8], {"patience": 2, "mode": "min"}, 2),
    ("m", [0.5, 0.6, 0.61, 0.7], {"patience": 2, "baseline": 0.62, "mode": "max"}, 1),  # never beat 0.62
    ("m", [0.5, 0.6, 0.65, 0.64, 0.63, 0.62], {"patience": 3, "baseline": 0.62, "mode": "max"}, 5),
])
def test_early_stopping_rules(monitor, values, kwargs, stopped):
    x, y = _data()
    model = _model()
    es = C.EarlyStopping(monitor=monitor, **kwargs)
    history = model.fit(x, y, epochs=len(values) + 3, verbose=0, callbacks=[_Feed(monitor, values + [0] * 3), es])
    assert es.stopped_epoch == stopped
    assert history.epoch == list(range(stopped + 1))


def test_early_stopping_restores_the_best_weights(capsys):
    x, y = _data()
    model = _model()
    snapshots = []
    keep = C.LambdaCallback(on_epoch_end=lambda e, logs: snapshots.append(model.get_weights()))
    es = C.EarlyStopping(monitor="m", patience=2, restore_best_weights=True, verbose=1)
    model.fit(x, y, epochs=6, verbose=0, callbacks=[keep, _Feed("m", [3.0, 1.0, 2.0, 2.0, 0.5, 0.5]), es])
    for got, want in zip(model.get_weights(), snapshots[1]):
        np.testing.assert_array_equal(got, want)  # epoch 1 was the best
    out = capsys.readouterr().out
    assert "Restoring model weights from the end of the best epoch." in out and "Epoch 00004: early stopping" in out


def test_terminate_on_nan_stops_at_the_batch():
    x, y = _data()
    x[17] = np.nan
    model = _model()
    batches = []
    record = C.LambdaCallback(on_batch_end=lambda b, logs: batches.append(b))
    history = model.fit(x, y, batch_size=8, epochs=3, shuffle=False, verbose=0, callbacks=[C.TerminateOnNaN(), record])
    assert batches == [0, 1, 2] and len(history.epoch) == 1  # batch 2 holds sample 17


def test_lambda_callback_hooks_and_attributes():
    x, y = _data()
    calls = []
    cb = C.LambdaCallback(on_train_begin=lambda logs: calls.append("train_begin"),
                          on_epoch_begin=lambda e, logs: calls.append(f"epoch_begin {e}"),
                          on_batch_end=lambda b, logs: calls.append(f"batch_end {b} {sorted(logs)}"),
                          on_epoch_end=lambda e, logs: calls.append(f"epoch_end {e} {sorted(logs)}"),
                          on_train_end=lambda logs: calls.append("train_end"), note="kept")
    _model().fit(x, y, batch_size=20, epochs=1, verbose=0, callbacks=[cb])
    assert cb.note == "kept"
    assert calls == ["train_begin", "epoch_begin 0", "batch_end 0 ['acc', 'batch', 'loss', 'size']",
                     "batch_end 1 ['acc', 'batch', 'loss', 'size']", "epoch_end 0 ['acc', 'loss']", "train_end"]


def test_model_checkpoint_names_period_and_save_freq(tmp_path):
    x, y = _data()
    model = _model()
    pattern = str(tmp_path / "ep{epoch:02d}-{loss:.2f}.h5")
    model.fit(x, y, epochs=4, verbose=0, callbacks=[C.ModelCheckpoint(pattern, monitor="loss", period=2)])
    names = sorted(os.listdir(tmp_path))
    assert [n[:4] for n in names] == ["ep02", "ep04"]  # every 2nd epoch (the deprecated `period`)
    reloaded = tf.keras.models.load_model(str(tmp_path / names[-1]))  # a whole model (HDF5)
    np.testing.assert_allclose(reloaded.predict(x), model.predict(x), rtol=1e-6)
    by_batch = tmp_path / "batches"
    by_batch.mkdir()
    model.fit(x, y, batch_size=10, epochs=2, verbose=0, callbacks=[
        C.ModelCheckpoint(str(by_batch / "w-{epoch}-{batch}"), save_weights_only=True, save_freq=15)])
    # 10 samples per batch: 20 seen after batch 1, 15 more after batch 3 (epoch 1), ...: TF checkpoints
    assert sorted(n for n in os.listdir(by_batch) if n.endswith(".index")) == [
        "w-1-1.index", "w-1-3.index", "w-2-1.index", "w-2-3.index"]
    with pytest.raises(ValueError, match="Unrecognized save_freq"):
        C.ModelCheckpoint("x", save_freq="often")


def test_model_checkpoint_save_best_only_and_load_on_restart(tmp_path, capsys):
    x, y = _data()
    model = _model()
    path = str(tmp_path / "best")
    cb = C.ModelCheckpoint(path, monitor="m", save_best_only=True, save_weights_only=True, verbose=1)
    model.fit(x, y, epochs=3, verbose=0, callbacks=[_Feed("m", [2.0, 1.0, 3.0]), cb])
    out = capsys.readouterr().out
    assert "Epoch 00001: m improved from inf to 2.00000, saving model to " + path in out
    assert "Epoch 00003: m did not improve from 1.00000" in out
    best = model.get_weights()  # not the same as the saved ones (epoch 2)
    restart = _model()
    restart.fit(x, y, epochs=1, verbose=0,
                callbacks=[C.ModelCheckpoint(path, load_weights_on_restart=True, monitor="loss", period=5)])
    assert not all(np.array_equal(a, b) for a, b in zip(restart.get_weights(), best))
    with pytest.raises(KeyError, match="nope"):
        model.fit(x, y, epochs=1, verbose=0, callbacks=[C.ModelCheckpoint(str(tmp_path / "{nope}"))])


def test_csv_logger_append_and_arrays(tmp_path):
    x, y = _data()
    path = tmp_path / "log.csv"
    model = _model()
    model.fit(x, y, epochs=2, verbose=0, callbacks=[C.CSVLogger(str(path), separator=";")])
    model.fit(x, y, epochs=1, verbose=0, callbacks=[_Feed("vec", [np.array([1, 2])]),
                                                    C.CSVLogger(str(path), separator=";", append=True)])
    rows = list(csv.reader(open(path), delimiter=";"))
    assert rows[0] == ["epoch", "acc", "loss"] and [r[0] for r in rows[1:]] == ["0", "1", "0"]
    assert len(rows[3]) == 4 and rows[3][3] == '"[1, 2]"'  # the appended run's keys, no second header


def test_tensorboard_batch_and_epoch_steps(tmp_path):
    x, y = _data()
    model = _model()
    model.fit(x, y, batch_size=10, epochs=2, verbose=0,
              callbacks=[C.TensorBoard(str(tmp_path / "batch"), update_freq="batch", write_graph=False)])
    model.fit(x, y, batch_size=10, epochs=2, verbose=0, callbacks=[C.TensorBoard(str(tmp_path / "epoch"))])
    acc = ea.EventAccumulator(str(tmp_path / "batch"), size_guidance={ea.SCALARS: 0})
    acc.Reload()
    assert [e.step for e in acc.Scalars("batch_loss")] == list(range(8))
    assert [e.step for e in acc.Scalars("epoch_loss")] == [40, 80]  # samples seen, when not per epoch
    assert not acc.Tags()["graph"]
    acc = ea.EventAccumulator(str(tmp_path / "epoch"), size_guidance={ea.SCALARS: 0})
    acc.Reload()
    assert "batch_loss" not in acc.Tags()["scalars"] and acc.Tags()["graph"]
    assert [e.step for e in acc.Scalars("epoch_acc")] == [0, 1]
    with pytest.raises(NotImplementedError, match="embeddings"):
        C.TensorBoard(embeddings_freq=1)


def test_tensorboard_gradient_histograms_and_weight_images(tmp_path):
    x, y = _data()
    model = _model()
    model.fit(x, y, epochs=1, verbose=0, validation_split=0.5, callbacks=[
        C.TensorBoard(str(tmp_path), histogram_freq=1, write_grads=True, write_images=True)])
    acc = ea.EventAccumulator(str(tmp_path), size_guidance={ea.HISTOGRAMS: 0, ea.IMAGES: 0})
    acc.Reload()
    assert "dense/kernel_0_grad" in acc.Tags()["histograms"] and "dense_1_out" in acc.Tags()["histograms"]
    images = acc.Tags()["images"]
    assert any(t.startswith("dense/kernel_0") for t in images)
    img = acc.Images([t for t in images if t.startswith("dense/kernel_0")][0])[0]
    assert (img.width, img.height) == (5, 4)  # the [5, 4] kernel, transposed to [4, 5] (TF's rule)
