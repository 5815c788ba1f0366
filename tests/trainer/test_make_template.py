"""tf.make_template (ops/template.py) against TF 1.15's documented behaviour: every call shares the variables
of the first (same objects, one set in the graph), each call's ops are new, scopes are made unique per
template, kwargs are bound, create_scope_now_ fixes the scope at construction, and a later call that
creates a trainable tf.Variable is a ValueError."""
import numpy as np
import pytest

import tensorfleet as tf


def _linear(x, out=2, scale=1.0):
    w = tf.get_variable("w", [x.shape[1], out], initializer=tf.ones_initializer())
    b = tf.get_variable("b", [out], initializer=tf.constant_initializer(0.5))
    return (tf.matmul(x, w) + b) * scale


def test_calls_share_the_first_calls_variables():
    layer = tf.make_template("linear", _linear, scale=2.0)
    x1 = tf.constant([[1.0, 2.0]])
    x2 = tf.constant([[3.0, 4.0]])
    y1, y2 = layer(x1), layer(x2)
    assert [v.op.name for v in tf.global_variables()] == ["linear/w", "linear/b"]
    assert [v.op.name for v in layer.trainable_variables] == ["linear/w", "linear/b"]
    assert y1.op is not y2.op and y1.op.name != y2.op.name
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(tf.assign(tf.global_variables()[0], [[1.0, 0.0], [0.0, 1.0]]))
        got1, got2 = sess.run([y1, y2])
    np.testing.assert_allclose(got1, (np.array([[1.0, 2.0]]) + 0.5) * 2.0)  # both see the one assigned w
    np.testing.assert_allclose(got2, (np.array([[3.0, 4.0]]) + 0.5) * 2.0)


def test_two_templates_of_one_name_get_unique_scopes_and_create_scope_now():
    a = tf.make_template("net", _linear)
    b = tf.make_template("net", _linear, create_scope_now_=True)
    assert b.variable_scope_name == "net"  # taken now, before a's first call
    a(tf.constant([[1.0]]))
    b(tf.constant([[1.0]]))
    b(tf.constant([[2.0]]))
    assert sorted(v.op.name for v in tf.global_variables()) == ["net/b", "net/w", "net_1/b", "net_1/w"]
    assert a.variable_scope_name == "net_1"
    assert sorted(v.op.name for v in b.variables) == ["net/b", "net/w"]


def test_a_later_call_creating_a_trainable_variable_is_an_error():
    def sneaky(x):
        return x * tf.Variable(1.0, name="v")

    t = tf.make_template("sneaky", sneaky)
    t(tf.constant(1.0))
    with pytest.raises(ValueError, match="Trainable variable created when calling a template after the first time"):
        t(tf.constant(2.0))
