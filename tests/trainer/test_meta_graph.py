"""tf.train.export_meta_graph / import_meta_graph and the `.meta` file Saver.save writes (train/meta_graph.py),
against TF 1.15's documented reload idiom: `saver = tf.train.import_meta_graph(prefix + ".meta");
saver.restore(sess, prefix)` in a fresh graph gives the saved values (numpy oracle) and the collections back
(train_op runs and advances the global step). TensorBoard's own MetaGraphDef/VariableDef protos (TF's
field numbers) parse the file."""
import logging
import os

import numpy as np
import pytest

import tensorfleet as tf

tb_meta = pytest.importorskip("tensorboard.compat.proto.meta_graph_pb2")
tb_variable = pytest.importorskip("tensorboard.compat.proto.variable_pb2")

X = np.array([[1.0, 2.0], [3.0, -1.0]], np.float32)


def _train_and_save(directory, steps=3):
    x = tf.placeholder(tf.float32, [None, 2], name="x")
    w = tf.Variable([[0.5], [-0.5]], name="w")
    frozen = tf.Variable(7.0, trainable=False, name="frozen")
    loss = tf.reduce_mean(tf.square(tf.matmul(x, w) - frozen), name="loss")
    step = tf.train.get_or_create_global_step()
    train = tf.train.GradientDescentOptimizer(0.01).minimize(loss, global_step=step)
    tf.add_to_collection("my_ints", 3)
    tf.add_to_collection("my_names", "mlp")
    saver = tf.train.Saver(max_to_keep=2)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(steps):
            sess.run(train, {x: X})
        prefix = saver.save(sess, os.path.join(directory, "model.ckpt"), global_step=step)
        values = sess.run({"w": w, "frozen": frozen, "loss": loss}, {x: X})
    return prefix, values, train


def test_import_meta_graph_and_restore_give_back_values_and_collections(tmp_path):
    prefix, values, train = _train_and_save(str(tmp_path))
    assert os.path.exists(prefix + ".meta")
    with tf.Graph().as_default() as g:
        saver = tf.train.import_meta_graph(prefix + ".meta")
        assert [v.op.name for v in tf.global_variables()] == ["w", "frozen", "global_step"]
        assert [v.op.name for v in tf.trainable_variables()] == ["w"]
        assert tf.trainable_variables()[0] is tf.global_variables()[0]  # one Variable shared by both collections
        assert tf.get_collection("my_ints") == [3] and tf.get_collection("my_names") == [b"mlp"]
        (train_op,) = tf.get_collection(tf.GraphKeys.TRAIN_OP)
        assert train_op.name == train.name and train_op.graph is g
        with tf.Session() as sess:
            saver.restore(sess, prefix)
            np.testing.assert_array_equal(sess.run("w:0"), values["w"])
            assert sess.run("loss:0", {"x:0": X}) == pytest.approx(values["loss"])
            sess.run(train_op, {"x:0": X})  # training goes on from the restored step
            assert sess.run(tf.train.get_global_step()) == 4
            w = values["w"]
            grad = 2 * X.T @ (X @ w - 7.0) / len(X)
            np.testing.assert_allclose(sess.run("w:0"), w - 0.01 * grad, rtol=1e-5)


def test_import_scope_prefixes_names_and_restores_the_unscoped_checkpoint(tmp_path):
    prefix, values, _ = _train_and_save(str(tmp_path))
    with tf.Graph().as_default():
        saver = tf.train.import_meta_graph(prefix + ".meta", import_scope="restored")
        assert {v.op.name for v in tf.global_variables()} == {"restored/w", "restored/frozen", "restored/global_step"}
        with tf.Session() as sess:
            saver.restore(sess, prefix)
            np.testing.assert_array_equal(sess.run("restored/w:0"), values["w"])
        with pytest.raises(ValueError, match="restored/"):
            tf.train.import_meta_graph(prefix + ".meta", import_scope="restored")  # the scope is taken


def test_importing_over_existing_names_is_refused_naming_the_op(tmp_path):
    prefix, _, _ = _train_and_save(str(tmp_path))
    with pytest.raises(ValueError, match="an op named 'x' is already in the default graph"):
        tf.train.import_meta_graph(prefix + ".meta")


def test_text_meta_graph_round_trips_and_tensorboard_parses_the_binary_one(tmp_path):
    prefix, _, _ = _train_and_save(str(tmp_path))
    text_path = str(tmp_path / "graph.meta.txt")
    mg = tf.train.export_meta_graph(text_path, as_text=True)
    assert isinstance(mg, tf.MetaGraphDef) and open(text_path).read().startswith("meta_info_def")
    with tf.Graph().as_default():
        tf.train.import_meta_graph(text_path)
        assert [v.op.name for v in tf.trainable_variables()] == ["w"]
    tb = tb_meta.MetaGraphDef.FromString(open(prefix + ".meta", "rb").read())
    assert tb.saver_def.max_to_keep == 2 and tb.saver_def.version == tb.saver_def.V2
    trainable = tb.collection_def["trainable_variables"].bytes_list.value
    (w_def,) = [tb_variable.VariableDef.FromString(b) for b in trainable]
    assert (w_def.variable_name, w_def.initializer_name, w_def.trainable) == ("w:0", "w/Assign", True)
    assert list(tb.collection_def["my_ints"].int64_list.value) == [3]
    assert "x" in {n.name for n in tb.graph_def.node}


def test_collections_without_a_proto_form_are_left_out_with_a_warning(caplog):
    tf.Variable(1.0, name="v")
    tf.add_to_collection("python_objects", object())
    caplog.set_level(logging.WARNING, logger="tensorfleet")
    mg = tf.train.export_meta_graph()
    assert "python_objects" not in mg.collection_def and "variables" in mg.collection_def
    assert any("python_objects" in r.getMessage() for r in caplog.records)


def test_write_meta_graph_false_writes_none_and_a_missing_file_is_an_error(tmp_path):
    w = tf.Variable(1.0, name="w")
    with tf.Session() as sess:
        sess.run(w.initializer)
        prefix = tf.train.Saver().save(sess, str(tmp_path / "m"), write_meta_graph=False)
    assert not os.path.exists(prefix + ".meta")
    with pytest.raises(OSError, match="does not exist"):
        tf.train.import_meta_graph(prefix + ".meta")


def test_monitored_training_session_writes_graph_pbtxt_and_meta_files(tmp_path):
    w = tf.Variable(2.0, name="w")
    train = tf.assign_add(tf.train.get_or_create_global_step(), 1)
    with tf.train.MonitoredTrainingSession(checkpoint_dir=str(tmp_path), save_summaries_steps=None,
                                           hooks=[tf.train.StopAtStepHook(last_step=2)]) as sess:
        while not sess.should_stop():
            sess.run([train, w])
    names = set(os.listdir(tmp_path))
    assert {"graph.pbtxt", "model.ckpt-0.meta", "model.ckpt-2.meta"} <= names
    latest = tf.train.latest_checkpoint(str(tmp_path))
    with tf.Graph().as_default():
        saver = tf.train.import_meta_graph(latest + ".meta")
        with tf.Session() as sess:
            saver.restore(sess, latest)
            assert sess.run("w:0") == 2.0 and sess.run(tf.train.get_global_step()) == 2
