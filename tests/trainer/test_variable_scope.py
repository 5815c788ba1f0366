"""tf.get_variable / tf.variable_scope: naming, reuse modes, initializers, collections, TF's error wording."""
import numpy as np
import pytest

import tensorfleet as tf
from helpers import init_and_run


def test_names_follow_variable_scope_not_name_scope():
    with tf.variable_scope("foo"):
        with tf.name_scope("bar"):
            w = tf.get_variable("w", shape=[2], dtype=tf.int32)
            c = tf.constant(1, name="c")
    assert w.name == "foo/w:0"
    assert c.op.name == "foo/bar/c"
    assert w.dtype == tf.int32 and w.shape.as_list() == [2]


def test_nested_scopes_and_get_variable_scope():
    with tf.variable_scope("outer") as outer:
        assert tf.get_variable_scope() is outer
        assert outer.name == "outer" and outer.original_name_scope == "outer/"
        with tf.variable_scope("inner"):
            v = tf.get_variable("v", [], dtype=tf.int64)
            assert tf.get_variable_scope().name == "outer/inner"
    assert v.op.name == "outer/inner/v"
    assert tf.get_variable_scope().name == ""


def test_existing_variable_without_reuse_raises_tf_message():
    with tf.variable_scope("foo"):
        tf.get_variable("w", [1], dtype=tf.int32)
    with pytest.raises(ValueError) as e:
        with tf.variable_scope("foo"):
            tf.get_variable("w", [1], dtype=tf.int32)
    assert str(e.value).startswith("Variable foo/w already exists, disallowed. Did you mean to set reuse=True "
                                   "or reuse=tf.AUTO_REUSE in VarScope?")


def test_reuse_true_returns_same_and_missing_raises_tf_message():
    with tf.variable_scope("foo"):
        w = tf.get_variable("w", [1], dtype=tf.int32)
    with tf.variable_scope("foo", reuse=True):
        assert tf.get_variable("w", [1], dtype=tf.int32) is w
        with pytest.raises(ValueError) as e:
            tf.get_variable("missing", [1], dtype=tf.int32)
    assert str(e.value) == ("Variable foo/missing does not exist, or was not created with tf.get_variable(). "
                            "Did you mean to set reuse=tf.AUTO_REUSE in VarScope?")


def test_auto_reuse_creates_then_returns():
    def layer():
        with tf.variable_scope("layer", reuse=tf.AUTO_REUSE):
            return tf.get_variable("b", [3], dtype=tf.int32)

    a, b = layer(), layer()
    assert a is b and a.op.name == "layer/b"
    assert len(tf.global_variables()) == 1
    assert "AUTO_REUSE" in tf.variable_scope.__module__ or tf.AUTO_REUSE is not None


def test_reuse_is_inherited_by_subscopes_and_reuse_variables():
    with tf.variable_scope("a"):
        with tf.variable_scope("b"):
            v = tf.get_variable("v", [], dtype=tf.int32)
    with tf.variable_scope("a", reuse=True):
        with tf.variable_scope("b"):
            assert tf.get_variable_scope().reuse is True
            assert tf.get_variable("v", [], dtype=tf.int32) is v
    with tf.variable_scope("a") as scope:
        scope.reuse_variables()
        with tf.variable_scope("b"):
            assert tf.get_variable("v", dtype=tf.int32) is v
    with tf.variable_scope("a", reuse=tf.AUTO_REUSE):
        with tf.variable_scope("b", reuse=False):  # False means inherit, as in TF
            assert tf.get_variable_scope().reuse is tf.AUTO_REUSE


def test_reenter_scope_object_and_name_scope_behaviour():
    with tf.variable_scope("foo") as foo:
        x = tf.constant(1, name="x")
    with tf.variable_scope(foo, reuse=True):
        with pytest.raises(ValueError, match="Variable foo/w does not exist"):  # reuse=True never creates
            tf.get_variable("w", [], dtype=tf.int32)
        y = tf.constant(1, name="y")
    with tf.variable_scope("other"):
        with tf.variable_scope(foo):
            assert tf.get_variable_scope().name == "foo"  # a scope object is absolute
            v = tf.get_variable("v", [], dtype=tf.int32)
    assert x.op.name == "foo/x" and y.op.name == "foo_1/y"
    assert v.op.name == "foo/v"
    assert tf.get_variable_scope().name == ""


def test_default_name_scopes_are_made_unique():
    with tf.variable_scope(None, default_name="dense"):
        a = tf.get_variable("k", [], dtype=tf.int32)
    with tf.variable_scope(None, default_name="dense"):
        b = tf.get_variable("k", [], dtype=tf.int32)
    assert (a.op.name, b.op.name) == ("dense/k", "dense_1/k")
    with pytest.raises(ValueError, match="reuse=True cannot be used without a name_or_scope"):
        with tf.variable_scope(None, default_name="x", reuse=True):
            pass
    with pytest.raises(TypeError, match="If default_name is None then name_or_scope is required"):
        with tf.variable_scope(None):
            pass


