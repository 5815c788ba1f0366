"""Checkpoint reading outside a Saver (train/checkpoint_utils.py) against TF 1.15's documented semantics:
NewCheckpointReader / load_checkpoint / load_variable / list_variables give exactly what was saved (numpy
oracle), checkpoints_iterator yields each new checkpoint of a directory once and stops at its timeout, and
init_from_checkpoint's assignment_map rules (whole checkpoint, scope to scope, single names, Variable
objects) initialize a new model's variables from the checkpoint's values, with ValueErrors naming what is
missing or mismatched."""
import os
import threading

import numpy as np
import pytest

import tensorfleet as tf

W = np.arange(6, dtype=np.float32).reshape(2, 3)
B = np.array([0.5, -1.5, 2.0], np.float32)


def _save(directory, step=None):
    with tf.Graph().as_default():
        with tf.variable_scope("old"):
            tf.get_variable("w", initializer=W)
            tf.get_variable("b", initializer=B)
        count = tf.Variable(7, name="count")
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            del count
            return tf.train.Saver().save(sess, os.path.join(str(directory), "model.ckpt"), global_step=step)


def test_reader_lists_and_loads_exactly_what_was_saved(tmp_path):
    prefix = _save(tmp_path)
    reader = tf.train.NewCheckpointReader(prefix)
    assert reader.get_variable_to_shape_map() == {"old/w": [2, 3], "old/b": [3], "count": []}
    assert reader.get_variable_to_dtype_map()["count"] == tf.int32
    np.testing.assert_array_equal(reader.get_tensor("old/w"), W)
    assert reader.has_tensor("old/b") and not reader.has_tensor("nope")
    with pytest.raises(tf.errors.NotFoundError, match="nope"):
        reader.get_tensor("nope")
    assert tf.train.list_variables(str(tmp_path)) == [("count", []), ("old/b", [3]), ("old/w", [2, 3])]
    np.testing.assert_array_equal(tf.train.load_variable(str(tmp_path), "old/b:0"), B)  # a directory: its latest
    assert tf.train.load_checkpoint(prefix).get_tensor("count") == 7
    with pytest.raises(tf.errors.NotFoundError, match="Failed to find any matching files for .*missing"):
        tf.train.NewCheckpointReader(str(tmp_path / "missing"))
    (tmp_path / "empty_dir").mkdir()
    with pytest.raises(ValueError, match="Couldn't find 'checkpoint' file"):
        tf.train.list_variables(str(tmp_path / "empty_dir"))


def test_checkpoints_iterator_yields_each_new_checkpoint_once_then_times_out(tmp_path):
    first = _save(tmp_path, step=1)
    seen = []
    written = threading.Event()

    def save_another():
        _save(tmp_path, step=2)
        written.set()

    it = tf.train.checkpoints_iterator(str(tmp_path), timeout=30)
    seen.append(next(it))
    t = threading.Thread(target=save_another)
    t.start()
    seen.append(next(it))  # waits (polling) for the new one
    t.join(30)
    assert written.is_set() and seen == [first, first[:-1] + "2"]
    quick = tf.train.checkpoints_iterator(str(tmp_path), timeout=0.5)
    assert list(quick) == [first[:-1] + "2"]  # nothing newer: stops after the timeout


def _new_model():
    with tf.variable_scope("new"):
        w = tf.get_variable("w", [2, 3], initializer=tf.zeros_initializer())
        b = tf.get_variable("b", [3], initializer=tf.zeros_initializer())
    extra = tf.get_variable("extra", [1], initializer=tf.ones_initializer())
    return w, b, extra


def _initialized(*variables):
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        return sess.run(list(variables))


def test_scope_to_scope_and_single_names_and_variables(tmp_path):
    prefix = _save(tmp_path)
    w, b, extra = _new_model()
    tf.train.init_from_checkpoint(prefix, {"old/": "new/"})
    got_w, got_b, got_extra = _initialized(w, b, extra)
    np.testing.assert_array_equal(got_w, W)
    np.testing.assert_array_equal(got_b, B)
    np.testing.assert_array_equal(got_extra, [1.0])  # not mapped: its own initializer
    tf.reset_default_graph()
    w, b, _ = _new_model()
    tf.train.init_from_checkpoint(str(tmp_path), {"old/w": "new/w", "old/b": b})
    np.testing.assert_array_equal(_initialized(w)[0], W)
    np.testing.assert_array_equal(_initialized(b)[0], B)


def test_root_mapping_loads_same_names(tmp_path):
    prefix = _save(tmp_path)
    with tf.variable_scope("old"):
        w = tf.get_variable("w", [2, 3])
    tf.train.init_from_checkpoint(prefix, {"/": "/"})
    np.testing.assert_array_equal(_initialized(w)[0], W)


def test_bad_assignment_maps_name_what_is_wrong(tmp_path):
    prefix = _save(tmp_path)
    w, _, _ = _new_model()
    with pytest.raises(ValueError, match=r"Tensor old/extra .* is not found"):
        tf.train.init_from_checkpoint(prefix, {"old/": "/"})  # 'extra' has no old/extra
    with pytest.raises(ValueError, match=r"Shape of variable new/w \(\(2, 3\)\) doesn't match .*old/b"):
        tf.train.init_from_checkpoint(prefix, {"old/b": w})
    with pytest.raises(ValueError, match="Tensor old/nothing is not found"):
        tf.train.init_from_checkpoint(prefix, {"old/nothing": w})
    with pytest.raises(ValueError, match="not a variable of the default graph"):
        tf.train.init_from_checkpoint(prefix, {"old/w": "new/missing"})
