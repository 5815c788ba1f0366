"""Estimator.export_saved_model, tf.estimator.export and the exporters, against TF 1.15's documented behaviour.

Oracles: the estimator's own `predict` on the same checkpoint (the exported signature must give the same
numbers); TF's op definitions for every exported node (tests/trainer/tf_op_def_oracle.py); TF 1.15's signature
keys, method names, directory naming and exporter rules. scripts/check_with_real_tf.py loads a DNNClassifier
export in real TF.
"""
from __future__ import annotations

import os
import sys

import numpy as np
import pytest

import tensorfleet as tf

sys.path.insert(0, os.path.join(os.path.dirname(__file__), os.pardir, "trainer"))
import tf_op_def_oracle  # noqa: E402

RNG = np.random.RandomState(1)
X = RNG.randn(120, 4).astype(np.float32)
Y3 = ((X[:, 0] > 0).astype(np.int64) + (X[:, 1] > 0.5).astype(np.int64))
SPEC = {"x": tf.FixedLenFeature([4], tf.float32)}
COLUMNS = [tf.feature_column.numeric_column("x", shape=[4])]


def _examples(rows) -> list:
    out = []
    for row in rows:
        e = tf.train.Example()
        e.features.feature["x"].float_list.value.extend(row.tolist())
        out.append(e.SerializeToString())
    return out


def _train(est, labels, steps=15):
    est.train(tf.estimator.inputs.numpy_input_fn({"x": X}, labels, batch_size=20, num_epochs=None, shuffle=True),
              steps=steps)
    return est


@pytest.fixture(scope="module")
def dnn(tmp_path_factory):
    base = tmp_path_factory.mktemp("dnn")
    est = _train(tf.estimator.DNNClassifier([6], COLUMNS, model_dir=str(base / "model"), n_classes=3), Y3)
    path = est.export_saved_model(str(base / "export"), tf.estimator.export.build_parsing_serving_input_receiver_fn(
        SPEC))
    return est, path, base


def _saved_meta_graph(path):
    return tf.saved_model.loader.SavedModelLoader(path).get_meta_graph_def_from_tags(["serve"])


def test_export_dir_is_a_timestamp_and_nothing_temporary_is_left(dnn):
    _, path, base = dnn
    assert isinstance(path, bytes)
    name = os.path.basename(path.decode())
    assert len(name) == 10 and name.isdigit()
    assert os.listdir(base / "export") == [name]
    assert sorted(os.listdir(path)) == [b"saved_model.pb", b"variables"]


def test_canned_classifier_signatures_are_tfs(dnn):
    _, path, _ = dnn
    mg = _saved_meta_graph(path)
    sigs = mg.signature_def
    assert sorted(sigs) == ["classification", "predict", "serving_default"]
    for key in ("serving_default", "classification"):
        assert sigs[key].method_name == "tensorflow/serving/classify"
        assert list(sigs[key].inputs) == ["inputs"] and sigs[key].inputs["inputs"].name == "input_example_tensor:0"
        assert sorted(sigs[key].outputs) == ["classes", "scores"]
    assert sigs["predict"].method_name == "tensorflow/serving/predict"
    assert list(sigs["predict"].inputs) == ["examples"]
    assert sorted(sigs["predict"].outputs) == ["all_class_ids", "all_classes", "class_ids", "classes", "logits",
                                               "probabilities"]
    assert mg.meta_info_def.stripped_default_attrs
    assert tf_op_def_oracle.problems(mg.graph_def) == []
    assert {nd.op for nd in mg.graph_def.node} >= {"ParseExample", "MatMul", "Softmax", "AsString"}


def test_exported_signatures_give_the_estimators_predictions(dnn):
    est, path, _ = dnn
    rows = X[:5]
    predicted = list(est.predict(tf.estimator.inputs.numpy_input_fn({"x": rows}, shuffle=False)))
    with tf.Session(graph=tf.Graph()) as sess:
        mg = tf.saved_model.loader.load(sess, ["serve"], path)
        pred, cls = mg.signature_def["predict"], mg.signature_def["serving_default"]
        out = sess.run({k: v.name for k, v in pred.outputs.items()}, {pred.inputs["examples"].name: _examples(rows)})
        scores, classes = sess.run([cls.outputs["scores"].name, cls.outputs["classes"].name],
                                   {cls.inputs["inputs"].name: _examples(rows)})
    np.testing.assert_allclose(out["probabilities"], [p["probabilities"] for p in predicted], rtol=1e-6)
    assert out["class_ids"].reshape(-1).tolist() == [int(p["class_ids"][0]) for p in predicted]
    np.testing.assert_array_equal(scores, out["probabilities"])
    assert classes.tolist() == [[b"0", b"1", b"2"]] * 5


