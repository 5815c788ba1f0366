"""tf.train.ExponentialMovingAverage against the recurrence computed in numpy."""
import numpy as np
import pytest

import tensorfleet as tf


def test_ema_after_training_steps_and_names():
    w = tf.Variable([1.0, -2.0], name="w")
    b = tf.Variable(0.5, name="b")
    loss = tf.reduce_sum(tf.square(w)) + b * b
    opt = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
    ema = tf.train.ExponentialMovingAverage(decay=0.9)
    train_op = ema.apply([w, b])  # run after `opt` in a separate run (see test_tf1_programs for the control-dep form)
    assert ema.average(w).name == "w/ExponentialMovingAverage:0"
    assert ema.average_name(b) == "b/ExponentialMovingAverage"
    assert ema.average(w) not in tf.trainable_variables()
    assert tf.get_collection(tf.GraphKeys.MOVING_AVERAGE_VARIABLES) == [w, b]
    assert train_op.type == "NoOp" and train_op.name == "ExponentialMovingAverage"
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        np.testing.assert_array_equal(sess.run(ema.average(w)), [1.0, -2.0])  # starts at the initial value
        for _ in range(3):
            sess.run(opt)
            sess.run(train_op)
        got_w, got_b = sess.run([ema.average(w), ema.average(b)])
    wv, bv = np.array([1.0, -2.0]), 0.5
    sw, sb = wv.copy(), bv
    for _ in range(3):
        wv, bv = wv - 0.1 * 2 * wv, bv - 0.1 * 2 * bv
        sw, sb = 0.9 * sw + 0.1 * wv, 0.9 * sb + 0.1 * bv
    np.testing.assert_allclose(got_w, sw, rtol=1e-6)
    assert got_b == pytest.approx(sb, rel=1e-6)


def test_num_updates_caps_decay_and_variables_to_restore(tmp_path):
    step = tf.Variable(0, trainable=False, name="step")
    v = tf.Variable(0.0, name="v")
    other = tf.Variable(7.0, trainable=False, name="other")
    ema = tf.train.ExponentialMovingAverage(0.99, num_updates=step)
    update = ema.apply([v])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(tf.assign(v, 10.0))
        sess.run(update)  # decay = min(0.99, 1/10) = 0.1
        assert sess.run(ema.average(v)) == pytest.approx(9.0)
        path = tf.train.Saver().save(sess, str(tmp_path / "m"))
    to_restore = ema.variables_to_restore()
    assert to_restore["v/ExponentialMovingAverage"] is v and to_restore["other"] is other
    assert "v" not in to_restore
    with pytest.raises(TypeError, match="half, float, or double"):
        ema.apply([step])
    with tf.Session() as sess:  # evaluation-time restore: v takes its shadow's value
        tf.train.Saver(to_restore).restore(sess, path)
        assert sess.run(v) == pytest.approx(9.0)
