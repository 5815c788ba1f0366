"""Checkpoints written by real TensorFlow restore here exactly, and what the Saver writes is what TF writes.

Oracle: the files in data/tf_checkpoints/, written once by TensorFlow 2.15.1's `tf.compat.v1.train.Saver`
(scripts/make_tf_fixtures.py), and their expected.json (the values TF's session held when it saved). Every
restore path is covered: Saver.restore (dense, partitioned into the same and into other partitionings,
strings, Adam with its slots, a sharded save), NewCheckpointReader / load_checkpoint / load_variable /
list_variables, init_from_checkpoint and the Estimator's warm start. Writing the same variables with
tensorfleet's Saver gives byte-identical `.index` and `.data` files.
"""
import json
import os
import shutil

import numpy as np
import pytest

import tensorfleet as tf

DATA = os.path.join(os.path.dirname(__file__), "data", "tf_checkpoints")
FIXTURES = ["dense", "partitioned", "strings", "adam", "sharded"]


def expected(name: str) -> dict:
    return expected_values(os.path.join(DATA, name, "expected.json"))


def expected_values(path: str) -> dict:
    """An expected.json's tensors as numpy arrays (strings as object arrays of bytes)."""
    with open(path) as f:
        doc = json.load(f)
    out = {}
    for key, e in doc.items():
        if e["dtype"] == "string":
            arr = np.empty(len(e["hex"]), dtype=object)
            arr[:] = [bytes.fromhex(h) for h in e["hex"]]
        else:
            arr = np.array(e["values"], dtype=e["dtype"])
        out[key] = arr.reshape(e["shape"])
    return out


def fixture_copy(name: str, tmp_path) -> str:
    """The fixture's files copied to a fresh directory (tests never write into the repository)."""
    target = tmp_path / name
    shutil.copytree(os.path.join(DATA, name), target)
    return str(target / "model.ckpt")


def assert_same(got, want, key=""):
    got = np.asarray(got)
    assert got.shape == want.shape, key
    if want.dtype == object:
        assert got.tolist() == want.tolist(), key
    else:
        assert got.dtype == want.dtype, key
        np.testing.assert_array_equal(got, want, err_msg=key)


@pytest.mark.parametrize("name", FIXTURES)
def test_reader_lists_and_loads_every_tensor_tf_wrote(name, tmp_path):
    prefix = fixture_copy(name, tmp_path)
    want = expected(name)
    reader = tf.train.NewCheckpointReader(prefix)
    assert reader.get_variable_to_shape_map() == {k: list(v.shape) for k, v in want.items()}
    for key, value in want.items():
        assert_same(reader.get_tensor(key), value, key)
        assert reader.get_variable_to_dtype_map()[key] == (tf.string if value.dtype == object else value.dtype)
    directory = os.path.dirname(prefix)  # TF's own `checkpoint` state file leads to it
    assert tf.train.latest_checkpoint(directory) == prefix
    assert tf.train.list_variables(directory) == sorted((k, list(v.shape)) for k, v in want.items())
    key = sorted(want)[0]
    assert_same(tf.train.load_variable(directory, key + ":0"), want[key], key)


def _restore(variables: dict, prefix: str) -> dict:
    saver = tf.train.Saver(variables)
    with tf.Session() as sess:
        saver.restore(sess, prefix)
        return sess.run({k: tf.convert_to_tensor(v) for k, v in variables.items()})


def _zeros_like(value):
    return np.zeros(value.shape, value.dtype) if value.dtype != object else np.full(value.shape, b"", dtype=object)


@pytest.mark.parametrize("name", ["dense", "strings", "sharded"])
def test_saver_restores_tf_checkpoints_of_plain_variables(name, tmp_path):
    want = expected(name)
    variables = {k: tf.Variable(_zeros_like(v), name=k) for k, v in want.items()}
    for key, value in _restore(variables, fixture_copy(name, tmp_path)).items():
        assert_same(value, want[key], key)


@pytest.mark.parametrize("parts", [{"emb": 3, "wide": 2}, {"emb": 2, "wide": 3}, {"emb": 1, "wide": 1}])
def test_saver_restores_tf_partitioned_variables_into_any_partitioning(parts, tmp_path):
    """TF saved emb [10,4] as 3 slices on axis 0 and wide [3,5] as 2 on axis 1: restoring reads each part's
    slice of the full tensor, however the graph here partitions it."""
    want = expected("partitioned")
    axes = {"emb": 0, "wide": 1}
    found = {}
    for name in ("emb", "wide"):
        v = tf.get_variable(name, want[name].shape, partitioner=tf.fixed_size_partitioner(parts[name], axes[name]))
        found[name] = v
    found["single"] = tf.get_variable("single", [4], partitioner=tf.fixed_size_partitioner(2))
    found["plain"] = tf.get_variable("plain", [2])
    saver = tf.train.Saver()
    with tf.Session() as sess:
        saver.restore(sess, fixture_copy("partitioned", tmp_path))
        for key, v in found.items():
            assert_same(sess.run(tf.convert_to_tensor(v)), want[key], key)