def test_regressor_and_binary_heads(tmp_path):
    reg = _train(tf.estimator.DNNRegressor([4], COLUMNS, model_dir=str(tmp_path / "reg")), X[:, 0] * 2.0, steps=5)
    path = reg.export_saved_model(str(tmp_path / "reg_export"),
                                  tf.estimator.export.build_parsing_serving_input_receiver_fn(SPEC))
    sigs = _saved_meta_graph(path).signature_def
    assert sorted(sigs) == ["predict", "regression", "serving_default"]
    assert sigs["serving_default"].method_name == "tensorflow/serving/regress"
    assert list(sigs["serving_default"].outputs) == ["outputs"]
    binary = _train(tf.estimator.LinearClassifier(COLUMNS, model_dir=str(tmp_path / "bin")),
                    (X[:, 0] > 0).astype(np.int64), steps=5)
    path = binary.export_saved_model(str(tmp_path / "bin_export"),
                                     tf.estimator.export.build_parsing_serving_input_receiver_fn(SPEC))
    sigs = _saved_meta_graph(path).signature_def
    assert sorted(sigs) == ["classification", "predict", "regression", "serving_default"]
    assert sigs["regression"].method_name == "tensorflow/serving/regress"
    assert sigs["regression"].outputs["outputs"].name == sigs["predict"].outputs["logistic"].name


def test_raw_receiver_keeps_only_servable_signatures(dnn, tmp_path):
    est = dnn[0]
    fn = tf.estimator.export.build_raw_serving_input_receiver_fn({"x": tf.placeholder(tf.float32, [None, 4])})
    path = est.export_saved_model(str(tmp_path / "raw"), fn)
    sigs = _saved_meta_graph(path).signature_def
    assert sorted(sigs) == ["predict"]  # classify/regress need one string input: excluded, as TF does
    assert sigs["predict"].inputs["x"].dtype == 1 and [d.size for d in sigs["predict"].inputs["x"].tensor_shape.dim] \
        == [-1, 4]


def _model_fn(export_outputs):
    def model_fn(features, labels, mode):
        w = tf.get_variable("w", [4, 2], initializer=tf.ones_initializer())
        y = tf.matmul(features["x"], w)
        if mode == tf.estimator.ModeKeys.PREDICT:
            return tf.estimator.EstimatorSpec(mode, predictions={"y": y}, export_outputs=export_outputs(y))
        loss = tf.reduce_mean(y)
        return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=tf.assign_add(tf.train.get_global_step(), 1))
    return model_fn


def test_custom_export_outputs_rules(tmp_path):
    with tf.Graph().as_default():
        y = tf.constant([[1.0]])
        with pytest.raises(ValueError, match="none of them is specified as the default"):
            tf.estimator.EstimatorSpec("infer", predictions={"y": y}, export_outputs={
                "a": tf.estimator.export.PredictOutput(y), "b": tf.estimator.export.PredictOutput(y)})
        with pytest.raises(TypeError, match="must be ExportOutput objects"):
            tf.estimator.EstimatorSpec("infer", predictions={"y": y}, export_outputs={"a": y})
        spec = tf.estimator.EstimatorSpec("infer", predictions={"y": y},
                                          export_outputs={"only": tf.estimator.export.PredictOutput(y)})
        assert sorted(spec.export_outputs) == ["only", "serving_default"]
        assert sorted(tf.estimator.EstimatorSpec("infer", predictions=y).export_outputs) == ["serving_default"]
        with pytest.raises(ValueError, match="Classification classes must be a string Tensor"):
            tf.estimator.export.ClassificationOutput(classes=y)
        with pytest.raises(ValueError, match="must be a Tensor or SparseTensor"):
            tf.estimator.export.ServingInputReceiver({"x": 3.0}, y)
        with pytest.raises(ValueError, match="keys must be strings"):
            tf.estimator.export.ServingInputReceiver(y, {1: y})
        single = tf.estimator.export.TensorServingInputReceiver(y, y)
        assert single.features is y and single.receiver_tensors == {"input": y}
    est = tf.estimator.Estimator(_model_fn(lambda y: {"scores": tf.estimator.export.PredictOutput({"y2": y * 2.0})}),
                                 model_dir=str(tmp_path / "m"))
    fn = tf.estimator.export.build_raw_serving_input_receiver_fn({"x": tf.placeholder(tf.float32, [None, 4])})
    with pytest.raises(ValueError, match="Couldn't find trained model"):
        est.export_saved_model(str(tmp_path / "e"), fn)
    est.train(lambda: ({"x": tf.constant(X[:8])}, tf.constant(Y3[:8])), steps=1)
    extra = tmp_path / "notes.txt"
    extra.write_text("hello")
    path = est.export_savedmodel(str(tmp_path / "e"), fn, assets_extra={"docs/notes.txt": str(extra)})
    assert open(os.path.join(path.decode(), "assets.extra", "docs", "notes.txt")).read() == "hello"
    mg = _saved_meta_graph(path)
    assert sorted(mg.signature_def) == ["scores", "serving_default"] and not mg.meta_info_def.stripped_default_attrs
    with tf.Session(graph=tf.Graph()) as sess:
        tf.saved_model.loader.load(sess, ["serve"], path)
        sig = mg.signature_def["scores"]
        np.testing.assert_allclose(sess.run(sig.outputs["y2"].name, {sig.inputs["x"].name: X[:2]}),
                                   2.0 * X[:2].sum(1, keepdims=True).repeat(2, 1), rtol=1e-6)


