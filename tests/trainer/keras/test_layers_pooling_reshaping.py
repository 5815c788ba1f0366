"""Pooling, padding, cropping and upsampling Keras layers against numpy (layer_reference.py), finite
differences, output shapes and configs."""
import numpy as np
import pytest

import tensorfleet as tf
from gradcheck import check_gradients
from layer_reference import pool2d

K = tf.keras.backend
L = tf.keras.layers
rng = np.random.default_rng(5)


def run(t, feed=None):
    return K.get_session().run(t, feed)


@pytest.mark.parametrize("cls,mode", [(L.MaxPooling2D, "max"), (L.AveragePooling2D, "avg")])
@pytest.mark.parametrize("padding", ["valid", "same"])
def test_pooling_2d(cls, mode, padding):
    x = rng.standard_normal((2, 7, 5, 3))
    layer = cls(pool_size=(3, 2), strides=(2, 2), padding=padding)
    out = layer(K.constant(x, "float64"))
    expected = pool2d(x, (3, 2), (2, 2), padding, mode)
    np.testing.assert_allclose(run(out), expected, rtol=1e-12)
    assert layer.compute_output_shape((None, 7, 5, 3)).as_list() == [None, *expected.shape[1:]]
    first = cls(data_format="channels_first")(K.constant(x.transpose(0, 3, 1, 2), "float64"))
    np.testing.assert_allclose(run(first), pool2d(x, (2, 2), (2, 2), "valid", mode).transpose(0, 3, 1, 2))
    check_gradients(lambda t: cls(2, strides=1, padding=padding)(t), [rng.standard_normal((1, 3, 4, 2))])


@pytest.mark.parametrize("cls,mode", [(L.MaxPooling1D, "max"), (L.AveragePooling1D, "avg")])
def test_pooling_1d_defaults_strides_to_pool_size(cls, mode):
    x = rng.standard_normal((2, 9, 3))
    layer = cls(pool_size=3)
    assert layer.strides == (3,) and layer.get_config()["strides"] == (3,)
    out = run(layer(K.constant(x, "float64")))
    np.testing.assert_allclose(out, pool2d(x[:, None], (1, 3), (1, 3), "valid", mode)[:, 0])
    assert layer.compute_output_shape((None, 9, 3)).as_list() == [None, 3, 3]


def test_global_poolings_and_masked_average():
    x = rng.standard_normal((2, 4, 5, 3))
    t = K.constant(x, "float64")
    np.testing.assert_allclose(run(L.GlobalAveragePooling2D()(t)), x.mean(axis=(1, 2)))
    np.testing.assert_allclose(run(L.GlobalMaxPooling2D()(t)), x.max(axis=(1, 2)))
    np.testing.assert_allclose(run(L.GlobalMaxPooling2D(data_format="channels_first")(t)), x.max(axis=(2, 3)))
    seq = rng.standard_normal((2, 6, 3))
    np.testing.assert_allclose(run(L.GlobalAveragePooling1D()(K.constant(seq, "float64"))), seq.mean(1))
    np.testing.assert_allclose(run(L.GlobalMaxPooling1D()(K.constant(seq, "float64"))), seq.max(1))
    mask = np.array([[1, 1, 1, 0, 0, 0], [1, 1, 1, 1, 1, 0]], bool)
    out = L.GlobalAveragePooling1D()(K.constant(seq, "float64"), mask=K.constant(mask))
    np.testing.assert_allclose(run(out), [seq[0, :3].mean(0), seq[1, :5].mean(0)])
    vol = rng.standard_normal((2, 2, 3, 4, 5))
    np.testing.assert_allclose(run(L.GlobalAveragePooling3D()(K.constant(vol, "float64"))), vol.mean((1, 2, 3)))
    assert L.GlobalAveragePooling2D().compute_output_shape((None, 4, 5, 3)).as_list() == [None, 3]