def _tf_adam_model():
    """The model of make_tf_fixtures.adam, built here with the same names."""
    step = tf.train.get_or_create_global_step()
    pred = tf.layers.dense(tf.zeros([8, 3]), 2, name="dense")
    loss = tf.reduce_mean(tf.square(pred))
    return tf.train.AdamOptimizer(0.1).minimize(loss, global_step=step)


def test_saver_restores_tf_adam_training_state_with_its_slots(tmp_path):
    want = expected("adam")
    _tf_adam_model()
    saver = tf.train.Saver()
    assert set(saver._vars) == set(want)  # dense/kernel/Adam, .../Adam_1, beta1_power, ...: TF's names
    with tf.Session() as sess:
        saver.restore(sess, fixture_copy("adam", tmp_path))
        for v in tf.global_variables():
            assert_same(sess.run(v), want[v.op.name], v.op.name)


def _bytes(prefix: str, suffix: str) -> bytes:
    with open(prefix + suffix, "rb") as f:
        return f.read()


@pytest.mark.parametrize("name", ["dense", "strings", "adam", "partitioned"])
def test_saver_writes_the_bytes_tensorflow_wrote(name, tmp_path):
    want = expected(name)
    if name == "partitioned":  # the same partitioning as TF's graph
        specs = {"emb": (3, 0), "wide": (2, 1), "single": (1, 0)}
        for key, (n, axis) in specs.items():
            tf.get_variable(key, initializer=want[key], partitioner=tf.fixed_size_partitioner(n, axis))
        tf.get_variable("plain", initializer=want["plain"])
        saver = tf.train.Saver()
    else:
        saver = tf.train.Saver({k: tf.Variable(v, name=k) for k, v in want.items()})
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        prefix = saver.save(sess, str(tmp_path / "model.ckpt"), write_meta_graph=False)
    tf_prefix = os.path.join(DATA, name, "model.ckpt")
    assert _bytes(prefix, ".index") == _bytes(tf_prefix, ".index")
    assert _bytes(prefix, ".data-00000-of-00001") == _bytes(tf_prefix, ".data-00000-of-00001")


def test_init_from_checkpoint_loads_tf_partitioned_and_dense_tensors(tmp_path):
    want = expected("partitioned")
    prefix = fixture_copy("partitioned", tmp_path)
    with tf.variable_scope("new"):
        emb = tf.get_variable("emb", [10, 4], partitioner=tf.fixed_size_partitioner(2))
        wide = tf.get_variable("wide", [3, 5])
    plain = tf.get_variable("plain", [2])
    tf.train.init_from_checkpoint(os.path.dirname(prefix), {"emb": "new/emb", "wide": "new/wide", "plain": plain})
    single = tf.get_variable("single", [4], partitioner=tf.fixed_size_partitioner(4))
    tf.train.init_from_checkpoint(prefix, {"single": list(single)})
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for key, v in {"emb": emb, "wide": wide, "plain": plain, "single": single}.items():
            assert_same(sess.run(tf.convert_to_tensor(v)), want[key], key)
    other = tf.get_variable("other", [5, 4], partitioner=tf.fixed_size_partitioner(2))
    with pytest.raises(ValueError, match=r"partitioned variable other \(\[5, 4\]\) doesn't match .*emb \(\[10, 4\]\)"):
        tf.train.init_from_checkpoint(prefix, {"emb": other})


def test_scope_mapping_groups_the_parts_of_partitioned_variables(tmp_path):
    want = expected("partitioned")
    with tf.variable_scope("model"):
        emb = tf.get_variable("emb", [10, 4], partitioner=tf.fixed_size_partitioner(5))
        plain = tf.get_variable("plain", [2])
    tf.train.init_from_checkpoint(fixture_copy("partitioned", tmp_path), {"/": "model/"})
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        assert_same(sess.run(tf.convert_to_tensor(emb)), want["emb"], "emb")
        assert_same(sess.run(plain), want["plain"], "plain")


def test_estimator_warm_starts_from_a_tf_checkpoint_with_partitioned_variables(tmp_path):
    want = expected("partitioned")
    source = os.path.dirname(fixture_copy("partitioned", tmp_path))

    def model_fn(features, labels, mode):
        emb = tf.get_variable("emb", [10, 4], partitioner=tf.fixed_size_partitioner(2))
        plain = tf.get_variable("plain", [2])
        loss = tf.reduce_sum(tf.convert_to_tensor(emb)) + tf.reduce_sum(plain) + tf.reduce_sum(features["x"])
        train = tf.train.GradientDescentOptimizer(0.0).minimize(loss, tf.train.get_or_create_global_step())
        return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train)

    est = tf.estimator.Estimator(model_fn, model_dir=str(tmp_path / "warm"),
                                 warm_start_from=tf.estimator.WarmStartSettings(source, vars_to_warm_start=["emb",
                                                                                                          "plain"]))
    est.train(lambda: ({"x": tf.constant([1.0])}, tf.constant([0.0])), steps=1)
    assert "emb" in est.get_variable_names()  # the checkpoint holds it whole, as TF's (its parts as slices)
    assert_same(est.get_variable_value("emb"), want["emb"], "emb")
    assert_same(est.get_variable_value("plain"), want["plain"], "plain")
