"""tf.contrib.framework: arg_scope/add_arg_scope with TF 1.15's semantics, (model) variables and their lookups,
the global step, and assigning variables from checkpoints and values."""
import numpy as np
import pytest

import tensorfleet as tf
from helpers import init_and_run

arg_scope = tf.contrib.framework.arg_scope
add_arg_scope = tf.contrib.framework.add_arg_scope


@add_arg_scope
def _record(a, b=1, c=2, d=3):
    return {"a": a, "b": b, "c": c, "d": d}


@add_arg_scope
def _other(x, b=10):
    return {"x": x, "b": b}


def _plain(a, b=1):
    return a, b


# -- arg_scope ------------------------------------------------------------------
def test_arg_scope_sets_defaults_that_explicit_keywords_override():
    assert _record(0) == {"a": 0, "b": 1, "c": 2, "d": 3}
    with arg_scope([_record], b=5, c=6):
        assert _record(0) == {"a": 0, "b": 5, "c": 6, "d": 3}
        assert _record(0, c=7) == {"a": 0, "b": 5, "c": 7, "d": 3}  # the call's keyword wins
        assert _other("x") == {"x": "x", "b": 10}  # a function not listed keeps its defaults
    assert _record(0) == {"a": 0, "b": 1, "c": 2, "d": 3}  # leaving the scope restores the defaults


def test_arg_scope_nesting_updates_argument_by_argument_and_pops():
    with arg_scope((_record, _other), b=5):  # a tuple of functions
        with arg_scope([_record], c=6):
            assert _record(0) == {"a": 0, "b": 5, "c": 6, "d": 3}
            assert _other(1) == {"x": 1, "b": 5}
            with arg_scope([_record], b=8, d=9):
                assert _record(0) == {"a": 0, "b": 8, "c": 6, "d": 9}
            assert _record(0) == {"a": 0, "b": 5, "c": 6, "d": 3}
        assert _record(0) == {"a": 0, "b": 5, "c": 2, "d": 3}
    assert _other(1) == {"x": 1, "b": 10}


def test_arg_scope_reentered_from_its_dict():
    with arg_scope([_record], b=5) as sc:
        assert _record(0)["b"] == 5
    assert _record(0)["b"] == 1
    with arg_scope([_record], b=7):
        with arg_scope(sc):  # the saved scope replaces the current one
            assert _record(0)["b"] == 5
        assert _record(0)["b"] == 7
    with pytest.raises(ValueError, match="kwargs must be empty"):
        with arg_scope(sc, b=1):
            pass


def test_arg_scope_errors_and_introspection():
    with pytest.raises(ValueError, match="_plain is not decorated with @add_arg_scope"):
        with arg_scope([_plain], b=2):
            pass
    with pytest.raises(TypeError, match="list/tuple or reused scope"):
        with arg_scope(_record, b=2):
            pass
    # arguments are not checked when the scope opens; a call that gets one twice fails like TF's
    with arg_scope([_record], b=5):
        with pytest.raises(TypeError, match="multiple values for argument 'b'"):
            _record(0, 9)
    with arg_scope([_other], zzz=1):
        with pytest.raises(TypeError, match="zzz"):
            _other(1)
    assert tf.contrib.framework.has_arg_scope(_record) and not tf.contrib.framework.has_arg_scope(_plain)
    assert tf.contrib.framework.arg_scoped_arguments(_record) == ["b", "c", "d"]
    assert _record.__name__ == "_record"


def test_arg_scope_on_contrib_layers_and_aliases_share_a_key():
    layers = tf.contrib.layers
    assert layers.conv2d is layers.convolution2d
    x = tf.placeholder(tf.float32, [None, 6, 6, 2])
    with arg_scope([layers.conv2d, layers.fully_connected], activation_fn=None,
                   weights_initializer=tf.ones_initializer()):
        with arg_scope([layers.conv2d], padding="VALID", stride=2):
            c = layers.conv2d(x, 3, [2, 2])
            c2 = layers.convolution2d(x, 3, [2, 2], padding="SAME")  # explicit wins over the scope
        f = layers.fully_connected(layers.flatten(c), 4)
    assert c.shape.as_list() == [None, 3, 3, 3] and c2.shape.as_list() == [None, 3, 3, 3]
    assert c.op.type == "BiasAdd" and f.op.type == "BiasAdd"  # activation_fn=None from the scope
    xv = np.random.default_rng(0).standard_normal((1, 6, 6, 2)).astype(np.float32)
    cv, fv = init_and_run([c, f], {x: xv})
    want = xv.reshape(1, 3, 2, 3, 2, 2).sum(axis=(2, 4, 5))  # ones kernel, stride 2: each 2x2x2 block summed
    np.testing.assert_allclose(cv, np.repeat(want[..., None], 3, axis=3), rtol=1e-5)
    np.testing.assert_allclose(fv, np.full((1, 4), cv.sum()), rtol=1e-5)


