"""tf.saved_model: SavedModels written by real TensorFlow load here; what is written here has TF's layout and forms.

Oracles: SavedModels real TF wrote with the outputs its session gave (tests/trainer/data/tf_saved_model/, by
scripts/make_tf_saved_model_fixtures.py); TF's op definitions (tf_op_def_oracle); the tensor-bundle format read by
an independent reader (tf_bundle_oracle); TF 1.15's documented builder/loader rules. scripts/check_with_real_tf.py
has real TF load what is written here.
"""
from __future__ import annotations

import json
import os

import numpy as np
import pytest

import tensorfleet as tf
from tensorfleet.protos.saved_model_pb2 import SavedModel

import tf_bundle_oracle
import tf_op_def_oracle

DATA = os.path.join(os.path.dirname(__file__), "data", "tf_saved_model")


@pytest.mark.parametrize("name", ["mlp_ref", "mlp_resource"])
def test_a_saved_model_written_by_tensorflow_loads_and_gives_tfs_outputs(name):
    expected = json.load(open(os.path.join(DATA, name + ".json")))
    with tf.Session(graph=tf.Graph()) as sess:
        mg = tf.saved_model.loader.load(sess, [tf.saved_model.tag_constants.SERVING], os.path.join(DATA, name))
        sig = mg.signature_def[tf.saved_model.signature_constants.DEFAULT_SERVING_SIGNATURE_DEF_KEY]
        assert sig.method_name == tf.saved_model.signature_constants.PREDICT_METHOD_NAME
        x = tf.saved_model.utils.get_tensor_from_tensor_info(sig.inputs["x"])
        probs, classes = sess.run([sig.outputs["probabilities"].name, sig.outputs["classes"].name],
                                  {x: np.asarray(expected["inputs"]["x"], np.float32)})
        names = sorted(v.op.name for v in tf.trainable_variables())
    np.testing.assert_allclose(probs, expected["outputs"]["probabilities"], rtol=1e-6, atol=1e-7)
    assert classes.tolist() == expected["outputs"]["classes"] and len(set(classes.tolist())) > 1
    assert names == ["hidden/bias", "hidden/kernel", "logits/bias", "logits/kernel"]


def test_a_tensorflow_asset_is_fed_its_path_under_assets():
    mg = tf.saved_model.loader.SavedModelLoader(os.path.join(DATA, "mlp_ref")).get_meta_graph_def_from_tags(["serve"])
    assets = tf.saved_model.loader.get_asset_tensors(os.path.join(DATA, "mlp_ref"), mg)
    assert list(assets) == ["vocab_path:0"]
    path = assets["vocab_path:0"].decode()
    assert path.endswith(os.path.join("mlp_ref", "assets", "vocab.txt")) and open(path).read() == "zero\none\ntwo\n"


def _mlp(seed=3):
    tf.set_random_seed(seed)
    x = tf.placeholder(tf.float32, [None, 4], name="x")
    h = tf.layers.dense(x, 5, activation=tf.nn.relu, name="hidden")
    logits = tf.layers.dense(h, 3, name="logits")
    return x, tf.nn.softmax(logits, name="probabilities"), tf.argmax(logits, 1, name="classes")


X = np.array([[1.0, -2.0, 0.5, 3.0], [0.0, 1.0, -1.0, 2.0]], np.float32)


def _simple_saved(tmp_path):
    export_dir = str(tmp_path / "model")
    with tf.Graph().as_default(), tf.Session() as sess:
        x, probs, classes = _mlp()
        loss = tf.reduce_sum(probs)
        train = tf.train.AdamOptimizer(0.1).minimize(loss)
        sess.run(tf.global_variables_initializer())
        sess.run(train, {x: X})
        values = {v.op.name: sess.run(v) for v in tf.global_variables()}
        want = sess.run([probs, classes], {x: X})
        tf.saved_model.simple_save(sess, export_dir, {"x": x}, {"probabilities": probs, "classes": classes})
    return export_dir, values, want


