"""Gradients of tf.cond / tf.while_loop use the forward pass's values (TF's functional control flow).

Oracle: the forward values themselves. With y = x * r for a random (or stateful) r drawn inside a branch or a
loop body, d sum(y * c) / dx = c * r = c * y / x in the same `Session.run`; a gradient that recomputed the
branch would draw another r. Assignments inside a branch run once per run (TF: the gradient reads the
forward If's outputs, it does not run the branch again).
"""
import numpy as np

import tensorfleet as tf

XV = np.array([[0.5, -1.5, 2.0, 1.25, -0.75]] * 4, np.float32) + np.arange(4, dtype=np.float32)[:, None]


def _check_gradient_is_forward_ratio(y, g, x, feed=None, runs=3):
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        for _ in range(runs):
            yv, gv = s.run([y, g], {x: XV, **(feed or {})})
            np.testing.assert_allclose(gv, yv / XV, rtol=1e-5)
    return yv


def test_dropout_inside_cond_gradient_uses_the_forward_mask():
    x = tf.placeholder(tf.float32, XV.shape)
    ph = tf.placeholder_with_default(False, [])
    y = tf.cond(ph, lambda: tf.nn.dropout(x, rate=0.5), lambda: x)
    g = tf.gradients(tf.reduce_sum(y), x)[0]
    yv = _check_gradient_is_forward_ratio(y, g, x, {ph: True})
    assert set(np.unique(yv / XV)) <= {0.0, 2.0} and np.any(yv == 0)  # really dropped
    _check_gradient_is_forward_ratio(y, g, x, {ph: False}, runs=1)  # the other branch: identity


def test_random_normal_inside_cond_and_both_branches_random():
    x = tf.placeholder(tf.float32, XV.shape)
    p = tf.placeholder(tf.bool, [])
    y = tf.cond(p, lambda: x * tf.random_normal(XV.shape), lambda: x * tf.random_uniform(XV.shape, 1.0, 2.0))
    g = tf.gradients(tf.reduce_sum(y), x)[0]
    _check_gradient_is_forward_ratio(y, g, x, {p: True})
    _check_gradient_is_forward_ratio(y, g, x, {p: False})


def test_two_gradients_of_one_cond_agree_with_its_forward_pass():
    x = tf.placeholder(tf.float32, XV.shape)
    y = tf.cond(tf.constant(True), lambda: tf.nn.dropout(x * 3.0, rate=0.3), lambda: x)
    g1 = tf.gradients(tf.reduce_sum(y), x)[0]
    g2 = tf.gradients(tf.reduce_sum(y * 2.0), x)[0]
    with tf.Session() as s:
        yv, a, b = s.run([y, g1, g2], {x: XV})
    np.testing.assert_allclose(a, yv / XV, rtol=1e-5)
    np.testing.assert_allclose(b, 2 * yv / XV, rtol=1e-5)


def test_assign_inside_cond_runs_once_when_the_gradient_reads_it():
    v = tf.Variable(0.0)
    x = tf.placeholder(tf.float32, XV.shape)
    y = tf.cond(tf.constant(True), lambda: tf.assign_add(v, 1.0) * x, lambda: x)
    g = tf.gradients(tf.reduce_sum(y), x)[0]
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        gv = s.run(g, {x: XV})
        assert s.run(v) == 1.0  # the forward If ran the assign; the gradient If did not run it again
        np.testing.assert_allclose(gv, np.ones_like(XV))


def test_dropout_inside_nested_conds():
    x = tf.placeholder(tf.float32, XV.shape)
    p = tf.placeholder(tf.bool, [])
    y = tf.cond(p, lambda: tf.cond(tf.logical_not(p), lambda: x, lambda: tf.nn.dropout(x, rate=0.5) * 3.0),
                lambda: x)
    g = tf.gradients(tf.reduce_sum(y), x)[0]
    yv = _check_gradient_is_forward_ratio(y, g, x, {p: True})
    assert np.any(yv == 0)


