"""tf.estimator.Estimator and the canned estimators against numpy: a linear model_fn trained by full-batch
gradient descent reproduces numpy's iterates; evaluate's metrics and predict's outputs match numpy on the
checkpoint's own variable values; eval summaries are read back by TensorBoard's loader; canned estimators
have TF 1.15's variable names and their predictions equal a numpy forward pass; FTRL's step is TF's formula."""
import os

import numpy as np
import pytest

import tensorfleet as tf

RNG = np.random.RandomState(0)
X = RNG.randn(64, 3).astype(np.float32)
Y = (X @ np.array([1.5, -2.0, 0.5], np.float32) + 0.3).astype(np.float32)
LR = 0.1


def linear_model_fn(features, labels, mode, params):
    w = tf.get_variable("w", [3, 1], initializer=tf.zeros_initializer())
    b = tf.get_variable("b", [1], initializer=tf.zeros_initializer())
    pred = tf.matmul(features["x"], w) + b
    if mode == tf.estimator.ModeKeys.PREDICT:
        return tf.estimator.EstimatorSpec(mode, predictions={"y": pred})
    labels = tf.reshape(labels, [-1, 1])
    loss = tf.losses.mean_squared_error(labels, pred)
    if mode == tf.estimator.ModeKeys.EVAL:
        return tf.estimator.EstimatorSpec(mode, loss=loss,
                                          eval_metric_ops={"mae": tf.metrics.mean_absolute_error(labels, pred)})
    train_op = tf.train.GradientDescentOptimizer(params["lr"]).minimize(loss, tf.train.get_global_step())
    return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


def numpy_gd(steps, lr=LR):
    w, b = np.zeros((3, 1)), np.zeros(1)
    for _ in range(steps):
        err = X @ w + b - Y[:, None]
        w, b = w - lr * 2 * X.T @ err / len(X), b - lr * 2 * err.mean(0)
    return w, b


def full_batch(num_epochs=None):
    return tf.estimator.inputs.numpy_input_fn({"x": X}, Y, batch_size=len(X), num_epochs=num_epochs, shuffle=False)


def scalars(logdir):
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    acc = EventAccumulator(logdir)
    acc.Reload()
    return {tag: [(e.step, e.value) for e in acc.Scalars(tag)] for tag in acc.Tags()["scalars"]}


