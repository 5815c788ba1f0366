"""The Kubeflow-style `examples/mnist_with_summaries.py` writes event files TensorBoard's own loader reads:
scalars, histograms, the graph, and the tagged run metadata of its traced steps with per-node step stats."""
import importlib.util
import os

import pytest

event_accumulator = pytest.importorskip("tensorboard.backend.event_processing.event_accumulator")

EXAMPLES = os.path.join(os.path.dirname(__file__), "..", "..", "examples")


def _load(name):
    spec = importlib.util.spec_from_file_location(name, os.path.join(EXAMPLES, f"{name}.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_summaries_and_run_metadata_load_in_tensorboard(tmp_path, capsys):
    acc = _load("mnist_with_summaries").main(["--log-dir", str(tmp_path), "--max-steps", "201", "--data", "digits"])
    assert acc > 0.9
    assert "Adding run metadata for 199" in capsys.readouterr().out

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
