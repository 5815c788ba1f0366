"""Array ops: reshape/transpose/squeeze/expand_dims, fill/zeros/ones, shape/size/rank, range/linspace,
concat/stack/unstack/split/tile, roll/meshgrid, eye/diag/einsum: forward vs numpy, static shapes, errors, gradients."""
import numpy as np
import pytest

import tensorfleet as tf
from gradcheck import check_gradients
from helpers import run

RNG = np.random.default_rng(2)
X = RNG.standard_normal((2, 3, 4))


@pytest.mark.parametrize("shape,ref", [([6, 4], (6, 4)), ((-1, 2), (12, 2)), ([24], (24,)), ([2, -1, 3], (2, 4, 3))])
def test_reshape_static_and_gradient(shape, ref):
    out = tf.reshape(tf.constant(X), shape)
    assert out.shape.as_list() == list(ref) and out.op.name == "Reshape"
    np.testing.assert_array_equal(run(out), X.reshape(ref))
    check_gradients(lambda x: tf.reshape(x, shape), [X])


def test_reshape_dynamic_shapes_and_errors():
    x = tf.placeholder(tf.float32, [None, 3, 4])
    flat = tf.reshape(x, [-1, 12])
    assert flat.shape.as_list() == [None, 12]
    batch = tf.reshape(x, [tf.shape(x)[0], -1])
    assert batch.shape.as_list() == [None, None]
    back = tf.reshape(flat, tf.shape(x))
    xv = X.astype(np.float32)
    a, b, c = run(flat, batch, back, feed={x: xv})
    np.testing.assert_array_equal(a, xv.reshape(-1, 12))
    np.testing.assert_array_equal(b, xv.reshape(2, -1))
    np.testing.assert_array_equal(c, xv)
    g, = tf.gradients(tf.reduce_sum(tf.reshape(x, [-1]) * 2.0), [x])
    np.testing.assert_array_equal(run(g, feed={x: xv}), np.full(xv.shape, 2.0))
    assert tf.reshape(tf.zeros([2, 3]), tf.constant([3, 2])).shape.as_list() == [3, 2]
    with pytest.raises(ValueError, match="Cannot reshape a tensor with 24 elements to shape \\[5, 5\\]"):
        tf.reshape(tf.constant(X), [5, 5])
    with pytest.raises(ValueError, match="multiple unknown"):
        tf.reshape(tf.constant(X), [-1, -1])
    with pytest.raises(tf.errors.InvalidArgumentError):
        run(tf.reshape(x, [5, -1]), feed={x: xv})


def test_transpose_squeeze_expand_dims():
    t = tf.transpose(tf.constant(X))
    assert t.shape.as_list() == [4, 3, 2] and t.op.name == "transpose"
    np.testing.assert_array_equal(run(t), X.T)
    np.testing.assert_array_equal(run(tf.transpose(X, [1, 0, 2])), X.transpose(1, 0, 2))
    check_gradients(lambda x: tf.transpose(x, [2, 0, 1]), [X])
    check_gradients(lambda x: tf.transpose(x), [X])
    with pytest.raises(ValueError, match="Dimension must be 3 but is 2"):
        tf.transpose(tf.constant(X), [1, 0])
    y = X.reshape(2, 1, 3, 1, 4)
    assert tf.squeeze(tf.constant(y)).shape.as_list() == [2, 3, 4]
    assert tf.squeeze(tf.constant(y), [1]).shape.as_list() == [2, 3, 1, 4]
    assert tf.squeeze(tf.constant(y), squeeze_dims=[-2]).shape.as_list() == [2, 1, 3, 4]
    np.testing.assert_array_equal(run(tf.squeeze(y, [1, 3])), X)
    with pytest.raises(ValueError, match="Can not squeeze dim\\[0\\], expected a dimension of 1, got 2"):
        tf.squeeze(tf.constant(y), [0])
    check_gradients(lambda x: tf.squeeze(x, [1]), [y])
    for axis, ref in [(0, (1, 2, 3, 4)), (-1, (2, 3, 4, 1)), (2, (2, 3, 1, 4))]:
        e = tf.expand_dims(tf.constant(X), axis)
        assert e.shape.as_list() == list(ref)
        np.testing.assert_array_equal(run(e), np.expand_dims(X, axis))
    assert tf.expand_dims(tf.constant(X), dim=1).shape.as_list() == [2, 1, 3, 4]
    check_gradients(lambda x: tf.expand_dims(x, 1), [X])


