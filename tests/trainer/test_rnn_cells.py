"""tf.nn.rnn_cell: each cell's step against a hand-written numpy forward using the weights read back from its
variables, TF 1.15's variable names and shapes, state/output sizes, zero_state, MultiRNNCell, DropoutWrapper."""
import numpy as np
import pytest

import tensorfleet as tf

rnn_cell = tf.nn.rnn_cell


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def np_basic_rnn(x, h, kernel, bias):
    out = np.tanh(np.concatenate([x, h], 1) @ kernel + bias)
    return out, out


def np_gru(x, h, gk, gb, ck, cb):
    r, u = np.split(sigmoid(np.concatenate([x, h], 1) @ gk + gb), 2, axis=1)
    c = np.tanh(np.concatenate([x, r * h], 1) @ ck + cb)
    new_h = u * h + (1 - u) * c
    return new_h, new_h


def np_lstm(x, c, h, kernel, bias, forget_bias=1.0, peep=None, cell_clip=None, proj=None, proj_clip=None):
    """TF's LSTM step: gates i, j, f, o in that order along the kernel's columns."""
    i, j, f, o = np.split(np.concatenate([x, h], 1) @ kernel + bias, 4, axis=1)
    if peep is None:
        new_c = c * sigmoid(f + forget_bias) + sigmoid(i) * np.tanh(j)
    else:
        wf, wi, _ = peep
        new_c = sigmoid(f + forget_bias + wf * c) * c + sigmoid(i + wi * c) * np.tanh(j)
    if cell_clip is not None:
        new_c = np.clip(new_c, -cell_clip, cell_clip)
    gate_o = sigmoid(o + peep[2] * new_c) if peep is not None else sigmoid(o)
    m = gate_o * np.tanh(new_c)
    if proj is not None:
        m = m @ proj
        if proj_clip is not None:
            m = np.clip(m, -proj_clip, proj_clip)
    return m, (new_c, m)


def _random_init(seed):
    return tf.random_uniform_initializer(-1.0, 1.0, seed=seed)


def _run(fetches, feed=None):
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        return sess.run(fetches, feed)


def _vars():
    return {v.op.name: v for v in tf.global_variables()}


def test_basic_rnn_cell_matches_numpy_and_tf_names():
    rng = np.random.default_rng(0)
    x, h = rng.standard_normal((3, 4)), rng.standard_normal((3, 5))
    cell = rnn_cell.BasicRNNCell(5)
    assert (cell.state_size, cell.output_size) == (5, 5)
    with tf.variable_scope("rnn"):
        out, state = cell(tf.constant(x), tf.constant(h))
    names = {k: v.shape.as_list() for k, v in _vars().items()}
    assert names == {"rnn/basic_rnn_cell/kernel": [9, 5], "rnn/basic_rnn_cell/bias": [5]}
    assert _vars()["rnn/basic_rnn_cell/kernel"].dtype.base_dtype == tf.float64  # the inputs' dtype
    o, s, k, b = _run([out, state, _vars()["rnn/basic_rnn_cell/kernel"], _vars()["rnn/basic_rnn_cell/bias"]])
    assert not b.any()  # TF: zeros_initializer for the bias
    np.testing.assert_allclose(o, np_basic_rnn(x, h, k, b)[0], rtol=1e-12)
    np.testing.assert_allclose(s, o)


def test_gru_cell_matches_numpy_and_bias_initializers():
    rng = np.random.default_rng(1)
    x, h = rng.standard_normal((2, 3)), rng.standard_normal((2, 4))
    cell = rnn_cell.GRUCell(4, kernel_initializer=_random_init(1))
    with tf.variable_scope("rnn"):
        out, state = cell(tf.constant(x), tf.constant(h))
    v = _vars()
    assert {k: t.shape.as_list() for k, t in v.items()} == {
        "rnn/gru_cell/gates/kernel": [7, 8], "rnn/gru_cell/gates/bias": [8],
        "rnn/gru_cell/candidate/kernel": [7, 4], "rnn/gru_cell/candidate/bias": [4]}
    o, gk, gb, ck, cb = _run([out] + [v[f"rnn/gru_cell/{n}"] for n in
                                      ("gates/kernel", "gates/bias", "candidate/kernel", "candidate/bias")])
    np.testing.assert_array_equal(gb, np.ones(8))  # TF: gate bias starts at 1.0, candidate bias at 0
    np.testing.assert_array_equal(cb, np.zeros(4))
    np.testing.assert_allclose(o, np_gru(x, h, gk, gb, ck, cb)[0], rtol=1e-12)