def test_initializer_forms():
    t = tf.get_variable("from_tensor", initializer=tf.constant([1.0, 2.0]))
    n = tf.get_variable("from_numpy", initializer=np.arange(3, dtype=np.int64))
    obj = tf.get_variable("from_object", [2, 2], initializer=tf.constant_initializer(3.0))
    cls = tf.get_variable("from_class", [2], initializer=tf.zeros_initializer)
    fn = tf.get_variable("from_callable", [2], dtype=tf.float64,
                         initializer=lambda shape, dtype=None, partition_info=None:
                         tf.constant(np.full(shape, 7.0), dtype=dtype))
    assert n.dtype == tf.int64 and fn.dtype == tf.float64
    vals = init_and_run([t, n, obj, cls, fn])
    np.testing.assert_array_equal(vals[0], [1.0, 2.0])
    np.testing.assert_array_equal(vals[1], [0, 1, 2])
    np.testing.assert_array_equal(vals[2], np.full((2, 2), 3.0))
    np.testing.assert_array_equal(vals[3], [0.0, 0.0])
    np.testing.assert_array_equal(vals[4], [7.0, 7.0])
    with pytest.raises(ValueError, match="If initializer is a constant, do not specify shape."):
        tf.get_variable("bad", [2], initializer=tf.constant([1.0, 2.0]))


def test_scope_initializer_and_dtype_are_inherited():
    with tf.variable_scope("s", initializer=tf.constant_initializer(2.0), dtype=tf.float64):
        with tf.variable_scope("t"):
            v = tf.get_variable("v", [2])
    assert v.dtype == tf.float64
    np.testing.assert_array_equal(init_and_run(v), [2.0, 2.0])


def test_default_initializers_glorot_for_float_zeros_for_int():
    tf.set_random_seed(1)
    w = tf.get_variable("w", [30, 20])
    i = tf.get_variable("i", [4], dtype=tf.int32)
    wv, iv = init_and_run([w, i])
    limit = np.sqrt(6.0 / (30 + 20))
    assert wv.dtype == np.float32 and np.abs(wv).max() <= limit and np.abs(wv).max() > 0.5 * limit
    assert wv.std() > 0.3 * limit
    np.testing.assert_array_equal(iv, np.zeros(4, np.int32))


def test_trainable_and_collections():
    a = tf.get_variable("a", [1], dtype=tf.int32, trainable=False)
    b = tf.get_variable("b", initializer=[1.0])
    c = tf.get_variable("c", [1], dtype=tf.int32, collections=["mine"])
    assert a in tf.global_variables() and a not in tf.trainable_variables()
    assert b in tf.global_variables() and b in tf.trainable_variables()
    assert tf.get_collection("mine") == [c] and c not in tf.global_variables()


def test_shape_and_dtype_mismatch_on_reuse():
    with tf.variable_scope("m"):
        tf.get_variable("v", [2], dtype=tf.int32)
    with tf.variable_scope("m", reuse=True):
        with pytest.raises(ValueError, match=r"Trying to share variable m/v, but specified shape \(3,\)"):
            tf.get_variable("v", [3], dtype=tf.int32)
        with pytest.raises(ValueError, match="Trying to share variable m/v, but specified dtype int64"):
            tf.get_variable("v", [2], dtype=tf.int64)


def test_scopes_are_per_graph():
    g = tf.Graph()
    with g.as_default():
        with tf.variable_scope("x"):
            v = tf.get_variable("v", [], dtype=tf.int32)
    with tf.variable_scope("x"):
        u = tf.get_variable("v", [], dtype=tf.int32)
    assert v.graph is g and u.graph is tf.get_default_graph() and u is not v


def test_custom_getter_sees_every_call():
    seen = []

    def getter(next_getter, name, *args, **kwargs):
        seen.append(name)
        return next_getter(name, *args, **kwargs)

    with tf.variable_scope("cg", custom_getter=getter):
        tf.get_variable("v", [], dtype=tf.int32)
    assert seen == ["cg/v"]


def test_regularizer_adds_loss():
    def reg(v):
        return tf.reduce_sum(v * v)

    w = tf.get_variable("rw", initializer=np.array([1.0, 2.0], np.float32), regularizer=reg)
    losses = tf.get_collection(tf.GraphKeys.REGULARIZATION_LOSSES)
    assert len(losses) == 1
    assert init_and_run(losses[0]) == pytest.approx(5.0)
    assert w.op.name == "rw"
