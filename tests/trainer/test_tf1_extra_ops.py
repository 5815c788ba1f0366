"""TF1 ops added for real programs: top_k, cumsum/cumprod, gather_nd, scatter_*, sequence_mask, tensordot,
batch matmul, assert_* / Assert, Print, and the tf.math / tf.random / tf.debugging namespaces.

Oracles: numpy (np.argsort, np.cumsum, fancy indexing, np.add.at, np.tensordot, np.matmul), TF 1.15's documented
semantics and message formats, and central finite differences (gradcheck) for every gradient.
"""
import numpy as np
import pytest

import tensorfleet as tf
from gradcheck import check_gradients, vjp
from helpers import init_and_run

RNG = np.random.default_rng(7)


# -- top_k --------------------------------------------------------------------
def test_top_k_forward_ties_shapes_and_gradient_to_the_values_positions():
    x = np.array([[1, 3, 3, 2, 5], [4, 4, 4, 0, -1]], dtype=np.float32)
    v, i = tf.nn.top_k(tf.constant(x), k=3)
    assert v.shape.as_list() == [2, 3] and i.dtype is tf.int32
    vv, ii = init_and_run([v, i])
    want_i = np.argsort(-x, axis=-1, kind="stable")[:, :3]  # TF: equal values, lower index first
    np.testing.assert_array_equal(ii, want_i)
    np.testing.assert_array_equal(vv, np.take_along_axis(x, want_i, -1))
    v8, i8 = init_and_run(list(tf.math.top_k(tf.constant(np.array([3, 250, 7], np.uint8)), 2)))
    np.testing.assert_array_equal(i8, [1, 2])
    with pytest.raises(ValueError, match="at least k columns"):
        tf.nn.top_k(tf.constant(x), 6)
    xs = RNG.permutation(24).reshape(2, 3, 4).astype(np.float64)  # distinct values: top_k is smooth there
    check_gradients(lambda t: tf.nn.top_k(t, 2)[0] * 1.5, [xs])
    # second order: the gradient graph is PutAlongLastAxis (whose gradient is TakeAlongLastAxis) ...
    check_gradients(vjp(lambda t: tf.nn.top_k(t, 2)[0]), [xs, RNG.standard_normal((2, 3, 2))])
    # ... and differentiating that again goes through TakeAlongLastAxis (gradient: PutAlongLastAxis)
    def vjp2(x, g, h):
        first = tf.gradients(tf.nn.top_k(x, 2)[0], [x], grad_ys=g)[0]
        return tf.gradients(first, [g], grad_ys=h)[0]
    check_gradients(vjp2, [xs, RNG.standard_normal((2, 3, 2)), RNG.standard_normal((2, 3, 4))])


# -- cumsum / cumprod ---------------------------------------------------------
def _np_scan(fn, x, axis, exclusive, reverse, ident):
    y = np.flip(x, axis) if reverse else x
    out = fn(y, axis=axis)
    if exclusive:
        pad = np.full_like(np.take(out, [0], axis=axis), ident)
        out = np.concatenate([pad, np.take(out, np.arange(out.shape[axis] - 1), axis=axis)], axis=axis)
    return np.flip(out, axis) if reverse else out


@pytest.mark.parametrize("exclusive", [False, True])
@pytest.mark.parametrize("reverse", [False, True])
def test_cumsum_cumprod_forward_and_gradients(exclusive, reverse):
    x = RNG.uniform(0.5, 1.5, (3, 4))
    for axis in (0, 1, -1):
        got_s, got_p = init_and_run([tf.cumsum(tf.constant(x), axis, exclusive=exclusive, reverse=reverse),
                             tf.cumprod(tf.constant(x), axis, exclusive=exclusive, reverse=reverse)])
        np.testing.assert_allclose(got_s, _np_scan(np.cumsum, x, axis % 2, exclusive, reverse, 0), rtol=1e-12)
        np.testing.assert_allclose(got_p, _np_scan(np.cumprod, x, axis % 2, exclusive, reverse, 1), rtol=1e-12)
    check_gradients(lambda t: tf.cumsum(t, 1, exclusive=exclusive, reverse=reverse), [x])
    check_gradients(lambda t: tf.cumprod(t, 0, exclusive=exclusive, reverse=reverse), [x])
    # TF's documented example
    assert init_and_run(tf.cumsum([1, 2, 3], exclusive=True, reverse=True)).tolist() == [5, 3, 0]
    assert init_and_run(tf.cumsum(tf.constant([1, 2, 3], tf.int32))).dtype == np.int32


