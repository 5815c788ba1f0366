"""The tensorfleet side of `scripts/check_with_real_tf.py savedmodel`: trains and exports SavedModels, records
the inputs and what tensorfleet's own loader computes from each export. Runs in tensorfleet's interpreter:
    python scripts/real_tf_savedmodel_cases.py OUT_DIR [CASE ...]

Cases (each `OUT_DIR/<case>/` holds the SavedModel (or an export base directory) and `io.json`):
- `softmax`: the TF1 tutorial's softmax regression (Variables, matmul, softmax, argmax) trained with gradient
  descent, `simple_save` from the training graph;
- `mlp`: `tf.layers.dense` with dropout behind a keep_prob placeholder (default 1), Adam, `simple_save`;
- `cnn`: `tf.layers.conv2d`/`max_pooling2d`/`flatten`/`dense`, SavedModelBuilder with a Predict signature;
- `launcher_cnn`: `tensorfleet-train --model mnist-cnn --export-dir` (the built-in CNN, digits data);
- `dnn_classifier`: a canned `DNNClassifier` exported by `export_saved_model` with a parsing receiver (its
  classify, predict and default signatures, fed serialized tf.Examples);
- `wide_deep`: a canned `DNNLinearCombinedClassifier` (binary) over numeric, bucketized, identity,
  vocabulary-list, embedding and indicator columns (its classify, regress and predict signatures);
- `zoo`: tests/trainer/tf_forms_zoo.py, one or more ops of every type with a TF form.
`io.json`: {"export_dir", "signatures": {key: {"inputs": {name: value}, "outputs": {name: value}}}, "random":
[output keys to compare by shape only]}; values as {"dtype", "shape", "values"} (strings as hex).
"""
from __future__ import annotations

import glob
import json
import os
import shutil
import subprocess
import sys

import numpy as np

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "tests", "trainer"))

import tensorfleet as tf  # noqa: E402

RNG = np.random.RandomState(0)


def encode(value) -> dict:
    a = np.asarray(value)
    if a.dtype.kind in "OSU":
        flat = [(v.encode() if isinstance(v, str) else bytes(v)).hex() for v in a.reshape(-1)]
        return {"dtype": "string", "shape": list(a.shape), "hex": flat}
    return {"dtype": "bool" if a.dtype == np.bool_ else a.dtype.name, "shape": list(a.shape),
            "values": a.reshape(-1).tolist()}


def _record(out_dir: str, export_dir: str, feeds_by_signature: dict, random=()) -> None:
    """Loads `export_dir` with tensorfleet's loader, runs each signature on its feeds, writes io.json."""
    doc: dict = {"export_dir": export_dir, "signatures": {}, "random": sorted(random)}
    with tf.Session(graph=tf.Graph()) as sess:
        mg = tf.saved_model.loader.load(sess, [tf.saved_model.tag_constants.SERVING], export_dir)
        for key, feeds in feeds_by_signature.items():
            sig = mg.signature_def[key]
            got = sess.run({k: v.name for k, v in sig.outputs.items()},
                           {sig.inputs[k].name: v for k, v in feeds.items()})
            doc["signatures"][key] = {"inputs": {k: encode(v) for k, v in feeds.items()},
                                      "outputs": {k: encode(v) for k, v in got.items()}}
    with open(os.path.join(out_dir, "io.json"), "w") as f:
        json.dump(doc, f)


def _fit(sess, train_op, feeds, steps=20):
    for _ in range(steps):
        sess.run(train_op, feeds)


def case_softmax(out_dir: str) -> None:
    x_data = RNG.rand(64, 784).astype(np.float32)
    y_data = np.eye(10, dtype=np.float32)[RNG.randint(0, 10, 64)]
    with tf.Graph().as_default(), tf.Session() as sess:
        x = tf.placeholder(tf.float32, [None, 784], name="x")
        y_ = tf.placeholder(tf.float32, [None, 10])
        W, b = tf.Variable(tf.zeros([784, 10])), tf.Variable(tf.zeros([10]))
        y = tf.matmul(x, W) + b
        loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits_v2(labels=y_, logits=y))
        train = tf.train.GradientDescentOptimizer(0.5).minimize(loss)
        sess.run(tf.global_variables_initializer())
        _fit(sess, train, {x: x_data, y_: y_data})
        export_dir = os.path.join(out_dir, "model")
        tf.saved_model.simple_save(sess, export_dir, {"x": x}, {"probabilities": tf.nn.softmax(y),
                                                                "classes": tf.argmax(y, 1)})
    _record(out_dir, export_dir, {"serving_default": {"x": x_data[:8]}})


