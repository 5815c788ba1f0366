"""TF 1.15's matrix decompositions and what is computed through them: cholesky, qr, svd, self_adjoint_eig(vals),
matrix_inverse, matrix_determinant, slogdet, logdet and the solves (matrix_solve, cholesky_solve,
matrix_triangular_solve, matrix_solve_ls), batched over leading dimensions, with TF's registered gradients
(linalg_grad.py).

Sits in `ops/` above `matrix_ops` (band_part, matrix_diag & co, which the gradients are built from); kernels in
`kernels/linalg_kernels.py` (numpy.linalg on the CPU, cupy.linalg on a GPU). Real dtypes only (half, float32,
float64): complex inputs are refused when the graph is built.
"""
from __future__ import annotations

__all__ = ["matrix_inverse", "matrix_determinant", "cholesky", "cholesky_solve", "qr", "svd", "matrix_solve",
           "matrix_triangular_solve", "matrix_solve_ls", "self_adjoint_eig", "self_adjoint_eigvals"]

from collections import namedtuple

from .. import dtypes as _dtypes
from ..default_graph import name_scope
from . import array_ops as _a
from . import math_ops as _m
from .common import TensorShape, binary_inputs, convert_to_tensor, make_op, make_tensor, register_gradient
from .common import register_op, unknown_shape
from .matrix_ops import adjoint, at_least_rank, matrix_band_part, matrix_diag, matrix_diag_part, matrix_set_diag

_ALLOWED = "float64, float32, half, complex64, complex128"


def _real_input(x, op_type, arg="input"):
    t = convert_to_tensor(x)
    if t.dtype.is_complex:
        raise TypeError(f"{op_type}: complex inputs ({t.dtype.name}) are not supported by tensorfleet")
    if t.dtype not in (_dtypes.float16, _dtypes.float32, _dtypes.float64):
        raise TypeError(f"Value passed to parameter '{arg}' has DataType {t.dtype.name} not in list of allowed "
                        f"values: {_ALLOWED} ({op_type})")
    return t


def _dims(shape):
    return None if shape.ndims is None else shape.as_tuple()


def _square(shape):
    """Checks a batch of square matrices; returns its dims (None if the rank is unknown)."""
    at_least_rank(shape, 2)
    dims = _dims(shape)
    if dims is not None and dims[-1] is not None and dims[-2] is not None and dims[-1] != dims[-2]:
        raise ValueError(f"Dimensions must be equal, but are {dims[-2]} and {dims[-1]}")
    return dims


def _square_same(op):
    dims = _square(op.inputs[0].shape)
    return [(op.inputs[0].dtype, op.inputs[0].shape if dims is not None else unknown_shape())]


def _batch_scalar(op):
    dims = _square(op.inputs[0].shape)
    return [(op.inputs[0].dtype, unknown_shape() if dims is None else TensorShape(list(dims[:-2])))]


def _qr_shape(op):
    x = op.inputs[0]
    at_least_rank(x.shape, 2)
    dims = _dims(x.shape)
    if dims is None:
        return [(x.dtype, unknown_shape())] * 2
    *batch, m, n = dims
    full = op.get_attr("full_matrices")
    p = m if full else (None if m is None or n is None else min(m, n))
    return [(x.dtype, TensorShape(batch + [m, p])), (x.dtype, TensorShape(batch + [p, n]))]


def _svd_shape(op):
    x = op.inputs[0]
    at_least_rank(x.shape, 2)
    dims = _dims(x.shape)
    if dims is None:
        return [(x.dtype, unknown_shape())] * 3
    *batch, m, n = dims
    p = None if m is None or n is None else min(m, n)
    if not op.get_attr("compute_uv"):
        return [(x.dtype, TensorShape(batch + [p])), (x.dtype, TensorShape([0])), (x.dtype, TensorShape([0]))]
    full = op.get_attr("full_matrices")
    return [(x.dtype, TensorShape(batch + [p])), (x.dtype, TensorShape(batch + [m, m if full else p])),
            (x.dtype, TensorShape(batch + [n, n if full else p]))]


