"""tf.image (the input-pipeline subset) against numpy and TF 1.15's documented formulas."""
import numpy as np
import pytest

import tensorfleet as tf

IMG = np.random.RandomState(0).rand(4, 6, 3).astype(np.float32)


@pytest.fixture(autouse=True)
def _graph():
    with tf.Graph().as_default():
        yield


def run(t):
    with tf.Session() as s:
        return s.run(t)


def test_flips_and_random_flips():
    np.testing.assert_array_equal(run(tf.image.flip_left_right(IMG)), IMG[:, ::-1])
    np.testing.assert_array_equal(run(tf.image.flip_up_down(IMG)), IMG[::-1])
    batch = np.stack([IMG] * 64)
    out = run(tf.image.random_flip_left_right(batch, seed=1))
    flipped = [bool(np.array_equal(o, IMG[:, ::-1])) for o in out]
    kept = [bool(np.array_equal(o, IMG)) for o in out]
    assert all(f or k for f, k in zip(flipped, kept, strict=True)) and 10 < sum(flipped) < 54


def test_per_image_standardization_and_dtype_conversion():
    got = run(tf.image.per_image_standardization(IMG))
    ref = (IMG - IMG.mean()) / max(IMG.std(), 1 / np.sqrt(IMG.size))
    np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-6)
    flat = np.full((2, 2, 1), 7, np.uint8)  # zero stddev: divided by 1/sqrt(n), as TF
    np.testing.assert_allclose(run(tf.image.per_image_standardization(flat)), np.zeros((2, 2, 1)))
    u8 = np.array([[[0], [255]], [[51], [102]]], np.uint8)
    np.testing.assert_allclose(run(tf.image.convert_image_dtype(u8, tf.float32)), u8 / 255.0, rtol=1e-6)
    back = run(tf.image.convert_image_dtype(tf.image.convert_image_dtype(u8, tf.float32), tf.uint8))
    np.testing.assert_array_equal(back, u8)


def test_crops_pads_brightness_gray():
    np.testing.assert_array_equal(run(tf.image.central_crop(IMG, 0.5)), IMG[1:3, 1:5])
    padded = run(tf.image.resize_image_with_crop_or_pad(IMG, 6, 4))
    ref = np.zeros((6, 4, 3), np.float32)
    ref[1:5] = IMG[:, 1:5]
    np.testing.assert_array_equal(padded, ref)
    np.testing.assert_allclose(run(tf.image.adjust_brightness(IMG, 0.25)), IMG + 0.25, rtol=1e-6)
    np.testing.assert_allclose(run(tf.image.rgb_to_grayscale(IMG)), IMG @ np.float32([[0.2989], [0.5870], [0.1140]]),
                               rtol=1e-5)


def legacy_bilinear(x, oh, ow):
    h, w = x.shape[:2]
    out = np.zeros((oh, ow, x.shape[2]))
    for i in range(oh):
        for j in range(ow):
            y, z = i * h / oh, j * w / ow
            y0, z0 = int(np.floor(y)), int(np.floor(z))
            y1, z1 = min(y0 + 1, h - 1), min(z0 + 1, w - 1)
            dy, dz = y - y0, z - z0
            top = x[y0, z0] + (x[y0, z1] - x[y0, z0]) * dz
            bot = x[y1, z0] + (x[y1, z1] - x[y1, z0]) * dz
            out[i, j] = top + (bot - top) * dy
    return out


def test_resize_images_bilinear_and_nearest_use_tf1_sampling():
    np.testing.assert_allclose(run(tf.image.resize_images(IMG, [7, 9])), legacy_bilinear(IMG, 7, 9), rtol=1e-5,
                               atol=1e-6)
    nn = run(tf.image.resize_images(IMG, [8, 3], method=tf.image.ResizeMethod.NEAREST_NEIGHBOR))
    rows, cols = np.floor(np.arange(8) * 4 / 8).astype(int), np.floor(np.arange(3) * 6 / 3).astype(int)
    np.testing.assert_array_equal(nn, IMG[rows][:, cols])
    batch = run(tf.image.resize_images(np.stack([IMG, IMG]), [2, 3]))
    assert batch.shape == (2, 2, 3, 3)
