"""tf.feature_column (dense inputs) and tf.metrics against numpy: each column's dense tensor, input_layer's
name-ordered concatenation and TF's variable names, linear_model's weighted sums; the streaming metrics'
values after several update batches (AUC against the exact trapezoidal ROC/PR areas at TF's thresholds)."""
import numpy as np
import pytest

import tensorfleet as tf

fc = tf.feature_column


def run(fetches, init=True):
    with tf.Session() as sess:
        if init:
            sess.run([tf.global_variables_initializer(), tf.local_variables_initializer()])
        return sess.run(fetches)


def test_input_layer_numeric_indicator_embedding():
    features = {"price": np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], np.float32),
                "day": np.array([0, 2, 1], np.int64),
                "color": np.array([[b"red", b""], [b"blue", b"red"], [b"pink", b"blue"]], dtype=object),
                "age": np.array([30, 40, 50], np.int32)}
    day = fc.categorical_column_with_identity("day", num_buckets=3)
    color = fc.categorical_column_with_vocabulary_list("color", ["red", "blue"])
    emb = fc.embedding_column(color, dimension=2, combiner="mean")
    cols = [fc.numeric_column("price", shape=(2,)), fc.indicator_column(day), emb,
            fc.numeric_column("age", normalizer_fn=lambda x: x / 10.0)]
    cols_to_vars = {}
    out = fc.input_layer(features, cols, cols_to_vars=cols_to_vars)
    names = sorted(v.op.name for v in tf.global_variables())
    assert names == ["input_layer/color_embedding/embedding_weights"]
    value, table = run([out, cols_to_vars[emb][0]])
    # name order: age, color_embedding, day_indicator, price
    vocab_ids = [[0], [1, 0], [1]]               # '' dropped, 'pink' out of vocabulary (default -1: dropped)
    expected_emb = np.stack([table[ids].mean(0) for ids in vocab_ids])
    expected = np.concatenate([np.array([[3.0], [4.0], [5.0]]), expected_emb, np.eye(3)[[0, 2, 1]],
                               features["price"]], 1)
    assert out.shape.as_list()[1] == 1 + 2 + 3 + 2
    np.testing.assert_allclose(value, expected, rtol=1e-6)
    # TF's initializer: a truncated normal with stddev 1/sqrt(dimension), cut at two stddevs (4 values: no
    # statistics on their spread, only the bound that always holds)
    assert table.shape == (2, 2) and np.all(np.abs(table) <= 2 / np.sqrt(2)) and np.any(table != 0)


def test_identity_default_value_and_multi_hot_indicator():
    ids = np.array([[0, 5], [1, 1], [-1, 2]], np.int64)
    col = fc.indicator_column(fc.categorical_column_with_identity("i", num_buckets=3, default_value=0))
    value = run(fc.input_layer({"i": ids}, [col]))
    np.testing.assert_array_equal(value, [[2, 0, 0], [0, 2, 0], [0, 0, 1]])   # 5 -> default 0; -1 dropped


def test_identity_out_of_range_is_an_error():
    col = fc.indicator_column(fc.categorical_column_with_identity("i", num_buckets=3))
    out = fc.input_layer({"i": np.array([0, 3], np.int64)}, [col])
    with pytest.raises(tf.errors.InvalidArgumentError):
        run(out)


def test_linear_model_matches_numpy():
    features = {"x": np.array([[1.0], [2.0]], np.float32), "c": np.array([1, 2], np.int64)}
    cols = [fc.numeric_column("x"), fc.categorical_column_with_identity("c", 4)]
    with tf.variable_scope("linear"):
        logits = fc.linear_model(features, cols, units=2)
    names = sorted(v.op.name for v in tf.global_variables())
    assert names == ["linear/linear_model/bias_weights", "linear/linear_model/c/weights",
                     "linear/linear_model/x/weights"]
    vs = {v.op.name: v for v in tf.global_variables()}
    w_x, w_c = np.array([[0.5, -1.0]], np.float32), np.arange(8, dtype=np.float32).reshape(4, 2)
    b = np.array([1, 2], np.float32)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        assert not sess.run(logits).any()        # zeros-initialised, as TF
        vs["linear/linear_model/x/weights"].load(w_x, sess)
        vs["linear/linear_model/c/weights"].load(w_c, sess)
        vs["linear/linear_model/bias_weights"].load(b, sess)
        np.testing.assert_allclose(sess.run(logits), features["x"] @ w_x + w_c[features["c"]] + b)


def test_column_errors():
    with pytest.raises(ValueError, match="must be a _DenseColumn"):
        fc.input_layer({"c": np.array([1])}, [fc.categorical_column_with_identity("c", 2)])
    with pytest.raises(ValueError, match="Duplicate feature column name"):
        fc.input_layer({"a": np.ones(2)}, [fc.numeric_column("a"), fc.numeric_column("a")])
    with pytest.raises(ValueError, match="is not in the features dict"):
        fc.input_layer({"a": np.ones(2)}, [fc.numeric_column("b")])
    with pytest.raises(ValueError, match="Duplicate keys in vocabulary_list"):
        fc.categorical_column_with_vocabulary_list("v", ["a", "a"])


