"""static_rnn / dynamic_rnn / the bidirectional RNNs: numpy unrolled oracles (with TF's sequence_length
semantics), time_major, TF 1.15 variable names, finite-difference gradients, reverse_sequence, checkpoints,
and the tf.contrib.rnn aliases."""
import numpy as np
import pytest

import tensorfleet as tf
from gradcheck import check_gradients, numeric_grad
from test_rnn_cells import np_gru, np_lstm

rnn_cell = tf.nn.rnn_cell


def np_rnn(step, x_btd, state, lengths=None):
    """Unrolled numpy oracle: step(x_t, state) -> (out, state); past a length: zero output, state copied."""
    batch, steps = x_btd.shape[:2]
    lengths = np.full(batch, steps) if lengths is None else np.asarray(lengths)
    outs = []
    for t in range(steps):
        out, new_state = step(x_btd[:, t], state)
        live = (t < lengths)[:, None]
        outs.append(np.where(live, out, 0.0))
        state = tuple(np.where(live, n, s) for n, s in zip(new_state, state)) if isinstance(state, tuple) \
            else np.where(live, new_state, state)
    return np.stack(outs, 1), state


def np_reverse_sequence(x, lengths, seq_axis, batch_axis):
    out = x.copy()
    for b, n in enumerate(lengths):
        src = [slice(None)] * x.ndim
        src[batch_axis], src[seq_axis] = b, slice(0, n)
        out[tuple(src)] = x[tuple(src)][..., ::-1, :] if seq_axis == x.ndim - 2 and batch_axis < seq_axis \
            else np.flip(x[tuple(src)], axis=seq_axis - (1 if batch_axis < seq_axis else 0))
    return out


def _run(fetches, feed=None):
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        return sess.run(fetches, feed)


def _weights(prefix):
    """The variables under prefix, keyed by the rest of their names (fetch them with the outputs, in one session)."""
    return {v.op.name[len(prefix):]: v for v in tf.global_variables() if v.op.name.startswith(prefix)}


X = np.random.default_rng(0).standard_normal((3, 5, 2))
LENGTHS = [5, 2, 0]


def _lstm_step(w):
    return lambda x, s: (lambda o, st: (o, st))(*np_lstm(x, s[0], s[1], w["kernel"], w["bias"]))