def test_simple_save_layout_proto_and_variables(tmp_path):
    export_dir, values, _ = _simple_saved(tmp_path)
    assert sorted(os.listdir(export_dir)) == ["saved_model.pb", "variables"]
    assert sorted(os.listdir(os.path.join(export_dir, "variables"))) == ["variables.data-00000-of-00001",
                                                                         "variables.index"]
    sm = SavedModel.FromString(open(os.path.join(export_dir, "saved_model.pb"), "rb").read())
    assert sm.saved_model_schema_version == 1 and len(sm.meta_graphs) == 1
    mg = sm.meta_graphs[0]
    assert list(mg.meta_info_def.tags) == ["serve"] and mg.meta_info_def.tensorflow_version == "1.15.0"
    sig = mg.signature_def["serving_default"]
    assert sig.method_name == "tensorflow/serving/predict"
    assert sig.inputs["x"].name == "x:0" and sig.inputs["x"].dtype == 1
    assert [d.size for d in sig.inputs["x"].tensor_shape.dim] == [-1, 4]
    assert sig.outputs["classes"].name == "classes:0" and sig.outputs["classes"].dtype == 9  # DT_INT64
    assert tf_op_def_oracle.problems(mg.graph_def) == []
    nodes = {nd.name: nd for nd in mg.graph_def.node}
    sd = mg.saver_def
    assert (sd.filename_tensor_name, sd.restore_op_name, sd.sharded, sd.version) == \
        ("save/Const:0", "save/restore_all", True, 2)
    assert sd.save_tensor_name.split(":")[0] in nodes
    assert all(nd.device == "" for nd in mg.graph_def.node)  # simple_save clears devices
    assert not any("gradients" in name or "Adam" == nd.op for name, nd in nodes.items())  # only what serving needs
    _, tensors = tf_bundle_oracle.read_bundle(os.path.join(export_dir, "variables", "variables"))
    assert sorted(tensors) == sorted(values)  # the optimizer's slots too, as TF's builder saves every variable
    for key, value in values.items():
        np.testing.assert_array_equal(tensors[key], value)


def test_simple_save_loads_back_here(tmp_path):
    export_dir, _, (probs, classes) = _simple_saved(tmp_path)
    with tf.Session(graph=tf.Graph()) as sess:
        mg = tf.saved_model.load(sess, ["serve"], export_dir)
        sig = mg.signature_def["serving_default"]
        got = sess.run({k: v.name for k, v in sig.outputs.items()}, {sig.inputs["x"].name: X})
    np.testing.assert_array_equal(got["probabilities"], probs)
    np.testing.assert_array_equal(got["classes"], classes)


def test_load_under_an_import_scope(tmp_path):
    export_dir, _, (probs, _) = _simple_saved(tmp_path)
    with tf.Session(graph=tf.Graph()) as sess:
        mg = tf.saved_model.loader.load(sess, ["serve"], export_dir, import_scope="imported")
        sig = mg.signature_def["serving_default"]
        assert sig.outputs["probabilities"].name == "probabilities:0"  # the proto as stored
        x = tf.saved_model.utils.get_tensor_from_tensor_info(sig.inputs["x"], import_scope="imported")
        assert x.name == "imported/x:0"
        np.testing.assert_array_equal(sess.run("imported/probabilities:0", {x: X}), probs)


def test_builder_several_meta_graphs_main_op_and_text(tmp_path):
    export_dir = str(tmp_path / "multi")
    builder = tf.saved_model.builder.SavedModelBuilder(export_dir)
    with tf.Graph().as_default(), tf.Session() as sess:
        x, probs, _ = _mlp()
        marker = tf.Variable(0, name="marker", collections=[tf.GraphKeys.LOCAL_VARIABLES])
        main = tf.group(tf.assign(marker, 42), name="main")
        sess.run(tf.global_variables_initializer())
        want = sess.run(probs, {x: X})
        builder.add_meta_graph_and_variables(
            sess, ["serve"], {"scores": tf.saved_model.predict_signature_def({"x": x}, {"p": probs})}, main_op=main)
        with pytest.raises(AssertionError, match="already been saved"):
            builder.add_meta_graph_and_variables(sess, ["other"])
    with tf.Graph().as_default():
        x, probs, _ = _mlp()
        builder.add_meta_graph(["eval", "gpu"], {"p": tf.saved_model.predict_signature_def({"x": x}, {"p": probs})})
    path = builder.save(as_text=True)
    assert path == os.path.join(export_dir, "saved_model.pbtxt").encode()
    assert not os.path.exists(os.path.join(export_dir, "saved_model.pb"))
    with tf.Session(graph=tf.Graph()) as sess:
        tf.saved_model.loader.load(sess, ["serve"], export_dir)
        assert sess.run("marker:0") == 42  # the main op ran after the restore
        np.testing.assert_array_equal(sess.run("probabilities:0", {"x:0": X}), want)
    with tf.Session(graph=tf.Graph()) as sess:
        mg = tf.saved_model.loader.load(sess, ["gpu", "eval"], export_dir)  # tags are a set
        assert "p" in mg.signature_def
        np.testing.assert_array_equal(sess.run("probabilities:0", {"x:0": X}), want)  # the same variables
    with tf.Session(graph=tf.Graph()) as sess, pytest.raises(RuntimeError, match="could not be found"):
        tf.saved_model.loader.load(sess, ["train"], export_dir)


