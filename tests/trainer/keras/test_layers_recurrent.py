"""SimpleRNN, GRU, LSTM (and RNN over cells) against numpy recurrences (layer_reference.py): TF 1.15's v1
defaults and variable names, return_sequences/return_state/go_backwards, the unrolled and the while-loop paths,
masks from Embedding(mask_zero=True), initial states, stateful layers, dropout by learning phase, gradients."""
import importlib

import numpy as np
import pytest

import tensorfleet as tf
from gradcheck import check_gradients
from layer_reference import gru, hard_sigmoid, lstm, simple_rnn

K = tf.keras.backend
L = tf.keras.layers
rng = np.random.default_rng(17)
rnn_module = importlib.import_module("tensorfleet.keras.backend.rnn")


def run(t, feed=None):
    return K.get_session().run(t, feed)


def test_lstm_defaults_names_and_forward():
    x = rng.standard_normal((3, 5, 4))
    layer = L.LSTM(6, return_sequences=True, return_state=True, dtype="float64")
    assert layer.get_config()["recurrent_activation"] == "hard_sigmoid"
    assert layer.implementation == 1 and layer.unit_forget_bias
    seq, h, c = layer(K.constant(x, "float64"))
    assert [v.name for v in layer.weights] == ["lstm/kernel:0", "lstm/recurrent_kernel:0", "lstm/bias:0"]
    kernel, recurrent, bias = layer.get_weights()
    assert kernel.shape == (4, 24) and recurrent.shape == (6, 24)
    np.testing.assert_array_equal(bias, np.r_[np.zeros(6), np.ones(6), np.zeros(12)])  # unit_forget_bias
    np.testing.assert_allclose(recurrent @ recurrent.T, np.eye(6), atol=1e-10)  # orthogonal rows
    bias = rng.standard_normal(24)
    layer.set_weights([kernel, recurrent, bias])
    e_seq, e_h, e_c = lstm(x, kernel, recurrent, bias)
    got = run([seq, h, c])
    np.testing.assert_allclose(got[0], e_seq, rtol=1e-10)
    np.testing.assert_allclose(got[1], e_h, rtol=1e-10)
    np.testing.assert_allclose(got[2], e_c, rtol=1e-10)
    assert seq.shape.as_list() == [3, 5, 6] and h.shape.as_list() == [3, 6]
    shapes = layer.compute_output_shape((None, 5, 4))
    assert [s.as_list() for s in shapes] == [[None, 5, 6], [None, 6], [None, 6]]


@pytest.mark.parametrize("steps", [4, 40, None])  # unrolled (short static), while loop (long static, dynamic)
def test_lstm_paths_go_backwards_and_last_output(steps):
    t = steps or 7
    x = rng.standard_normal((2, t, 3))
    ph = tf.placeholder(tf.float64, [None, steps, 3])
    layer = L.LSTM(4, go_backwards=True, dtype="float64")
    out = layer(ph)
    kernel, recurrent, bias = layer.get_weights()
    expected = lstm(x[:, ::-1], kernel, recurrent, bias)[1]
    np.testing.assert_allclose(run(out, {ph: x}), expected, rtol=1e-9)
    seq_layer = L.LSTM(4, return_sequences=True, dtype="float64")
    seq = seq_layer(ph)
    np.testing.assert_allclose(run(seq, {ph: x}), lstm(x, *seq_layer.get_weights())[0], rtol=1e-9)
    assert seq.shape.as_list() == [None, steps, 4]


@pytest.mark.parametrize("reset_after", [False, True])
def test_gru_against_numpy(reset_after):
    x = rng.standard_normal((2, 6, 3))
    layer = L.GRU(5, return_sequences=True, reset_after=reset_after, bias_initializer="random_normal",
                  dtype="float64")
    out = layer(K.constant(x, "float64"))
    kernel, recurrent, bias = layer.get_weights()
    assert [v.name for v in layer.weights] == ["gru/kernel:0", "gru/recurrent_kernel:0", "gru/bias:0"]
    assert bias.shape == ((2, 15) if reset_after else (15,)) and kernel.shape == (3, 15)
    np.testing.assert_allclose(run(out), gru(x, kernel, recurrent, bias, reset_after=reset_after)[0], rtol=1e-9)