def test_dropout_inside_while_loop_gradient_uses_the_forward_masks():
    """The forward While records each iteration's mask; WhileGrad replays and differentiates with them."""
    x = tf.placeholder(tf.float32, XV.shape)

    def body(i, v):
        return i + 1, tf.nn.dropout(v, rate=0.2) * 1.5

    _, y = tf.while_loop(lambda i, v: i < 3, body, [tf.constant(0), x])
    g = tf.gradients(tf.reduce_sum(y), x)[0]
    yv = _check_gradient_is_forward_ratio(y, g, x)
    assert np.any(yv == 0) and np.any(yv != 0)


def test_random_ops_inside_while_body_and_inside_a_cond_in_the_body():
    x = tf.placeholder(tf.float32, XV.shape)

    def body(i, v):
        v = v * tf.random_uniform(XV.shape, 0.5, 1.5)
        v = tf.cond(i > 0, lambda: v * tf.random_normal(XV.shape), lambda: v)
        return i + 1, v

    _, y = tf.while_loop(lambda i, v: i < 4, body, [tf.constant(0), x])
    g = tf.gradients(tf.reduce_sum(y), x)[0]
    _check_gradient_is_forward_ratio(y, g, x)


def test_map_fn_with_dropout_and_a_while_loop_without_iterations():
    x = tf.placeholder(tf.float32, XV.shape)
    y = tf.map_fn(lambda row: tf.nn.dropout(row, rate=0.5), x)
    g = tf.gradients(tf.reduce_sum(y), x)[0]
    _check_gradient_is_forward_ratio(y, g, x)
    n = tf.placeholder(tf.int32, [])
    _, z = tf.while_loop(lambda i, v: i < n, lambda i, v: (i + 1, tf.nn.dropout(v, rate=0.5)), [0, x])
    gz = tf.gradients(tf.reduce_sum(z), x)[0]
    with tf.Session() as s:
        np.testing.assert_allclose(s.run(gz, {x: XV, n: 0}), np.ones_like(XV))


def test_gradient_graph_survives_a_graph_def_round_trip():
    x = tf.placeholder(tf.float32, XV.shape, name="x")
    p = tf.placeholder_with_default(True, [], name="p")
    y = tf.identity(tf.cond(p, lambda: tf.nn.dropout(x, rate=0.5), lambda: x), name="y")
    _, w = tf.while_loop(lambda i, v: i < 2, lambda i, v: (i + 1, tf.nn.dropout(v, rate=0.5)), [0, y])
    w = tf.identity(w, name="w")
    tf.identity(tf.gradients(tf.reduce_sum(w), x)[0], name="g")
    gd = tf.get_default_graph().as_graph_def()
    with tf.Graph().as_default() as g2:
        tf.import_graph_def(gd, name="")
        with tf.Session(graph=g2) as s:
            wv, gv = s.run(["w:0", "g:0"], {"x:0": XV})
    np.testing.assert_allclose(gv, wv / XV, rtol=1e-5)


def test_dynamic_rnn_with_a_dropout_wrapper_over_an_unknown_time_axis():
    """dynamic_rnn's while-loop path (time fed at run time) with input dropout around a cell that passes its
    input through (kernel [I; 0], identity activation): outputs = x * mask / keep, so d sum(outputs) / dx must be
    outputs / x, with the forward pass's masks."""
    d = XV.shape[1]
    x = tf.placeholder(tf.float32, [2, None, d])
    init = tf.constant_initializer(np.vstack([np.eye(d), np.zeros((d, d))]).astype(np.float32))
    with tf.variable_scope("rnn_scope", initializer=init):
        cell = tf.nn.rnn_cell.DropoutWrapper(tf.nn.rnn_cell.BasicRNNCell(d, activation=tf.identity),
                                             input_keep_prob=0.5)
        outputs, _ = tf.nn.dynamic_rnn(cell, x, dtype=tf.float32)
    g = tf.gradients(tf.reduce_sum(outputs), x)[0]
    xv = XV.reshape(2, 2, d)
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        for _ in range(2):
            ov, gv = s.run([outputs, g], {x: xv})
            np.testing.assert_allclose(gv, ov / xv, rtol=1e-5, atol=1e-6)
    assert np.any(ov == 0)
