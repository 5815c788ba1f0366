"""TF 1.15's dense linear algebra (ops/matrix_decomposition_ops.py, ops/matrix_ops.py, ops/matrix_square_root_op.py,
and tf.tensordot / batched tf.matmul of ops/linalg_ops.py): forward against numpy.linalg (np.tensordot, np.matmul)
on batched float32/float64 inputs, every registered gradient against central finite differences in float64
(gradcheck.check_gradients), TF's errors, the tf.linalg names, and the cupy path on fake_cupy against the CPU."""
import numpy as np
import pytest

import fake_cupy
import tensorfleet as tf
from gradcheck import check_gradients, vjp
from helpers import init_and_run

RNG = np.random.default_rng(7)


def _spd(*batch_n, seed=0):
    """Well-conditioned symmetric positive definite matrices B B^T + n I, shape batch + [n, n]."""
    *batch, n = batch_n
    b = np.random.default_rng(seed).standard_normal(tuple(batch) + (n, n))
    return b @ np.swapaxes(b, -1, -2) + n * np.eye(n)


def _run(fetches, feed=None):
    with tf.Session() as s:
        return s.run(fetches, feed)


def _sym(x):
    """(x + x^T) / 2: the symmetric input the Cholesky gradient (symmetric, as TF's) is checked through."""
    return 0.5 * (x + tf.linalg.adjoint(x))


# -- forward ----------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype,tol", [(np.float32, 1e-4), (np.float64, 1e-10)])
def test_square_matrix_ops_match_numpy_on_batches(dtype, tol):
    a = _spd(2, 3, 4).astype(dtype)
    b = RNG.standard_normal((2, 3, 4, 2)).astype(dtype)
    x, y = tf.constant(a), tf.constant(b)
    sign, logabs = tf.linalg.slogdet(x)
    out = _run({"inv": tf.matrix_inverse(x), "inv_adj": tf.matrix_inverse(x + tf.matrix_band_part(x, 0, -1),
                                                                            adjoint=True),
                "det": tf.matrix_determinant(x), "sign": sign, "logabs": logabs, "logdet": tf.linalg.logdet(x),
                "chol": tf.cholesky(x), "solve": tf.matrix_solve(x, y), "solve_adj": tf.linalg.solve(
                    x + tf.matrix_band_part(x, 0, 1), y, adjoint=True),
                "lower": tf.matrix_triangular_solve(x, y), "upper_adj": tf.linalg.triangular_solve(
                    x, y, lower=False, adjoint=True), "chol_solve": tf.cholesky_solve(tf.cholesky(x), y)})
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    mt = lambda m: np.swapaxes(m, -1, -2)  # noqa: E731
    up = a64 + np.triu(a64)
    expect = {"inv": np.linalg.inv(a64), "inv_adj": np.linalg.inv(mt(up)), "det": np.linalg.det(a64),
              "sign": np.linalg.slogdet(a64)[0], "logabs": np.linalg.slogdet(a64)[1],
              "logdet": np.linalg.slogdet(a64)[1], "chol": np.linalg.cholesky(a64),
              "solve": np.linalg.solve(a64, b64),
              "solve_adj": np.linalg.solve(mt(a64 + np.triu(a64) - np.triu(a64, 2)), b64),
              "lower": np.linalg.solve(np.tril(a64), b64), "upper_adj": np.linalg.solve(mt(np.triu(a64)), b64),
              "chol_solve": np.linalg.solve(a64, b64)}
    for k, v in expect.items():
        assert out[k].dtype == dtype, k
        np.testing.assert_allclose(out[k], v, rtol=tol * 10, atol=tol * 10, err_msg=k)


