"""dynamic_rnn / bidirectional_dynamic_rnn with an unknown time dimension (the tf.while_loop + TensorArray loop):
the numpy unrolled oracle of test_rnn_loops (TF's sequence_length semantics), one graph fed different lengths,
the same variables and values as the static unrolled path, and finite-difference gradients through the loop."""
import numpy as np
import pytest

import tensorfleet as tf
from gradcheck import check_gradients, numeric_grad
from test_rnn_cells import np_gru
from test_rnn_loops import X, LENGTHS, _lstm_step, _run, _weights, _weights_from, np_reverse_sequence, np_rnn

rnn_cell = tf.nn.rnn_cell


def _while_ops():
    return [op for op in tf.get_default_graph().get_operations() if op.type == "While"]


def test_unknown_time_lstm_matches_numpy_for_different_lengths_in_one_graph():
    x, lengths = tf.placeholder(tf.float64, [None, None, 2], name="x"), tf.placeholder(tf.int32, [None])
    out, state = tf.nn.dynamic_rnn(rnn_cell.BasicLSTMCell(4), x, sequence_length=lengths, dtype=tf.float64)
    assert out.shape.as_list() == [None, None, 4] and state.c.shape.as_list() == [None, 4]
    assert len(_while_ops()) == 1  # the steps run in a tf.while_loop, not unrolled
    w = _weights("rnn/basic_lstm_cell/")
    assert sorted(v.op.name for v in tf.global_variables()) == ["rnn/basic_lstm_cell/bias",
                                                                 "rnn/basic_lstm_cell/kernel"]
    assert {k: v.shape.as_list() for k, v in w.items()} == {"kernel": [6, 16], "bias": [16]}
    rng = np.random.default_rng(7)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        w = sess.run(w)
        for xv, lv in [(X, LENGTHS), (rng.standard_normal((2, 8, 2)), [8, 3]), (X[:, :1], [1, 0, 1]),
                       (rng.standard_normal((4, 6, 2)), [2, 2, 1, 0])]:  # max length < time: the loop stops early
            o, s = sess.run([out, state], {x: xv, lengths: lv})
            zero = np.zeros((xv.shape[0], 4))
            want_o, (want_c, want_h) = np_rnn(_lstm_step(w), xv, (zero, zero), lv)
            assert o.shape == want_o.shape
            np.testing.assert_allclose(o, want_o, rtol=1e-12, atol=1e-15)
            np.testing.assert_allclose(s.c, want_c, rtol=1e-12, atol=1e-15)
            np.testing.assert_allclose(s.h, want_h, rtol=1e-12, atol=1e-15)
        o, s = sess.run([out, state], {x: X[:, :0], lengths: [0, 0, 0]})  # no steps: empty outputs, initial state
        assert o.shape == (3, 0, 4) and not s.c.any() and s.h.shape == (3, 4) and not s.h.any()


def test_unknown_time_without_sequence_length_time_major_gru_and_initial_state():
    h0 = np.random.default_rng(1).standard_normal((3, 4))
    x = tf.placeholder(tf.float64, [None, 3, 2])
    out, state = tf.nn.dynamic_rnn(rnn_cell.GRUCell(4), x, initial_state=tf.constant(h0), time_major=True,
                                   scope="encoder", parallel_iterations=4, swap_memory=True)
    assert out.shape.as_list() == [None, 3, 4]
    w = _weights("encoder/gru_cell/")
    assert sorted(w) == ["candidate/bias", "candidate/kernel", "gates/bias", "gates/kernel"]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        w = sess.run(w)
        for steps in (5, 2):
            o, s = sess.run([out, state], {x: np.transpose(X[:, :steps], (1, 0, 2))})

            def step(xt, h):
                return np_gru(xt, h, w["gates/kernel"], w["gates/bias"], w["candidate/kernel"], w["candidate/bias"])

            want_o, want_s = np_rnn(step, X[:, :steps], h0)
            np.testing.assert_allclose(o, np.transpose(want_o, (1, 0, 2)), rtol=1e-12)
            np.testing.assert_allclose(s, want_s, rtol=1e-12)