def _solve_shape(op):
    a, b = op.inputs
    dims = _square(a.shape)
    at_least_rank(b.shape, 2)
    bdims = _dims(b.shape)
    if dims is None or bdims is None:
        return [(a.dtype, b.shape if bdims is not None else unknown_shape())]
    if len(dims) != len(bdims):
        raise ValueError(f"Shapes must be equal rank, but are {len(dims)} and {len(bdims)}")
    out = []
    for x, y in zip(dims[:-1], bdims[:-1]):
        if x is not None and y is not None and x != y:
            raise ValueError(f"Dimensions must be equal, but are {x} and {y}")
        out.append(x if x is not None else y)
    return [(a.dtype, TensorShape(out + [bdims[-1]]))]


register_op("MatrixInverse", _square_same, expensive=True)
register_op("MatrixDeterminant", _batch_scalar, expensive=True)
register_op("LogMatrixDeterminant", lambda op: _batch_scalar(op) * 2, expensive=True)
register_op("Cholesky", _square_same, expensive=True)
register_op("Qr", _qr_shape, expensive=True)
register_op("Svd", _svd_shape, expensive=True)
register_op("MatrixSolve", _solve_shape, expensive=True)


def _eig_shape(op):
    x = op.inputs[0]
    dims = _square(x.shape)
    if dims is None:
        return [(x.dtype, unknown_shape())] * 2
    v = TensorShape(list(dims)) if op.get_attr("compute_v") else TensorShape([0])
    return [(x.dtype, TensorShape(list(dims[:-1]))), (x.dtype, v)]


register_op("SelfAdjointEigV2", _eig_shape, expensive=True)
register_op("MatrixTriangularSolve", _solve_shape, expensive=True)


# -- the Python API ---------------------------------------------------------------------------------------------
def matrix_inverse(input, adjoint=False, name=None):
    """`tf.matrix_inverse` / `tf.linalg.inv`: the inverse of each innermost square matrix (of its adjoint when
    `adjoint`); a singular matrix fails the step with InvalidArgumentError "Input is not invertible."."""
    x = _real_input(input, "MatrixInverse")
    return make_tensor("MatrixInverse", [x], {"adjoint": bool(adjoint)}, name=name, default_name="MatrixInverse")


def matrix_determinant(input, name=None):
    """`tf.matrix_determinant` / `tf.linalg.det`: [..., M, M] -> [...]."""
    x = _real_input(input, "MatrixDeterminant")
    return make_tensor("MatrixDeterminant", [x], name=name, default_name="MatrixDeterminant")


LogMatrixDeterminant = namedtuple("LogMatrixDeterminant", ["sign", "log_abs_determinant"])


def slogdet(input, name=None):
    """`tf.linalg.slogdet`: (sign, log_abs_determinant) of each innermost square matrix."""
    x = _real_input(input, "LogMatrixDeterminant")
    op = make_op("LogMatrixDeterminant", [x], name=name, default_name="LogMatrixDeterminant")
    return LogMatrixDeterminant(*op.outputs)


def logdet(matrix, name=None):
    """`tf.linalg.logdet`: log(det(matrix)) of Hermitian positive definite matrices, via the Cholesky factor."""
    with name_scope(name, "logdet", [matrix]):
        chol = cholesky(matrix)
        return 2.0 * _m.reduce_sum(_m.log(matrix_diag_part(chol)), axis=[-1])


def cholesky(input, name=None):
    """`tf.cholesky` / `tf.linalg.cholesky`: the lower Cholesky factor L (A = L L^T) of each innermost matrix,
    reading its lower triangle only; a matrix that is not positive definite fails the step."""
    x = _real_input(input, "Cholesky")
    return make_tensor("Cholesky", [x], name=name, default_name="Cholesky")


def cholesky_solve(chol, rhs, name=None):
    """`tf.cholesky_solve` / `tf.linalg.cholesky_solve`: solves A X = rhs given A's Cholesky factor `chol`."""
    with name_scope(name, "cholesky_solve", [chol, rhs]):
        y = matrix_triangular_solve(chol, rhs, adjoint=False, lower=True)
        return matrix_triangular_solve(chol, y, adjoint=True, lower=True)


Qr = namedtuple("Qr", ["q", "r"])


def qr(input, full_matrices=False, name=None):
    """`tf.qr` / `tf.linalg.qr`: (q, r) with orthonormal columns in q and upper triangular r, per matrix."""
    x = _real_input(input, "Qr")
    op = make_op("Qr", [x], {"full_matrices": bool(full_matrices)}, name=name, default_name="Qr")
    return Qr(*op.outputs)


