"""tensorfleet-train --export-dir: the chief writes the trained model as a SavedModel, as real processes.

Oracles: numpy (softmax(x W + b) with the final checkpoint's values, read back from the checkpoint files by
name); TF's op definitions for every exported node (tests/trainer/tf_op_def_oracle.py); TF Serving's layout
(a numbered version directory under --export-dir, never a half-written one). scripts/check_with_real_tf.py
loads such an export in real TensorFlow.
"""
import json
import os
import sys

import numpy as np
import pytest
import tensorfleet as tf
from launcher_helpers import free_ports, tf_config

sys.path.insert(0, os.path.join(os.path.dirname(__file__), os.pardir, "trainer"))
import tf_op_def_oracle  # noqa: E402

DIGITS = ["--data", "digits", "--log-format", "json"]


def _event(name):
    return lambda line: line.startswith("{") and json.loads(line).get("event") == name


def _version_dir(export_dir) -> str:
    names = os.listdir(export_dir)
    assert len(names) == 1 and len(names[0]) == 10 and names[0].isdigit(), names  # no temp-<ts> left behind
    return os.path.join(export_dir, names[0])


def test_single_process_export_serves_the_trained_softmax(launcher, tmp_path):
    export_dir, ckpt = tmp_path / "models" / "mnist", tmp_path / "ckpt"
    proc = launcher(["--model", "mnist-softmax", "--steps", "40", "--checkpoint-dir", str(ckpt), "--export-dir",
                     str(export_dir), *DIGITS])
    assert proc.wait() == 0, proc.output
    version = _version_dir(export_dir)
    assert proc.events("exported")[0]["path"] == version
    mg = tf.saved_model.loader.SavedModelLoader(version).get_meta_graph_def_from_tags(["serve"])
    sig = mg.signature_def["serving_default"]
    assert sig.method_name == "tensorflow/serving/predict"
    assert list(sig.inputs) == ["images"] and [d.size for d in sig.inputs["images"].tensor_shape.dim] == [-1, 64]
    assert sorted(sig.outputs) == ["classes", "probabilities"] and sig.outputs["classes"].dtype == 9
    assert tf_op_def_oracle.problems(mg.graph_def) == []
    assert all(nd.device == "" for nd in mg.graph_def.node)
    latest = tf.train.latest_checkpoint(str(ckpt))
    w = tf.train.load_variable(latest, "softmax_linear/weights")
    b = tf.train.load_variable(latest, "softmax_linear/biases")
    x = np.random.RandomState(0).rand(5, 64).astype(np.float32) * 16
    logits = x @ w + b
    want = np.exp(logits - logits.max(1, keepdims=True))
    want /= want.sum(1, keepdims=True)
    with tf.Session(graph=tf.Graph()) as sess:
        tf.saved_model.loader.load(sess, ["serve"], version)
        probs, classes = sess.run([sig.outputs["probabilities"].name, sig.outputs["classes"].name],
                                  {sig.inputs["images"].name: x})
    np.testing.assert_allclose(probs, want, rtol=1e-5, atol=1e-6)
    assert classes.tolist() == want.argmax(1).tolist()


@pytest.mark.skipif(not hasattr(tf.train, "Server"), reason="needs the distributed runtime")
def test_in_a_cluster_only_the_chief_exports_and_before_the_ps_goes(launcher, tmp_path):
    ps, w0, w1 = free_ports(3)
    cluster = {"ps": [f"127.0.0.1:{ps}"], "chief": [f"127.0.0.1:{w0}"], "worker": [f"127.0.0.1:{w1}"]}
    export_dir = tmp_path / "export"
    args = ["--model", "mnist-mlp", "--steps", "30", "--export-dir", str(export_dir), *DIGITS]
    ps_proc = launcher(args, tf_config=tf_config(cluster, "ps", 0))
    chief = launcher(args, tf_config=tf_config(cluster, "chief", 0))
    worker = launcher(args, tf_config=tf_config(cluster, "worker", 0))
    assert chief.wait() == 0, chief.output
    assert worker.wait() == 0, worker.output
    assert ps_proc.wait() == 0, ps_proc.output
    version = _version_dir(export_dir)
    assert chief.events("exported")[0]["path"] == version and not worker.events("exported")
    names = [json.loads(line).get("event") for line in chief.lines if line.startswith("{")]
    assert names.index("exported") < names.index("ps_released")  # the variables were read from the live ps
    with tf.Session(graph=tf.Graph()) as sess:
        mg = tf.saved_model.loader.load(sess, ["serve"], version)
        sig = mg.signature_def["serving_default"]
        probs = sess.run(sig.outputs["probabilities"].name, {sig.inputs["images"].name: np.zeros((3, 64))})
    np.testing.assert_allclose(probs.sum(1), 1.0, rtol=1e-5)
