"""Convolutional Keras layers against numpy convolutions (layer_reference.py) and finite differences, with TF
1.15's weight names and shapes, output shapes and configs."""
import numpy as np
import pytest

import tensorfleet as tf
from gradcheck import check_gradients
from layer_reference import conv2d, conv2d_transpose, depthwise_conv2d

K = tf.keras.backend
L = tf.keras.layers
rng = np.random.default_rng(3)


def run(t):
    return K.get_session().run(t)


def const_init(value):
    return tf.constant_initializer(value)


@pytest.mark.parametrize("padding,strides,dilation", [("valid", (1, 1), (1, 1)), ("same", (2, 2), (1, 1)),
                                                      ("same", (1, 1), (2, 2)), ("valid", (2, 1), (1, 1))])
def test_conv2d_forward_names_and_shapes(padding, strides, dilation):
    x = rng.standard_normal((2, 7, 6, 3))
    layer = L.Conv2D(4, (3, 2), strides=strides, padding=padding, dilation_rate=dilation, activation="relu",
                     dtype="float64")
    out = layer(K.constant(x, "float64"))
    assert [v.name for v in layer.weights] == ["conv2d/kernel:0", "conv2d/bias:0"]
    kernel, bias = layer.get_weights()
    assert kernel.shape == (3, 2, 3, 4) and bias.shape == (4,)
    layer.set_weights([kernel, rng.standard_normal(4)])
    expected = np.maximum(conv2d(x, kernel, strides, padding, dilation) + layer.get_weights()[1], 0)
    np.testing.assert_allclose(run(out), expected, rtol=1e-10)
    assert out.shape.as_list() == list(expected.shape)
    assert layer.compute_output_shape((None, 7, 6, 3)).as_list() == [None, *expected.shape[1:]]


def test_conv2d_channels_first_and_gradients():
    x = rng.standard_normal((2, 3, 5, 5))
    w, b = rng.standard_normal((3, 3, 3, 2)), rng.standard_normal(2)
    layer = L.Conv2D(2, 3, padding="same", data_format="channels_first", kernel_initializer=const_init(w),
                     bias_initializer=const_init(b), dtype="float64")
    out = layer(K.constant(x, "float64"))
    expected = conv2d(x.transpose(0, 2, 3, 1), w, padding="same").transpose(0, 3, 1, 2) + b[:, None, None]
    np.testing.assert_allclose(run(out), expected, rtol=1e-10)
    assert layer.compute_output_shape((None, 3, 5, 5)).as_list() == [None, 2, 5, 5]
    check_gradients(lambda t: L.Conv2D(2, 3, strides=2, padding="same", kernel_initializer=const_init(w),
                                       bias_initializer=const_init(b), dtype="float64")(t),
                    [rng.standard_normal((2, 5, 5, 3))])


@pytest.mark.parametrize("padding", ["valid", "same", "causal"])
def test_conv1d_paddings_against_numpy(padding):
    x = rng.standard_normal((2, 9, 3))
    w, b = rng.standard_normal((3, 3, 4)), rng.standard_normal(4)
    layer = L.Conv1D(4, 3, padding=padding, dilation_rate=2 if padding == "causal" else 1,
                     kernel_initializer=const_init(w), bias_initializer=const_init(b), dtype="float64")
    out = run(layer(K.constant(x, "float64")))
    if padding == "causal":  # left padding of dilation * (k - 1) = 4 steps, then 'valid'
        xp = np.pad(x, [(0, 0), (4, 0), (0, 0)])
        expected = conv2d(xp[:, None], w[None], dilation=(1, 2))[:, 0] + b
    else:
        expected = conv2d(x[:, None], w[None], padding=padding)[:, 0] + b
    np.testing.assert_allclose(out, expected, rtol=1e-10)
    assert layer.weights[0].name == "conv1d/kernel:0"
    assert layer.compute_output_shape((None, 9, 3)).as_list() == [None, expected.shape[1], 4]
    check_gradients(lambda t: L.Conv1D(4, 3, padding=padding, kernel_initializer=const_init(w),
                                       dtype="float64")(t), [x])


def test_causal_padding_is_refused_outside_conv1d():
    with pytest.raises(ValueError, match="Causal padding is only supported"):
        L.Conv2D(2, 3, padding="causal")


@pytest.mark.parametrize("padding,strides,output_padding", [("valid", (2, 2), None), ("same", (2, 2), None),
                                                            ("valid", (1, 1), None), ("same", (2, 2), (1, 1))])