# -- gather_nd ----------------------------------------------------------------
def test_gather_nd_forward_errors_and_gradients():
    p = RNG.standard_normal((3, 4, 2))
    idx_full = np.array([[0, 1, 1], [2, 3, 0]])
    idx_rows = np.array([[[1], [0]], [[2], [2]]])
    idx_pairs = np.array([[0, 0], [2, 3], [0, 0]], dtype=np.int64)
    a, b, c = init_and_run([tf.gather_nd(p, idx_full), tf.gather_nd(p, idx_rows), tf.gather_nd(p, idx_pairs)])
    np.testing.assert_array_equal(a, p[idx_full[:, 0], idx_full[:, 1], idx_full[:, 2]])
    np.testing.assert_array_equal(b, p[idx_rows[..., 0]])
    np.testing.assert_array_equal(c, p[idx_pairs[:, 0], idx_pairs[:, 1]])
    assert tf.gather_nd(p, idx_rows).shape.as_list() == [2, 2, 4, 2]
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"indices\[1\] = \[3, 0\] does not index into "
                                                             r"param shape \[3,4,2\]"):
        init_and_run(tf.gather_nd(p, [[0, 0], [3, 0]]))
    check_gradients(lambda t: tf.gather_nd(t, idx_pairs), [p])  # repeated [0, 0] accumulates
    check_gradients(vjp(lambda t: tf.gather_nd(t, idx_pairs)), [p, RNG.standard_normal((3, 2))])  # GatherNdGrad


# -- scatter_update / scatter_add / scatter_sub -------------------------------
def test_scatter_ops_update_the_variable_like_numpy():
    init = np.arange(12, dtype=np.float32).reshape(4, 3)
    v = tf.Variable(init)
    upd = np.ones((2, 3), np.float32) * [[10], [20]]
    su = tf.scatter_update(v, [3, 1], upd)
    sa = tf.scatter_add(v, tf.constant([0, 0], tf.int64), upd)
    ss = tf.scatter_sub(v, [2], [[1, 2, 3]])
    assert su.op.colocation_groups() == v.op.colocation_groups() and su.shape.as_list() == [4, 3]
    want = init.copy()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        want[[3, 1]] = upd
        np.testing.assert_array_equal(sess.run(su), want)
        np.add.at(want, [0, 0], upd)
        np.testing.assert_array_equal(sess.run(sa), want)
        want[2] -= [1, 2, 3]
        np.testing.assert_array_equal(sess.run(ss), want)
        np.testing.assert_array_equal(sess.run(v), want)
        assert sess.run(v).dtype == np.float32
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"indices\[1\] = 4 is not in \[0, 4\)"):
            sess.run(tf.scatter_add(v, [0, 4], upd))
    with pytest.raises(ValueError, match="Dimension 1 in both shapes must be equal, but are 2 and 3"):
        tf.scatter_update(v, [0], [[1.0, 2.0]])


# -- sequence_mask ------------------------------------------------------------
def test_sequence_mask_matches_numpy():
    lengths = np.array([[1, 3], [0, 2]])
    m, m5, mf = init_and_run([tf.sequence_mask(lengths), tf.sequence_mask(lengths, 5),
                      tf.sequence_mask(tf.constant([2, 0]), maxlen=3, dtype=tf.float32)])
    np.testing.assert_array_equal(m, np.arange(3) < lengths[..., None])
    np.testing.assert_array_equal(m5, np.arange(5) < lengths[..., None])
    np.testing.assert_array_equal(mf, [[1, 1, 0], [0, 0, 0]])
    assert mf.dtype == np.float32 and m.dtype == np.bool_
    assert tf.sequence_mask(lengths, 5).shape.as_list() == [2, 2, 5]
    assert tf.sequence_mask(lengths).shape.as_list() == [2, 2, None]