# -- variables --------------------------------------------------------------------
def test_variable_and_model_variable_collections_device_and_reuse():
    fw = tf.contrib.framework
    v = fw.variable("v", shape=[2], initializer=tf.zeros_initializer())
    m = fw.model_variable("m", shape=[3], initializer=tf.ones_initializer(), device="/cpu:0")
    c = fw.variable("c", shape=[], collections=["mine"], trainable=False)
    assert v.dtype == tf.float32 and m.dtype == tf.float32
    assert m.device == "/device:CPU:0"
    assert tf.get_collection(tf.GraphKeys.MODEL_VARIABLES) == [m] == fw.get_model_variables()
    assert tf.global_variables() == [v, m] and tf.get_collection("mine") == [c]
    assert tf.trainable_variables() == [v, m]
    with tf.variable_scope("", reuse=True):
        assert fw.model_variable("m") is m
    with arg_scope([fw.model_variable], initializer=tf.constant_initializer(4.0)):
        with tf.variable_scope("s"):
            s = fw.model_variable("w", shape=[2])
    np.testing.assert_array_equal(init_and_run(s), [4.0, 4.0])
    loc = fw.local_variable([1.0, 2.0], name="loc")
    assert tf.local_variables() == [loc] and loc not in tf.global_variables()
    fw.add_model_variable(v)
    fw.add_model_variable(v)
    assert fw.get_model_variables() == [m, s, v]


def test_get_variables_by_scope_suffix_and_name_and_to_restore():
    fw = tf.contrib.framework
    with tf.variable_scope("net"):
        with tf.variable_scope("conv1") as conv1:
            w1, b1 = tf.get_variable("weights", [1]), tf.get_variable("biases", [1])
        with tf.variable_scope("logits"):
            w2 = tf.get_variable("weights", [1])
    top = tf.get_variable("weights", [1])
    step = tf.train.get_or_create_global_step()
    assert fw.get_variables("net") == [w1, b1, w2]
    assert fw.get_variables(conv1) == [w1, b1]  # a VariableScope works as a scope
    assert fw.get_variables(suffix="weights") == [w1, w2, top]
    assert fw.get_variables("net", suffix="biases") == [b1]
    assert fw.get_variables_by_name("weights") == [w1, w2, top]
    assert fw.get_variables_by_suffix("ases") == [b1]
    assert fw.get_unique_variable("net/logits/weights") is w2
    with pytest.raises(ValueError, match="Couldnt find variable nope"):
        fw.get_unique_variable("nope")
    assert fw.get_variables_to_restore() == [w1, b1, w2, top, step]
    assert fw.get_variables_to_restore(include=["net"], exclude=["net/logits"]) == [w1, b1]
    assert fw.get_variables_to_restore(exclude=["net/conv1", "global_step"]) == [w2, top]
    with pytest.raises(TypeError, match="include is provided but is not a list or a tuple"):
        fw.get_variables_to_restore(include="net")
    assert fw.filter_variables([w1, b1, w2], include_patterns=["weights"], exclude_patterns=["logits"]) == [w1]
    assert fw.get_trainable_variables("net/conv1") == [w1, b1]


def test_global_step_helpers_are_tf_trains():
    fw = tf.contrib.framework
    assert fw.get_global_step() is None
    step = fw.get_or_create_global_step()
    assert step is tf.train.get_global_step() and step.op.name == "global_step" and step.dtype == tf.int64
    assert fw.get_or_create_global_step() is step and fw.assert_or_get_global_step() is step
    with pytest.raises(ValueError, match='"global_step" already exists'):
        fw.create_global_step()
    with pytest.raises(TypeError, match="does not have integer type"):
        fw.assert_global_step(tf.constant(1.0))


def test_variable_device_chooser_round_robin():
    chooser = tf.contrib.framework.VariableDeviceChooser(num_tasks=2)
    assert [chooser(None) for _ in range(3)] == ["/job:ps/task:0/device:CPU:0", "/job:ps/task:1/device:CPU:0",
                                                 "/job:ps/task:0/device:CPU:0"]
    assert tf.contrib.framework.VariableDeviceChooser(device_type="GPU")(None) == "/device:GPU:0"


# -- assigning from checkpoints and values --------------------------------------------
def _saved_checkpoint(tmp_path):
    """A checkpoint with net/w [2, 3] = 0..5, net/b [3] = 7 and other [1] = -1; returns its prefix."""
    with tf.Graph().as_default():
        tf.get_variable("net/w", initializer=np.arange(6, dtype=np.float32).reshape(2, 3))
        tf.get_variable("net/b", initializer=np.full(3, 7.0, np.float32))
        tf.get_variable("other", initializer=np.array([-1.0], np.float32))
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            return tf.train.Saver().save(sess, str(tmp_path / "model.ckpt"))


