"""Embedding, TimeDistributed and Bidirectional against numpy, with TF 1.15's variable names and configs."""
import numpy as np
import pytest

import tensorfleet as tf
from gradcheck import check_gradients
from layer_reference import lstm

K = tf.keras.backend
L = tf.keras.layers
rng = np.random.default_rng(23)


def run(t, feed=None):
    return K.get_session().run(t, feed)


def test_embedding_lookup_mask_shapes_and_gradient():
    ids = np.array([[1, 0, 4], [3, 3, 0]])
    layer = L.Embedding(5, 2, mask_zero=True, input_length=3)
    out = layer(K.constant(ids, "int32"))
    table = layer.get_weights()[0]
    assert layer.weights[0].name == "embedding/embeddings:0" and table.shape == (5, 2)
    assert np.abs(table).max() <= 0.05  # 'uniform': U(-0.05, 0.05)
    np.testing.assert_array_equal(run(out), table[ids])
    np.testing.assert_array_equal(run(out._keras_mask), ids != 0)
    assert layer.compute_output_shape((None, 3)).as_list() == [None, 3, 2]
    assert L.Embedding(5, 2).compute_mask(K.constant(ids, "int32")) is None
    floats = L.Embedding(5, 2)(K.constant(ids.astype(np.float32)))  # cast to int32, as TF
    assert floats.shape.as_list() == [2, 3, 2]
    grad = tf.gradients(tf.reduce_sum(out * K.constant([[1.0, 2.0]])), layer.embeddings)[0]
    dense = run(tf.convert_to_tensor(grad))
    expected = np.zeros((5, 2))
    np.add.at(expected, ids.ravel(), np.tile([1.0, 2.0], (6, 1)))
    np.testing.assert_allclose(dense, expected)
    with pytest.raises(ValueError, match="input_length"):
        L.Embedding(5, 2, input_length=4).compute_output_shape((None, 3))


def test_time_distributed_dense_both_paths():
    x = rng.standard_normal((2, 4, 3))
    td = L.TimeDistributed(L.Dense(5, dtype="float64"))
    out = td(K.constant(x, "float64"))  # known batch: per-step loop
    assert [v.name for v in td.weights] == ["time_distributed/kernel:0", "time_distributed/bias:0"]
    kernel, bias = td.get_weights()
    np.testing.assert_allclose(run(out), x @ kernel + bias)
    ph = tf.placeholder(tf.float64, [None, 4, 3])
    td2 = L.TimeDistributed(L.Dense(5, dtype="float64"))
    out2 = td2(ph)  # unknown batch: one call on [batch * time, 3]
    assert out2.shape.as_list() == [None, 4, 5]
    np.testing.assert_allclose(run(out2, {ph: x}), x @ td2.get_weights()[0] + td2.get_weights()[1])
    assert td2.compute_output_shape((None, 4, 3)).as_list() == [None, 4, 5]
    imgs = rng.standard_normal((2, 3, 4, 4, 1)).astype(np.float32)
    conv = L.TimeDistributed(L.Conv2D(2, 3))(L.Input((3, 4, 4, 1)))
    assert conv.shape.as_list() == [None, 3, 2, 2, 2]
    model = tf.keras.Model(conv._keras_history.layer.inbound_nodes[0].input_tensors, conv)
    assert model.predict(imgs).shape == (2, 3, 2, 2, 2)
    check_gradients(lambda t: L.TimeDistributed(L.Dense(2, kernel_initializer="ones", dtype="float64"))(t),
                    [rng.standard_normal((2, 3, 2))])


@pytest.mark.parametrize("merge_mode", ["concat", "sum", "mul", "ave", None])
def test_bidirectional_lstm(merge_mode):
    x = rng.standard_normal((2, 5, 3))
    bi = L.Bidirectional(L.LSTM(4, return_sequences=True, dtype="float64"), merge_mode=merge_mode)
    out = bi(K.constant(x, "float64"))
    assert [v.name for v in bi.weights] == [
        "bidirectional/forward_lstm/kernel:0", "bidirectional/forward_lstm/recurrent_kernel:0",
        "bidirectional/forward_lstm/bias:0", "bidirectional/backward_lstm/kernel:0",
        "bidirectional/backward_lstm/recurrent_kernel:0", "bidirectional/backward_lstm/bias:0"]
    w = bi.get_weights()
    fwd = lstm(x, *w[:3])[0]
    bwd = lstm(x[:, ::-1], *w[3:])[0][:, ::-1]  # the backward sequence, reversed back to input order
    expected = {"concat": np.concatenate([fwd, bwd], -1), "sum": fwd + bwd, "mul": fwd * bwd,
                "ave": (fwd + bwd) / 2, None: [fwd, bwd]}[merge_mode]
    got = run(out)
    if merge_mode is None:
        np.testing.assert_allclose(got[0], expected[0], rtol=1e-9)
        np.testing.assert_allclose(got[1], expected[1], rtol=1e-9)
    else:
        np.testing.assert_allclose(got, expected, rtol=1e-9)
    shape = bi.compute_output_shape((None, 5, 3))
    if merge_mode == "concat":
        assert shape.as_list() == [None, 5, 8]


def test_bidirectional_return_state_and_masking():
    ids = np.array([[2, 3, 0, 0], [1, 2, 3, 4]])
    inp = L.Input((4,), dtype="int32")
    emb = L.Embedding(6, 3, mask_zero=True)
    bi = L.Bidirectional(L.LSTM(2, return_state=True))
    outs = bi(emb(inp))
    assert len(outs) == 5  # output, forward h, c, backward h, c
    model = tf.keras.Model(inp, outs)
    got = model.predict(ids)
    table = emb.get_weights()[0].astype(np.float64)
    w = [v.astype(np.float64) for v in bi.get_weights()]
    x, mask = table[ids], ids != 0
    _, fh, fc = lstm(x, *w[:3], mask=mask)
    _, bh, bc = lstm(x[:, ::-1], *w[3:], mask=mask[:, ::-1])
    np.testing.assert_allclose(got[0], np.concatenate([fh, bh], -1), rtol=1e-5, atol=1e-6)
    for g, e in zip(got[1:], [fh, fc, bh, bc]):
        np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-6)


def test_bidirectional_sequences_zero_the_masked_steps():
    """With return_sequences, Bidirectional makes both directions output zeros at masked steps."""
    ids = np.array([[2, 3, 0, 0]])
    inp = L.Input((4,), dtype="int32")
    seq = L.Bidirectional(L.GRU(2, return_sequences=True))(L.Embedding(5, 3, mask_zero=True)(inp))
    got = tf.keras.Model(inp, seq).predict(ids)
    np.testing.assert_array_equal(got[0, 2:], 0)
    assert np.all(got[0, :2] != 0)


def test_wrapper_configs_round_trip():
    for layer in [L.TimeDistributed(L.Dense(3, activation="relu")),
                  L.Bidirectional(L.GRU(2, return_sequences=True), merge_mode="sum"),
                  L.Bidirectional(L.LSTM(2), backward_layer=L.LSTM(3, go_backwards=True)),
                  L.Embedding(7, 3, mask_zero=True, input_length=5)]:
        config = layer.get_config()
        clone = L.deserialize(L.serialize(layer))
        assert clone.get_config() == config
    with pytest.raises(ValueError, match="Invalid merge mode"):
        L.Bidirectional(L.LSTM(2), merge_mode="max")