def svd(tensor, full_matrices=False, compute_uv=True, name=None):
    """`tf.svd` / `tf.linalg.svd`: (s, u, v) with tensor = u diag(s) v^T per matrix (note: v, not v^T), s in
    decreasing order; only s when not `compute_uv`."""
    x = _real_input(tensor, "Svd", "input")
    op = make_op("Svd", [x], {"compute_uv": bool(compute_uv), "full_matrices": bool(full_matrices)}, name=name,
                 default_name="Svd")
    s, u, v = op.outputs
    return (s, u, v) if compute_uv else s


def self_adjoint_eig(tensor, name=None):
    """`tf.self_adjoint_eig` / `tf.linalg.eigh`: (e, v), the eigenvalues (ascending) and eigenvectors (columns of
    v) of each innermost symmetric matrix, reading its lower triangle only."""
    x = _real_input(tensor, "SelfAdjointEigV2")
    e, v = make_op("SelfAdjointEigV2", [x], {"compute_v": True}, name=name, default_name="SelfAdjointEigV2").outputs
    return e, v


def self_adjoint_eigvals(tensor, name=None):
    """`tf.self_adjoint_eigvals` / `tf.linalg.eigvalsh`: the eigenvalues only."""
    x = _real_input(tensor, "SelfAdjointEigV2")
    return make_op("SelfAdjointEigV2", [x], {"compute_v": False}, name=name,
                   default_name="SelfAdjointEigV2").outputs[0]


def matrix_solve(matrix, rhs, adjoint=False, name=None):
    """`tf.matrix_solve` / `tf.linalg.solve`: X with matrix X = rhs (adjoint(matrix) X = rhs when `adjoint`);
    matrix [..., M, M], rhs [..., M, K] with the same batch dimensions."""
    a, b = binary_inputs(matrix, rhs, "MatrixSolve", ("matrix", "rhs"))
    _real_input(a, "MatrixSolve", "matrix")
    return make_tensor("MatrixSolve", [a, b], {"adjoint": bool(adjoint)}, name=name, default_name="MatrixSolve")


def matrix_triangular_solve(matrix, rhs, lower=True, adjoint=False, name=None):
    """`tf.matrix_triangular_solve` / `tf.linalg.triangular_solve`: matrix_solve reading only the lower (or
    upper) triangle of `matrix`."""
    a, b = binary_inputs(matrix, rhs, "MatrixTriangularSolve", ("matrix", "rhs"))
    _real_input(a, "MatrixTriangularSolve", "matrix")
    return make_tensor("MatrixTriangularSolve", [a, b], {"lower": bool(lower), "adjoint": bool(adjoint)},
                       name=name, default_name="MatrixTriangularSolve")


def _regularized_gramian_cholesky(matrix, l2_regularizer, first_kind):
    """TF's _RegularizedGramianCholesky: chol(A^T A + l2 I) (first kind) or chol(A A^T + l2 I)."""
    gramian = _mm(matrix, matrix, adjoint_a=first_kind, adjoint_b=not first_kind)
    if not (isinstance(l2_regularizer, (int, float)) and l2_regularizer == 0):
        identity = _eye_like(gramian)
        gramian = gramian + convert_to_tensor(l2_regularizer, dtype=matrix.dtype) * identity
    return cholesky(gramian)


def matrix_solve_ls(matrix, rhs, l2_regularizer=0.0, fast=True, name=None):
    """`tf.matrix_solve_ls` / `tf.linalg.lstsq`: the least-squares solutions of matrix X = rhs, with an optional
    L2 penalty, by TF's fast composite (normal equations through a Cholesky factor: matrix must have full rank
    unless l2_regularizer > 0). Static inner dimensions are needed; fast=False (TF's complete orthogonal
    decomposition) is not built here."""
    if not fast:
        raise NotImplementedError("matrix_solve_ls: fast=False is not supported here (use fast=True)")
    with name_scope(name, "matrix_solve_ls", [matrix, rhs, l2_regularizer]):
        a, b = binary_inputs(matrix, rhs, "MatrixSolveLs", ("matrix", "rhs"))
        _real_input(a, "MatrixSolveLs", "matrix")
        dims = _dims(a.shape)
        if dims is None or len(dims) < 2 or dims[-2] is None or dims[-1] is None:
            raise ValueError(f"matrix_solve_ls: the matrix's inner dimensions must be known, got {a.shape}")
        if dims[-2] >= dims[-1]:  # overdetermined: (A^T A + l2 I)^-1 A^T rhs
            chol = _regularized_gramian_cholesky(a, l2_regularizer, first_kind=True)
            return cholesky_solve(chol, _mm(a, b, adjoint_a=True))
        chol = _regularized_gramian_cholesky(a, l2_regularizer, first_kind=False)  # A^T (A A^T + l2 I)^-1 rhs
        return _mm(a, cholesky_solve(chol, b), adjoint_a=True)


