"""The string, tf.data-CNN, conv-autoencoder and Kubeflow-style summaries examples run end to end (few steps)
and do what they claim (the last: event files TensorBoard's own loader reads, run metadata included)."""
import csv
import importlib.util
import os

import numpy as np
import pytest

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


def test_summaries_and_run_metadata_load_in_tensorboard(tmp_path, capsys):
    acc = _load("mnist_with_summaries").main(["--log-dir", str(tmp_path), "--max-steps", "201", "--data", "digits"])
    assert acc > 0.9
    assert "Adding run metadata for 199" in capsys.readouterr().out

    event_accumulator = pytest.importorskip("tensorboard.backend.event_processing.event_accumulator")
    train = event_accumulator.EventAccumulator(str(tmp_path / "train"), size_guidance={"run_metadata": 0})
    train.Reload()
    tags = train.Tags()
    assert tags["run_metadata"] == ["step099", "step199"]
    assert {"cross_entropy_1", "accuracy_1", "dropout/dropout_keep_probability"} <= set(tags["scalars"])
    assert "layer1/weights/summaries/histogram" in tags["histograms"]
    assert [e.step for e in train.Scalars("cross_entropy_1")] == [i for i in range(201) if i % 10]

    graph_nodes = {n.name: n for n in train.Graph().node}
    for tag in ("step099", "step199"):
        stats = train.RunMetadata(tag).step_stats
        (dev,) = stats.dev_stats
        assert dev.device == "/job:localhost/replica:0/task:0/device:CPU:0"
        names = [n.node_name for n in dev.node_stats]
        # what TensorBoard's graph view annotates: the step's nodes, by their graph names
        assert {"layer1/Wx_plus_b/MatMul", "layer2/Wx_plus_b/MatMul", "train/Adam"} <= set(names)
        assert all(n in graph_nodes for n in names if not n.endswith("/read"))
        matmul = next(n for n in dev.node_stats if n.node_name == "layer1/Wx_plus_b/MatMul")
        assert matmul.all_end_rel_micros > 0 and matmul.all_start_micros > 0
        assert [d.size for d in matmul.output[0].tensor_description.shape.dim] == [100, 500]
        assert matmul.memory[0].total_bytes == 100 * 500 * 4

    test = event_accumulator.EventAccumulator(str(tmp_path / "test"))
    test.Reload()
    accuracy = test.Scalars("accuracy_1")
    assert [e.step for e in accuracy] == list(range(0, 201, 10)) and accuracy[-1].value == pytest.approx(acc)
    assert test.Tags()["run_metadata"] == []