class _RecordingEstimator:
    """What an exporter needs of an estimator: model_dir and export_saved_model (recorded, not run)."""

    def __init__(self, model_dir):
        self.model_dir, self.calls = model_dir, []

    def export_saved_model(self, export_path, fn, assets_extra=None, as_text=False, checkpoint_path=None):
        self.calls.append(checkpoint_path)
        path = os.path.join(export_path, str(1700000000 + len(self.calls)))
        os.makedirs(path)
        return path.encode()


def test_best_exporter_reads_past_evaluations_and_exports_on_improvement(tmp_path):
    writer = tf.summary.FileWriter(str(tmp_path / "eval"))
    for step, loss in ((1, 0.9), (2, 0.5)):
        writer.add_summary(tf.Summary(value=[tf.Summary.Value(tag="loss", simple_value=loss)]), step)
    writer.close()
    est = _RecordingEstimator(str(tmp_path))
    best = tf.estimator.BestExporter(serving_input_receiver_fn=lambda: None, exports_to_keep=2)
    base = str(tmp_path / "export" / "best_exporter")
    assert best.export(est, base, "ckpt-3", {"loss": 0.7}, False) is not None  # nothing exported yet: export
    assert best.export(est, base, "ckpt-4", {"loss": 0.8}, False) is None  # worse than 0.7
    assert best.export(est, base, "ckpt-5", {"loss": 0.6}, False) is not None
    assert best.export(est, base, "ckpt-6", {"loss": 0.1}, True) is not None
    assert est.calls == ["ckpt-3", "ckpt-5", "ckpt-6"]
    assert sorted(os.listdir(base)) == ["1700000002", "1700000003"]  # exports_to_keep=2
    with pytest.raises(ValueError, match="must include current_eval_result"):
        tf.estimator.BestExporter(compare_fn=lambda best_eval_result: True)
    fresh = tf.estimator.BestExporter(serving_input_receiver_fn=lambda: None)
    est2 = _RecordingEstimator(str(tmp_path))
    fresh.export(est2, str(tmp_path / "other"), "c1", {"loss": 0.7}, False)  # first export always happens
    assert fresh._best_eval_result == {"loss": 0.7}


def test_latest_and_final_exporters_in_train_and_evaluate(tmp_path):
    fn = tf.estimator.export.build_parsing_serving_input_receiver_fn(SPEC)
    config = tf.estimator.RunConfig(model_dir=str(tmp_path / "m"), save_checkpoints_steps=6)
    est = tf.estimator.DNNClassifier([4], COLUMNS, n_classes=3, config=config)
    latest = tf.estimator.LatestExporter("latest", fn, exports_to_keep=1)
    final = tf.estimator.FinalExporter("final", fn)
    train = tf.estimator.TrainSpec(tf.estimator.inputs.numpy_input_fn({"x": X}, Y3, batch_size=20, num_epochs=None,
                                                                      shuffle=True), max_steps=12)
    evals = tf.estimator.EvalSpec(tf.estimator.inputs.numpy_input_fn({"x": X}, Y3, shuffle=False), steps=2,
                                  exporters=[latest, final], throttle_secs=0)
    metrics, exports = tf.estimator.train_and_evaluate(est, train, evals)
    assert metrics["global_step"] == 12
    latest_dir, final_dir = tmp_path / "m" / "export" / "latest", tmp_path / "m" / "export" / "final"
    assert len(os.listdir(latest_dir)) == 1 and len(os.listdir(final_dir)) == 1
    assert [os.path.dirname(e.decode()) for e in exports] == [str(latest_dir), str(final_dir)]
    with pytest.raises(ValueError, match="must be positive number"):
        tf.estimator.LatestExporter("x", fn, exports_to_keep=0)