def test_assign_from_checkpoint_fn_restores_chosen_variables(tmp_path):
    path = _saved_checkpoint(tmp_path)
    fw = tf.contrib.framework
    w = tf.get_variable("net/w", [2, 3], initializer=tf.zeros_initializer())
    b = tf.get_variable("net/b", [3], initializer=tf.zeros_initializer())
    new = tf.get_variable("new", [1], initializer=tf.ones_initializer())
    init_fn = fw.assign_from_checkpoint_fn(path, fw.get_variables_to_restore(exclude=["new"]))
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        init_fn(sess)
        wv, bv, nv = sess.run([w, b, new])
    np.testing.assert_array_equal(wv, np.arange(6).reshape(2, 3))
    np.testing.assert_array_equal(bv, [7, 7, 7])
    np.testing.assert_array_equal(nv, [1])
    # a variable the checkpoint lacks: an error at restore, or skipped with ignore_missing_vars
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        with pytest.raises(tf.errors.NotFoundError, match="Key new not found in checkpoint"):
            fw.assign_from_checkpoint_fn(path, [w, new])(sess)
        fw.assign_from_checkpoint_fn(path, [w, new], ignore_missing_vars=True)(sess)
        np.testing.assert_array_equal(sess.run(w), np.arange(6).reshape(2, 3))
        np.testing.assert_array_equal(sess.run(new), [1])
    assert fw.assign_from_checkpoint_fn(path, [new], ignore_missing_vars=True) is None
    with pytest.raises(ValueError, match="var_list cannot be empty"):
        fw.assign_from_checkpoint_fn(path, [])


def test_assign_from_checkpoint_fn_dict_names_and_reshape(tmp_path):
    path = _saved_checkpoint(tmp_path)
    fw = tf.contrib.framework
    flat = tf.get_variable("flat", [6], initializer=tf.zeros_initializer())
    renamed = tf.get_variable("renamed", [3], initializer=tf.zeros_initializer())
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        fw.assign_from_checkpoint_fn(path, {"net/b": renamed})(sess)
        np.testing.assert_array_equal(sess.run(renamed), [7, 7, 7])
        with pytest.raises(tf.errors.InvalidArgumentError, match="lhs shape= \\[6\\] rhs shape= \\[2, 3\\]"):
            fw.assign_from_checkpoint_fn(path, {"net/w": flat})(sess)
        fw.assign_from_checkpoint_fn(path, {"net/w": flat}, reshape_variables=True)(sess)
        np.testing.assert_array_equal(sess.run(flat), np.arange(6))
        with pytest.raises(ValueError, match="cannot reshape net/b .* into variable flat of shape \\[6\\]"):
            fw.assign_from_checkpoint_fn(path, {"net/b": flat}, reshape_variables=True)(sess)


def test_assign_from_checkpoint_op_and_feed(tmp_path):
    path = _saved_checkpoint(tmp_path)
    fw = tf.contrib.framework
    w = tf.get_variable("net/w", [2, 3], initializer=tf.zeros_initializer())
    copy = tf.get_variable("copy", [2, 3], initializer=tf.zeros_initializer())
    op, feed = fw.assign_from_checkpoint(path, {"net/w": [w, copy], "missing": w}, ignore_missing_vars=True)
    assert sorted(p.op.name for p in feed) == ["placeholder/copy", "placeholder/net/w"]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(op, feed)
        np.testing.assert_array_equal(sess.run(copy), np.arange(6).reshape(2, 3))
    with pytest.raises(ValueError, match="Checkpoint is missing variable \\[missing\\]"):
        fw.assign_from_checkpoint(path, {"missing": w})
    bad = tf.get_variable("bad", [3, 2])
    with pytest.raises(ValueError, match="Total size of new array must be unchanged for net/w"):
        fw.assign_from_checkpoint(path, {"net/w": bad})


def test_assign_from_values_by_exact_name():
    fw = tf.contrib.framework
    a = tf.get_variable("a", [2], initializer=tf.zeros_initializer())
    ab = tf.get_variable("ab", [1], initializer=tf.zeros_initializer())
    init_fn = fw.assign_from_values_fn({"a": np.array([[1.0], [2.0]]), "ab": np.array(5.0)})
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        init_fn(sess)
        av, abv = sess.run([a, ab])
    np.testing.assert_array_equal(av, [1, 2])
    np.testing.assert_array_equal(abv, [5])
    with pytest.raises(ValueError, match="Variable zz wasn't found"):
        fw.assign_from_values({"zz": np.zeros(1)})