# -- gradients (TF 1.15's linalg_grad.py) ----------------------------------------------------------------------
def _mm(a, b, adjoint_a=False, adjoint_b=False):
    return _m.matmul(a, b, adjoint_a=adjoint_a, adjoint_b=adjoint_b)


def _eye_like(x):
    """Identity matrices shaped like the square batch x (works with unknown shapes)."""
    return matrix_diag(_a.ones_like(matrix_diag_part(x)))


def _batch_multipliers(g, like):
    """g ([...]) reshaped to [..., 1, 1] so it scales the matrices of `like`."""
    return _a.expand_dims(_a.expand_dims(g, -1), -1)


@register_gradient("MatrixInverse")
def _matrix_inverse_grad(op, grad):
    ainv = op.outputs[0]
    if op.get_attr("adjoint"):  # y = inv(A^T): TF's formula transposed (TF 1.15 ignores the attr here)
        return [-_mm(ainv, _mm(grad, ainv, adjoint_a=True))]
    return [-_mm(ainv, _mm(grad, ainv, adjoint_b=True), adjoint_a=True)]


@register_gradient("MatrixDeterminant")
def _matrix_determinant_grad(op, grad):
    a, c = op.inputs[0], op.outputs[0]
    return [_batch_multipliers(grad * c, a) * matrix_inverse(a, adjoint=True)]


@register_gradient("LogMatrixDeterminant")
def _log_matrix_determinant_grad(op, _, grad_b):
    a = op.inputs[0]
    return [_batch_multipliers(grad_b, a) * matrix_inverse(a, adjoint=True)]


@register_gradient("Cholesky")
def _cholesky_grad(op, grad):
    l = op.outputs[0]  # noqa: E741  (TF's name)
    l_inverse = matrix_triangular_solve(l, _eye_like(l))
    middle = _mm(l, grad, adjoint_a=True)
    middle = matrix_set_diag(middle, 0.5 * matrix_diag_part(middle))
    middle = matrix_band_part(middle, -1, 0)
    grad_a = _mm(_mm(l_inverse, middle, adjoint_a=True), l_inverse)
    grad_a = grad_a + adjoint(grad_a)
    return [grad_a * 0.5]


@register_gradient("Qr")
def _qr_grad(op, dq, dr):
    q, r = op.outputs
    rd, qd = _dims(r.shape), _dims(q.shape)
    if rd is None or rd[-2] is None or rd[-1] is None:
        raise NotImplementedError("QrGrad not implemented with dynamic shapes.")
    if rd[-2] > rd[-1] or qd[-2] < rd[-1]:  # m < n, or full_matrices with m > n
        raise NotImplementedError("QrGrad not implemented when ncols > nrows or full_matrices is true and "
                                  "ncols != nrows.")
    qdq = _mm(q, dq, adjoint_a=True)
    qdq_ = qdq - adjoint(qdq)
    rdr = _mm(r, dr, adjoint_b=True)
    rdr_ = rdr - adjoint(rdr)
    tril = matrix_band_part(qdq_ + rdr_, -1, 0)

    def triangular_solve(x, r):  # matmul(x, adjoint(matrix_inverse(r))) for upper triangular r
        return adjoint(matrix_triangular_solve(r, adjoint(x), lower=False, adjoint=False))

    grad_a = _mm(q, dr + triangular_solve(tril, r))
    grad_b = triangular_solve(dq - _mm(q, qdq), r)
    return [grad_a + grad_b]


@register_gradient("MatrixSolve")
def _matrix_solve_grad(op, grad):
    a, c = op.inputs[0], op.outputs[0]
    adjoint_a = op.get_attr("adjoint")
    grad_b = matrix_solve(a, grad, adjoint=not adjoint_a)
    grad_a = -_mm(c, grad_b, adjoint_b=True) if adjoint_a else -_mm(grad_b, c, adjoint_b=True)
    return [grad_a, grad_b]