def test_dynamic_rnn_lstm_with_sequence_length_matches_numpy():
    out, state = tf.nn.dynamic_rnn(rnn_cell.BasicLSTMCell(4), tf.constant(X), sequence_length=LENGTHS,
                                   dtype=tf.float64)
    assert out.shape.as_list() == [3, 5, 4]
    w = _weights("rnn/basic_lstm_cell/")
    assert {k: v.shape.as_list() for k, v in w.items()} == {"kernel": [6, 16], "bias": [16]}
    o, s, w = _run([out, state, w])
    want_o, (want_c, want_h) = np_rnn(_lstm_step(w), X, (np.zeros((3, 4)), np.zeros((3, 4))), LENGTHS)
    np.testing.assert_allclose(o, want_o, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(s.c, want_c, rtol=1e-12)
    np.testing.assert_allclose(s.h, want_h, rtol=1e-12)
    assert not o[1, 2:].any() and not o[2].any()  # zeros past each length
    np.testing.assert_array_equal(s.h[1], o[1, 1])  # the final state is the one at the last valid step
    assert not s.c[2].any()  # a length-0 sequence keeps its initial state


def test_dynamic_rnn_time_major_initial_state_and_scope():
    h0 = np.random.default_rng(1).standard_normal((3, 4))
    x_tm = np.transpose(X, (1, 0, 2))
    out_tm, state_tm = tf.nn.dynamic_rnn(rnn_cell.GRUCell(4), tf.constant(x_tm), initial_state=tf.constant(h0),
                                         time_major=True, scope="encoder")
    assert out_tm.shape.as_list() == [5, 3, 4]
    w = _weights("encoder/gru_cell/")
    assert sorted(w) == ["candidate/bias", "candidate/kernel", "gates/bias", "gates/kernel"]
    o, s, w = _run([out_tm, state_tm, w])

    def step(x, h):
        return np_gru(x, h, w["gates/kernel"], w["gates/bias"], w["candidate/kernel"], w["candidate/bias"])

    want_o, want_s = np_rnn(step, X, h0)
    np.testing.assert_allclose(o, np.transpose(want_o, (1, 0, 2)), rtol=1e-12)
    np.testing.assert_allclose(s, want_s, rtol=1e-12)


def test_static_rnn_equals_dynamic_rnn_and_shares_variables():
    x = tf.constant(X)
    cell = rnn_cell.BasicLSTMCell(3)
    with tf.variable_scope("shared"):
        dyn_out, dyn_state = tf.nn.dynamic_rnn(cell, x, sequence_length=LENGTHS, dtype=tf.float64)
    with tf.variable_scope("shared", reuse=True):
        st_outs, st_state = tf.nn.static_rnn(cell, tf.unstack(x, axis=1), sequence_length=LENGTHS,
                                             dtype=tf.float64)
    assert sorted(v.op.name for v in tf.global_variables()) == ["shared/rnn/basic_lstm_cell/bias",
                                                                 "shared/rnn/basic_lstm_cell/kernel"]
    assert len(st_outs) == 5
    d, s = _run([(dyn_out, dyn_state), (st_outs, st_state)])
    np.testing.assert_allclose(np.stack(s[0], 1), d[0], rtol=1e-12)
    np.testing.assert_allclose(s[1].h, d[1].h, rtol=1e-12)


def test_multi_rnn_cell_in_dynamic_rnn_returns_a_state_tuple_per_layer():
    cell = rnn_cell.MultiRNNCell([rnn_cell.BasicLSTMCell(4), rnn_cell.BasicLSTMCell(3)])
    out, state = tf.nn.dynamic_rnn(cell, tf.constant(X), sequence_length=LENGTHS, dtype=tf.float64)
    assert len(state) == 2 and all(isinstance(s, rnn_cell.LSTMStateTuple) for s in state)
    w0 = _weights("rnn/multi_rnn_cell/cell_0/basic_lstm_cell/")
    w1 = _weights("rnn/multi_rnn_cell/cell_1/basic_lstm_cell/")
    assert w0["kernel"].shape.as_list() == [6, 16] and w1["kernel"].shape.as_list() == [7, 12]
    o, s, w0, w1 = _run([out, state, w0, w1])

    def step(x, st):
        h0, s0 = np_lstm(x, st[0], st[1], w0["kernel"], w0["bias"])
        h1, s1 = np_lstm(h0, st[2], st[3], w1["kernel"], w1["bias"])
        return h1, s0 + s1

    want_o, want_s = np_rnn(step, X, tuple(np.zeros((3, n)) for n in (4, 4, 3, 3)), LENGTHS)
    np.testing.assert_allclose(o, want_o, rtol=1e-12, atol=1e-15)
    for got, want in zip([s[0].c, s[0].h, s[1].c, s[1].h], want_s):
        np.testing.assert_allclose(got, want, rtol=1e-12)


@pytest.mark.parametrize("time_major", [False, True])
def test_bidirectional_dynamic_rnn_matches_numpy(time_major):
    x = np.transpose(X, (1, 0, 2)) if time_major else X
    (fw, bw), (s_fw, s_bw) = tf.nn.bidirectional_dynamic_rnn(
        rnn_cell.GRUCell(3), rnn_cell.GRUCell(2), tf.constant(x), sequence_length=tf.constant(LENGTHS, tf.int64),
        dtype=tf.float64, time_major=time_major)
    wf, wb = _weights("bidirectional_rnn/fw/gru_cell/"), _weights("bidirectional_rnn/bw/gru_cell/")
    assert wf["gates/kernel"].shape.as_list() == [5, 6] and wb["gates/kernel"].shape.as_list() == [4, 4]
    f, b, sf, sb, wf, wb = _run([fw, bw, s_fw, s_bw, wf, wb])
    if time_major:
        f, b = np.transpose(f, (1, 0, 2)), np.transpose(b, (1, 0, 2))

    def gru(w):
        return lambda xt, h: np_gru(xt, h, w["gates/kernel"], w["gates/bias"], w["candidate/kernel"],
                                    w["candidate/bias"])

    want_f, want_sf = np_rnn(gru(wf), X, np.zeros((3, 3)), LENGTHS)
    x_rev = np_reverse_sequence(X, LENGTHS, 1, 0)
    tmp, want_sb = np_rnn(gru(wb), x_rev, np.zeros((3, 2)), LENGTHS)
    np.testing.assert_allclose(f, want_f, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(sf, want_sf, rtol=1e-12)
    np.testing.assert_allclose(b, np_reverse_sequence(tmp, LENGTHS, 1, 0), rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(sb, want_sb, rtol=1e-12)
    # the backward output at t=0 has read the whole (valid part of the) sequence: it equals the bw final state
    np.testing.assert_allclose(b[:2, 0], sb[:2], rtol=1e-12)


def test_static_bidirectional_rnn_concatenates_and_names():
    inputs = tf.unstack(tf.constant(X), axis=1)
    outs, s_fw, s_bw = tf.nn.static_bidirectional_rnn(rnn_cell.BasicRNNCell(2), rnn_cell.BasicRNNCell(3), inputs,
                                                      sequence_length=LENGTHS, dtype=tf.float64)
    assert sorted(v.op.name for v in tf.global_variables()) == [
        "bidirectional_rnn/bw/basic_rnn_cell/bias", "bidirectional_rnn/bw/basic_rnn_cell/kernel",
        "bidirectional_rnn/fw/basic_rnn_cell/bias", "bidirectional_rnn/fw/basic_rnn_cell/kernel"]
    assert len(outs) == 5 and outs[0].shape.as_list() == [3, 5]
    wf, wb = _weights("bidirectional_rnn/fw/basic_rnn_cell/"), _weights("bidirectional_rnn/bw/basic_rnn_cell/")
    o, sf, sb, wf, wb = _run([outs, s_fw, s_bw, wf, wb])

    def basic(w):
        return lambda xt, h: (lambda out: (out, out))(np.tanh(np.concatenate([xt, h], 1) @ w["kernel"] + w["bias"]))

    want_f, want_sf = np_rnn(basic(wf), X, np.zeros((3, 2)), LENGTHS)
    tmp, want_sb = np_rnn(basic(wb), np_reverse_sequence(X, LENGTHS, 1, 0), np.zeros((3, 3)), LENGTHS)
    want = np.concatenate([want_f, np_reverse_sequence(tmp, LENGTHS, 1, 0)], 2)
    np.testing.assert_allclose(np.stack(o, 1), want, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(sf, want_sf, rtol=1e-12)
    np.testing.assert_allclose(sb, want_sb, rtol=1e-12)


def test_reverse_sequence_forward_gradient_and_errors():
    x = np.arange(2 * 4 * 3, dtype=np.float64).reshape(4, 2, 3)  # [time, batch, depth]
    got = _run(tf.reverse_sequence(tf.constant(x), [3, 1], seq_axis=0, batch_axis=1))
    want = x.copy()
    want[:3, 0] = x[2::-1, 0]
    np.testing.assert_array_equal(got, want)
    y = np.arange(12.0).reshape(2, 6)
    np.testing.assert_array_equal(_run(tf.reverse_sequence(y, [6, 4], seq_dim=1)),
                                  [[5, 4, 3, 2, 1, 0], [9, 8, 7, 6, 10, 11]])
    check_gradients(lambda t: tf.reverse_sequence(t, [2, 4], seq_axis=0, batch_axis=1), [x])
    with pytest.raises(ValueError, match="batch"):
        tf.reverse_sequence(tf.constant(x), [1, 2, 3], seq_axis=0, batch_axis=1)
    with pytest.raises(tf.errors.InvalidArgumentError, match="seq_lens"):
        _run(tf.reverse_sequence(tf.constant(x), [5, 1], seq_axis=0, batch_axis=1))


def _weights_from(values):
    """A custom getter that hands the cell placeholders instead of variables (so FD can perturb the weights)."""
    def getter(_getter, name, *args, **kwargs):
        return values[name.rsplit("/", 1)[-1]]
    return getter


def test_dynamic_rnn_gradients_match_finite_differences():
    rng = np.random.default_rng(2)
    x, c0, h0 = rng.standard_normal((2, 3, 2)), rng.standard_normal((2, 3)), rng.standard_normal((2, 3))
    kernel, bias = 0.5 * rng.standard_normal((5, 12)), 0.5 * rng.standard_normal(12)

    def build(x, c0, h0, kernel, bias):
        with tf.variable_scope("fd", custom_getter=_weights_from({"kernel": kernel, "bias": bias})):
            out, state = tf.nn.dynamic_rnn(rnn_cell.BasicLSTMCell(3), x, sequence_length=[3, 2],
                                           initial_state=rnn_cell.LSTMStateTuple(c0, h0))
        return tf.concat([tf.reshape(out, [2, 9]), state.c, state.h], 1)

    check_gradients(build, [x, c0, h0, kernel, bias], rtol=1e-5, atol=1e-7)


def test_bidirectional_gru_gradients_match_finite_differences():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((4, 2, 2))  # time-major
    w = {"gates/kernel": 0.5 * rng.standard_normal((4, 4)), "candidate/kernel": 0.5 * rng.standard_normal((4, 2)),
         "gates/bias": rng.standard_normal(4), "candidate/bias": rng.standard_normal(2)}
    names = sorted(w)

    def build(x, *weights):
        values = dict(zip(names, weights))

        def getter(_getter, name, *args, **kwargs):
            return values[name.split("gru_cell/")[1]]

        with tf.variable_scope("fd", custom_getter=getter):
            (fw, bw), _ = tf.nn.bidirectional_dynamic_rnn(rnn_cell.GRUCell(2), rnn_cell.GRUCell(2), x,
                                                          sequence_length=[4, 3], dtype=tf.float64,
                                                          time_major=True)
        return tf.concat([fw, bw], 2)

    check_gradients(build, [x] + [w[n] for n in names], rtol=1e-5, atol=1e-7)


def test_static_rnn_training_gradient_reaches_the_variables():
    x = tf.constant(X)
    outs, state = tf.nn.static_rnn(rnn_cell.BasicRNNCell(2), tf.unstack(x, axis=1), dtype=tf.float64)
    loss = tf.reduce_sum(state * state)
    kernel = [v for v in tf.global_variables() if v.op.name == "rnn/basic_rnn_cell/kernel"][0]
    (g,) = tf.gradients(loss, [kernel])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        k0, analytic = sess.run([kernel, g])

        def f(k):
            sess.run(kernel.assign(k))
            return float(sess.run(loss))

        numeric = numeric_grad(f, k0)
    np.testing.assert_allclose(analytic, numeric, rtol=1e-5, atol=1e-8)


def test_bad_arguments_are_clear_errors():
    with pytest.raises(ValueError, match="Input size .depth of inputs. must be accessible"):
        tf.nn.dynamic_rnn(rnn_cell.GRUCell(2), tf.placeholder(tf.float32, [None, None, None]), dtype=tf.float32)
    with pytest.raises(ValueError, match="dtype"):
        tf.nn.dynamic_rnn(rnn_cell.GRUCell(2), tf.zeros([2, 3, 1]))
    with pytest.raises(ValueError, match="sequence_length must be a vector"):
        tf.nn.dynamic_rnn(rnn_cell.GRUCell(2), tf.zeros([2, 3, 1]), sequence_length=[[1, 2]], dtype=tf.float32)
    with pytest.raises(TypeError, match="inputs must be a sequence"):
        tf.nn.static_rnn(rnn_cell.GRUCell(2), tf.zeros([2, 3]), dtype=tf.float32)
    with pytest.raises(TypeError, match="is not an RNNCell"):
        tf.nn.dynamic_rnn(object(), tf.zeros([2, 3, 1]), dtype=tf.float32)
    # an unknown batch dimension is fine: the batch size comes from the input's runtime shape
    y, lengths = tf.placeholder(tf.float32, [None, 4, 3]), tf.placeholder(tf.int32, [None])
    out, state = tf.nn.dynamic_rnn(rnn_cell.BasicLSTMCell(2), y, sequence_length=lengths, dtype=tf.float32)
    assert out.shape.as_list() == [None, 4, 2]
    o = _run(out, {y: np.ones((5, 4, 3)), lengths: [4, 3, 2, 1, 0]})
    assert o.shape == (5, 4, 2) and [int((np.abs(r).sum(1) > 0).sum()) for r in o] == [4, 3, 2, 1, 0]


def test_checkpoint_round_trip_under_tf_names(tmp_path):
    path = str(tmp_path / "model.ckpt")
    with tf.Graph().as_default():
        x = tf.constant(X[:, :, :2])
        out, _ = tf.nn.dynamic_rnn(rnn_cell.MultiRNNCell([rnn_cell.LSTMCell(3, use_peepholes=True),
                                                          rnn_cell.GRUCell(2)]), x, dtype=tf.float64)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            want = sess.run(out)
            weights = {v.op.name: sess.run(v) for v in tf.global_variables()}
            tf.train.Saver().save(sess, path)
    expected = {"rnn/multi_rnn_cell/cell_0/lstm_cell/" + n for n in ("kernel", "bias", "w_f_diag", "w_i_diag",
                                                                      "w_o_diag")}
    expected |= {"rnn/multi_rnn_cell/cell_1/gru_cell/" + n for n in ("gates/kernel", "gates/bias",
                                                                      "candidate/kernel", "candidate/bias")}
    assert set(weights) == expected
    with tf.Graph().as_default():  # plain variables under TF's names read the checkpoint
        plain = {n: tf.Variable(np.zeros_like(v), name=n) for n, v in weights.items()}
        with tf.Session() as sess:
            tf.train.Saver(plain).restore(sess, path)
            for n, v in plain.items():
                np.testing.assert_array_equal(sess.run(v), weights[n])
    with tf.Graph().as_default():  # and the same model restores and computes the same outputs
        out2, _ = tf.nn.dynamic_rnn(rnn_cell.MultiRNNCell([rnn_cell.LSTMCell(3, use_peepholes=True),
                                                           rnn_cell.GRUCell(2)]), tf.constant(X[:, :, :2]),
                                    dtype=tf.float64)
        with tf.Session() as sess:
            tf.train.Saver().restore(sess, path)
            np.testing.assert_array_equal(sess.run(out2), want)


def test_contrib_rnn_aliases_and_contrib_errors():
    for name in ("BasicLSTMCell", "BasicRNNCell", "GRUCell", "LSTMCell", "MultiRNNCell", "DropoutWrapper",
                 "LSTMStateTuple", "RNNCell"):
        assert getattr(tf.contrib.rnn, name) is getattr(tf.nn.rnn_cell, name)
    assert tf.contrib.rnn.static_rnn is tf.nn.static_rnn
    assert tf.contrib.rnn.static_bidirectional_rnn is tf.nn.static_bidirectional_rnn
    from tensorfleet.contrib import rnn as contrib_rnn
    from tensorfleet.nn.rnn_cell import BasicLSTMCell
    assert contrib_rnn.BasicLSTMCell is BasicLSTMCell
    with pytest.raises(AttributeError, match="tf.contrib.learn is not supported.*tf.contrib.layers, "
                                             "tf.contrib.framework and tf.contrib.rnn only"):
        tf.contrib.learn.DNNClassifier([10], [])
    with pytest.raises(AttributeError, match="tf.contrib.rnn.LayerNormBasicLSTMCell is not supported"):
        tf.contrib.rnn.LayerNormBasicLSTMCell(3)
    assert not hasattr(tf.contrib, "slim")


def test_lstm_block_cell_is_lstm_cell_under_lstm_cell_names():
    x = tf.constant(X[:, 0])
    cell = tf.contrib.rnn.LSTMBlockCell(3, use_peephole=True, cell_clip=0.5)
    with tf.variable_scope("rnn"):
        out, state = cell(x, cell.zero_state(3, tf.float64))
    w = _weights("rnn/lstm_cell/")
    assert sorted(w) == ["bias", "kernel", "w_f_diag", "w_i_diag", "w_o_diag"]
    o, s, w = _run([out, state, w])
    want_o, (want_c, _) = np_lstm(X[:, 0], np.zeros((3, 3)), np.zeros((3, 3)), w["kernel"], w["bias"],
                                  peep=(w["w_f_diag"], w["w_i_diag"], w["w_o_diag"]), cell_clip=0.5)
    np.testing.assert_allclose(o, want_o, rtol=1e-12)
    np.testing.assert_allclose(s.c, want_c, rtol=1e-12)


def test_state_tuple_fetched_then_fed_back_as_a_feed_key():
    """The char-rnn idiom: run a chunk, feed its final LSTMStateTuple as the next chunk's initial state (TF's
    session flattens a tuple feed key against a value of the same structure)."""
    cell = rnn_cell.MultiRNNCell([rnn_cell.BasicLSTMCell(3), rnn_cell.BasicLSTMCell(2)])
    x = tf.placeholder(tf.float64, [3, 2, 2])
    init = cell.zero_state(3, tf.float64)
    out, final = tf.nn.dynamic_rnn(cell, x, initial_state=init)
    whole_x = tf.constant(np.concatenate([X[:, :2], X[:, 2:4]], 1))
    whole_out, whole_final = tf.nn.dynamic_rnn(cell, whole_x, dtype=tf.float64)  # the same cell: same variables
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        first_out, state = sess.run([out, final], {x: X[:, :2]})
        second_out, state2 = sess.run([out, final], {x: X[:, 2:4], init: state})
        want_out, want_state = sess.run([whole_out, whole_final])
        with pytest.raises(ValueError, match="Key had 4 elements, but value had 1"):
            sess.run(out, {x: X[:, :2], init: np.zeros(3)})
    np.testing.assert_allclose(np.concatenate([first_out, second_out], 1), want_out, rtol=1e-12)
    np.testing.assert_allclose(state2[1].h, want_state[1].h, rtol=1e-12)
