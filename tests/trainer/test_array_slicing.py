"""Slicing ops: tensor[...] (StridedSlice), tf.slice, strided_slice masks, gather, boolean_mask, reverse, pad,
one_hot: forward vs numpy, static shapes, build-time errors, gradients."""
import numpy as np
import pytest

import tensorfleet as tf
from gradcheck import check_gradients
from helpers import run

RNG = np.random.default_rng(4)
X = RNG.standard_normal((4, 5, 6))


KEYS = [np.s_[1], np.s_[-1], np.s_[1:3], np.s_[::2], np.s_[::-1], np.s_[:, 1], np.s_[..., -2],
        np.s_[1, ..., 2:5:2], np.s_[:, None, 3], np.s_[None], np.s_[-3:-1, ::-2, 1], np.s_[..., None],
        np.s_[1:100], np.s_[3:1], np.s_[2, 3, 4], np.s_[:, 4:0:-2]]


@pytest.mark.parametrize("key", KEYS, ids=str)
def test_getitem_matches_numpy_with_static_shape_and_gradient(key):
    out = tf.constant(X)[key]
    ref = X[key]
    assert out.shape.as_list() == list(np.shape(ref)) and out.op.name == "strided_slice"
    np.testing.assert_array_equal(run(out), ref)
    if np.size(ref):
        check_gradients(lambda x: x[key], [X])


def test_getitem_unknown_dims_and_errors():
    x = tf.placeholder(tf.float32, [None, 3])
    assert x[0].shape.as_list() == [3]
    assert x[1:, ::2].shape.as_list() == [None, 2]
    assert x[..., 0].shape.as_list() == [None]
    with pytest.raises(ValueError, match="slice index 5 of dimension 1 out of bounds"):
        x[:, 5]
    with pytest.raises(ValueError, match="Index out of range"):
        x[0, 0, 0]
    with pytest.raises(TypeError, match="tf.gather"):
        x[tf.placeholder(tf.int32, [2])]  # a vector index: TF's TypeError (a computed scalar is fine)
    with pytest.raises(TypeError, match="scalar tf.int32/tf.int64"):
        x[tf.placeholder(tf.float32, [])]
    with pytest.raises(tf.errors.InvalidArgumentError, match="out of bounds"):
        run(x[7], feed={x: np.zeros((2, 3))})
    assert run(x[tf.constant(1)], feed={x: np.arange(6).reshape(2, 3)}).tolist() == [3, 4, 5]


def test_variable_like_shape_slicing_is_constant_foldable():
    x = tf.placeholder(tf.float32, [None, 7])
    n = tf.shape(x)[1]
    assert n.shape.as_list() == [] and run(n, feed={x: np.zeros((2, 7))}) == 7


def test_strided_slice_masks_and_slice():
    t = tf.constant(X)
    out = tf.strided_slice(t, [1, 0, 0], [3, 0, 6], [1, 1, 2], begin_mask=0b010, end_mask=0b010,
                           shrink_axis_mask=0b000)
    np.testing.assert_array_equal(run(out), X[1:3, :, 0:6:2])
    out2 = tf.strided_slice(t, [0, 2], [0, 3], shrink_axis_mask=0b01, ellipsis_mask=0b10)
    np.testing.assert_array_equal(run(out2), X[0, ...])
    out3 = tf.strided_slice(t, [0, 0, 1], [1, 0, 2], new_axis_mask=0b010)
    np.testing.assert_array_equal(run(out3), X[0:1, None, 1:2])
    s = tf.slice(t, [1, 0, 2], [2, -1, 3])
    assert s.shape.as_list() == [2, 5, 3] and s.op.type == "Slice"
    np.testing.assert_array_equal(run(s), X[1:3, :, 2:5])
    check_gradients(lambda x: tf.slice(x, [1, 1, 0], [3, 2, -1]), [X])
    with pytest.raises(ValueError):
        tf.slice(t, [3, 0, 0], [2, 1, 1])


