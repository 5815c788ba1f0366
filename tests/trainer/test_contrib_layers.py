"""tf.contrib.layers: TF 1.15's variable names and scopes (checked by name), defaults, model-variable and
output collections, and forward values against numpy, for the layers, initializers and regularizers."""
import math

import numpy as np
import pytest

import tensorfleet as tf
from helpers import init_and_run

layers = tf.contrib.layers
RNG = np.random.default_rng(0)


def _names(variables):
    return [v.name for v in variables]


def np_conv2d_nhwc(x, k, stride, padding):
    """Cross-correlation of x [n, h, w, c] with k [kh, kw, c, f]; SAME pads like TF (extra on the bottom/right)."""
    kh, kw = k.shape[:2]
    h, w = x.shape[1:3]
    if padding == "SAME":
        oh, ow = -(-h // stride), -(-w // stride)
        ph, pw = max((oh - 1) * stride + kh - h, 0), max((ow - 1) * stride + kw - w, 0)
        x = np.pad(x, ((0, 0), (ph // 2, ph - ph // 2), (pw // 2, pw - pw // 2), (0, 0)))
    else:
        oh, ow = (h - kh) // stride + 1, (w - kw) // stride + 1
    out = np.zeros((x.shape[0], oh, ow, k.shape[3]))
    for i in range(oh):
        for j in range(ow):
            patch = x[:, i * stride:i * stride + kh, j * stride:j * stride + kw, :]
            out[:, i, j] = np.tensordot(patch, k, axes=([1, 2, 3], [0, 1, 2]))
    return out


# -- fully_connected ------------------------------------------------------------------
def test_fully_connected_names_defaults_and_forward():
    x = tf.placeholder(tf.float32, [None, 4])
    h = layers.fully_connected(x, 3)
    y = layers.fully_connected(h, 2, activation_fn=None, scope="logits")
    assert h.name == "fully_connected/Relu:0"  # relu is the default activation
    assert y.name == "logits/BiasAdd:0" and y.shape.as_list() == [None, 2]
    names = ["fully_connected/weights:0", "fully_connected/biases:0", "logits/weights:0", "logits/biases:0"]
    assert _names(tf.global_variables()) == names
    assert _names(tf.model_variables()) == names and _names(tf.trainable_variables()) == names
    w0, b0, w1, b1 = tf.global_variables()
    assert w0.shape.as_list() == [4, 3] and b0.shape.as_list() == [3]
    xv = RNG.standard_normal((5, 4)).astype(np.float32)
    hv, yv, w0v, b0v, w1v, b1v = init_and_run([h, y, w0, b0, w1, b1], {x: xv})
    np.testing.assert_array_equal(b0v, 0)
    ref = np.maximum(xv @ w0v + b0v, 0)
    np.testing.assert_allclose(hv, ref, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(yv, ref @ w1v + b1v, rtol=1e-5, atol=1e-6)
    # the default weights are xavier (uniform): |w| <= sqrt(6 / (in + out))
    assert np.abs(w0v).max() <= math.sqrt(6 / 7) and np.abs(w0v).std() > 0


def test_fully_connected_unique_scopes_reuse_and_rank3_inputs():
    x = tf.placeholder(tf.float32, [None, 5, 4])
    layers.fully_connected(x, 3)
    out = layers.fully_connected(x, 3)  # a second default scope: fully_connected_1
    assert out.shape.as_list() == [None, 5, 3]
    with tf.variable_scope("tower"):
        a = layers.fully_connected(x, 2, scope="fc")
    with tf.variable_scope("tower", reuse=True):
        b = layers.fully_connected(x, 2, scope="fc")
    c = layers.fully_connected(x, 2, scope="tower/fc", reuse=True)
    assert _names(tf.global_variables()) == ["fully_connected/weights:0", "fully_connected/biases:0",
                                             "fully_connected_1/weights:0", "fully_connected_1/biases:0",
                                             "tower/fc/weights:0", "tower/fc/biases:0"]
    with pytest.raises(ValueError, match="Variable tower/fc/weights already exists"):
        layers.fully_connected(x, 2, scope="tower/fc")
    with pytest.raises(ValueError, match="num_outputs type should be one of"):
        layers.fully_connected(x, 2.0)
    xv = RNG.standard_normal((2, 5, 4)).astype(np.float32)
    av, bv, cv = init_and_run([a, b, c], {x: xv})
    np.testing.assert_array_equal(av, bv)
    np.testing.assert_array_equal(av, cv)


def test_fully_connected_normalizer_no_biases_and_collections():
    x = tf.placeholder(tf.float32, [None, 3])
    calls = []

    def normalizer(t, scale=1.0):
        calls.append(t)
        return t * scale

    y = layers.fully_connected(x, 2, normalizer_fn=normalizer, normalizer_params={"scale": 2.0},
                               weights_initializer=tf.ones_initializer(), activation_fn=tf.nn.relu6,
                               variables_collections={"weights": ["my_weights"]}, outputs_collections="ends",
                               scope="fc")
    z = layers.fully_connected(x, 2, biases_initializer=None, trainable=False, variables_collections=["all_mine"],
                               scope="nobias")
    assert _names(tf.global_variables()) == ["fc/weights:0", "nobias/weights:0"]  # no biases with a normalizer
    assert _names(tf.get_collection("my_weights")) == ["fc/weights:0"]
    assert _names(tf.get_collection("all_mine")) == ["nobias/weights:0"]
    assert _names(tf.trainable_variables()) == ["fc/weights:0"]
    assert calls and calls[0].op.type == "MatMul" and y.op.type == "Relu6"
    assert tf.get_collection("ends") == [y]
    assert layers.utils.convert_collection_to_dict("ends") == {"fc": y}
    yv, zv = init_and_run([y, z], {x: [[1.0, 0.5, 0.25]]})
    np.testing.assert_allclose(yv, [[3.5, 3.5]])  # relu6(2 * 1.75)
    assert zv.shape == (1, 2) and (zv >= 0).all()


# -- convolutions and pooling ------------------------------------------------------------
def test_conv2d_defaults_names_and_forward_vs_numpy():
    x = tf.placeholder(tf.float32, [None, 7, 7, 2])
    c = layers.conv2d(x, 4, [3, 3])  # stride 1, SAME, relu, scope Conv
    s = layers.conv2d(x, 3, 3, stride=2, padding="VALID", activation_fn=None)
    assert c.name == "Conv/Relu:0" and c.shape.as_list() == [None, 7, 7, 4]
    assert s.name == "Conv_1/BiasAdd:0" and s.shape.as_list() == [None, 3, 3, 3]
    assert _names(tf.model_variables()) == ["Conv/weights:0", "Conv/biases:0", "Conv_1/weights:0",
                                            "Conv_1/biases:0"]
    w0, b0, w1, b1 = tf.model_variables()
    assert w0.shape.as_list() == [3, 3, 2, 4]
    xv = RNG.standard_normal((2, 7, 7, 2)).astype(np.float32)
    cv, sv, w0v, w1v, b1v = init_and_run([c, s, w0, w1, b1], {x: xv})
    np.testing.assert_allclose(cv, np.maximum(np_conv2d_nhwc(xv, w0v, 1, "SAME"), 0), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(sv, np_conv2d_nhwc(xv, w1v, 2, "VALID") + b1v, rtol=1e-4, atol=1e-5)
    with pytest.raises(ValueError, match="Convolution expects input with rank 4, got 3"):
        layers.conv2d(tf.zeros([2, 3, 4]), 2, 3)
    with pytest.raises(ValueError, match="Invalid data_format: 'HWC'"):
        layers.conv2d(x, 2, 3, data_format="HWC")


def test_conv2d_nchw_and_normalizer():
    x = RNG.standard_normal((2, 3, 5, 5)).astype(np.float32)
    c = layers.conv2d(tf.constant(x), 2, 3, data_format="NCHW", activation_fn=None, scope="nchw")
    n = layers.conv2d(tf.constant(x.transpose(0, 2, 3, 1)), 2, 3, normalizer_fn=layers.batch_norm,
                      scope="bn")
    assert c.shape.as_list() == [2, 2, 5, 5]
    assert _names(tf.model_variables()) == ["nchw/weights:0", "nchw/biases:0", "bn/weights:0", "bn/BatchNorm/beta:0",
                                            "bn/BatchNorm/moving_mean:0", "bn/BatchNorm/moving_variance:0"]
    cv, w = init_and_run([c, tf.model_variables()[0]])
    ref = np_conv2d_nhwc(x.transpose(0, 2, 3, 1), w, 1, "SAME").transpose(0, 3, 1, 2)
    np.testing.assert_allclose(cv, ref, rtol=1e-4, atol=1e-5)
    assert n.op.type == "Relu"


def test_conv2d_transpose_names_shapes_and_values():
    x = tf.placeholder(tf.float32, [None, 3, 3, 2])
    t = layers.conv2d_transpose(x, 4, [2, 2], stride=2, activation_fn=None)
    v = layers.conv2d_transpose(x, 1, 3, padding="VALID")
    assert t.name.startswith("Conv2d_transpose/") and t.shape.as_list() == [None, 6, 6, 4]
    assert v.shape.as_list() == [None, 5, 5, 1]
    assert _names(tf.model_variables()) == ["Conv2d_transpose/weights:0", "Conv2d_transpose/biases:0",
                                            "Conv2d_transpose_1/weights:0", "Conv2d_transpose_1/biases:0"]
    w = tf.model_variables()[0]
    assert w.shape.as_list() == [2, 2, 4, 2]  # [kh, kw, num_outputs, in]
    xv = RNG.standard_normal((1, 3, 3, 2)).astype(np.float32)
    tv, wv = init_and_run([t, w], {x: xv})
    # stride 2 with a 2x2 kernel: every input pixel writes its own 2x2 block, x[i, j] @ w[a, b].T
    ref = np.einsum("nijc,abfc->niajbf", xv, wv).reshape(1, 6, 6, 4)
    np.testing.assert_allclose(tv, ref, rtol=1e-5, atol=1e-6)


def test_pools_flatten_one_hot_and_names():
    x = tf.constant(np.arange(2 * 4 * 4 * 1, dtype=np.float32).reshape(2, 4, 4, 1))
    m = layers.max_pool2d(x, [2, 2])  # stride 2, VALID
    a = layers.avg_pool2d(x, 3, stride=1, padding="SAME")
    f = layers.flatten(m)
    o = layers.one_hot_encoding(tf.constant([0, 2]), 3, on_value=5.0)
    assert m.name == "MaxPool2D/MaxPool:0" and a.name == "AvgPool2D/AvgPool:0"
    assert f.name.startswith("Flatten/") and f.shape.as_list() == [2, 4]
    assert o.name.startswith("OneHotEncoding/") and o.dtype == tf.float32
    mv, av, fv, ov = init_and_run([m, a, f, o])
    xv = np.arange(32, dtype=np.float32).reshape(2, 4, 4)
    np.testing.assert_array_equal(mv[..., 0], xv.reshape(2, 2, 2, 2, 2).max(axis=(2, 4)))
    padded = np.pad(xv, ((0, 0), (1, 1), (1, 1)), constant_values=np.nan)
    ref = np.array([[[np.nanmean(padded[n, i:i + 3, j:j + 3]) for j in range(4)] for i in range(4)]
                    for n in range(2)])
    np.testing.assert_allclose(av[..., 0], ref, rtol=1e-6)
    np.testing.assert_array_equal(fv, mv.reshape(2, 4))
    np.testing.assert_array_equal(ov, [[5, 0, 0], [0, 0, 5]])


def test_dropout_is_training_default_true_and_keep_prob():
    x = tf.ones([200, 50])
    d = layers.dropout(x, keep_prob=0.8, seed=3)
    same = layers.dropout(x, is_training=False)
    flag = tf.placeholder(tf.bool, [])
    switched = layers.dropout(x, keep_prob=0.5, is_training=flag)
    assert d.name.startswith("Dropout/") and same.name.startswith("Dropout_1/")
    with tf.Session() as sess:
        dv, sv = sess.run([d, same])
        on, off = sess.run(switched, {flag: True}), sess.run(switched, {flag: False})
    assert set(np.unique(dv)) <= {0.0, 1.25} and abs((dv == 0).mean() - 0.2) < 0.02
    np.testing.assert_array_equal(sv, 1.0)
    assert set(np.unique(on)) == {0.0, 2.0}
    np.testing.assert_array_equal(off, 1.0)


def test_bias_add_repeat_and_stack_scopes():
    x = tf.placeholder(tf.float32, [None, 4])
    y = layers.bias_add(x, initializer=tf.constant_initializer(2.0))
    r = layers.repeat(x, 2, layers.fully_connected, 4, scope="rep")
    s = layers.stack(x, layers.fully_connected, [5, 3], scope="fc")
    assert s.shape.as_list() == [None, 3]
    assert _names(tf.model_variables()) == [
        "BiasAdd/biases:0", "rep/rep_1/weights:0", "rep/rep_1/biases:0", "rep/rep_2/weights:0",
        "rep/rep_2/biases:0", "fc/fc_1/weights:0", "fc/fc_1/biases:0", "fc/fc_2/weights:0", "fc/fc_2/biases:0"]
    yv, rv = init_and_run([y, r], {x: [[1.0, 2.0, 3.0, 4.0]]})
    np.testing.assert_allclose(yv, [[3, 4, 5, 6]])
    assert rv.shape == (1, 4)


# -- layer_norm, embed_sequence ----------------------------------------------------------
def test_layer_norm_names_and_forward_vs_numpy():
    x = RNG.standard_normal((3, 4, 5)).astype(np.float32) * 3 + 1
    y = layers.layer_norm(tf.constant(x))
    p = layers.layer_norm(tf.constant(x), begin_norm_axis=-1, begin_params_axis=1, center=False, scope="ln")
    assert _names(tf.model_variables()) == ["LayerNorm/beta:0", "LayerNorm/gamma:0", "ln/gamma:0"]
    assert tf.model_variables()[1].shape.as_list() == [5] and tf.model_variables()[2].shape.as_list() == [4, 5]
    yv, pv = init_and_run([y, p])
    m, v = x.mean(axis=(1, 2), keepdims=True), x.var(axis=(1, 2), keepdims=True)
    np.testing.assert_allclose(yv, (x - m) / np.sqrt(v + 1e-12), rtol=1e-4, atol=1e-5)
    m, v = x.mean(axis=-1, keepdims=True), x.var(axis=-1, keepdims=True)
    np.testing.assert_allclose(pv, (x - m) / np.sqrt(v + 1e-12), rtol=1e-4, atol=1e-5)
    with pytest.raises(ValueError, match="must be < rank\\(inputs\\) \\(3\\)"):
        layers.layer_norm(tf.constant(x), begin_norm_axis=3)


def test_embed_sequence_names_values_unique_and_reuse():
    ids = tf.constant([[1, 3, 1], [0, 2, 3]])
    e = layers.embed_sequence(ids, vocab_size=4, embed_dim=2, initializer=tf.constant_initializer(
        np.arange(8, dtype=np.float32).reshape(4, 2)), scope="emb")
    u = layers.embed_sequence(ids, vocab_size=4, embed_dim=2, unique=True, scope="emb", reuse=True)
    again = layers.embed_sequence(ids, scope="emb", reuse=True)
    assert _names(tf.model_variables()) == ["emb/embeddings:0"]
    assert e.shape.as_list() == [2, 3, 2] and u.shape.as_list() == [2, 3, 2]
    ev, uv, av = init_and_run([e, u, again])
    table = np.arange(8).reshape(4, 2)
    np.testing.assert_array_equal(ev, table[[[1, 3, 1], [0, 2, 3]]])
    np.testing.assert_array_equal(uv, ev)
    np.testing.assert_array_equal(av, ev)
    with pytest.raises(ValueError, match="Must specify vocab size and embedding dimension when not reusing"):
        layers.embed_sequence(ids, vocab_size=4)
    layers.embed_sequence(ids, vocab_size=5, embed_dim=3)
    assert _names(tf.model_variables())[-1] == "EmbedSequence/embeddings:0"


# -- initializers ------------------------------------------------------------------------
def test_xavier_and_variance_scaling_initializers_statistics():
    tf.set_random_seed(1)
    shape = [5, 5, 40, 60]  # fan_in = 25 * 40 = 1000, fan_out = 25 * 60 = 1500
    xu = layers.xavier_initializer()(shape)
    xn = layers.xavier_initializer(uniform=False)(shape)
    vs = layers.variance_scaling_initializer()(shape)  # factor 2, FAN_IN, truncated normal
    vu = layers.variance_scaling_initializer(factor=1.0, mode="FAN_OUT", uniform=True)(shape)
    assert layers.xavier_initializer_conv2d is layers.xavier_initializer
    xuv, xnv, vsv, vuv = init_and_run([xu, xn, vs, vu])
    limit = math.sqrt(3.0 / 1250)
    assert np.abs(xuv).max() <= limit and abs(xuv.std() - limit / math.sqrt(3)) < 0.02 * limit
    # a normal truncated at 2 stddev (sqrt(1.3 * factor / n)) has std 0.8796 * stddev
    assert abs(xnv.std() - 0.8796 * math.sqrt(1.3 / 1250)) < 0.02 * math.sqrt(1.3 / 1250)
    assert np.abs(xnv).max() <= 2 * math.sqrt(1.3 / 1250) + 1e-6
    assert abs(vsv.std() - 0.8796 * math.sqrt(2.6 / 1000)) < 0.02 * math.sqrt(2.6 / 1000)
    assert np.abs(vuv).max() <= math.sqrt(3.0 / 1500)
    with pytest.raises(TypeError, match="Cannot create initializer for non-floating point type"):
        layers.xavier_initializer(dtype=tf.int32)
    with pytest.raises(TypeError, match="Unknown mode FAN_MAX"):
        layers.variance_scaling_initializer(mode="FAN_MAX")


# -- regularizers ------------------------------------------------------------------------
def test_regularizers_values_names_and_errors():
    w = tf.constant([[1.0, -2.0], [3.0, -4.0]])
    l1, l2 = layers.l1_regularizer(0.5)(w), layers.l2_regularizer(0.1)(w)
    l12 = layers.l1_l2_regularizer(0.5, 0.1)(w)
    total = layers.sum_regularizer([layers.l1_regularizer(1.0), None, layers.l2_regularizer(1.0)])(w)
    assert l1.op.name == "l1_regularizer" and l2.op.name == "l2_regularizer"
    assert l12.op.name == "l1_l2_regularizer"
    np.testing.assert_allclose(init_and_run([l1, l2, l12, total]), [5.0, 1.5, 6.5, 25.0], rtol=1e-6)
    assert layers.l2_regularizer(0.0)(w) is None and layers.sum_regularizer([None]) is None
    with pytest.raises(ValueError, match="scale cannot be an integer: 1"):
        layers.l2_regularizer(1)
    with pytest.raises(ValueError, match="Setting a scale less than 0 on a regularizer: -0.1"):
        layers.l1_regularizer(-0.1)


def test_weights_regularizer_lands_in_regularization_losses():
    x = tf.placeholder(tf.float32, [None, 3])
    layers.fully_connected(x, 2, weights_regularizer=layers.l2_regularizer(0.5),
                           weights_initializer=tf.constant_initializer(2.0), scope="fc")
    layers.conv2d(tf.zeros([1, 4, 4, 1]), 2, 2, weights_regularizer=layers.l1_regularizer(0.25),
                  biases_regularizer=layers.l1_regularizer(1.0), biases_initializer=tf.ones_initializer())
    losses = tf.get_collection(tf.GraphKeys.REGULARIZATION_LOSSES)
    assert len(losses) == 3 and losses == tf.losses.get_regularization_losses()
    conv_w = tf.model_variables()[2]
    values, wv = init_and_run([losses, conv_w])
    np.testing.assert_allclose(values[0], 0.5 * 6 * 4.0 / 2, rtol=1e-6)  # 0.5 * sum(2^2) / 2
    np.testing.assert_allclose(values[1], 0.25 * np.abs(wv).sum(), rtol=1e-5)
    np.testing.assert_allclose(values[2], 2.0, rtol=1e-6)  # biases: 1.0 * |1| * 2


def test_apply_regularization_over_weights_collection():
    with pytest.raises(ValueError, match="No weights to regularize"):
        layers.apply_regularization(layers.l2_regularizer(1.0))
    a = tf.get_variable("a", initializer=np.array([1.0, 2.0], np.float32))
    b = tf.get_variable("b", initializer=np.array([3.0], np.float32))
    tf.add_to_collection(tf.GraphKeys.WEIGHTS, a)
    penalty = layers.apply_regularization(layers.l1_regularizer(2.0))
    both = layers.apply_regularization(layers.l2_regularizer(1.0), [a, b])
    assert tf.get_collection(tf.GraphKeys.REGULARIZATION_LOSSES) == [penalty, both]
    np.testing.assert_allclose(init_and_run([penalty, both]), [6.0, 7.0])
    with pytest.raises(ValueError, match="regularizer must return a scalar Tensor"):
        layers.apply_regularization(lambda w: w * 2.0, [a])