@pytest.mark.parametrize("state_is_tuple", [True, False])
def test_basic_lstm_cell_gate_order_and_state_forms(state_is_tuple):
    rng = np.random.default_rng(2)
    x, c, h = rng.standard_normal((3, 2)), rng.standard_normal((3, 4)), rng.standard_normal((3, 4))
    cell = rnn_cell.BasicLSTMCell(4, forget_bias=0.5, state_is_tuple=state_is_tuple)
    assert cell.output_size == 4
    assert cell.state_size == (rnn_cell.LSTMStateTuple(4, 4) if state_is_tuple else 8)
    state = rnn_cell.LSTMStateTuple(tf.constant(c), tf.constant(h)) if state_is_tuple else \
        tf.constant(np.concatenate([c, h], 1))
    with tf.variable_scope("rnn"):
        out, new_state = cell(tf.constant(x), state)
    v = _vars()
    assert {k: t.shape.as_list() for k, t in v.items()} == {"rnn/basic_lstm_cell/kernel": [6, 16],
                                                             "rnn/basic_lstm_cell/bias": [16]}
    assert isinstance(new_state, rnn_cell.LSTMStateTuple) == state_is_tuple
    # a random bias so that a wrong gate order cannot hide behind zeros
    bias = rng.standard_normal(16)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(tf.assign(v["rnn/basic_lstm_cell/bias"], bias))
        o, s, k = sess.run([out, new_state, v["rnn/basic_lstm_cell/kernel"]])
    want_o, (want_c, want_h) = np_lstm(x, c, h, k, bias, forget_bias=0.5)
    np.testing.assert_allclose(o, want_o, rtol=1e-12)
    got_c, got_h = (s.c, s.h) if state_is_tuple else np.split(s, 2, axis=1)
    np.testing.assert_allclose(got_c, want_c, rtol=1e-12)
    np.testing.assert_allclose(got_h, want_h, rtol=1e-12)


def test_lstm_cell_peepholes_clip_and_projection():
    rng = np.random.default_rng(3)
    x, c, m = rng.standard_normal((2, 3)), 3 * rng.standard_normal((2, 5)), rng.standard_normal((2, 2))
    cell = rnn_cell.LSTMCell(5, use_peepholes=True, cell_clip=0.7, num_proj=2, proj_clip=0.3,
                             initializer=_random_init(4), forget_bias=0.25)
    assert cell.state_size == (5, 2) and cell.output_size == 2
    with tf.variable_scope("rnn"):
        out, state = cell(tf.constant(x), rnn_cell.LSTMStateTuple(tf.constant(c), tf.constant(m)))
    v = _vars()
    assert {k: t.shape.as_list() for k, t in v.items()} == {
        "rnn/lstm_cell/kernel": [5, 20], "rnn/lstm_cell/bias": [20], "rnn/lstm_cell/w_f_diag": [5],
        "rnn/lstm_cell/w_i_diag": [5], "rnn/lstm_cell/w_o_diag": [5], "rnn/lstm_cell/projection/kernel": [5, 2]}
    names = ["kernel", "bias", "w_f_diag", "w_i_diag", "w_o_diag", "projection/kernel"]
    o, s, k, b, wf, wi, wo, p = _run([out, state] + [v["rnn/lstm_cell/" + n] for n in names])
    want_o, (want_c, want_m) = np_lstm(x, c, m, k, b, 0.25, (wf, wi, wo), 0.7, p, 0.3)
    assert np.abs(s.c).max() <= 0.7 and np.abs(o).max() <= 0.3
    np.testing.assert_allclose(o, want_o, rtol=1e-12)
    np.testing.assert_allclose(s.c, want_c, rtol=1e-12)
    np.testing.assert_allclose(s.h, want_m, rtol=1e-12)