# -- tensordot and batch matmul ----------------------------------------------
def test_tensordot_matches_numpy_and_gradient():
    a, b = RNG.standard_normal((2, 3, 4)), RNG.standard_normal((4, 3, 5))
    for axes in (1, [[1, 2], [1, 0]], ([2], [0]), 0):
        got = init_and_run(tf.tensordot(a, b, axes))
        np.testing.assert_allclose(got, np.tensordot(a, b, axes), rtol=1e-12)
        assert tf.tensordot(a, b, axes).shape.as_list() == list(np.tensordot(a, b, axes).shape)
    check_gradients(lambda x, y: tf.tensordot(x, y, [[1, 2], [1, 0]]), [a, b])
    with pytest.raises(ValueError, match="Dimensions must be equal"):
        tf.tensordot(a, b, [[0], [0]])


@pytest.mark.parametrize("ta,tb", [(False, False), (False, True), (True, False), (True, True)])
def test_matmul_on_batches_broadcasts_like_numpy_and_gradient(ta, tb):
    a = RNG.standard_normal((2, 1, 3, 4) if not ta else (2, 1, 4, 3))
    b = RNG.standard_normal((3, 4, 5) if not tb else (3, 5, 4))
    t = tf.matmul(a, b, transpose_a=ta, transpose_b=tb)
    assert t.op.type == "BatchMatMulV2" and t.shape.as_list() == [2, 3, 3, 5]
    want = np.matmul(np.swapaxes(a, -1, -2) if ta else a, np.swapaxes(b, -1, -2) if tb else b)
    np.testing.assert_allclose(init_and_run(t), want, rtol=1e-12)
    check_gradients(lambda x, y: tf.matmul(x, y, transpose_a=ta, transpose_b=tb), [a, b])
    assert tf.matmul(tf.ones([2, 3]), tf.ones([3, 4])).op.type == "MatMul"  # rank 2 keeps MatMul


# -- Assert / assert_* --------------------------------------------------------
def test_assert_equal_raises_at_run_time_with_tfs_message_and_gates_via_control_dependencies():
    x = tf.placeholder(tf.int32, [None], name="x")
    y = tf.constant([1, 2, 3, 4], name="y")
    check = tf.assert_equal(x, y, message="labels")
    assert isinstance(check, tf.Operation)
    with tf.control_dependencies([check]):
        out = tf.identity(x * 2)
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(out, {x: [1, 2, 3, 4]}), [2, 4, 6, 8])
        with pytest.raises(tf.errors.InvalidArgumentError) as e:
            sess.run(out, {x: [1, 2, 3, 5]})
    assert str(e.value).startswith("assertion failed: [labels] [Condition x == y did not hold element-wise:] "
                                   "[x (x:0) = ] [1 2 3...] [y (y:0) = ] [1 2 3...]")


def test_binary_and_sign_asserts_and_summarize():
    x = tf.placeholder(tf.float32, [2])
    ops = {"less": tf.assert_less(x, 2.0), "less_equal": tf.assert_less_equal(x, 2.0),
           "greater": tf.assert_greater(x, 0.0), "greater_equal": tf.assert_greater_equal(x, 0.0),
           "positive": tf.assert_positive(x), "non_negative": tf.assert_non_negative(x),
           "negative": tf.assert_negative(-x), "none_equal": tf.assert_none_equal(x, 1.0)}
    cases = {(0.5, 1.5): {"less", "less_equal", "greater", "greater_equal", "positive", "non_negative", "negative",
                          "none_equal"},
             (0.0, 2.0): {"less_equal", "greater_equal", "non_negative", "none_equal"},
             (1.0, -1.0): {"less", "less_equal"}}
    with tf.Session() as sess:
        for value, passing in cases.items():
            for name, op in ops.items():
                if name in passing:
                    sess.run(op, {x: value})
                else:
                    with pytest.raises(tf.errors.InvalidArgumentError, match="assertion failed"):
                        sess.run(op, {x: value})
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"\[Condition x > 0 did not hold element-wise:\] "
                                                                 r"\[x \(Placeholder:0\) = \] \[0.5 -1\]"):
            sess.run(ops["positive"], {x: [0.5, -1.0]})
        a = tf.Assert(tf.reduce_all(x > 0), ["x has", x, "and", 7], summarize=1)
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"^assertion failed: \[x has\] \[-1\.\.\.\] "
                                                                 r"\[and\] \[7\]"):
            sess.run(a, {x: [-1.0, 2.0]})