def test_simple_rnn_and_rnn_over_cells():
    x = rng.standard_normal((2, 5, 3))
    layer = L.SimpleRNN(4, activation="relu", bias_initializer="ones", dtype="float64")
    out = run(layer(K.constant(x, "float64")))
    assert layer.weights[0].name == "simple_rnn/kernel:0"
    np.testing.assert_allclose(out, simple_rnn(x, *layer.get_weights(), act=lambda v: np.maximum(v, 0))[1],
                               rtol=1e-10)
    stacked = L.RNN([L.LSTMCell(4, dtype="float64"), L.GRUCell(3, dtype="float64")], return_state=True,
                    dtype="float64")
    outs = run(stacked(K.constant(x, "float64")))
    assert len(outs) == 4  # output, lstm h, lstm c, gru h
    w = stacked.get_weights()
    mid = lstm(x, *w[:3])[0]
    np.testing.assert_allclose(outs[0], gru(mid, *w[3:])[1], rtol=1e-9)
    np.testing.assert_allclose(outs[3], outs[0])


def test_mask_from_embedding_skips_padded_steps():
    ids = np.array([[3, 1, 4, 0, 0], [2, 7, 1, 8, 2], [5, 0, 0, 0, 0]])
    inp = L.Input((5,), dtype="int32")
    emb = L.Embedding(10, 3, mask_zero=True)
    layer = L.LSTM(4, return_sequences=True)
    seq = layer(emb(inp))
    assert seq._keras_mask is not None
    last = L.LSTM(4)(emb(inp))
    model = tf.keras.Model(inp, [seq, last])
    got_seq, got_last = model.predict(ids)
    table = emb.get_weights()[0].astype(np.float64)
    x, mask = table[ids], ids != 0
    e_seq, e_h, _ = lstm(x, *[w.astype(np.float64) for w in layer.get_weights()], mask=mask)
    np.testing.assert_allclose(got_seq, e_seq, rtol=1e-5, atol=1e-6)  # masked steps repeat the previous output
    e_last = lstm(x, *[w.astype(np.float64) for w in model.layers[-1].get_weights()], mask=mask)[1]
    np.testing.assert_allclose(got_last, e_last, rtol=1e-5, atol=1e-6)


def test_masked_while_loop_path():
    x = rng.standard_normal((2, 6, 3))
    mask = np.array([[1, 1, 0, 1, 0, 0], [1, 1, 1, 1, 1, 1]], bool)
    ph, mph = tf.placeholder(tf.float64, [None, None, 3]), tf.placeholder(tf.bool, [None, None])
    layer = L.GRU(3, dtype="float64")
    out = layer(ph, mask=mph)
    kernel, recurrent, bias = layer.get_weights()
    # a masked step keeps the state: the final state is the recurrence over the unmasked steps only
    expected = [gru(x[b:b + 1, mask[b]], kernel, recurrent, bias)[1][0] for b in range(2)]
    np.testing.assert_allclose(run(out, {ph: x, mph: mask}), np.stack(expected), rtol=1e-9)


def test_initial_state_as_keras_tensors_and_plain_tensors():
    x = rng.standard_normal((2, 4, 3)).astype(np.float32)
    h0, c0 = rng.standard_normal((2, 5)).astype(np.float32), rng.standard_normal((2, 5)).astype(np.float32)
    inp, hin, cin = L.Input((4, 3)), L.Input((5,)), L.Input((5,))
    layer = L.LSTM(5)
    model = tf.keras.Model([inp, hin, cin], layer(inp, initial_state=[hin, cin]))
    w = [v.astype(np.float64) for v in layer.get_weights()]
    expected = lstm(x.astype(np.float64), *w, h0=h0, c0=c0)[1]
    np.testing.assert_allclose(model.predict([x, h0, c0]), expected, rtol=1e-5, atol=1e-6)
    plain = layer(K.constant(x), initial_state=[K.constant(h0), K.constant(c0)])
    np.testing.assert_allclose(run(plain), expected, rtol=1e-5, atol=1e-6)