def test_cells_share_variables_across_calls_and_unique_names_per_scope():
    x = tf.zeros([2, 3])
    a, b = rnn_cell.BasicLSTMCell(4), rnn_cell.BasicLSTMCell(4)
    with tf.variable_scope("rnn"):
        s = a.zero_state(2, tf.float32)
        a(x, s)
        a(x, s)  # reused, no new variables
        b(x, s)  # a second cell object: basic_lstm_cell_1
    assert sorted(_vars()) == ["rnn/basic_lstm_cell/bias", "rnn/basic_lstm_cell/kernel",
                               "rnn/basic_lstm_cell_1/bias", "rnn/basic_lstm_cell_1/kernel"]
    assert [w.op.name for w in a.trainable_weights] == ["rnn/basic_lstm_cell/kernel", "rnn/basic_lstm_cell/bias"]
    named = rnn_cell.GRUCell(2, name="my_gru")
    named(x, tf.zeros([2, 2]))
    assert "my_gru/gates/kernel" in _vars()


def test_zero_state_shapes_dtype_and_dynamic_batch():
    cell = rnn_cell.MultiRNNCell([rnn_cell.BasicLSTMCell(3), rnn_cell.GRUCell(2)])
    assert cell.state_size == (rnn_cell.LSTMStateTuple(3, 3), 2) and cell.output_size == 2
    z = cell.zero_state(4, tf.float64)
    assert z[0].c.shape.as_list() == [4, 3] and z[1].shape.as_list() == [4, 2] and z[1].dtype == tf.float64
    batch = tf.placeholder(tf.int32, [])
    zd = rnn_cell.BasicRNNCell(5).zero_state(batch, tf.float32)
    assert zd.shape.as_list() == [None, 5]
    assert _run(zd, {batch: 3}).shape == (3, 5)
    assert not _run(z[0].c).any()


def test_cell_errors_are_clear():
    cell = rnn_cell.BasicLSTMCell(3)
    with pytest.raises(ValueError, match="expected ndim=2, found ndim=3"):
        cell(tf.zeros([2, 4, 3]), cell.zero_state(2, tf.float32))
    with pytest.raises(ValueError, match="inputs.shape\\[-1\\] to be known"):
        rnn_cell.GRUCell(2)(tf.placeholder(tf.float32, [2, None]), tf.zeros([2, 2]))
    with pytest.raises(ValueError, match="floating point"):
        rnn_cell.BasicRNNCell(2)(tf.zeros([2, 3], tf.int32), tf.zeros([2, 2], tf.int32))
    with pytest.raises(ValueError, match="at least one cell"):
        rnn_cell.MultiRNNCell([])
    with pytest.raises(TypeError, match="is not an RNNCell"):
        rnn_cell.DropoutWrapper("not a cell")
    with pytest.raises(ValueError, match="must be between 0 and 1"):
        rnn_cell.DropoutWrapper(cell, output_keep_prob=1.5)


def test_multi_rnn_cell_chains_cells_with_tf_names():
    rng = np.random.default_rng(5)
    x = rng.standard_normal((2, 3))
    cell = rnn_cell.MultiRNNCell([rnn_cell.BasicLSTMCell(4), rnn_cell.BasicRNNCell(2)])
    state = cell.zero_state(2, tf.float64)
    with tf.variable_scope("rnn"):
        out, new_state = cell(tf.constant(x), state)
    assert sorted(_vars()) == ["rnn/multi_rnn_cell/cell_0/basic_lstm_cell/bias",
                               "rnn/multi_rnn_cell/cell_0/basic_lstm_cell/kernel",
                               "rnn/multi_rnn_cell/cell_1/basic_rnn_cell/bias",
                               "rnn/multi_rnn_cell/cell_1/basic_rnn_cell/kernel"]
    assert isinstance(new_state, tuple) and isinstance(new_state[0], rnn_cell.LSTMStateTuple)
    v = _vars()
    o, s, k0, b0, k1, b1 = _run([out, new_state] + [v[f"rnn/multi_rnn_cell/{n}"] for n in (
        "cell_0/basic_lstm_cell/kernel", "cell_0/basic_lstm_cell/bias", "cell_1/basic_rnn_cell/kernel",
        "cell_1/basic_rnn_cell/bias")])
    h0, (c0, _) = np_lstm(x, np.zeros((2, 4)), np.zeros((2, 4)), k0, b0)
    h1, _ = np_basic_rnn(h0, np.zeros((2, 2)), k1, b1)
    np.testing.assert_allclose(o, h1, rtol=1e-12)
    np.testing.assert_allclose(s[0].c, c0, rtol=1e-12)
    np.testing.assert_allclose(s[1], h1, rtol=1e-12)