def stream(metric_fn, batches, **kwargs):
    ph = [tf.placeholder(tf.float32, [None]) for _ in batches[0]]
    value, update = metric_fn(*ph, **kwargs)
    with tf.Session() as sess:
        sess.run(tf.local_variables_initializer())
        for batch in batches:
            sess.run(update, dict(zip(ph, batch)))
        return sess.run(value), [v.op.name for v in tf.local_variables()]


def test_mean_accuracy_precision_recall_mse():
    rng = np.random.RandomState(0)
    labels = [rng.randint(0, 2, 7).astype(np.float32) for _ in range(3)]
    preds = [rng.randint(0, 2, 7).astype(np.float32) for _ in range(3)]
    weights = [rng.rand(7).astype(np.float32) for _ in range(3)]
    L, P, W = np.concatenate(labels), np.concatenate(preds), np.concatenate(weights)
    acc, names = stream(tf.metrics.accuracy, list(zip(labels, preds, weights)))
    assert names == ["accuracy/total", "accuracy/count"]
    np.testing.assert_allclose(acc, np.sum((L == P) * W) / W.sum(), rtol=1e-6)
    mean, _ = stream(lambda v: tf.metrics.mean(v), [(p,) for p in preds])
    np.testing.assert_allclose(mean, P.mean(), rtol=1e-6)
    prec, _ = stream(tf.metrics.precision, list(zip(labels, preds)))
    np.testing.assert_allclose(prec, np.sum(L * P) / P.sum(), rtol=1e-6)
    rec, _ = stream(tf.metrics.recall, list(zip(labels, preds)))
    np.testing.assert_allclose(rec, np.sum(L * P) / L.sum(), rtol=1e-6)
    mse, _ = stream(tf.metrics.mean_squared_error, list(zip(labels, [p * 0.3 for p in preds])))
    np.testing.assert_allclose(mse, np.mean((L - 0.3 * P) ** 2), rtol=1e-6)


@pytest.mark.parametrize("curve", ["ROC", "PR"])
def test_auc_matches_trapezoidal_area_at_tfs_thresholds(curve):
    rng = np.random.RandomState(1)
    labels = [rng.randint(0, 2, 50).astype(np.float32) for _ in range(2)]
    scores = [np.clip(lab * 0.3 + rng.rand(50) * 0.7, 0, 1).astype(np.float32) for lab in labels]
    value, _ = stream(tf.metrics.auc, list(zip(labels, scores)), curve=curve, num_thresholds=50)
    L, S = np.concatenate(labels), np.concatenate(scores)
    n, eps = 50, 1e-7
    thr = np.array([-eps] + [(i + 1) / (n - 1) for i in range(n - 2)] + [1 + eps])
    above = S[None, :] > thr[:, None]
    tp = (above * L).sum(1)
    fp = (above * (1 - L)).sum(1)
    fn = ((~above) * L).sum(1)
    tn = ((~above) * (1 - L)).sum(1)
    rec = (tp + 1e-6) / (tp + fn + 1e-6)
    x, y = (fp / (fp + tn + 1e-6), rec) if curve == "ROC" else (rec, (tp + 1e-6) / (tp + fp + 1e-6))
    expected = np.sum((x[:-1] - x[1:]) * (y[:-1] + y[1:]) / 2)
    np.testing.assert_allclose(value, expected, rtol=1e-5)
    if curve == "ROC":
        pos, neg = S[L == 1], S[L == 0]
        exact = np.mean(pos[:, None] > neg[None, :]) + 0.5 * np.mean(pos[:, None] == neg[None, :])
        assert abs(value - exact) < 0.03         # the thresholded area approaches the exact AUC


def test_bucketized_column_dense_and_in_linear_model():
    x = np.array([[-1.0, 0.0], [0.5, 2.0], [3.0, 1.0]], np.float32)
    col = fc.bucketized_column(fc.numeric_column("x", shape=(2,)), boundaries=[0.0, 1.0, 2.5])
    dense = fc.input_layer({"x": x}, [col])
    buckets = (x[..., None] >= np.array([0.0, 1.0, 2.5])).sum(-1)        # [[0, 1], [1, 2], [3, 2]]
    expected = np.concatenate([np.eye(4)[buckets[:, 0]], np.eye(4)[buckets[:, 1]]], 1)
    with tf.variable_scope("linear"):
        logits = fc.linear_model({"x": x}, [col])
    weights = [v for v in tf.global_variables() if v.op.name == "linear/linear_model/x_bucketized/weights"][0]
    assert weights.shape.as_list() == [8, 1]
    w = np.arange(8, dtype=np.float32).reshape(8, 1)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        weights.load(w, sess)
        np.testing.assert_array_equal(sess.run(dense), expected)
        np.testing.assert_allclose(sess.run(logits), expected @ w)
    with pytest.raises(ValueError, match="boundaries must be a sorted list."):
        fc.bucketized_column(fc.numeric_column("x"), [1.0, 0.0])
