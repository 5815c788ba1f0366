"""The callbacks against real TensorFlow's graph-mode Keras: the same MLP, data and initial weights trained
with TensorBoard (update_freq=32 samples, histograms every 2 epochs), ReduceLROnPlateau, CSVLogger,
EarlyStopping (restore_best_weights) and ModelCheckpoint (save_best_only, a formatted HDF5 file name) writes what
TF wrote: the same History (with `lr`), the same stopping epoch, every scalar event TensorBoard's loader reads
(tag, step, value) and the histogram events' tags and steps, the same CSV rows, the same checkpoint files, the
same final (restored) weights. Fixture: scripts/gen_keras_training_fixtures.py."""
import csv
import io
import json
import os

import numpy as np
import pytest

import tensorfleet as tf

ea = pytest.importorskip("tensorboard.backend.event_processing.event_accumulator")

DATA = os.path.join(os.path.dirname(__file__), "data")
FIXTURE = json.load(open(os.path.join(DATA, "keras_callbacks.json")))
TRAJ = np.load(os.path.join(DATA, "keras_fit_trajectories.npz"))
TOL = dict(rtol=2e-5, atol=2e-6)


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    work = tmp_path_factory.mktemp("callbacks")
    tf.keras.backend.clear_session()
    model = tf.keras.Sequential([tf.keras.layers.Dense(16, activation="relu", input_shape=(12,)),
                                 tf.keras.layers.Dense(4, activation="softmax")])
    model.compile(tf.keras.optimizers.SGD(0.5), "categorical_crossentropy", metrics=["accuracy"])
    model.set_weights([TRAJ[f"init_{i}"] for i in range(4)])
    cbs = [tf.keras.callbacks.TensorBoard(log_dir=str(work / "tb"), update_freq=32, histogram_freq=2),
           tf.keras.callbacks.ReduceLROnPlateau(monitor="val_acc", patience=1, factor=0.5),
           tf.keras.callbacks.CSVLogger(str(work / "log.csv")),
           tf.keras.callbacks.EarlyStopping(monitor="val_acc", patience=3, restore_best_weights=True),
           tf.keras.callbacks.ModelCheckpoint(str(work / "w.{epoch:02d}-{val_loss:.3f}.h5"), save_best_only=True,
                                              save_weights_only=True)]
    history = model.fit(TRAJ["x"], TRAJ["y"], batch_size=16, epochs=12, shuffle=False, verbose=0,
                        validation_split=0.25, callbacks=cbs)
    weights = model.get_weights()
    tf.keras.backend.clear_session()
    return work, history, weights


def test_history_and_stopping_epoch(run):
    _, history, _ = run
    assert history.epoch == FIXTURE["epochs"]  # EarlyStopping ended it at the same epoch
    assert sorted(history.history) == sorted(FIXTURE["history"])
    for key, values in FIXTURE["history"].items():
        np.testing.assert_allclose(history.history[key], values, err_msg=key, **TOL)


def test_tensorboard_events_as_tensorboard_reads_them(run):
    work = run[0]
    acc = ea.EventAccumulator(str(work / "tb"), size_guidance={ea.SCALARS: 0, ea.HISTOGRAMS: 0})
    acc.Reload()
    tags = acc.Tags()
    assert tags["graph"] is FIXTURE["graph"] is True
    assert sorted(tags["scalars"]) == sorted(FIXTURE["scalars"])
    for tag, events in FIXTURE["scalars"].items():
        got = [(e.step, e.value) for e in acc.Scalars(tag)]
        assert [s for s, _ in got] == [s for s, _ in events], tag
        np.testing.assert_allclose([v for _, v in got], [v for _, v in events], err_msg=tag, **TOL)
    assert sorted(tags["histograms"]) == sorted(FIXTURE["histograms"])
    for tag, steps in FIXTURE["histograms"].items():
        assert [e.step for e in acc.Histograms(tag)] == steps, tag


def test_csv_logger_rows(run):
    work = run[0]
    ours = list(csv.reader(open(work / "log.csv")))
    theirs = list(csv.reader(io.StringIO(FIXTURE["csv"])))
    assert ours[0] == theirs[0] == ["epoch", "acc", "loss", "lr", "val_acc", "val_loss"]
    assert [r[0] for r in ours] == [r[0] for r in theirs]
    np.testing.assert_allclose(np.array(ours[1:], float), np.array(theirs[1:], float), **TOL)


def test_model_checkpoint_files_and_restored_weights(run):
    work, _, weights = run
    assert sorted(p.name for p in work.glob("w.*.h5")) == FIXTURE["checkpoints"]
    for ours, theirs in zip(weights, FIXTURE["final_weights"]):
        np.testing.assert_allclose(ours, np.array(theirs, np.float32), rtol=1e-4, atol=2e-6)