def test_multi_rnn_cell_concatenated_state():
    cell = rnn_cell.MultiRNNCell([rnn_cell.GRUCell(2), rnn_cell.GRUCell(3)], state_is_tuple=False)
    assert cell.state_size == 5
    out, state = cell(tf.ones([2, 4]), cell.zero_state(2, tf.float32))
    assert state.shape.as_list() == [2, 5]
    o, s = _run([out, state])
    np.testing.assert_allclose(s[:, 2:], o, rtol=1e-6)
    with pytest.raises(ValueError, match="state_is_tuple is not set"):
        rnn_cell.MultiRNNCell([rnn_cell.BasicLSTMCell(2)], state_is_tuple=False)


def test_dropout_wrapper_keep_prob_one_adds_no_op_and_equals_the_cell():
    x = tf.constant(np.random.default_rng(6).standard_normal((3, 2)))
    cell = rnn_cell.BasicLSTMCell(4)
    plain_out, plain_state = cell(x, cell.zero_state(3, tf.float64))
    wrapped = rnn_cell.DropoutWrapper(cell, input_keep_prob=1.0, output_keep_prob=1, state_keep_prob=1.0)
    assert wrapped.state_size == cell.state_size and wrapped.output_size == 4
    out, state = wrapped(x, wrapped.zero_state(3, tf.float64))
    assert not [op for op in tf.get_default_graph().get_operations() if op.type == "Dropout"]
    a, b = _run([(plain_out, plain_state), (out, state)])
    np.testing.assert_array_equal(a[0], b[0])
    np.testing.assert_array_equal(a[1].c, b[1].c)
    assert len(tf.global_variables()) == 2  # the wrapper opens no scope of its own


def test_dropout_wrapper_statistics_and_lstm_state_filter():
    n, units, keep = 1000, 8, 0.5
    x = tf.constant(np.random.default_rng(7).uniform(0.5, 1.0, (n, 3)))
    cell = rnn_cell.BasicLSTMCell(units)
    state0 = rnn_cell.LSTMStateTuple(tf.ones([n, units], tf.float64), tf.ones([n, units], tf.float64))
    plain_out, plain_state = cell(x, state0)
    wrapped = rnn_cell.DropoutWrapper(cell, output_keep_prob=keep, state_keep_prob=keep, seed=11)
    out, state = wrapped(x, state0)
    po, ps, o, s = _run([plain_out, plain_state, out, state])
    kept = o != 0
    # Binomial(8000, 0.5): 5 standard deviations is +-224 elements
    assert abs(kept.sum() - keep * o.size) < 5 * np.sqrt(o.size * keep * (1 - keep))
    np.testing.assert_allclose(o[kept], po[kept] / keep, rtol=1e-12)
    np.testing.assert_array_equal(s.c, ps.c)  # TF's default filter never drops an LSTM's c ...
    h_kept = s.h != 0
    assert abs(h_kept.sum() - keep * s.h.size) < 5 * np.sqrt(s.h.size * keep * (1 - keep))  # ... only h
    np.testing.assert_allclose(s.h[h_kept], ps.h[h_kept] / keep, rtol=1e-12)
    assert (h_kept != kept).any()  # independent masks for output and state