def test_conv2d_transpose_against_the_adjoint(padding, strides, output_padding):
    x = rng.standard_normal((2, 3, 4, 5))
    layer = L.Conv2DTranspose(2, (3, 3), strides=strides, padding=padding, output_padding=output_padding,
                              dtype="float64")
    out = layer(K.constant(x, "float64"))
    kernel, _ = layer.get_weights()
    assert kernel.shape == (3, 3, 2, 5) and layer.weights[0].name == "conv2d_transpose/kernel:0"
    shape = tuple(out.shape.as_list())
    if output_padding is None:
        expect_hw = (3 * 2 + 1, 4 * 2 + 1) if (padding, strides) == ("valid", (2, 2)) else \
            ((3 * 2, 4 * 2) if padding == "same" else (5, 6))
    else:  # (in - 1) * stride + k - 2 * (k // 2) + output_padding
        expect_hw = ((3 - 1) * 2 + 3 - 2 + 1, (4 - 1) * 2 + 3 - 2 + 1)
    assert shape == (2, *expect_hw, 2)
    np.testing.assert_allclose(run(out), conv2d_transpose(x, kernel, expect_hw, strides, padding), rtol=1e-10)
    # the adjoint identity <conv(y), x> == <y, conv_transpose(x)> with the same kernel (a layout check)
    y = rng.standard_normal((2, *expect_hw, 2))
    if output_padding is None:
        lhs = np.sum(conv2d(y, kernel, strides, padding) * x)
        np.testing.assert_allclose(lhs, np.sum(y * run(out)), rtol=1e-9)


def test_conv2d_transpose_gradients_and_dynamic_batch():
    w = rng.standard_normal((2, 2, 3, 2))
    check_gradients(lambda t: L.Conv2DTranspose(3, 2, strides=2, kernel_initializer=const_init(w),
                                                dtype="float64")(t), [rng.standard_normal((1, 2, 3, 2))])
    ph = tf.placeholder(tf.float32, [None, 4, 4, 2])
    out = L.Conv2DTranspose(3, 3, strides=2, padding="same")(ph)
    assert out.shape.as_list() == [None, 8, 8, 3]
    assert K.get_session().run(out, {ph: np.ones((5, 4, 4, 2))}).shape == (5, 8, 8, 3)


def test_separable_and_depthwise_convolutions():
    x = rng.standard_normal((2, 6, 6, 3))
    sep = L.SeparableConv2D(4, 3, depth_multiplier=2, padding="same", dtype="float64")
    out = sep(K.constant(x, "float64"))
    assert [v.name for v in sep.weights] == ["separable_conv2d/depthwise_kernel:0",
                                             "separable_conv2d/pointwise_kernel:0", "separable_conv2d/bias:0"]
    dw, pw, b = sep.get_weights()
    assert dw.shape == (3, 3, 3, 2) and pw.shape == (1, 1, 6, 4)
    np.testing.assert_allclose(run(out), conv2d(depthwise_conv2d(x, dw, padding="same"), pw) + b, rtol=1e-10)
    dconv = L.DepthwiseConv2D(3, depth_multiplier=2, strides=2, dtype="float64", bias_initializer="ones")
    out = dconv(K.constant(x, "float64"))
    (kernel, bias) = dconv.get_weights()
    assert dconv.weights[0].name == "depthwise_conv2d/depthwise_kernel:0" and bias.shape == (6,)
    np.testing.assert_allclose(run(out), depthwise_conv2d(x, kernel, (2, 2)) + 1, rtol=1e-10)
    assert dconv.compute_output_shape((None, 6, 6, 3)).as_list() == [None, 2, 2, 6]
    w = rng.standard_normal((2, 2, 2, 1))
    check_gradients(lambda t: L.DepthwiseConv2D(2, depthwise_initializer=const_init(w), dtype="float64")(t),
                    [rng.standard_normal((1, 3, 3, 2))])


def test_separable_conv1d():
    x = rng.standard_normal((2, 7, 3))
    layer = L.SeparableConv1D(2, 3, padding="valid", dtype="float64")
    out = run(layer(K.constant(x, "float64")))
    dw, pw, b = layer.get_weights()
    assert dw.shape == (3, 3, 1) and pw.shape == (1, 3, 2)
    expected = conv2d(depthwise_conv2d(x[:, None], dw[None]), pw[None])[:, 0] + b
    np.testing.assert_allclose(out, expected, rtol=1e-10)


def test_configs_round_trip():
    for layer in [L.Conv2D(3, (2, 3), strides=2, padding="same", activation="relu", kernel_regularizer="l2",
                           name="c"),
                  L.Conv1D(2, 5, padding="causal", dilation_rate=2),
                  L.Conv2DTranspose(4, 3, strides=2, output_padding=1),
                  L.SeparableConv2D(4, 3, depth_multiplier=2, pointwise_regularizer="l1"),
                  L.DepthwiseConv2D(3, depth_multiplier=3)]:
        config = layer.get_config()
        clone = type(layer).from_config(config)
        assert clone.get_config() == config
        assert L.deserialize(L.serialize(layer)).get_config() == config
    config = L.Conv2D(3, (2, 3)).get_config()
    assert config["kernel_size"] == (2, 3) and config["strides"] == (1, 1) and config["padding"] == "valid"
    assert config["data_format"] == "channels_last" and config["dilation_rate"] == (1, 1)
    assert "filters" not in L.DepthwiseConv2D(3).get_config()