def test_fill_zeros_ones_like_and_shape_ops():
    z, o, f = tf.zeros([2, 3]), tf.ones((2,), tf.int32), tf.fill([2, 2], 7.0)
    assert (z.op.name, o.op.name, z.dtype, o.dtype) == ("zeros", "ones", tf.float32, tf.int32)
    zv, ov, fv = run(z, o, f)
    np.testing.assert_array_equal(zv, np.zeros((2, 3)))
    np.testing.assert_array_equal(ov, [1, 1])
    np.testing.assert_array_equal(fv, np.full((2, 2), 7.0))
    big = tf.zeros([100, 100])
    assert big.op.type == "Fill" and run(big).shape == (100, 100)
    x = tf.placeholder(tf.float64, [None, 3])
    zl, ol, ol_int = tf.zeros_like(x), tf.ones_like(x), tf.ones_like(x, dtype=tf.int32)
    dyn = tf.zeros([tf.shape(x)[0], 2])
    assert dyn.shape.as_list() == [None, 2]
    xv = np.ones((4, 3))
    a, b, c, d, s, n, r = run(zl, ol, ol_int, dyn, tf.shape(x), tf.size(x), tf.rank(x), feed={x: xv})
    np.testing.assert_array_equal(a, np.zeros((4, 3)))
    assert b.dtype == np.float64 and c.dtype == np.int32 and d.shape == (4, 2)
    np.testing.assert_array_equal(s, [4, 3])
    assert s.dtype == np.int32 and n == 12 and r == 2
    assert tf.shape(x, out_type=tf.int64).dtype == tf.int64
    assert tf.shape(tf.zeros([2, 5])).op.type == "Const"
    check_gradients(lambda v: tf.fill([2, 3], v), [np.array(1.5)])


def test_range_and_linspace():
    cases = [(tf.range(5), np.arange(5)), (tf.range(2, 11, 3), np.arange(2, 11, 3)),
             (tf.range(1.0, 2.0, 0.25), np.arange(1.0, 2.0, 0.25)), (tf.range(5, 0, -2), np.arange(5, 0, -2)),
             (tf.range(3, dtype=tf.int64), np.arange(3))]
    assert cases[0][0].dtype == tf.int32 and cases[2][0].dtype == tf.float32 and cases[4][0].dtype == tf.int64
    assert cases[0][0].op.name == "range"
    for t, ref in cases:
        assert t.shape.as_list() == [len(ref)]
        np.testing.assert_allclose(run(t), ref)
    lin = tf.linspace(0.0, 1.0, 5)
    assert lin.dtype == tf.float32 and lin.shape.as_list() == [5]
    np.testing.assert_allclose(run(lin), np.linspace(0, 1, 5))


def test_concat_stack_unstack_split_forward_and_shapes():
    a, b = X[:, :1], X[:, 1:]
    c = tf.concat([a, b], 1)
    assert c.shape.as_list() == [2, 3, 4] and c.op.name == "concat"
    np.testing.assert_array_equal(run(c), X)
    assert tf.concat([tf.placeholder(tf.float32, [None, 2]), tf.zeros([3, 5])], -1).shape.as_list() == [3, 7]
    with pytest.raises(ValueError, match="Dimension 0 in both shapes must be equal, but are 2 and 3"):
        tf.concat([tf.zeros([2, 2]), tf.zeros([3, 2])], 1)
    s = tf.stack([X[0], X[1]], axis=1)
    assert s.shape.as_list() == [3, 2, 4]
    np.testing.assert_array_equal(run(s), np.stack([X[0], X[1]], 1))
    parts = tf.unstack(tf.constant(X), axis=1)
    assert len(parts) == 3 and parts[0].shape.as_list() == [2, 4]
    for p, ref in zip(run(*parts), np.moveaxis(X, 1, 0)):
        np.testing.assert_array_equal(p, ref)
    even = tf.split(tf.constant(X), 2, axis=2)
    sized = tf.split(tf.constant(X), [1, -1], axis=1)
    assert [t.shape.as_list() for t in sized] == [[2, 1, 4], [2, 2, 4]]
    for p, ref in zip(run(*even, *sized), np.split(X, 2, 2) + np.split(X, [1], 1)):
        np.testing.assert_array_equal(p, ref)
    with pytest.raises(ValueError, match="evenly divisible by 3 but is 4"):
        tf.split(tf.constant(X), 3, axis=2)
    with pytest.raises(ValueError, match="Cannot infer num"):
        tf.unstack(tf.placeholder(tf.float32, [None]))


