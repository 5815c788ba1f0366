"""Checkpoints of tensorfleet's earlier v1 format (JSON index) keep restoring, and a save over one replaces it with
TF's format and removes its files.

Oracle: data/v1_checkpoint/, written by the Saver of main before the bundle format (its README says how), and
its expected.json; the written-over checkpoint is read back with the independent bundle reader.
"""
import os
import shutil

import numpy as np
import pytest
from test_tf_checkpoints import assert_same, expected_values
from tf_bundle_oracle import read_bundle

import tensorfleet as tf

V1_DIR = os.path.join(os.path.dirname(__file__), "data", "v1_checkpoint")


def _expected() -> dict:
    return expected_values(os.path.join(V1_DIR, "expected.json"))


@pytest.fixture
def v1_dir(tmp_path):
    target = tmp_path / "v1"
    shutil.copytree(V1_DIR, target)
    return str(target)


def _model():
    kernel = tf.Variable(np.zeros((2, 3), np.float32), name="dense/kernel")
    words = tf.Variable([b"", b"", b""], name="words")
    emb = tf.get_variable("emb", [5, 2], partitioner=tf.fixed_size_partitioner(2))
    step = tf.train.get_or_create_global_step()
    return {"dense/kernel": kernel, "words": words, "emb": emb, "global_step": step}


def test_saver_restores_v1_checkpoints_with_canonical_and_unique_data_names(v1_dir):
    want = _expected()
    variables = _model()
    saver = tf.train.Saver()
    latest = tf.train.latest_checkpoint(v1_dir)
    assert latest == os.path.join(v1_dir, "model.ckpt-2")  # its data file: model.ckpt-2.data-...-of-00001.<hex>
    with tf.Session() as sess:
        saver.restore(sess, latest)
        for key, v in variables.items():
            assert_same(sess.run(tf.convert_to_tensor(v)), want[key], key)
        saver.restore(sess, os.path.join(v1_dir, "model.ckpt-1"))
        assert_same(sess.run(variables["dense/kernel"]), want["dense/kernel"] / 2, "step 1")
        assert sess.run(variables["global_step"]) == 1


def test_reader_functions_read_v1_checkpoints(v1_dir):
    want = _expected()
    assert tf.train.list_variables(v1_dir) == sorted((k, list(v.shape)) for k, v in want.items())
    reader = tf.train.load_checkpoint(v1_dir)
    for key, value in want.items():
        assert_same(reader.get_tensor(key), value, key)
    assert reader.get_variable_to_dtype_map()["words"] == tf.string


@pytest.mark.parametrize("step,shards", [(1, 2), (2, 1)])
def test_saving_over_a_v1_checkpoint_writes_tf_format_and_removes_the_v1_files(v1_dir, step, shards):
    """model.ckpt-1's v1 index names TF's data file name: the new data goes to shard 0 of 2; model.ckpt-2's
    names a unique one, so TF's name is free."""
    variables = _model()
    saver = tf.train.Saver()
    prefix = os.path.join(v1_dir, f"model.ckpt-{step}")
    with tf.Session() as sess:
        saver.restore(sess, prefix)
        sess.run(tf.assign(variables["global_step"], 40 + step))
        saver.save(sess, os.path.join(v1_dir, "model.ckpt"), global_step=step, write_meta_graph=False)
    header, values = read_bundle(prefix)
    assert header["num_shards"] == shards and values["global_step"] == 40 + step
    data = sorted(f for f in os.listdir(v1_dir) if f.startswith(f"model.ckpt-{step}.data"))
    assert data == [f"model.ckpt-{step}.data-00000-of-{shards:05d}"]


def test_remove_checkpoint_deletes_a_v1_checkpoints_unique_data_file(v1_dir):
    tf.train.remove_checkpoint(os.path.join(v1_dir, "model.ckpt-2"))
    assert not [f for f in os.listdir(v1_dir) if f.startswith("model.ckpt-2")]
