"""Indices, slice bounds and tile multiples computed in the graph (TF accepts tensors there): `x[:, :n]`,
`x[i]`, `tf.strided_slice`, `tf.slice`, `tf.tile(x, [tf.shape(y)[0], 1])`. Oracle: numpy indexing on the fed
values; gradients by finite differences."""
import numpy as np
import pytest

import tensorfleet as tf
from gradcheck import check_gradients

XV = np.arange(24, dtype=np.float32).reshape(4, 6)


def _run(fetches, feed):
    with tf.Session() as sess:
        return sess.run(fetches, feed)


def test_getitem_with_computed_bounds_and_indices_is_numpy_indexing():
    x = tf.placeholder(tf.float32, [None, 6])
    n = tf.shape(x)[0]
    cases = {"x[:, :n]": (x[:, :n], XV[:, :4]), "x[n - 1]": (x[n - 1], XV[3]), "x[-n]": (x[-n], XV[0]),
             "x[1:n, ::2]": (x[1:n, ::2], XV[1:4, ::2]), "x[..., n - 2]": (x[..., n - 2], XV[..., 2]),
             "x[tf.newaxis, n - 3:, 1]": (x[tf.newaxis, n - 3:, 1], XV[np.newaxis, 1:, 1]),
             "x[::-1, n]": (x[::-1, n], XV[::-1, 4])}
    got = _run({k: t for k, (t, _) in cases.items()}, {x: XV})
    for key, (tensor, want) in cases.items():
        np.testing.assert_array_equal(got[key], want, err_msg=key)
        assert tensor.shape.is_compatible_with(want.shape), key
    # what is known stays known: the rank, whole-axis slices, new axes, constant bounds
    assert cases["x[:, :n]"][0].shape.as_list() == [None, None]
    assert cases["x[n - 1]"][0].shape.as_list() == [6]
    assert cases["x[1:n, ::2]"][0].shape.as_list() == [None, 3]
    assert cases["x[tf.newaxis, n - 3:, 1]"][0].shape.as_list() == [1, None]
    assert cases["x[:, :n]"][0].op.type == "StridedSlice" and len(cases["x[:, :n]"][0].op.inputs) == 4


def test_strided_slice_and_slice_with_computed_arguments():
    x = tf.placeholder(tf.float32, [None, 6])
    n = tf.shape(x)[0]
    ss = tf.strided_slice(x, [0, 1], [n, 5], [2, 3], begin_mask=0, end_mask=0)
    shrink = tf.strided_slice(x, [n - 2, 0], [n - 1, 6], shrink_axis_mask=1)
    sl = tf.slice(x, [1, n - 3], [-1, 2])
    sl2 = tf.slice(x, tf.stack([0, n]), [2, -1])
    got = _run([ss, shrink, sl, sl2], {x: XV})
    np.testing.assert_array_equal(got[0], XV[0:4:2, 1:5:3])
    np.testing.assert_array_equal(got[1], XV[2])
    np.testing.assert_array_equal(got[2], XV[1:, 1:3])
    np.testing.assert_array_equal(got[3], XV[0:2, 4:])


def test_tile_with_computed_multiples():
    x = tf.placeholder(tf.float32, [None, 6])
    row = tf.constant([[1.0, 2.0]])
    tiled = tf.tile(row, [tf.shape(x)[0], 3])
    assert tiled.shape.as_list() == [None, 6]
    np.testing.assert_array_equal(_run(tiled, {x: XV}), np.tile([[1.0, 2.0]], [4, 3]))
    bad = tf.tile(row, [tf.shape(x)[0] - 10, 1])
    with tf.Session() as sess, pytest.raises(tf.errors.InvalidArgumentError, match="multiples >= 0"):
        sess.run(bad, {x: XV})


def test_gradients_through_computed_slices_and_tiles():
    x0 = np.random.RandomState(0).rand(4, 5)

    def build(x):
        n = tf.shape(x)[0]
        out = tf.concat([tf.reshape(x[1:n, n - 2], [-1]), tf.reshape(tf.tile(x[:2], [n - 2, 1]), [-1])], 0)
        return tf.reshape(out, [3 + 2 * 2 * 5])  # n - 2 is computed: give check_gradients the static size

    check_gradients(build, [x0])