def test_stateful_lstm_carries_state_between_batches():
    x = rng.standard_normal((2, 3, 2)).astype(np.float32)
    model = tf.keras.Sequential([L.LSTM(3, stateful=True, batch_input_shape=(2, 3, 2))])
    first = model.predict(x, batch_size=2)
    second = model.predict(x, batch_size=2)
    w = [v.astype(np.float64) for v in model.get_weights()]
    _, h1, c1 = lstm(x.astype(np.float64), *w)
    np.testing.assert_allclose(first, h1, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(second, lstm(x.astype(np.float64), *w, h0=h1, c0=c1)[1], rtol=1e-5, atol=1e-6)
    assert model.layers[0].weights == model.layers[0].trainable_weights  # the states are not weights
    model.reset_states()
    np.testing.assert_allclose(model.predict(x, batch_size=2), h1, rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="needs to know its batch size"):
        L.LSTM(2, stateful=True)(L.Input((3, 2)))


def test_dropout_only_in_training():
    x = rng.standard_normal((4, 5, 3)).astype(np.float32)
    ph = tf.placeholder(tf.float32, [None, 5, 3])
    layer = L.LSTM(6, dropout=0.5, recurrent_dropout=0.5)
    out = layer(ph)
    w = [v.astype(np.float64) for v in layer.get_weights()]
    plain = lstm(x.astype(np.float64), *w)[1]
    np.testing.assert_allclose(run(out, {ph: x}), plain, rtol=1e-5, atol=1e-6)  # learning phase 0: no dropout
    trained = run(out, {ph: x, K.learning_phase(): True})
    assert np.abs(trained - plain).max() > 1e-3
    grads = tf.gradients(tf.reduce_sum(out), layer.trainable_weights)
    values = run(grads, {ph: x, K.learning_phase(): True})
    assert all(np.all(np.isfinite(v)) for v in values)


def test_gru_dropout_masks_are_drawn_once_per_call():
    """TF draws one mask per call and reuses it at every step: with only input dropout and a zero recurrent
    kernel, step t's output depends on x_t * mask alone, so equal inputs at two steps give equal outputs."""
    x = np.repeat(rng.standard_normal((3, 1, 4)).astype(np.float32), 6, axis=1)
    layer = L.SimpleRNN(5, dropout=0.5, recurrent_initializer="zeros", return_sequences=True)
    out = run(layer(K.constant(x), training=True))
    for s in range(1, 6):
        np.testing.assert_allclose(out[:, s], out[:, 0], rtol=1e-6)


@pytest.mark.parametrize("cls", [L.SimpleRNN, L.GRU, L.LSTM])
@pytest.mark.parametrize("loop", ["unrolled", "while"])
def test_recurrent_gradients(cls, loop, monkeypatch):
    if loop == "while":  # short static time axes are unrolled; force the tf.while_loop path
        monkeypatch.setattr(rnn_module, "UNROLL_STATIC_STEPS", 0)
    kwargs = {"kernel_initializer": "random_normal", "recurrent_initializer": "random_normal",
              "bias_initializer": "random_normal"}
    check_gradients(lambda t: cls(3, return_sequences=True, dtype="float64", **kwargs)(t),
                    [rng.standard_normal((2, 4, 2))], rtol=1e-4, atol=1e-6)


def test_configs_round_trip():
    for layer in [L.LSTM(4, dropout=0.2, recurrent_dropout=0.1, return_sequences=True, go_backwards=True,
                         kernel_regularizer="l2", implementation=2),
                  L.GRU(3, reset_after=True, recurrent_activation="sigmoid", stateful=False),
                  L.SimpleRNN(2, activation="relu", unroll=True, return_state=True),
                  L.RNN(L.LSTMCell(3)), L.RNN([L.GRUCell(2), L.SimpleRNNCell(3)])]:
        config = layer.get_config()
        clone = L.deserialize(L.serialize(layer))
        assert clone.get_config() == config
    config = L.LSTM(4).get_config()
    assert "cell" not in config and config["units"] == 4 and config["implementation"] == 1
    assert config["return_sequences"] is False and config["recurrent_initializer"]["class_name"] == "Orthogonal"
    assert hard_sigmoid(np.array([-3.0, 0.0, 3.0])).tolist() == [0.0, 0.5, 1.0]
