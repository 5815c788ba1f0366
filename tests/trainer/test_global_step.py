"""Global step helpers: create/get/get_or_create, TF's errors, increments by minimize, tf.train.global_step."""
import numpy as np
import pytest

import tensorfleet as tf


def test_create_and_get_global_step():
    assert tf.train.get_global_step() is None
    gs = tf.train.create_global_step()
    assert gs.op.name == "global_step" and gs.dtype == tf.int64 and gs.shape.as_list() == []
    assert not gs.trainable
    assert gs in tf.global_variables() and gs not in tf.trainable_variables()
    assert tf.get_collection(tf.GraphKeys.GLOBAL_STEP) == [gs]
    assert tf.train.get_global_step() is gs
    assert tf.train.get_or_create_global_step() is gs
    with pytest.raises(ValueError, match='"global_step" already exists.'):
        tf.train.create_global_step()


def test_get_or_create_is_per_graph_and_ignores_name_scope():
    g = tf.Graph()
    with tf.name_scope("somewhere"):
        gs = tf.train.get_or_create_global_step()
    other = tf.train.get_or_create_global_step(g)
    assert gs.op.name == "global_step" and other.graph is g and other is not gs


def test_global_step_found_by_name_and_type_checked():
    v = tf.Variable(np.int64(0), name="global_step", trainable=False)
    assert tf.train.get_global_step() is not None
    assert tf.train.get_global_step().name == "global_step:0"
    assert v is not None
    g = tf.Graph()
    with g.as_default():
        tf.Variable(0.0, name="global_step")
        with pytest.raises(TypeError, match='Existing "global_step" does not have integer type'):
            tf.train.get_global_step()


def test_multiple_global_steps_in_collection_raise():
    tf.add_to_collection(tf.GraphKeys.GLOBAL_STEP, tf.Variable(np.int64(0), name="a"))
    tf.add_to_collection(tf.GraphKeys.GLOBAL_STEP, tf.Variable(np.int64(0), name="b"))
    with pytest.raises(TypeError, match="Multiple tensors in global_step collection."):
        tf.train.get_global_step()


def test_global_step_value_and_increment_by_each_optimizer_step():
    w = tf.Variable(np.array([1.0, 2.0], np.float32), name="w")
    loss = tf.reduce_sum(w * w)
    gs = tf.train.get_or_create_global_step()
    train = tf.train.MomentumOptimizer(0.1, 0.9).minimize(loss, global_step=gs)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        assert tf.train.global_step(sess, gs) == 0
        for _ in range(4):
            sess.run(train)
        step = tf.train.global_step(sess, gs)
        assert step == 4 and isinstance(step, int)
        assert tf.train.global_step(sess, gs.value()) == 4
