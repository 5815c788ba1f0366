"""The tf.contrib example (slim-style CNN: contrib.layers + arg_scope + batch_norm + optimize_loss) trains on
digits, restores through assign_from_checkpoint_fn, and leaves TF's variable names and summaries behind."""
import glob
import importlib.util
import os

import tensorfleet as tf

EXAMPLES = os.path.join(os.path.dirname(__file__), "..", "..", "examples")


def _load(name):
    spec = importlib.util.spec_from_file_location(name, os.path.join(EXAMPLES, f"{name}.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_contrib_layers_cnn_reaches_95_percent_with_tf_names(tmp_path, capsys):
    acc = _load("contrib_layers_cnn").main(["--steps", "300", "--checkpoint-dir", str(tmp_path / "ckpt"),
                                            "--logdir", str(tmp_path / "logs")])
    assert acc >= 0.95, acc
    assert capsys.readouterr().out.splitlines()[-1] == f"test accuracy (restored from model.ckpt-300): {acc:.4f}"
    saved = dict(tf.train.list_variables(str(tmp_path / "ckpt" / "model.ckpt-300")))
    for name, shape in [("conv1/weights", [3, 3, 1, 16]), ("conv1/BatchNorm/beta", [16]),
                        ("conv1/BatchNorm/gamma", [16]), ("conv2/BatchNorm/moving_mean", [32]),
                        ("fc1/BatchNorm/moving_variance", [64]), ("logits/weights", [64, 10]),
                        ("logits/biases", [10]), ("OptimizeLoss/learning_rate", []), ("global_step", [])]:
        assert saved[name] == shape, name
    assert "conv1/biases" not in saved  # batch norm replaces the biases
    events = glob.glob(str(tmp_path / "logs" / "events.out.tfevents.*"))
    tags = {v.tag for e in tf.train.summary_iterator(events[0]) for v in e.summary.value}
    assert tags == {"OptimizeLoss/loss", "OptimizeLoss/learning_rate_1"}
