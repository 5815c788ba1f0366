"""The string, tf.data-CNN and conv-autoencoder examples run end to end (few steps) and do what they claim."""
import csv
import importlib.util
import os

import numpy as np

EXAMPLES = os.path.join(os.path.dirname(__file__), "..", "..", "examples")


def _load(name):
    spec = importlib.util.spec_from_file_location(name, os.path.join(EXAMPLES, f"{name}.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_strings_example_matches_python(capsys):
    mod = _load("strings_basics")
    out = mod.main([])
    assert out["hello"] == b"Hello, TensorFlow!"
    assert out["greeting"].tolist() == [b"Hello, Ada!", b"Hello, Grace!"]
    rows = [s.split() for s in ["the quick brown fox", "jumps over"]]
    width = max(map(len, rows))
    assert out["tokens"].tolist() == [[t.encode() for t in r] + [b""] * (width - len(r)) for r in rows]
    assert out["formatted"].tolist() == [b"score=%.2f" % v for v in (3.14159, 2.5, 10.0)]
    parsed = list(csv.reader(mod.CSV_LINES))
    assert out["name"].tolist() == [r[0].encode() for r in parsed]
    assert out["age"].tolist() == [int(r[1]) if r[1] else -1 for r in parsed]
    np.testing.assert_allclose(out["height"], [float(r[2]) for r in parsed], rtol=1e-6)
    assert "Hello, TensorFlow!" in capsys.readouterr().out


def test_data_pipeline_cnn_learns_digits():
    assert _load("data_pipeline_cnn").main(["--steps", "150"]) >= 0.9


def test_conv_autoencoder_beats_the_mean_image():
    result = _load("conv_autoencoder").main(["--steps", "200"])
    assert result["test_mse"] < 0.5 * result["baseline_mse"] < result["untrained_mse"]


def test_mnist_lstm_learns_with_static_and_dynamic_rnn():
    # the full run (3000 steps) reaches >= 95% on the 10,000 test images; a few steps already beat chance by far
    mod = _load("mnist_lstm")
    assert mod.main(["--steps", "60", "--test-size", "1000"]) >= 0.5
    assert mod.main(["--steps", "60", "--test-size", "1000", "--rnn", "dynamic"]) >= 0.5