def test_while_loop_path_equals_static_path_values_gradients_and_variables():
    cell = rnn_cell.MultiRNNCell([rnn_cell.BasicLSTMCell(4), rnn_cell.GRUCell(3)])
    with tf.variable_scope("m"):
        st_out, st_state = tf.nn.dynamic_rnn(cell, tf.constant(X), sequence_length=LENGTHS, dtype=tf.float64)
    names = sorted(v.op.name for v in tf.global_variables())
    assert not _while_ops()  # a static time dimension is unrolled
    x = tf.placeholder(tf.float64, [3, None, 2])
    with tf.variable_scope("m", reuse=True):
        wl_out, wl_state = tf.nn.dynamic_rnn(cell, x, sequence_length=LENGTHS, dtype=tf.float64)
    assert len(_while_ops()) == 1
    assert sorted(v.op.name for v in tf.global_variables()) == names  # the loop reused them, created none
    variables = tf.trainable_variables()

    def loss(out, state):
        return tf.reduce_sum(out) + tf.reduce_sum(state[0].c) * tf.reduce_sum(state[1])

    st_grads = tf.gradients(loss(st_out, st_state), variables)
    wl_grads = tf.gradients(loss(wl_out, wl_state), variables)
    assert all(g is not None for g in wl_grads)
    a, b = _run([(st_out, st_state, st_grads), (wl_out, wl_state, wl_grads)], {x: X})
    for u, v in zip(_flat(a), _flat(b), strict=True):
        np.testing.assert_allclose(v, u, rtol=1e-10, atol=1e-13)


def _flat(value):
    if isinstance(value, (list, tuple)):
        return [leaf for v in value for leaf in _flat(v)]
    return [value]


def test_unknown_time_bidirectional_gru_matches_numpy():
    x, lengths = tf.placeholder(tf.float64, [None, None, 2]), tf.placeholder(tf.int64, [None])
    (fw, bw), (s_fw, s_bw) = tf.nn.bidirectional_dynamic_rnn(rnn_cell.GRUCell(3), rnn_cell.GRUCell(2), x,
                                                              sequence_length=lengths, dtype=tf.float64)
    wf, wb = _weights("bidirectional_rnn/fw/gru_cell/"), _weights("bidirectional_rnn/bw/gru_cell/")
    assert wf["gates/kernel"].shape.as_list() == [5, 6] and wb["gates/kernel"].shape.as_list() == [4, 4]
    assert len(_while_ops()) == 2

    def gru(w):
        return lambda xt, h: np_gru(xt, h, w["gates/kernel"], w["gates/bias"], w["candidate/kernel"],
                                    w["candidate/bias"])

    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        wf, wb = sess.run([wf, wb])
        for xv, lv in [(X, LENGTHS), (X[:2, :3], [3, 1])]:
            f, b, sf, sb = sess.run([fw, bw, s_fw, s_bw], {x: xv, lengths: lv})
            want_f, want_sf = np_rnn(gru(wf), xv, np.zeros((len(lv), 3)), lv)
            tmp, want_sb = np_rnn(gru(wb), np_reverse_sequence(xv, lv, 1, 0), np.zeros((len(lv), 2)), lv)
            np.testing.assert_allclose(f, want_f, rtol=1e-12, atol=1e-15)
            np.testing.assert_allclose(sf, want_sf, rtol=1e-12)
            np.testing.assert_allclose(b, np_reverse_sequence(tmp, lv, 1, 0), rtol=1e-12, atol=1e-15)
            np.testing.assert_allclose(sb, want_sb, rtol=1e-12)


@pytest.mark.parametrize("lengths", [[3, 2], None])
def test_unknown_time_gradients_match_finite_differences(lengths):
    rng = np.random.default_rng(2)
    x, c0, h0 = rng.standard_normal((2, 3, 2)), rng.standard_normal((2, 3)), rng.standard_normal((2, 3))
    kernel, bias = 0.5 * rng.standard_normal((5, 12)), 0.5 * rng.standard_normal(12)

    def build(x, c0, h0, kernel, bias):
        x = tf.placeholder_with_default(x, [2, None, 2])  # the time dimension is unknown to the graph
        with tf.variable_scope("fd", custom_getter=_weights_from({"kernel": kernel, "bias": bias})):
            out, state = tf.nn.dynamic_rnn(rnn_cell.BasicLSTMCell(3), x, sequence_length=lengths,
                                           initial_state=rnn_cell.LSTMStateTuple(c0, h0))
        assert len(_while_ops()) == 1
        return tf.concat([tf.reshape(out, [2, 9]), state.c, state.h], 1)

    check_gradients(build, [x, c0, h0, kernel, bias], rtol=1e-5, atol=1e-7)


def test_unknown_time_lstm_kernel_gradient_trains_a_variable():
    x = tf.placeholder(tf.float64, [None, None, 2])
    _, state = tf.nn.dynamic_rnn(rnn_cell.BasicLSTMCell(2), x, dtype=tf.float64)
    loss = tf.reduce_sum(state.h * state.h)
    kernel = [v for v in tf.global_variables() if v.op.name == "rnn/basic_lstm_cell/kernel"][0]
    (g,) = tf.gradients(loss, [kernel])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        k0, analytic = sess.run([kernel, g], {x: X})

        def f(k):
            sess.run(kernel.assign(k))
            return float(sess.run(loss, {x: X}))

        numeric = numeric_grad(f, k0)
    np.testing.assert_allclose(analytic, numeric, rtol=1e-5, atol=1e-8)