def test_assets_are_copied_and_fed(tmp_path):
    src = tmp_path / "vocab.txt"
    src.write_bytes(b"alpha\nbeta\n")
    export_dir = str(tmp_path / "with_assets")
    with tf.Graph().as_default(), tf.Session() as sess:
        path = tf.constant(str(src), name="vocab_path")
        tf.add_to_collection(tf.GraphKeys.ASSET_FILEPATHS, path)
        contents = tf.read_file(path, name="contents")
        tf.saved_model.simple_save(sess, export_dir, {"path": path}, {"contents": contents})
    copied = os.path.join(export_dir, "assets", "vocab.txt")
    assert open(copied, "rb").read() == b"alpha\nbeta\n"
    src.write_bytes(b"changed after export\n")
    with tf.Session(graph=tf.Graph()) as sess:
        mg = tf.saved_model.loader.load(sess, ["serve"], export_dir)
        feeds = tf.saved_model.loader.get_asset_tensors(export_dir, mg)
        assert sess.run("contents:0", feeds) == b"alpha\nbeta\n"  # the copy under assets/ is what it reads


def test_builder_rules(tmp_path):
    (tmp_path / "busy").mkdir()
    (tmp_path / "busy" / "file").write_text("x")
    with pytest.raises(AssertionError, match="already exists, and isn't empty"):
        tf.saved_model.builder.SavedModelBuilder(str(tmp_path / "busy"))
    builder = tf.saved_model.Builder(str(tmp_path / "new"))
    with pytest.raises(AssertionError, match="has not been saved yet"):
        builder.add_meta_graph(["serve"])
    with tf.Graph().as_default(), tf.Session() as sess:
        x, probs, _ = _mlp()
        sess.run(tf.global_variables_initializer())
        sig = tf.saved_model.predict_signature_def({"x": x}, {"p": probs})
        with pytest.raises(KeyError, match="reserved for initialization"):
            builder.add_meta_graph_and_variables(sess, ["serve"], {"__saved_model_init_op": sig})
        bad = tf.saved_model.build_signature_def({"x": tf.saved_model.build_tensor_info(x)},
                                                 {"p": tf.saved_model.utils.build_tensor_info(probs)}, "m")
        bad.outputs["p"].dtype = 0
        with pytest.raises(AssertionError, match="name and dtype"):
            builder.add_meta_graph_and_variables(sess, ["serve"], {"s": bad})
        with pytest.raises(TypeError, match="main_op needs to be an Operation"):
            builder.add_meta_graph_and_variables(sess, ["serve"], {"s": sig}, main_op=probs)


def test_export_fails_naming_an_op_without_tf_form(tmp_path):
    with tf.Graph().as_default(), tf.Session() as sess:
        x = tf.placeholder(tf.float32, [None], name="x")
        y = tf.py_func(lambda a: a + 1, [x], tf.float32, name="plus_one")
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"Node 'plus_one' \(op PyFunc\)"):
            tf.saved_model.simple_save(sess, str(tmp_path / "m"), {"x": x}, {"y": y})