def test_zero_padding_and_cropping():
    x = rng.standard_normal((2, 4, 5, 3))
    t = K.constant(x, "float64")
    pad = L.ZeroPadding2D(((1, 2), (0, 3)))
    np.testing.assert_array_equal(run(pad(t)), np.pad(x, [(0, 0), (1, 2), (0, 3), (0, 0)]))
    assert pad.compute_output_shape((None, 4, 5, 3)).as_list() == [None, 7, 8, 3]
    assert L.ZeroPadding2D(2).padding == ((2, 2), (2, 2)) and L.ZeroPadding2D((1, 3)).padding == ((1, 1), (3, 3))
    np.testing.assert_array_equal(run(L.ZeroPadding2D(1, data_format="channels_first")(t)),
                                  np.pad(x, [(0, 0), (0, 0), (1, 1), (1, 1)]))
    crop = L.Cropping2D(((1, 0), (2, 1)))
    np.testing.assert_array_equal(run(crop(t)), x[:, 1:, 2:-1])
    assert crop.compute_output_shape((None, 4, 5, 3)).as_list() == [None, 3, 2, 3]
    seq = rng.standard_normal((2, 6, 3))
    s = K.constant(seq, "float64")
    np.testing.assert_array_equal(run(L.ZeroPadding1D((2, 1))(s)), np.pad(seq, [(0, 0), (2, 1), (0, 0)]))
    np.testing.assert_array_equal(run(L.Cropping1D((1, 2))(s)), seq[:, 1:-2])
    np.testing.assert_array_equal(run(L.Cropping1D((2, 0))(s)), seq[:, 2:])
    check_gradients(lambda v: L.Cropping2D(1)(L.ZeroPadding2D((2, 1))(v)), [rng.standard_normal((1, 3, 3, 2))])


def test_upsampling():
    x = rng.standard_normal((2, 3, 4, 2)).astype(np.float32)
    t = K.constant(x)
    up = L.UpSampling2D((2, 3))
    np.testing.assert_array_equal(run(up(t)), x.repeat(2, axis=1).repeat(3, axis=2))
    assert up.compute_output_shape((None, 3, 4, 2)).as_list() == [None, 6, 12, 2]
    seq = rng.standard_normal((2, 3, 2))
    np.testing.assert_array_equal(run(L.UpSampling1D(3)(K.constant(seq, "float64"))), seq.repeat(3, axis=1))
    ph = tf.placeholder(tf.float32, [None, None, None, 2])  # dynamic spatial dims: tile + reshape
    np.testing.assert_array_equal(run(L.UpSampling2D()(ph), {ph: x}), x.repeat(2, axis=1).repeat(2, axis=2))
    bil = run(L.UpSampling2D(2, interpolation="bilinear")(K.constant(x[:, :, :, :1], "float32")))
    # TF 1.15's resize_images: source row = out_row / 2, clamped linear interpolation
    rows = np.arange(6) / 2
    lo, frac = np.floor(rows).astype(int), rows - np.floor(rows)
    hi = np.minimum(lo + 1, 2)
    along_rows = x[:, lo, :, :1] + (x[:, hi, :, :1] - x[:, lo, :, :1]) * frac[None, :, None, None]
    cols = np.arange(8) / 2
    lo, frac = np.floor(cols).astype(int), cols - np.floor(cols)
    hi = np.minimum(lo + 1, 3)
    expected = along_rows[:, :, lo] + (along_rows[:, :, hi] - along_rows[:, :, lo]) * frac[None, None, :, None]
    np.testing.assert_allclose(bil, expected, rtol=1e-5, atol=1e-6)
    check_gradients(lambda v: L.UpSampling2D(2)(v), [rng.standard_normal((1, 2, 2, 1))])


def test_configs_round_trip():
    for layer in [L.MaxPooling2D(3, strides=1, padding="same"), L.AveragePooling1D(2), L.GlobalMaxPooling2D(),
                  L.ZeroPadding2D(((1, 2), (3, 4))), L.Cropping2D(((1, 0), (0, 2))), L.UpSampling2D((2, 3)),
                  L.ZeroPadding1D(2), L.Cropping1D((0, 1)), L.UpSampling1D(4), L.GlobalAveragePooling1D()]:
        config = layer.get_config()
        assert type(layer).from_config(config).get_config() == config
        assert L.deserialize(L.serialize(layer)).get_config() == config
    assert L.MaxPool2D is L.MaxPooling2D and L.GlobalAvgPool2D is L.GlobalAveragePooling2D