def test_gather_axes_repeated_indices_and_errors():
    idx = np.array([[0, 2], [2, 2]])
    for axis in (0, 1, -1):
        out = tf.gather(tf.constant(X), idx, axis=axis)
        ref = np.take(X, idx, axis=axis)
        assert out.shape.as_list() == list(ref.shape) and out.op.type == "GatherV2"
        np.testing.assert_array_equal(run(out), ref)
        check_gradients(lambda x, axis=axis: tf.gather(x, idx, axis=axis), [X])
    p = tf.constant([1.0, 2.0, 3.0])
    g, = tf.gradients(tf.reduce_sum(tf.gather(p, [0, 0, 2, 0])), [p])
    assert isinstance(g, tf.IndexedSlices)  # TF: the gradient of a gather along axis 0 names only its rows
    np.testing.assert_array_equal(run(tf.convert_to_tensor(g)), [3, 0, 1])
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"indices\[1\] = 3 is not in \[0, 3\)"):
        run(tf.gather(p, [0, 3]))
    with pytest.raises(TypeError, match="indices"):
        tf.gather(p, tf.constant([0.0]))
    assert run(tf.gather(tf.constant([[1, 2], [3, 4]], tf.int64), [1])).dtype == np.int64


def test_boolean_mask_and_reverse():
    m = np.array([True, False, True, True])
    out = tf.boolean_mask(tf.constant(X), m)
    assert out.shape.as_list() == [None, 5, 6]
    np.testing.assert_array_equal(run(out), X[m])
    m2 = X[0] > 0
    np.testing.assert_array_equal(run(tf.boolean_mask(X[0], m2)), X[0][m2])
    np.testing.assert_array_equal(run(tf.boolean_mask(X, X[0, :, 0] > 0, axis=1)), X[:, X[0, :, 0] > 0])
    check_gradients(lambda x: tf.reshape(tf.boolean_mask(x, m), [3, 5, 6]), [X])
    np.testing.assert_array_equal(run(tf.reverse(tf.constant(X), [0, -1])), X[::-1, :, ::-1])
    check_gradients(lambda x: tf.reverse(x, [1]), [X])


def test_pad_modes_shapes_and_gradient():
    x = RNG.standard_normal((2, 3))
    pads = [[1, 2], [0, 1]]
    out = tf.pad(tf.constant(x), pads)
    assert out.shape.as_list() == [5, 4] and out.op.name == "Pad"
    np.testing.assert_array_equal(run(out), np.pad(x, pads))
    np.testing.assert_array_equal(run(tf.pad(x, pads, constant_values=9.0)), np.pad(x, pads, constant_values=9))
    np.testing.assert_array_equal(run(tf.pad(x, [[1, 1], [2, 2]], "REFLECT")), np.pad(x, [[1, 1], [2, 2]], "reflect"))
    np.testing.assert_array_equal(run(tf.pad(x, [[1, 1], [2, 2]], "SYMMETRIC")),
                                  np.pad(x, [[1, 1], [2, 2]], "symmetric"))
    check_gradients(lambda a: tf.pad(a, pads), [x])
    check_gradients(lambda a: tf.pad(a, [[0, 0], [2, 0]]), [x])
    with pytest.raises(ValueError, match="paddings must be the rank"):
        tf.pad(tf.constant(x), [[1, 1]])
    assert tf.pad(tf.placeholder(tf.float32, [None, 3]), pads).shape.as_list() == [None, 4]


def test_one_hot():
    idx = np.array([0, 2, -1, 5])
    out = tf.one_hot(idx, 3)
    assert out.dtype == tf.float32 and out.shape.as_list() == [4, 3] and out.op.name == "one_hot"
    ref = np.array([[1, 0, 0], [0, 0, 1], [0, 0, 0], [0, 0, 0]], np.float32)
    np.testing.assert_array_equal(run(out), ref)
    o2 = tf.one_hot(tf.constant([[1, 0]]), 2, on_value=5, off_value=-1, axis=1)
    assert o2.dtype == tf.int32 and o2.shape.as_list() == [1, 2, 2]
    np.testing.assert_array_equal(run(o2), np.moveaxis(np.array([[[-1, 5], [5, -1]]]), 2, 1))
    o3 = tf.one_hot([1], 2, dtype=tf.float64, axis=0)
    assert run(o3).dtype == np.float64 and o3.shape.as_list() == [2, 1]