def test_missing_and_broken_saved_models(tmp_path):
    assert not tf.saved_model.maybe_saved_model_directory(str(tmp_path))
    assert not tf.saved_model.contains_saved_model(str(tmp_path))
    with tf.Session(graph=tf.Graph()) as sess, pytest.raises(OSError, match="SavedModel file does not exist"):
        tf.saved_model.loader.load(sess, ["serve"], str(tmp_path))
    (tmp_path / "saved_model.pb").write_bytes(b"\xff\xff not a proto")
    assert tf.saved_model.maybe_saved_model_directory(str(tmp_path))
    with tf.Session(graph=tf.Graph()) as sess, pytest.raises(OSError, match="Cannot parse file"):
        tf.saved_model.loader.load(sess, ["serve"], str(tmp_path))


def test_signature_builders_follow_tf_serving_rules():
    with tf.Graph().as_default():
        examples = tf.placeholder(tf.string, [None], name="examples")
        scores = tf.placeholder(tf.float32, [None, 3], name="scores")
        classes = tf.placeholder(tf.string, [None, 3], name="classes")
        ids = tf.placeholder(tf.int64, [None], name="ids")
        sc = tf.saved_model.signature_constants
        cls = tf.saved_model.classification_signature_def(examples, classes, scores)
        assert cls.method_name == sc.CLASSIFY_METHOD_NAME and set(cls.outputs) == {"classes", "scores"}
        assert tf.saved_model.is_valid_signature(cls)
        first = scores[:, 0]
        reg = tf.saved_model.regression_signature_def(examples, first)
        assert reg.outputs["outputs"].name == first.name and tf.saved_model.is_valid_signature(reg)
        with pytest.raises(ValueError, match="classes must be a string"):
            tf.saved_model.classification_signature_def(examples, ids, None)
        with pytest.raises(ValueError, match="examples must be a string"):
            tf.saved_model.regression_signature_def(scores, scores)
        with pytest.raises(ValueError, match="cannot both be None"):
            tf.saved_model.classification_signature_def(examples, None, None)
        with pytest.raises(ValueError, match="inputs cannot be None or empty"):
            tf.saved_model.predict_signature_def({}, {"s": scores})
        pred = tf.saved_model.predict_signature_def({"ids": ids}, {"s": scores})
        assert tf.saved_model.is_valid_signature(pred)
        pred.method_name = "nonsense"
        assert not tf.saved_model.is_valid_signature(pred) and not tf.saved_model.is_valid_signature(None)
        st = tf.SparseTensor(tf.placeholder(tf.int64, [None, 2]), tf.placeholder(tf.float32, [None]),
                             tf.constant([4, 5], tf.int64))
        info = tf.saved_model.build_tensor_info(st)
        assert info.WhichOneof("encoding") == "coo_sparse"
        back = tf.saved_model.get_tensor_from_tensor_info(info)
        assert (back.indices, back.values, back.dense_shape) == (st.indices, st.values, st.dense_shape)


def test_a_partitioned_variable_round_trips(tmp_path):
    export_dir = str(tmp_path / "parts")
    with tf.Graph().as_default(), tf.Session() as sess:
        w = tf.get_variable("w", [6, 2], partitioner=tf.fixed_size_partitioner(3),
                            initializer=tf.random_normal_initializer(seed=1))
        ids = tf.placeholder(tf.int32, [None], name="ids")
        rows = tf.nn.embedding_lookup(w, ids, name="rows")
        sess.run(tf.global_variables_initializer())
        whole = sess.run(tf.concat(w._get_variable_list(), 0))
        tf.saved_model.simple_save(sess, export_dir, {"ids": ids}, {"rows": rows})
    mg = tf.saved_model.loader.SavedModelLoader(export_dir).get_meta_graph_def_from_tags(["serve"])
    const = {nd.name: nd for nd in mg.graph_def.node}["save/RestoreV2/shape_and_slices"].attr["value"].tensor
    assert sorted(const.string_val) == [b"6 2 0,2:0,2", b"6 2 2,2:0,2", b"6 2 4,2:0,2"]  # TF's slice specs
    _, tensors = tf_bundle_oracle.read_bundle(os.path.join(export_dir, "variables", "variables"))
    np.testing.assert_array_equal(tensors["w"], whole)
    with tf.Session(graph=tf.Graph()) as sess:
        tf.saved_model.loader.load(sess, ["serve"], export_dir)
        np.testing.assert_array_equal(sess.run("rows:0", {"ids:0": [5, 0, 3]}), whole[[5, 0, 3]])