def test_train_evaluate_predict_match_numpy(tmp_path):
    est = tf.estimator.Estimator(linear_model_fn, model_dir=str(tmp_path), params={"lr": LR},
                                 config=tf.estimator.RunConfig(save_checkpoints_steps=5))
    est.train(full_batch(), max_steps=12)
    w, b = numpy_gd(12)
    assert est.latest_checkpoint().endswith("model.ckpt-12")
    assert est.get_variable_names() == ["b", "global_step", "w"]
    np.testing.assert_allclose(est.get_variable_value("w"), w, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(est.get_variable_value("b"), b, rtol=1e-4, atol=1e-6)
    est.train(full_batch(), steps=3)                       # resumes from the checkpoint
    w, b = numpy_gd(15)
    np.testing.assert_allclose(est.get_variable_value("w"), w, rtol=1e-4, atol=1e-6)
    est.train(full_batch(), max_steps=10)                  # already past: skipped
    assert est.get_variable_value("global_step") == 15

    results = est.evaluate(tf.estimator.inputs.numpy_input_fn({"x": X}, Y, batch_size=16, shuffle=False), name="v")
    pred = X @ w + b
    assert results["global_step"] == 15
    np.testing.assert_allclose(results["mae"], np.abs(pred[:, 0] - Y).mean(), rtol=1e-5)
    batch_losses = [np.mean((pred[i:i + 16, 0] - Y[i:i + 16]) ** 2) for i in range(0, 64, 16)]
    np.testing.assert_allclose(results["loss"], np.mean(batch_losses), rtol=1e-5)
    logged = scalars(os.path.join(str(tmp_path), "eval_v"))
    assert logged["mae"] == [(15, pytest.approx(float(results["mae"]), rel=1e-6))]
    assert logged["loss"][0][0] == 15
    assert "loss" in scalars(str(tmp_path))                # the training loss summary

    two = est.evaluate(tf.estimator.inputs.numpy_input_fn({"x": X}, Y, batch_size=16, shuffle=False), steps=2)
    np.testing.assert_allclose(two["mae"], np.abs(pred[:32, 0] - Y[:32]).mean(), rtol=1e-5)
    assert os.path.isdir(os.path.join(str(tmp_path), "eval"))

    out = list(est.predict(tf.estimator.inputs.numpy_input_fn({"x": X[:5]}, batch_size=2, shuffle=False)))
    assert len(out) == 5 and set(out[0]) == {"y"}
    np.testing.assert_allclose(np.stack([o["y"] for o in out]), pred[:5], rtol=1e-5)


def test_dataset_and_tensor_input_fns_and_warm_start(tmp_path):
    def ds_input_fn():
        return tf.data.Dataset.from_tensor_slices(({"x": X}, Y)).batch(64).repeat()

    src = tf.estimator.Estimator(linear_model_fn, model_dir=str(tmp_path / "a"), params={"lr": LR})
    src.train(ds_input_fn, steps=4)
    np.testing.assert_allclose(src.get_variable_value("w"), numpy_gd(4)[0], rtol=1e-4, atol=1e-6)

    def tensor_input_fn():
        return {"x": tf.constant(X)}, tf.constant(Y)

    warm = tf.estimator.Estimator(linear_model_fn, model_dir=str(tmp_path / "b"), params={"lr": 0.0},
                                  warm_start_from=str(tmp_path / "a"))
    warm.train(tensor_input_fn, steps=1)
    np.testing.assert_array_equal(warm.get_variable_value("w"), src.get_variable_value("w"))
    assert warm.get_variable_value("global_step") == 1   # only the trainable variables were warm-started


def test_errors(tmp_path):
    est = tf.estimator.Estimator(linear_model_fn, model_dir=str(tmp_path), params={"lr": LR})
    with pytest.raises(ValueError, match="Can not provide both steps and max_steps."):
        est.train(full_batch(), steps=1, max_steps=2)
    with pytest.raises(ValueError, match="Must specify steps > 0"):
        est.evaluate(full_batch(), steps=0)
    with pytest.raises(ValueError, match="input_fn should return \\(features, labels\\) as a len 2 tuple."):
        est.train(lambda: ({"x": tf.constant(X)}, tf.constant(Y), 1), steps=1)
    with pytest.raises(ValueError, match="must include features argument"):
        tf.estimator.Estimator(lambda inputs, mode: None, model_dir=str(tmp_path))
    with pytest.raises(ValueError, match="model_fn should return an EstimatorSpec."):
        tf.estimator.Estimator(lambda features, labels: 1.0, model_dir=str(tmp_path)).train(full_batch(), steps=1)
    with pytest.raises(ValueError, match="Missing train_op."):
        tf.estimator.EstimatorSpec(tf.estimator.ModeKeys.TRAIN, loss=tf.constant(1.0))
    with pytest.raises(ValueError, match="An input_receiver_fn must be defined."):
        est.export_saved_model(str(tmp_path / "export"), None)


def relu(x):
    return np.maximum(x, 0)


def test_dnn_classifier_names_and_forward_pass(tmp_path):
    labels = (X[:, 0] > 0).astype(np.int64) + (X[:, 1] > 0.5).astype(np.int64)
    cols = [tf.feature_column.numeric_column("x", shape=(3,))]
    est = tf.estimator.DNNClassifier([8, 4], cols, n_classes=3, model_dir=str(tmp_path))
    est.train(tf.estimator.inputs.numpy_input_fn({"x": X}, labels, batch_size=16, num_epochs=None, shuffle=True),
              max_steps=30)
    names = [n for n in est.get_variable_names() if not n.endswith("/Adagrad")]
    assert names == ["dnn/hiddenlayer_0/bias", "dnn/hiddenlayer_0/kernel", "dnn/hiddenlayer_1/bias",
                     "dnn/hiddenlayer_1/kernel", "dnn/logits/bias", "dnn/logits/kernel", "global_step"]
    v = est.get_variable_value
    assert v("dnn/hiddenlayer_0/kernel").shape == (3, 8) and v("dnn/logits/kernel").shape == (4, 3)
    h = relu(X @ v("dnn/hiddenlayer_0/kernel") + v("dnn/hiddenlayer_0/bias"))
    h = relu(h @ v("dnn/hiddenlayer_1/kernel") + v("dnn/hiddenlayer_1/bias"))
    logits = h @ v("dnn/logits/kernel") + v("dnn/logits/bias")
    preds = list(est.predict(tf.estimator.inputs.numpy_input_fn({"x": X}, batch_size=64, shuffle=False)))
    np.testing.assert_allclose(np.stack([p["logits"] for p in preds]), logits, rtol=1e-4, atol=1e-5)
    probs = np.exp(logits - logits.max(1, keepdims=True))
    probs /= probs.sum(1, keepdims=True)
    np.testing.assert_allclose(np.stack([p["probabilities"] for p in preds]), probs, rtol=1e-4, atol=1e-6)
    assert [int(p["class_ids"][0]) for p in preds] == list(logits.argmax(1))
    assert preds[0]["classes"][0] == str(logits[0].argmax()).encode()
    results = est.evaluate(tf.estimator.inputs.numpy_input_fn({"x": X}, labels, batch_size=64, shuffle=False))
    assert set(results) == {"accuracy", "average_loss", "loss", "global_step"}
    np.testing.assert_allclose(results["accuracy"], np.mean(logits.argmax(1) == labels), rtol=1e-6)
    per_example = -np.log(probs[np.arange(64), labels])
    np.testing.assert_allclose(results["average_loss"], per_example.mean(), rtol=1e-4)
    np.testing.assert_allclose(results["loss"], per_example.sum(), rtol=1e-4)     # v1's SUM reduction


def test_linear_and_wide_deep_binary_classifiers(tmp_path):
    labels = (X[:, 0] + X[:, 1] > 0).astype(np.int64)
    feats = {"x": X, "c": (X[:, 2] > 0).astype(np.int64)}
    x_col = tf.feature_column.numeric_column("x", shape=(3,))
    c_col = tf.feature_column.categorical_column_with_identity("c", 2)
    train = tf.estimator.inputs.numpy_input_fn(feats, labels, batch_size=16, num_epochs=None, shuffle=True)
    evaluate = tf.estimator.inputs.numpy_input_fn(feats, labels, batch_size=64, shuffle=False)
    lin = tf.estimator.LinearClassifier([x_col, c_col], model_dir=str(tmp_path / "lin"))
    lin.train(train, max_steps=40)
    assert [n for n in lin.get_variable_names() if "Ftrl" not in n] == [
        "global_step", "linear/linear_model/bias_weights", "linear/linear_model/c/weights",
        "linear/linear_model/x/weights"]
    r = lin.evaluate(evaluate)
    assert set(r) == {"accuracy", "accuracy_baseline", "auc", "auc_precision_recall", "average_loss",
                      "label/mean", "loss", "precision", "prediction/mean", "recall", "global_step"}
    v = lin.get_variable_value
    logit = X @ v("linear/linear_model/x/weights") + v("linear/linear_model/c/weights")[feats["c"]] + \
        v("linear/linear_model/bias_weights")
    np.testing.assert_allclose(r["accuracy"], np.mean((logit[:, 0] > 0) == labels), rtol=1e-6)
    np.testing.assert_allclose(r["label/mean"], labels.mean(), rtol=1e-6)
    np.testing.assert_allclose(r["accuracy_baseline"], max(labels.mean(), 1 - labels.mean()), rtol=1e-6)
    assert r["accuracy"] > 0.8 and r["auc"] > 0.85

    wd = tf.estimator.DNNLinearCombinedClassifier(
        model_dir=str(tmp_path / "wd"), linear_feature_columns=[c_col], dnn_feature_columns=[x_col],
        dnn_hidden_units=[4])
    wd.train(train, max_steps=25)
    names = wd.get_variable_names()
    assert wd.get_variable_value("global_step") == 25          # one increment per step for both optimizers
    assert {"dnn/hiddenlayer_0/kernel", "dnn/logits/kernel", "linear/linear_model/c/weights",
            "linear/linear_model/bias_weights", "dnn/hiddenlayer_0/kernel/Adagrad"} <= set(names)


def test_ftrl_step_is_tfs_formula():
    g0, v0, lr = np.array([0.5, -1.0], np.float32), np.array([0.2, 0.3], np.float32), 0.1
    var = tf.Variable(v0)
    grad = tf.constant(g0)
    opt = tf.train.FtrlOptimizer(lr, l1_regularization_strength=0.01, l2_regularization_strength=0.02)
    step = opt.apply_gradients([(grad, var)])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(step)
        sess.run(step)
        got = sess.run(var)
    v, accum, linear = v0.astype(np.float64), np.full(2, 0.1), np.zeros(2)
    for _ in range(2):
        new_accum = accum + g0 ** 2
        linear = linear + g0 - (np.sqrt(new_accum) - np.sqrt(accum)) / lr * v
        quadratic = np.sqrt(new_accum) / lr + 2 * 0.02
        v = np.where(np.abs(linear) > 0.01, (np.clip(linear, -0.01, 0.01) - linear) / quadratic, 0.0)
        accum = new_accum
    np.testing.assert_allclose(got, v, rtol=1e-5)


def test_iterator_get_next_input_fn_the_tf1_idiom(tmp_path):
    """An input_fn returning `make_one_shot_iterator(ds).get_next()` tensors (TF1's idiom) runs in its own input
    graph; the end of the data ends training (2 epochs of 4 batches: 8 steps)."""
    def input_fn():
        ds = tf.data.Dataset.from_tensor_slices(({"x": X}, Y)).batch(16).repeat(2)
        return tf.compat.v1.data.make_one_shot_iterator(ds).get_next()

    est = tf.estimator.Estimator(linear_model_fn, model_dir=str(tmp_path), params={"lr": LR})
    est.train(input_fn)
    assert est.get_variable_value("global_step") == 8
    results = est.evaluate(input_fn)
    assert results["global_step"] == 8
    w, b = est.get_variable_value("w"), est.get_variable_value("b")
    np.testing.assert_allclose(results["mae"], np.abs(X @ w + b - Y[:, None]).mean(), rtol=1e-5)


def test_label_vocabulary(tmp_path):
    vocab = ["cat", "dog", "fox"]
    ids = (X[:, 0] > 0).astype(np.int64) + (X[:, 1] > 0.5).astype(np.int64)
    names = np.array([vocab[i].encode() for i in ids], dtype=object)
    cols = [tf.feature_column.numeric_column("x", shape=(3,))]
    est = tf.estimator.DNNClassifier([8], cols, n_classes=3, label_vocabulary=vocab, model_dir=str(tmp_path))
    est.train(tf.estimator.inputs.numpy_input_fn({"x": X}, names, batch_size=16, num_epochs=None, shuffle=True),
              max_steps=40)
    preds = list(est.predict(tf.estimator.inputs.numpy_input_fn({"x": X}, batch_size=64, shuffle=False)))
    class_ids = np.array([int(p["class_ids"][0]) for p in preds])
    assert [p["classes"][0] for p in preds] == [vocab[i].encode() for i in class_ids]
    assert list(preds[0]["all_classes"]) == [b"cat", b"dog", b"fox"]
    results = est.evaluate(tf.estimator.inputs.numpy_input_fn({"x": X}, names, batch_size=64, shuffle=False))
    np.testing.assert_allclose(results["accuracy"], np.mean(class_ids == ids), rtol=1e-6)
    bad = np.array([b"cow"] * 64, dtype=object)
    with pytest.raises(tf.errors.InvalidArgumentError, match="Labels must be in label_vocabulary"):
        est.evaluate(tf.estimator.inputs.numpy_input_fn({"x": X}, bad, batch_size=64, shuffle=False))
    with pytest.raises(ValueError, match="is not equal to n_classes"):
        tf.estimator.DNNClassifier([8], cols, n_classes=2, label_vocabulary=vocab)