def test_join_split_gradients():
    a, b = X[:, :1], X[:, 1:]
    check_gradients(lambda u, v: tf.concat([u, v, u], 1), [a, b])
    check_gradients(lambda u, v: tf.stack([u, v, u], axis=-1), [X, X * 2])
    check_gradients(lambda x: tf.unstack(x, axis=1)[1] * tf.unstack(x, axis=1)[2], [X])
    check_gradients(lambda x: tf.split(x, [1, 3], axis=2)[1], [X])
    check_gradients(lambda x: tf.concat(tf.split(x, 2, 2)[::-1], 0), [X])


def test_concat_gradient_unknown_shapes():
    u = tf.placeholder(tf.float64, [None, 2])
    v = tf.placeholder(tf.float64, [None, 3])
    gu, gv = tf.gradients(tf.reduce_sum(tf.concat([u, v], 1) * np.arange(5.0)), [u, v])
    a, b = run(gu, gv, feed={u: np.ones((4, 2)), v: np.ones((4, 3))})
    np.testing.assert_array_equal(a, np.tile([0.0, 1.0], (4, 1)))
    np.testing.assert_array_equal(b, np.tile([2.0, 3.0, 4.0], (4, 1)))


def test_tile():
    t = tf.tile(tf.constant(X), [1, 2, 3])
    assert t.shape.as_list() == [2, 6, 12]
    np.testing.assert_array_equal(run(t), np.tile(X, [1, 2, 3]))
    check_gradients(lambda x: tf.tile(x, [2, 1, 2]), [X])
    with pytest.raises(ValueError, match="Tile"):
        tf.tile(tf.constant(X), [1, 2])


def test_eye_diag_einsum():
    np.testing.assert_array_equal(run(tf.eye(3, 2)), np.eye(3, 2))
    d = np.array([1.0, 2.0, 3.0])
    np.testing.assert_array_equal(run(tf.diag(d)), np.diag(d))
    np.testing.assert_array_equal(run(tf.diag_part(np.diag(d))), d)
    check_gradients(tf.diag, [d])
    check_gradients(tf.diag_part, [RNG.standard_normal((3, 3))])
    a, b = RNG.standard_normal((2, 3)), RNG.standard_normal((3, 4))
    for eq, ops, ref in [("ij,jk->ik", (a, b), a @ b), ("ij->ji", (a,), a.T), ("ij,ij->i", (a, a), (a * a).sum(1)),
                         ("ij,jk", (a, b), a @ b)]:
        np.testing.assert_allclose(run(tf.einsum(eq, *ops)), ref)
    check_gradients(lambda u, v: tf.einsum("ij,jk->ik", u, v), [a, b])
    check_gradients(lambda u, v: tf.einsum("ij,kj->ikj", u, v), [a, b.T])


def test_roll_and_meshgrid_match_numpy():
    x = np.array([[3.0, 1.0, 2.0], [0.5, -1.0, 4.0]])
    np.testing.assert_array_equal(run(tf.roll(tf.constant(x), 1, 1)), np.roll(x, 1, 1))
    np.testing.assert_array_equal(run(tf.roll(tf.constant(x), [-1, 2], [0, 1])), np.roll(x, [-1, 2], [0, 1]))
    a, b = np.arange(3), np.arange(4) * 10
    for indexing in ("xy", "ij"):
        got = run(tf.meshgrid(a, b, indexing=indexing))
        for g, r in zip(got, np.meshgrid(a, b, indexing=indexing), strict=True):
            np.testing.assert_array_equal(g, r)


def test_rank_op_on_an_unknown_rank_placeholder():
    x = tf.placeholder(tf.float32, None, name="x")
    r = tf.rank(x)
    assert r.op.type == "Rank" and r.dtype == tf.int32 and r.shape == ()
    with tf.Session() as sess:
        for shape in [(), (3,), (2, 1, 4)]:
            out = sess.run(r, {x: np.zeros(shape, np.float32)})
            assert out == np.ndim(np.zeros(shape)) and out.dtype == np.int32
    assert tf.rank(tf.zeros([2, 3])).op.type == "Const"  # static rank folds to a constant, like TF