@register_gradient("MatrixTriangularSolve")
def _matrix_triangular_solve_grad(op, grad):
    a, c = op.inputs[0], op.outputs[0]
    adjoint_a, lower_a = op.get_attr("adjoint"), op.get_attr("lower")
    grad_b = matrix_triangular_solve(a, grad, lower=lower_a, adjoint=not adjoint_a)
    grad_a = -_mm(c, grad_b, adjoint_b=True) if adjoint_a else -_mm(grad_b, c, adjoint_b=True)
    grad_a = matrix_band_part(grad_a, -1, 0) if lower_a else matrix_band_part(grad_a, 0, -1)
    return [grad_a, grad_b]


def _safe_reciprocal(x, epsilon=1e-20):
    return x * _m.reciprocal(x * x + epsilon)


@register_gradient("Svd")
def _svd_grad(op, grad_s, grad_u, grad_v):
    """TF's _SvdGrad: the gradient is infinite (NaN) where singular values repeat."""
    a = op.inputs[0]
    grad_s_mat = matrix_diag(grad_s)
    if not op.get_attr("compute_uv"):
        _, u, v = svd(a, compute_uv=True)
        return [_mm(u, _mm(grad_s_mat, v, adjoint_b=True))]
    dims = _dims(a.shape)
    m, n = (None, None) if dims is None else dims[-2:]
    if m is None or n is None:
        raise NotImplementedError("SVD gradient has not been implemented for input with unknown inner matrix "
                                  "shape.")
    full_matrices = op.get_attr("full_matrices")
    s, u, v = op.outputs
    use_adjoint = m > n
    if use_adjoint:  # the gradient for A^T = V S^T U^T, transposed at the end
        m, n = n, m
        u, v = v, u
        grad_u, grad_v = grad_v, grad_u
    if full_matrices and abs(m - n) > 1:
        raise NotImplementedError("svd gradient is not implemented for abs(m - n) > 1 when full_matrices is True")
    s_mat = matrix_diag(s)
    s2 = _m.square(s)
    f = matrix_set_diag(_m.reciprocal(_a.expand_dims(s2, -2) - _a.expand_dims(s2, -1)), _a.zeros_like(s))
    s_inv_mat = matrix_diag(_safe_reciprocal(s))
    v1, grad_v1 = v[..., :, :m], grad_v[..., :, :m]
    u_gu = _mm(u, grad_u, adjoint_a=True)
    v_gv = _mm(v1, grad_v1, adjoint_a=True)
    f_u, f_v = f * u_gu, f * v_gv
    term1_nouv = grad_s_mat + _mm(f_u + adjoint(f_u), s_mat) + _mm(s_mat, f_v + adjoint(f_v))
    grad_a = _mm(u, _mm(term1_nouv, v1, adjoint_b=True))
    if m != n:
        gv1t = adjoint(grad_v1)
        term2_nous = gv1t - _mm(_mm(gv1t, v1), v1, adjoint_b=True)
        if full_matrices:
            v2, grad_v2 = v[..., :, m:n], grad_v[..., :, m:n]
            term2_nous = term2_nous - _mm(_mm(v1, grad_v2, adjoint_a=True), v2, adjoint_b=True)
        grad_a = grad_a + _mm(_mm(u, s_inv_mat), term2_nous)
    return [adjoint(grad_a) if use_adjoint else grad_a]


@register_gradient("SelfAdjointEigV2")
def _self_adjoint_eig_grad(op, grad_e, grad_v):
    """TF's _SelfAdjointEigV2Grad: the result is the lower triangle, as the forward op reads only that."""
    e = op.outputs[0]
    if op.get_attr("compute_v"):
        v = op.outputs[1]
        f = matrix_set_diag(_safe_reciprocal(_a.expand_dims(e, -2) - _a.expand_dims(e, -1)), _a.zeros_like(e))
        grad_a = _mm(v, _mm(matrix_diag(grad_e) + f * _mm(v, grad_v, adjoint_a=True), v, adjoint_b=True))
    else:
        _, v = self_adjoint_eig(op.inputs[0])
        grad_a = _mm(v, _mm(matrix_diag(grad_e), v, adjoint_b=True))
    grad_a = matrix_band_part(grad_a + adjoint(grad_a), -1, 0)
    return [matrix_set_diag(grad_a, 0.5 * matrix_diag_part(grad_a))]