@pytest.mark.parametrize("shape", [(2, 5, 3), (2, 3, 5)])
@pytest.mark.parametrize("l2", [0.0, 0.5])
def test_matrix_solve_ls_matches_numpy_and_its_gradient(shape, l2):
    a = RNG.standard_normal(shape)
    b = RNG.standard_normal(shape[:-1] + (2,))
    got = _run(tf.matrix_solve_ls(a, b, l2_regularizer=l2))
    n = shape[-1]
    if shape[-2] >= n:  # the regularised normal equations
        want = np.linalg.solve(np.swapaxes(a, -1, -2) @ a + l2 * np.eye(n), np.swapaxes(a, -1, -2) @ b)
    else:  # the minimum-norm solution (l2 = 0), and its regularised form
        at = np.swapaxes(a, -1, -2)
        want = at @ np.linalg.solve(a @ at + l2 * np.eye(shape[-2]), b)
    if l2 == 0.0:
        np.testing.assert_allclose(got, np.stack([np.linalg.lstsq(x, y, rcond=None)[0] for x, y in zip(a, b)]),
                                   rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(got, want, rtol=1e-8, atol=1e-10)
    assert tf.linalg.lstsq is tf.matrix_solve_ls
    check_gradients(lambda x, y: tf.matrix_solve_ls(x, y, l2_regularizer=l2), [a, b], rtol=1e-4, atol=1e-5)
    with pytest.raises(NotImplementedError, match="fast=False"):
        tf.matrix_solve_ls(a, b, fast=False)


def test_matrix_square_root_forward_nan_and_gradient():
    spd = _spd(2, 3, seed=8)
    w, v = np.linalg.eigh(spd)
    want = (v * np.sqrt(w)[..., None, :]) @ np.swapaxes(v, -1, -2)
    general = spd + 0.3 * RNG.standard_normal((2, 3, 3))  # not symmetric; eigenvalues near those of spd (> 0)
    rot = np.array([[0.0, -2.0], [2.0, 0.0]]) + np.eye(2)  # complex eigenvalues 1 +- 2i: a real root exists
    got = _run([tf.matrix_square_root(spd), tf.linalg.sqrtm(general.astype(np.float32)), tf.matrix_square_root(rot),
                tf.matrix_square_root(np.array([[[4.0, 0.0], [0.0, -1.0]], [[4.0, 0.0], [0.0, 9.0]]]))])
    np.testing.assert_allclose(got[0], want, rtol=1e-10)
    assert got[1].dtype == np.float32
    np.testing.assert_allclose(got[1] @ got[1], general, rtol=1e-4, atol=1e-4)
    assert (np.linalg.eigvals(got[1].astype(np.float64)).real > 0).all()
    np.testing.assert_allclose(got[2] @ got[2], rot, atol=1e-12)
    assert np.isnan(got[3][0]).all() and np.allclose(got[3][1], [[2.0, 0.0], [0.0, 3.0]])
    check_gradients(lambda x: tf.matrix_square_root(x), [general])


def test_cholesky_reads_only_the_lower_triangle_and_half_is_supported():
    a = _spd(3, seed=1)
    junk = a + np.triu(np.full((3, 3), 100.0), 1)
    np.testing.assert_allclose(_run(tf.cholesky(junk)), np.linalg.cholesky(a), rtol=1e-12)
    h = _run(tf.matrix_inverse(tf.constant(a.astype(np.float16))))
    assert h.dtype == np.float16
    np.testing.assert_allclose(h, np.linalg.inv(a), rtol=2e-2, atol=2e-3)


@pytest.mark.parametrize("shape", [(2, 5, 3), (2, 3, 5), (4, 4)])
@pytest.mark.parametrize("full", [False, True])
def test_qr_and_svd_match_numpy(shape, full):
    a = RNG.standard_normal(shape)
    *batch, m, n = shape
    p = min(m, n)
    q, r = _run(tf.qr(a, full_matrices=full))
    s, u, v = _run(tf.svd(a, full_matrices=full))
    s_only = _run(tf.linalg.svd(tf.constant(a.astype(np.float32)), compute_uv=False))
    assert q.shape == tuple(batch) + (m, m if full else p) and r.shape == tuple(batch) + (m if full else p, n)
    assert u.shape == tuple(batch) + (m, m if full else p) and v.shape == tuple(batch) + (n, n if full else p)
    np.testing.assert_allclose(q @ r, a, atol=1e-12)
    np.testing.assert_allclose(np.swapaxes(q, -1, -2) @ q, np.broadcast_to(np.eye(q.shape[-1]), q.shape[:-2]
                                                                              + (q.shape[-1],) * 2), atol=1e-12)
    np.testing.assert_array_equal(r, np.triu(r))
    np.testing.assert_allclose(np.abs(np.diagonal(r, axis1=-2, axis2=-1))[..., :p],
                               np.abs(np.diagonal(np.linalg.qr(a)[1], axis1=-2, axis2=-1)), rtol=1e-10)
    np.testing.assert_allclose(s, np.linalg.svd(a, compute_uv=False), rtol=1e-12)
    np.testing.assert_allclose(s_only, np.linalg.svd(a, compute_uv=False), rtol=1e-5)
    assert s_only.dtype == np.float32
    # tensor = u diag(s) v^T with u, v the leading p columns (TF returns v, not v^H)
    np.testing.assert_allclose((u[..., :p] * s[..., None, :]) @ np.swapaxes(v[..., :p], -1, -2), a, atol=1e-12)
    for w in (u, v):
        np.testing.assert_allclose(np.swapaxes(w, -1, -2) @ w, np.broadcast_to(np.eye(w.shape[-1]), w.shape[:-2]
                                                                                  + (w.shape[-1],) * 2), atol=1e-12)


def test_structure_ops_match_numpy():
    x = RNG.standard_normal((2, 4, 5)).astype(np.float32)
    d = RNG.standard_normal((2, 4)).astype(np.float32)
    i, j = np.arange(4)[:, None], np.arange(5)[None, :]
    out = _run({"band": tf.matrix_band_part(x, 1, 2), "lower": tf.linalg.band_part(x, -1, 0),
                "upper": tf.matrix_band_part(x, 0, tf.constant(-1, tf.int32)), "all": tf.matrix_band_part(x, -1, -1),
                "diag": tf.matrix_diag(d), "diag_part": tf.matrix_diag_part(x), "set_diag": tf.matrix_set_diag(x, d),
                "ldiag": tf.linalg.diag(d), "ldiag_part": tf.linalg.diag_part(x), "lset": tf.linalg.set_diag(x, d),
                "cross": tf.cross(x[..., :3], x[..., 2:]), "lcross": tf.linalg.cross(d[..., :3], d[..., 1:]),
                "trace": tf.trace(x), "ltrace": tf.linalg.trace(x)})
    np.testing.assert_array_equal(out["band"], np.where((i - j <= 1) & (j - i <= 2), x, 0))
    np.testing.assert_array_equal(out["lower"], np.tril(x))
    np.testing.assert_array_equal(out["upper"], np.triu(x))
    np.testing.assert_array_equal(out["all"], x)
    diag = np.zeros((2, 4, 4), np.float32)
    diag[:, np.arange(4), np.arange(4)] = d
    np.testing.assert_array_equal(out["diag"], diag)
    np.testing.assert_array_equal(out["ldiag"], diag)
    np.testing.assert_array_equal(out["diag_part"], np.diagonal(x, axis1=-2, axis2=-1))
    np.testing.assert_array_equal(out["ldiag_part"], np.diagonal(x, axis1=-2, axis2=-1))
    expect = x.copy()
    expect[:, np.arange(4), np.arange(4)] = d
    np.testing.assert_array_equal(out["set_diag"], expect)
    np.testing.assert_array_equal(out["lset"], expect)
    np.testing.assert_allclose(out["cross"], np.cross(x[..., :3], x[..., 2:]), rtol=1e-6)
    np.testing.assert_allclose(out["lcross"], np.cross(d[..., :3], d[..., 1:]), rtol=1e-6)
    np.testing.assert_allclose(out["trace"], np.trace(x, axis1=-2, axis2=-1), rtol=1e-6)
    np.testing.assert_allclose(out["ltrace"], np.trace(x, axis1=-2, axis2=-1), rtol=1e-6)
    assert _run(tf.cross(np.array([[1, 0, 0]]), np.array([[0, 1, 0]]))).tolist() == [[0, 0, 1]]
    mv = _run([tf.linalg.matvec(x, x[:, 0, :]), tf.linalg.matvec(x, x[:, :, 0], transpose_a=True)])
    np.testing.assert_allclose(mv[0], np.einsum("bij,bj->bi", x, x[:, 0, :]), rtol=1e-5)
    np.testing.assert_allclose(mv[1], np.einsum("bji,bj->bi", x, x[:, :, 0]), rtol=1e-5)


@pytest.mark.parametrize("ord_,axis", [("euclidean", None), ("euclidean", 1), (1, -1), (np.inf, 0), (3, 2),
                                       (0.5, None), ("fro", (1, 2)), ("euclidean", [0, 2]), (1, (1, 2)),
                                       (2, (1, 2)), (2, (2, 0)), (np.inf, (-2, -1))])
@pytest.mark.parametrize("keepdims", [False, True])
def test_norm_matches_numpy(ord_, axis, keepdims):
    x = RNG.standard_normal((3, 4, 5))
    got = _run(tf.norm(x, ord=ord_, axis=axis, keepdims=keepdims))
    np_ord = {"euclidean": None}.get(ord_, ord_) if isinstance(ord_, str) else ord_
    if axis is None:
        want = np.linalg.norm(x.ravel(), np_ord if np_ord is not None else 2)
        want = np.reshape(want, (1, 1, 1)) if keepdims else want
    elif isinstance(axis, int):
        want = np.linalg.norm(x, np_ord, axis=axis, keepdims=keepdims)
    else:
        want = np.linalg.norm(x, "fro" if np_ord is None else np_ord, axis=tuple(axis), keepdims=keepdims)
    np.testing.assert_allclose(got, want, rtol=1e-10)


def test_tf_linalg_names_are_tf_115s():
    la = tf.linalg
    assert (la.inv, la.det, la.cholesky, la.qr, la.svd, la.solve, la.triangular_solve, la.band_part, la.diag,
            la.diag_part, la.set_diag, la.norm, la.cross) == (
        tf.matrix_inverse, tf.matrix_determinant, tf.cholesky, tf.qr, tf.svd, tf.matrix_solve,
        tf.matrix_triangular_solve, tf.matrix_band_part, tf.matrix_diag, tf.matrix_diag_part, tf.matrix_set_diag,
        tf.norm, tf.cross)
    assert la.transpose is tf.matrix_transpose
    assert (la.tensor_diag, la.tensor_diag_part) == (tf.diag, tf.diag_part)
    x = tf.zeros([2, 3, 3])
    names = [tf.matrix_inverse(x).op.name, tf.matrix_determinant(x).op.name, tf.linalg.slogdet(x)[0].op.name,
             tf.cholesky(x).op.name, tf.qr(x).q.op.name, tf.svd(x)[0].op.name, tf.matrix_diag(x[0]).op.name,
             tf.matrix_diag_part(x).op.name, tf.matrix_set_diag(x, x[..., 0]).op.name,
             tf.matrix_band_part(x, 0, 0).op.name, tf.cross(x, x).op.name]
    assert names == ["MatrixInverse", "MatrixDeterminant", "LogMatrixDeterminant", "Cholesky", "Qr", "Svd", "diag",
                     "diag_part", "set_diag", "MatrixBandPart", "Cross"]
    assert tf.norm(x).name.startswith("norm/") and tf.linalg.logdet(x).name.startswith("logdet/")
    s = tf.svd(x, compute_uv=False)
    assert s.shape.as_list() == [2, 3] and s.op.outputs[1].shape.as_list() == [0]
    assert tf.qr(tf.zeros([5, 3])).r.shape.as_list() == [3, 3]


# -- errors -----------------------------------------------------------------------------------------------------
def test_singular_inputs_fail_with_tfs_errors_naming_the_node():
    singular = np.array([[[1.0, 2.0], [2.0, 4.0]]])
    cases = [(tf.matrix_inverse(singular, name="inv_me"), "Input is not invertible.", "inv_me"),
             (tf.cholesky(singular, name="chol_me"), "Cholesky decomposition was not successful. The input might "
                                                     "not be valid.", "chol_me"),
             (tf.matrix_solve(singular, np.ones((1, 2, 1)), name="solve_me"), "Input matrix is not invertible.",
              "solve_me"),
             (tf.matrix_band_part(singular, 3, 0, name="band_me"), "num_lower must be negative or less or equal to "
                                                                   "number of rows (2) got: 3", "band_me")]
    for t, msg, node in cases:
        with pytest.raises(tf.errors.InvalidArgumentError) as e:
            _run(t)
        assert msg in str(e.value) and node in str(e.value)
    assert _run(tf.matrix_determinant(singular)) == pytest.approx([0.0], abs=1e-12)


def test_bad_shapes_known_only_at_run_time_fail_naming_the_node():
    p = tf.placeholder(tf.float64, None, name="p")
    r = tf.placeholder(tf.float64, None, name="r")
    cases = [(tf.matrix_inverse(p, name="a"), {p: np.ones((2, 3))}, "Input matrix must be square"),
             (tf.cholesky(p, name="b"), {p: np.ones(3)}, "must have rank >= 2, got 1"),
             (tf.matrix_solve(p, r, name="c"), {p: np.eye(2), r: np.ones((3, 1))}, "same number of rows"),
             (tf.matrix_triangular_solve(p, r, name="d"), {p: np.eye(2)[None], r: np.ones((2, 2, 1))},
              "same outer dimensions"),
             (tf.svd(p, compute_uv=False, name="e"), {p: np.ones(3)}, "must have rank >= 2"),
             (tf.matrix_diag(p, name="f"), {p: 1.0}, "at least 1-dim"),
             (tf.matrix_set_diag(p, r, name="g"), {p: np.ones((2, 3)), r: np.ones(3)}, "diagonal must have shape"),
             (tf.cross(p, r, name="h"), {p: np.ones((2, 4)), r: np.ones((2, 4))},
              "Inner dimension of inputs must be 3")]
    for t, feed, msg in cases:
        with pytest.raises(tf.errors.InvalidArgumentError) as e:
            _run(t, feed)
        assert msg in str(e.value) and f"node {t.op.name}]]" in str(e.value), str(e.value)


def test_bad_shapes_and_dtypes_fail_at_graph_build_naming_the_op():
    with pytest.raises(ValueError, match=r"Dimensions must be equal, but are 2 and 3 for 'MatrixInverse'"):
        tf.matrix_inverse(tf.zeros([2, 3]))
    with pytest.raises(ValueError, match=r"at least rank 2 but is rank 1 for 'Cholesky'"):
        tf.cholesky(tf.zeros([3]))
    with pytest.raises(ValueError, match=r"'MatrixSolve'"):
        tf.matrix_solve(tf.zeros([2, 3, 3]), tf.zeros([3, 3, 1]))
    with pytest.raises(ValueError, match=r"Dimension must be 3 but is 4 for 'Cross'"):
        tf.cross(tf.zeros([2, 4]), tf.zeros([2, 4]))
    with pytest.raises(ValueError, match=r"'MatrixSetDiag'"):
        tf.matrix_set_diag(tf.zeros([2, 3, 4]), tf.zeros([2, 4]))
    with pytest.raises(TypeError, match=r"DataType int32 not in list of allowed values"):
        tf.matrix_determinant(tf.zeros([3, 3], tf.int32))
    with pytest.raises(ValueError, match="'ord' must be a supported"):
        tf.norm(tf.zeros([3, 3]), ord="nuc", axis=(0, 1))
    with pytest.raises(ValueError, match="'axis' must be None"):
        tf.norm(tf.zeros([3, 3]), axis=(0, 0))


# -- gradients against finite differences (float64) -------------------------------------------------------------
def test_inverse_determinant_and_slogdet_gradients():
    a = _spd(2, 3, seed=2) + RNG.standard_normal((2, 3, 3))  # not symmetric: every entry matters
    check_gradients(lambda x: tf.matrix_inverse(x), [a])
    check_gradients(lambda x: tf.linalg.inv(x, adjoint=True), [a])
    check_gradients(lambda x: tf.matrix_determinant(x), [a], rtol=1e-5, atol=1e-5)
    check_gradients(lambda x: tf.linalg.slogdet(x).log_abs_determinant, [a])
    check_gradients(lambda x: tf.linalg.slogdet(x).log_abs_determinant, [-a[:, ::-1]])  # negative determinants


def test_cholesky_and_logdet_gradients():
    a = _spd(2, 4, seed=3)
    check_gradients(lambda x: tf.cholesky(_sym(x)), [a])
    check_gradients(lambda x: tf.linalg.logdet(_sym(x)), [a])
    check_gradients(lambda x, y: tf.cholesky_solve(tf.cholesky(_sym(x)), y), [a, RNG.standard_normal((2, 4, 2))])


@pytest.mark.parametrize("adjoint", [False, True])
def test_solve_and_triangular_solve_gradients(adjoint):
    a = _spd(2, 3, seed=4) + RNG.standard_normal((2, 3, 3))
    b = RNG.standard_normal((2, 3, 2))
    check_gradients(lambda x, y: tf.matrix_solve(x, y, adjoint=adjoint), [a, b])
    for lower in (True, False):
        check_gradients(lambda x, y, lower=lower: tf.matrix_triangular_solve(x, y, lower=lower, adjoint=adjoint),
                        [a, b])


@pytest.mark.parametrize("shape", [(2, 4, 3), (3, 3)])
def test_qr_gradient(shape):
    a = RNG.standard_normal(shape)
    check_gradients(lambda x: tf.qr(x).q, [a])
    check_gradients(lambda x: tf.qr(x).r, [a])
    check_gradients(lambda x: tf.concat([tf.reshape(t, [-1]) for t in tf.qr(x, full_matrices=shape[0] == 3)], 0),
                    [a])


def test_qr_gradient_refuses_what_tf_does_not_implement():
    for a, full in ((tf.zeros([3, 4], tf.float64), False), (tf.zeros([4, 3], tf.float64), True)):
        q, r = tf.qr(a, full_matrices=full)
        with pytest.raises(NotImplementedError, match="QrGrad not implemented"):
            tf.gradients(tf.reduce_sum(q) + tf.reduce_sum(r), a)


def _normalized_svd(x, full):
    """TF's svd_op_test normalisation: singular vectors are unique up to sign, so each pair (u_i, v_i) is
    flipped to make the first row of u (m >= n) or v (m < n) positive. The output: s, u, v flattened."""
    s, u, v = tf.svd(x, full_matrices=full)
    m, n = x.shape.as_list()[-2:]
    phase = tf.sign(u[..., 0:1, :] if m >= n else v[..., 0:1, :])
    u, v = u * phase[..., :u.shape.as_list()[-1]], v * phase[..., :v.shape.as_list()[-1]]
    return tf.concat([tf.reshape(t, [-1]) for t in (s, u, v)], 0)


@pytest.mark.parametrize("shape,full", [((2, 4, 3), False), ((2, 3, 4), False), ((3, 3), False), ((4, 3), True),
                                        ((3, 4), True), ((2, 3, 3), True)])
def test_svd_gradient(shape, full):
    a = RNG.standard_normal(shape)
    check_gradients(lambda x: _normalized_svd(x, full), [a], rtol=1e-4, atol=1e-5)
    check_gradients(lambda x: tf.svd(x, compute_uv=False), [a])


def test_self_adjoint_eig_forward_and_gradient():
    a = _spd(2, 4, seed=6) + RNG.standard_normal((2, 4, 4))  # eigh reads the lower triangle only, as TF's
    lower = np.tril(a) + np.swapaxes(np.tril(a, -1), -1, -2)
    e, v = _run(tf.self_adjoint_eig(a))
    np.testing.assert_allclose(e, np.linalg.eigvalsh(lower), rtol=1e-12)
    np.testing.assert_allclose(_run(tf.linalg.eigvalsh(a.astype(np.float32))), np.linalg.eigvalsh(lower), rtol=1e-5)
    np.testing.assert_allclose((v * e[..., None, :]) @ np.swapaxes(v, -1, -2), lower, atol=1e-12)
    assert tf.linalg.eigh is tf.self_adjoint_eig and tf.linalg.eigvalsh is tf.self_adjoint_eigvals

    def normalized(x):
        e, v = tf.self_adjoint_eig(x)
        v = v * tf.sign(v[..., 0:1, :])  # eigenvectors are unique up to sign
        return tf.concat([tf.reshape(e, [-1]), tf.reshape(v, [-1])], 0)

    check_gradients(normalized, [a], rtol=1e-4, atol=1e-5)
    check_gradients(lambda x: tf.self_adjoint_eigvals(x), [a])


def test_svd_gradient_refuses_what_tf_does_not_implement():
    a = tf.zeros([5, 3], tf.float64)
    _, u, _ = tf.svd(a, full_matrices=True)
    with pytest.raises(NotImplementedError, match=r"abs\(m - n\) > 1"):
        tf.gradients(tf.reduce_sum(u), a)


def test_structure_op_gradients():
    x = RNG.standard_normal((2, 3, 4))
    for lo, hi in ((1, 0), (-1, 2), (0, -1)):
        check_gradients(lambda t, lo=lo, hi=hi: tf.matrix_band_part(t, lo, hi), [x])
    check_gradients(lambda d: tf.matrix_diag(d), [RNG.standard_normal((2, 3))])
    check_gradients(lambda t: tf.matrix_diag_part(t), [x])  # non-square: through MatrixSetDiag
    check_gradients(lambda t: tf.matrix_diag_part(t), [RNG.standard_normal((2, 3, 3))])  # square: MatrixDiag
    check_gradients(lambda t, d: tf.matrix_set_diag(t, d), [x, RNG.standard_normal((2, 3))])
    check_gradients(lambda a, b: tf.cross(a, b), [RNG.standard_normal((4, 3)), RNG.standard_normal((4, 3))])


@pytest.mark.parametrize("ord_,axis", [("euclidean", None), (1, 1), (np.inf, 0), (3, None), ("fro", (0, 1)),
                                       (1, (0, 1)), (np.inf, (0, 1)), (2, (0, 1))])
def test_norm_gradient(ord_, axis):
    check_gradients(lambda t: tf.norm(t, ord=ord_, axis=axis), [RNG.standard_normal((3, 4))])


def test_second_order_gradients_through_the_gradient_graphs():
    """The gradients are built from differentiable ops: their own gradients (w.r.t. input and cotangent)."""
    a = _spd(2, 3, seed=9) + 0.5 * RNG.standard_normal((2, 3, 3))
    g = RNG.standard_normal((2, 3, 3))
    check_gradients(vjp(lambda x: tf.matrix_inverse(x)), [a, g], rtol=1e-4, atol=1e-5)
    check_gradients(vjp(lambda x: tf.cholesky(_sym(x))), [_spd(2, 3, seed=10), g], rtol=1e-4, atol=1e-5)
    check_gradients(vjp(lambda x: tf.matrix_determinant(x)), [a, RNG.standard_normal(2)], rtol=1e-4, atol=1e-4)
    check_gradients(vjp(lambda x: tf.svd(x, compute_uv=False)), [RNG.standard_normal((2, 4, 3)),
                                                                   RNG.standard_normal((2, 3))], rtol=1e-4, atol=1e-5)


# -- the cupy path (fake_cupy) against the CPU ------------------------------------------------------------------
def test_linalg_kernels_on_fake_cupy_match_cpu(monkeypatch):
    fake_cupy.install(monkeypatch, devices=1)
    a = _spd(2, 3, seed=5).astype(np.float32)
    b = RNG.standard_normal((2, 3, 2)).astype(np.float32)
    c = RNG.standard_normal((2, 4, 3)).astype(np.float32)

    def fetches():
        x, y, z = tf.constant(a), tf.constant(b), tf.constant(c)
        q, r = tf.qr(z)
        s, u, v = tf.svd(z)
        outs = [tf.matrix_inverse(x), tf.matrix_determinant(x), tf.linalg.slogdet(x)[1], tf.cholesky(x),
                tf.matrix_solve(x, y), tf.matrix_triangular_solve(x, y, lower=False), tf.matrix_band_part(z, 1, 0),
                tf.matrix_diag(y[..., 0]), tf.matrix_diag_part(z), tf.matrix_set_diag(z, z[..., 0, :]),
                tf.cross(z, z[..., ::-1]), tf.abs(q), tf.abs(r), s, tf.abs(u), tf.norm(z, ord=2, axis=[-2, -1]),
                tf.self_adjoint_eigvals(x), tf.abs(tf.self_adjoint_eig(x)[1]), tf.matrix_square_root(x)]
        return outs + tf.gradients(tf.add_n([tf.reduce_sum(o) for o in outs[:11]]), [x, y, z])

    results = {}
    for gpu_on in (True, False):
        config = tf.ConfigProto() if gpu_on else tf.ConfigProto(device_count={"GPU": 0})
        with tf.Graph().as_default():
            outs = fetches()
            with tf.Session(config=config) as sess:
                results[gpu_on] = sess.run(outs)
                placement = sess.device_placement()
        if gpu_on:
            assert placement["MatrixInverse"].endswith("GPU:0") and placement["Svd"].endswith("GPU:0")
            assert placement["MatrixSquareRoot"].endswith("CPU:0")  # CPU only, as TF's kernel
    for g, c_ in zip(results[True], results[False]):
        assert isinstance(g, np.ndarray) and g.dtype == c_.dtype
        np.testing.assert_allclose(g, c_, rtol=1e-4, atol=1e-5)
    with tf.Graph().as_default():
        with tf.Session() as sess, pytest.raises(tf.errors.InvalidArgumentError, match="Input is not invertible"):
            sess.run(tf.matrix_inverse(np.zeros((2, 2), np.float32)))


# -- tensordot and batch matmul (ops/linalg_ops.py) -----------------------------
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
