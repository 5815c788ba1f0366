"""Keras layers and models inside ordinary TF1 graph code: plain tf.train optimizers and Sessions, Savers,
variable scopes, tf.layers side by side, and the learning phase fed by hand."""
import numpy as np
import pytest

import tensorfleet as tf

K = tf.keras.backend
L = tf.keras.layers


def test_keras_layers_trained_by_a_tf_train_optimizer_and_saved(tmp_path):
    rng = np.random.default_rng(7)
    xs = rng.standard_normal((64, 5)).astype("float32")
    ys = (xs @ rng.standard_normal((5, 1))).astype("float32")
    x = tf.placeholder(tf.float32, [None, 5])
    y = tf.placeholder(tf.float32, [None, 1])
    hidden = L.Dense(16, activation="tanh")(x)
    pred = L.Dense(1)(hidden)
    loss = tf.reduce_mean(tf.square(pred - y))
    train = tf.train.AdamOptimizer(0.05).minimize(loss)
    assert [v.name for v in tf.trainable_variables()] == ["dense/kernel:0", "dense/bias:0", "dense_1/kernel:0",
                                                          "dense_1/bias:0"]
    saver = tf.train.Saver()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        first = sess.run(loss, {x: xs, y: ys})
        for _ in range(100):
            sess.run(train, {x: xs, y: ys})
        last = sess.run(loss, {x: xs, y: ys})
        path = saver.save(sess, str(tmp_path / "model.ckpt"))
    assert last < 0.1 * first
    names = [name for name, _ in tf.train.list_variables(path)]
    assert "dense/kernel" in names and "dense_1/bias" in names
    with tf.Session() as sess:
        saver.restore(sess, path)
        assert sess.run(loss, {x: xs, y: ys}) == pytest.approx(last)


def test_variable_scopes_reuse_and_tf_layers_side_by_side():
    x = tf.placeholder(tf.float32, [None, 3])
    tf.layers.dense(x, 2)  # takes the scope `dense`
    layer = L.Dense(2)
    assert layer.name == "dense"  # Keras names are counted apart from the graph's scopes...
    layer(x)
    assert layer.kernel.name == "dense_1/kernel:0"  # ...so its name scope is uniquified, as in TF
    with tf.variable_scope("tower", reuse=tf.AUTO_REUSE):
        shared = L.Dense(4, name="proj")
        a = shared(x)
        b = shared(x)
    assert [v.name for v in shared.weights] == ["tower/proj/kernel:0", "tower/proj/bias:0"]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        va, vb = sess.run([a, b], {x: np.ones((1, 3))})
    np.testing.assert_array_equal(va, vb)


def test_a_keras_model_called_on_graph_tensors_with_the_learning_phase_fed_by_hand():
    model = tf.keras.Sequential([L.Dense(8, input_shape=(4,)), L.Dropout(0.5), L.Dense(1)])
    x = tf.placeholder(tf.float32, [None, 4])
    out = model(x)
    ones = np.ones((200, 4), np.float32)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        test_a, test_b = sess.run(out, {x: ones}), sess.run(out, {x: ones})
        train_out = sess.run(out, {x: ones, K.learning_phase(): True})
    np.testing.assert_array_equal(test_a, test_b)
    assert np.unique(train_out.round(5)).size > 1  # dropout masks differ per row


def test_keras_losses_and_metrics_as_plain_functions():
    y = tf.placeholder(tf.float32, [None, 3])
    p = tf.placeholder(tf.float32, [None, 3])
    loss = tf.reduce_mean(tf.keras.losses.categorical_crossentropy(y, p))
    acc = tf.reduce_mean(tf.keras.metrics.categorical_accuracy(y, p))
    yv = np.eye(3, dtype="float32")[[0, 2]]
    pv = np.array([[0.7, 0.2, 0.1], [0.5, 0.3, 0.2]], np.float32)
    with tf.Session() as sess:
        lv, av = sess.run([loss, acc], {y: yv, p: pv})
    assert lv == pytest.approx(-(np.log(0.7) + np.log(0.2)) / 2, rel=1e-6) and av == 0.5