def case_mlp(out_dir: str) -> None:
    x_data = RNG.randn(64, 20).astype(np.float32)
    labels = RNG.randint(0, 4, 64)
    with tf.Graph().as_default(), tf.Session() as sess:
        tf.set_random_seed(1)
        x = tf.placeholder(tf.float32, [None, 20], name="x")
        keep_prob = tf.placeholder_with_default(1.0, [], name="keep_prob")
        h = tf.layers.dense(x, 32, activation=tf.nn.relu)
        h = tf.layers.dense(tf.nn.dropout(h, keep_prob=keep_prob), 16, activation=tf.nn.tanh)
        logits = tf.layers.dense(h, 4)
        loss = tf.losses.sparse_softmax_cross_entropy(tf.constant(labels), logits)
        train = tf.train.AdamOptimizer(0.01).minimize(loss)
        sess.run(tf.global_variables_initializer())
        _fit(sess, train, {x: x_data, keep_prob: 0.8})
        export_dir = os.path.join(out_dir, "model")
        tf.saved_model.simple_save(sess, export_dir, {"x": x}, {"logits": logits,
                                                                "probabilities": tf.nn.softmax(logits)})
    _record(out_dir, export_dir, {"serving_default": {"x": x_data[:8]}})


def case_cnn(out_dir: str) -> None:
    images = RNG.rand(16, 28, 28, 1).astype(np.float32)
    labels = RNG.randint(0, 10, 16)
    with tf.Graph().as_default(), tf.Session() as sess:
        tf.set_random_seed(2)
        x = tf.placeholder(tf.float32, [None, 28, 28, 1], name="images")
        h = tf.layers.conv2d(x, 8, 5, padding="same", activation=tf.nn.relu)
        h = tf.layers.max_pooling2d(h, 2, 2)
        h = tf.layers.conv2d(h, 16, 3, padding="valid", activation=tf.nn.relu)
        h = tf.layers.max_pooling2d(h, 2, 2)
        h = tf.layers.dense(tf.layers.flatten(h), 32, activation=tf.nn.relu)
        logits = tf.layers.dense(tf.layers.dropout(h, 0.5, training=False), 10)
        loss = tf.losses.sparse_softmax_cross_entropy(tf.constant(labels), logits)
        train = tf.train.MomentumOptimizer(0.05, 0.9).minimize(loss, tf.train.get_or_create_global_step())
        sess.run(tf.global_variables_initializer())
        _fit(sess, train, {x: images}, steps=5)
        export_dir = os.path.join(out_dir, "model")
        builder = tf.saved_model.builder.SavedModelBuilder(export_dir)
        sig = tf.saved_model.signature_def_utils.predict_signature_def(
            {"images": x}, {"probabilities": tf.nn.softmax(logits), "classes": tf.argmax(logits, 1)})
        builder.add_meta_graph_and_variables(sess, [tf.saved_model.tag_constants.SERVING], {"predict_images": sig},
                                             main_op=tf.group(tf.local_variables_initializer()),
                                             strip_default_attrs=True)
        builder.save()
    _record(out_dir, export_dir, {"predict_images": {"images": images[:6]}})


def case_launcher_cnn(out_dir: str) -> None:
    base = os.path.join(out_dir, "export")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([os.path.join(REPO, "trainer"), os.environ.get("PYTHONPATH",
                                                                                                      "")]))
    env.pop("TF_CONFIG", None)
    cmd = [sys.executable, "-m", "tensorfleet_train", "--model", "mnist-cnn", "--steps", "20", "--data", "digits",
           "--export-dir", base, "--metrics-port", "-1", "--log-format", "json"]
    subprocess.run(cmd, check=True, env=env, timeout=600, stdout=subprocess.DEVNULL)
    (export_dir,) = glob.glob(os.path.join(base, "[0-9]" * 10))
    _record(out_dir, export_dir, {"serving_default": {"images": RNG.rand(5, 64).astype(np.float32) * 16}})


def _examples(rows) -> np.ndarray:
    out = np.empty(len(rows), dtype=object)
    for i, row in enumerate(rows):
        e = tf.train.Example()
        e.features.feature["x"].float_list.value.extend(row.tolist())
        out[i] = e.SerializeToString()
    return out