def test_dropout_wrapper_variational_recurrent_reuses_one_mask_over_time():
    cell = rnn_cell.DropoutWrapper(rnn_cell.BasicRNNCell(50), output_keep_prob=0.5, variational_recurrent=True,
                                   dtype=tf.float64, seed=3)
    inputs = [tf.constant(np.full((4, 2), t + 1.0)) for t in range(3)]
    outputs, _ = tf.nn.static_rnn(cell, inputs, dtype=tf.float64)
    outs = _run(outputs)
    masks = [o != 0 for o in outs]
    for m in masks:
        np.testing.assert_array_equal(m, masks[0])  # one mask for every step ...
        np.testing.assert_array_equal(m, np.broadcast_to(m[0], m.shape))  # ... and every batch entry
    assert 0 < masks[0][0].sum() < 50
    with pytest.raises(TypeError, match="dtype must be provided"):
        rnn_cell.DropoutWrapper(rnn_cell.BasicRNNCell(2), variational_recurrent=True, output_keep_prob=0.5)


def test_dropout_wrapper_keep_prob_placeholder_fed_per_run():
    keep_prob = tf.placeholder(tf.float64, [])
    cell = rnn_cell.BasicRNNCell(200)
    x = tf.constant(np.ones((10, 3)))
    plain, _ = cell(x, cell.zero_state(10, tf.float64))
    out, _ = rnn_cell.DropoutWrapper(cell, output_keep_prob=keep_prob)(x, cell.zero_state(10, tf.float64))
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        p, full = sess.run([plain, out], {keep_prob: 1.0})
        half = sess.run(out, {keep_prob: 0.5})
    np.testing.assert_array_equal(full, p)
    kept = half != 0
    assert abs(kept.mean() - 0.5) < 5 * np.sqrt(0.25 / half.size)
    np.testing.assert_allclose(half[kept], 2 * p[kept], rtol=1e-12)


class ScaledRNNCell(rnn_cell.RNNCell):
    """A user-defined TF1 cell: `call` creates its weight with tf.get_variable (the common pre-Layer style)."""

    def __init__(self, units):
        super().__init__()
        self._units = units

    state_size = property(lambda self: self._units)
    output_size = property(lambda self: self._units)

    def call(self, inputs, state):
        w = tf.get_variable("w", [inputs.shape[1].value, self._units], dtype=inputs.dtype,
                            initializer=tf.constant_initializer(0.5))
        out = tf.tanh(tf.matmul(inputs, w) + state)
        return out, out


def test_user_defined_cell_creates_its_variables_once_under_its_scope():
    x = np.random.default_rng(8).standard_normal((2, 3, 4))
    out, state = tf.nn.dynamic_rnn(ScaledRNNCell(2), tf.constant(x), dtype=tf.float64)
    assert [v.op.name for v in tf.global_variables()] == ["rnn/scaled_rnn_cell/w"]
    o = _run(out)
    h = np.zeros((2, 2))
    for t in range(3):
        h = np.tanh(x[:, t] @ np.full((4, 2), 0.5) + h)
        np.testing.assert_allclose(o[:, t], h, rtol=1e-12)


def test_residual_and_device_wrappers():
    x = tf.constant(np.random.default_rng(9).standard_normal((2, 3)))
    cell = rnn_cell.GRUCell(3)
    plain, _ = cell(x, cell.zero_state(2, tf.float64))
    res, res_state = rnn_cell.ResidualWrapper(cell)(x, cell.zero_state(2, tf.float64))
    scaled, _ = rnn_cell.ResidualWrapper(cell, residual_fn=lambda i, o: 2 * o)(x, cell.zero_state(2, tf.float64))
    on_cpu = rnn_cell.DeviceWrapper(rnn_cell.BasicRNNCell(2), "/cpu:0")
    dev_out, _ = on_cpu(x, on_cpu.zero_state(2, tf.float64))
    assert dev_out.op.device == "/device:CPU:0" and x.op.device == ""
    assert len(tf.global_variables()) == 4 + 2  # GRU's 4 (shared by the wrappers) + the BasicRNNCell's 2
    p, r, rs, s = _run([plain, res, res_state, scaled])
    np.testing.assert_allclose(r, p + _run(x), rtol=1e-12)
    np.testing.assert_allclose(rs, p, rtol=1e-12)  # the state is the cell's, without the residual
    np.testing.assert_allclose(s, 2 * p, rtol=1e-12)
    with pytest.raises(ValueError, match="cannot be added"):
        rnn_cell.ResidualWrapper(rnn_cell.GRUCell(4))(x, tf.zeros([2, 4], tf.float64))
