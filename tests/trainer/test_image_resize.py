"""tf.image resizing against real TensorFlow's values (tests/trainer/data/tf_image_ops.npz, written by
scripts/gen_image_fixture.py), TF 1.15's resize_images rules, and gradients against finite differences."""
import importlib.util
import os

import numpy as np
import pytest

import tensorfleet as tf
from gradcheck import check_gradients
from helpers import run

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURE = np.load(os.path.join(HERE, "data", "tf_image_ops.npz"))
_spec = importlib.util.spec_from_file_location("gen_image_fixture",
                                               os.path.join(HERE, "..", "..", "scripts", "gen_image_fixture.py"))
GEN = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(GEN)


@pytest.mark.parametrize("method", list(GEN.METHODS))
@pytest.mark.parametrize("align", [False, True])
def test_resize_images_matches_tensorflow(method, align):
    x = tf.constant(GEN.resize_input())
    outs = {f"{h}x{w}": tf.image.resize_images(x, (h, w), GEN.METHODS[method], align) for h, w in GEN.SIZES}
    got = run(*outs.values())
    for (key, out), value in zip(outs.items(), got):
        want = FIXTURE[f"resize/{method}/{int(align)}/{key}"]
        assert out.shape.as_list() == list(want.shape), key
        np.testing.assert_allclose(value, want, rtol=1e-5, atol=1e-6, err_msg=key)


@pytest.mark.parametrize("op", GEN.HALF_PIXEL_OPS)
def test_half_pixel_centers_match_tensorflow(op):
    x = tf.constant(GEN.resize_input())
    got = run(*[getattr(tf.image, op)(x, (h, w), half_pixel_centers=True) for h, w in GEN.SIZES])
    for (h, w), value in zip(GEN.SIZES, got):
        np.testing.assert_allclose(value, FIXTURE[f"half/{op}/{h}x{w}"], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("method", list(GEN.METHODS))
def test_uint8_images_keep_or_become_float_as_tf(method):
    out = tf.image.resize_images(tf.constant(GEN.uint8_input()), (4, 9), GEN.METHODS[method])
    want = FIXTURE[f"u8/{method}"]
    assert out.dtype == (tf.uint8 if method == "nearest" else tf.float32) and want.dtype == out.dtype.as_numpy_dtype
    np.testing.assert_allclose(run(out), want, rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("op", GEN.HALF_PIXEL_OPS)
@pytest.mark.parametrize("mode", ["legacy", "align", "half"])
def test_resize_gradients_match_tensorflow(op, mode):
    x = tf.constant(GEN.resize_input())
    y = getattr(tf.image, op)(x, (4, 10), align_corners=mode == "align", half_pixel_centers=mode == "half")
    (g,) = tf.gradients(tf.reduce_sum(y * GEN.grad_weights((2, 4, 10, 2))), [x])
    np.testing.assert_allclose(run(g), FIXTURE[f"grad/{op}/{mode}"], rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("op", ["resize_bilinear", "resize_bicubic", "resize_nearest_neighbor"])
def test_resize_gradients_by_finite_differences(op):
    x0 = np.random.RandomState(5).rand(1, 4, 5, 2)
    check_gradients(lambda x: tf.cast(getattr(tf.image, op)(x, (7, 3)), tf.float64), [x0], rtol=1e-3, atol=1e-3,
                    eps=1e-2)


def test_area_has_no_gradient_as_in_tf():
    """TF registers none (its tf.gradients raises LookupError); here the op is NotDifferentiable: None."""
    x = tf.ones([1, 4, 4, 1])
    assert tf.gradients(tf.image.resize_area(x, (2, 2)), x) == [None]


def test_single_images_same_size_and_computed_size():
    img = tf.constant(GEN.resize_input()[0])
    out = tf.image.resize_images(img, (3, 4))
    assert out.shape.as_list() == [3, 4, 2]
    np.testing.assert_allclose(run(out), FIXTURE["resize/bilinear/0/3x4"][0], rtol=1e-5)
    before = {op.type for op in tf.get_default_graph().get_operations()}
    same = tf.image.resize_images(img, (5, 7))
    assert same.op.type == "Squeeze" and same.op.inputs[0].op.type == "ExpandDims"  # TF skips the resize op
    assert {op.type for op in tf.get_default_graph().get_operations()} - before <= {"ExpandDims", "Squeeze",
                                                                                    "Const"}
    size = tf.placeholder(tf.int32, [2])
    dyn = tf.image.resize_images(tf.constant(GEN.resize_input()), size, tf.image.ResizeMethod.BICUBIC)
    assert dyn.shape.as_list() == [2, None, None, 2]
    with tf.Session() as sess:
        np.testing.assert_allclose(sess.run(dyn, {size: [8, 11]}), FIXTURE["resize/bicubic/0/8x11"], rtol=1e-5,
                                   atol=1e-6)
    assert tf.image.resize is tf.image.resize_images
    assert (tf.image.ResizeMethod.BILINEAR, tf.image.ResizeMethod.NEAREST_NEIGHBOR, tf.image.ResizeMethod.BICUBIC,
            tf.image.ResizeMethod.AREA) == (0, 1, 2, 3)


def test_preserve_aspect_ratio_scales_by_the_smaller_ratio():
    img = tf.zeros([10, 20, 3])
    out = tf.image.resize_images(img, (8, 8), preserve_aspect_ratio=True)  # min(8/10, 8/20) = 0.4 -> 4 x 8
    assert run(out).shape == (4, 8, 3)


def test_bad_arguments_raise_tfs_errors():
    with pytest.raises(ValueError, match="must have either 3 or 4 dimensions"):
        tf.image.resize_images(tf.zeros([4, 4]), (2, 2))
    with pytest.raises(ValueError, match="Resize method is not implemented"):
        tf.image.resize_images(tf.zeros([4, 4, 1]), (2, 2), method=7)
    bad = tf.image.resize_bilinear(tf.zeros([1, 4, 4, 1]), (2, 2), align_corners=True, half_pixel_centers=True)
    with tf.Session() as sess, pytest.raises(tf.errors.InvalidArgumentError, match="half_pixel_centers") as e:
        sess.run(bad)
    assert e.value.op is bad.op