def case_dnn_classifier(out_dir: str) -> None:
    x = RNG.randn(200, 4).astype(np.float32)
    y = (x[:, 0] > 0).astype(np.int64) + (x[:, 1] > 0.5).astype(np.int64)
    est = tf.estimator.DNNClassifier([16, 8], [tf.feature_column.numeric_column("x", shape=[4])], n_classes=3,
                                     model_dir=os.path.join(out_dir, "model_dir"))
    est.train(tf.estimator.inputs.numpy_input_fn({"x": x}, y, batch_size=20, num_epochs=None, shuffle=True),
              steps=50)
    receiver = tf.estimator.export.build_parsing_serving_input_receiver_fn({"x": tf.FixedLenFeature([4], tf.float32)})
    export_dir = est.export_saved_model(os.path.join(out_dir, "export"), receiver).decode()
    ex = _examples(x[:7])
    _record(out_dir, export_dir, {"serving_default": {"inputs": ex}, "classification": {"inputs": ex},
                                  "predict": {"examples": ex}})


def case_wide_deep(out_dir: str) -> None:
    """A canned DNNLinearCombinedClassifier over numeric, bucketized, identity, vocabulary-list, embedding and
    indicator columns (their Assert, Select, OneHot, Gather ops), fed serialized tf.Examples."""
    n = 200
    x = RNG.randn(n, 2).astype(np.float32)
    cat = RNG.randint(0, 5, (n, 1)).astype(np.int64)
    word = np.array([[[b"a", b"b", b"c"][i % 3]] for i in range(n)], dtype=object)
    y = ((x[:, 0] > 0) ^ (cat[:, 0] > 2)).astype(np.int64)
    fc = tf.feature_column
    num, ident = fc.numeric_column("x", shape=[2]), fc.categorical_column_with_identity("cat", 5)
    voc = fc.categorical_column_with_vocabulary_list("word", ["a", "b", "c"])
    est = tf.estimator.DNNLinearCombinedClassifier(
        linear_feature_columns=[ident, fc.bucketized_column(num, [-1.0, 0.0, 1.0]), voc],
        dnn_feature_columns=[num, fc.embedding_column(ident, 3), fc.indicator_column(voc)], dnn_hidden_units=[8],
        model_dir=os.path.join(out_dir, "model_dir"))
    est.train(tf.estimator.inputs.numpy_input_fn({"x": x, "cat": cat, "word": word}, y, batch_size=20,
                                                 num_epochs=None, shuffle=True), steps=30)
    spec = {"x": tf.FixedLenFeature([2], tf.float32), "cat": tf.FixedLenFeature([1], tf.int64),
            "word": tf.FixedLenFeature([1], tf.string)}
    export_dir = est.export_saved_model(os.path.join(out_dir, "export"),
                                        tf.estimator.export.build_parsing_serving_input_receiver_fn(spec)).decode()
    ex = np.empty(6, dtype=object)
    for i in range(6):
        e = tf.train.Example()
        e.features.feature["x"].float_list.value.extend(x[i].tolist())
        e.features.feature["cat"].int64_list.value.append(int(cat[i, 0]))
        e.features.feature["word"].bytes_list.value.append(word[i, 0])
        ex[i] = e.SerializeToString()
    _record(out_dir, export_dir, {"serving_default": {"inputs": ex}, "regression": {"inputs": ex},
                                  "predict": {"examples": ex}})


def case_zoo(out_dir: str) -> None:
    import tf_forms_zoo
    g, feeds, out = tf_forms_zoo.build()
    export_dir = os.path.join(out_dir, "model")
    with tf.Session(graph=g) as sess:
        sess.run(tf.variables_initializer(g.get_collection(tf.GraphKeys.GLOBAL_VARIABLES)))
        with g.as_default():
            tf.saved_model.simple_save(sess, export_dir, {p.op.name: p for p in feeds}, out)
    _record(out_dir, export_dir, {"serving_default": {p.op.name: v for p, v in feeds.items()}},
            random=[k for k in out if k.startswith("random/")])


CASES = {"softmax": case_softmax, "mlp": case_mlp, "cnn": case_cnn, "launcher_cnn": case_launcher_cnn,
         "dnn_classifier": case_dnn_classifier, "wide_deep": case_wide_deep, "zoo": case_zoo}


def main(argv) -> int:
    out_dir, names = argv[0], argv[1:] or list(CASES)
    for name in names:
        case_dir = os.path.join(out_dir, name)
        shutil.rmtree(case_dir, ignore_errors=True)
        os.makedirs(case_dir)
        CASES[name](case_dir)
        print(f"exported {name}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