def test_static_asserts_fail_at_graph_build_time_like_tf():
    with pytest.raises(tf.errors.InvalidArgumentError, match="Condition x == y did not hold"):
        tf.assert_equal(tf.constant([1, 2]), tf.constant([1, 3]))
    tf.assert_equal(tf.constant([1, 2]), [1, 2])
    with pytest.raises(ValueError, match=r"Tensor p:0 must have rank 3.  Received rank 2, shape \(\?, 4\)"):
        tf.assert_rank(tf.placeholder(tf.float32, [None, 4], name="p"), 3)
    assert tf.assert_rank(tf.placeholder(tf.float32, [None, 4]), 2).type == "NoOp"
    u = tf.placeholder(tf.float32)
    dyn = tf.assert_rank(u, 2)
    dyn_least = tf.assert_rank_at_least(u, 1)
    with tf.Session() as sess:
        sess.run([dyn, dyn_least], {u: np.zeros((2, 3))})
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"must have rank\] \[2\] \[Received shape: \] "
                                                                 r"\[2 3 4\]"):
            sess.run(dyn, {u: np.zeros((2, 3, 4))})


# -- Print --------------------------------------------------------------------
def test_print_is_an_identity_that_writes_to_stderr_and_its_gradient(capfd):
    x = tf.placeholder(tf.float32, [4])
    p = tf.Print(x, [x, "n", tf.size(x), tf.constant(0.1, tf.float64)], message="x is: ")
    once = tf.Print(x, [x], message="once ", first_n=1, summarize=10)
    with tf.Session() as sess:
        for _ in range(2):
            out, _ = sess.run([p * 2.0, once], {x: [1.5, 2, 3, 4]})
    np.testing.assert_array_equal(out, [3, 4, 6, 8])
    err = capfd.readouterr().err.splitlines()
    assert err.count("x is: [1.5 2 3...][n][4][0.1]") == 2 and err.count("once [1.5 2 3 4]") == 1
    check_gradients(lambda t: tf.Print(t, [t], "") * t, [RNG.standard_normal(3)])


def test_math_random_and_debugging_namespaces():
    assert tf.math.log is tf.log and tf.math.reduce_sum is tf.reduce_sum and tf.math.cumsum is tf.cumsum
    assert tf.math.top_k is tf.nn.top_k and tf.random.set_random_seed is tf.set_random_seed
    assert tf.random.normal is tf.random_normal and tf.random.uniform is tf.random_uniform
    assert tf.debugging.assert_equal is tf.assert_equal and tf.linalg.tensordot is tf.tensordot
    from tensorfleet.math import exp  # noqa: F401  (a real module)
    tf.random.set_random_seed(3)
    a = tf.random.normal([2000], seed=1)
    c = tf.random.categorical(tf.log([[0.5, 0.5]]), 4000, seed=2)
    u = tf.random.uniform([3], maxval=2.0, seed=1)
    va, vc, vu = init_and_run([a, c, u])
    assert abs(va.mean()) < 0.1 and abs(va.std() - 1) < 0.1
    assert c.dtype is tf.int64 and abs(vc.mean() - 0.5) < 0.05 and ((vu >= 0) & (vu < 2)).all()
    np.testing.assert_allclose(init_and_run(tf.math.log(tf.constant([1.0, np.e]))), [0, 1], atol=1e-6)
