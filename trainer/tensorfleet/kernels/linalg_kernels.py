"""Kernels of ops/matrix_decomposition_ops.py and ops/matrix_ops.py: inverse, determinants, Cholesky, QR, SVD,
solves, band parts, batched diagonals and cross products.

Written against `ctx.xp`: numpy.linalg on the CPU, cupy.linalg on a GPU (both batched over leading
dimensions). half inputs are computed in float32 and cast back (LAPACK has no half). A LinAlgError (singular
or not positive definite input) becomes TF's InvalidArgumentError naming the node; cupy reports those only
when its linalg error checks are on (`cupyx.errstate(linalg="raise")`: a host sync), else the results are
NaN/Inf as cuSOLVER leaves them.
"""
from __future__ import annotations

import numpy as np

from .. import dtypes as _dtypes
from .. import errors
from .backend import to_host
from .registry import host_inputs, register_kernel

_REAL = (_dtypes.float16, _dtypes.float32, _dtypes.float64)


def _fail(ctx, msg):
    return errors.InvalidArgumentError(None, ctx.op, f"{msg}\n\t [[node {ctx.op.name}]]")


def _lapack(ctx, msg, fn, *arrays):
    """fn(*arrays) in float32 for half inputs; a LinAlgError -> InvalidArgumentError(msg)."""
    half = arrays[0].dtype == np.float16
    if half:
        arrays = tuple(a.astype(np.float32) for a in arrays)
    try:
        out = fn(*arrays)
    except np.linalg.LinAlgError:  # cupy.linalg raises numpy's LinAlgError too
        raise _fail(ctx, msg) from None
    if half:
        out = tuple(o.astype(np.float16) for o in out) if isinstance(out, tuple) else out.astype(np.float16)
    return out


def _matrices(ctx, x, square=True, i=0):
    """TF's runtime checks of a batch of matrices (linalg_ops_common.cc): rank >= 2, square when asked."""
    if x.ndim < 2:
        raise _fail(ctx, f"Input tensor {i} must have rank >= 2, got {x.ndim}")
    if square and x.shape[-1] != x.shape[-2]:
        raise _fail(ctx, f"Input matrix must be square, got shape {list(x.shape)}")
    return x


def _solve_operands(ctx, a, b):
    _matrices(ctx, a)
    _matrices(ctx, b, square=False, i=1)
    if a.shape[:-2] != b.shape[:-2]:
        raise _fail(ctx, f"All input tensors must have the same outer dimensions, got {list(a.shape)} and "
                         f"{list(b.shape)}")
    if a.shape[-2] != b.shape[-2]:
        raise _fail(ctx, "Input matrix and right-hand side must have the same number of rows.")


def _t(x):
    return x.swapaxes(-1, -2)


def _empty_batch(x):
    return x.size == 0


@register_kernel("MatrixInverse", dtypes=_REAL)
def matrix_inverse(ctx, x):
    _matrices(ctx, x)
    if _empty_batch(x):
        return x.copy()
    a = _t(x) if ctx.attrs.get("adjoint") else x
    return _lapack(ctx, "Input is not invertible.", ctx.xp.linalg.inv, a)


@register_kernel("MatrixDeterminant", dtypes=_REAL)
def matrix_determinant(ctx, x):
    _matrices(ctx, x)
    if x.shape[-1] == 0:
        return ctx.xp.ones(x.shape[:-2], dtype=x.dtype)
    return _lapack(ctx, "Determinant failed.", ctx.xp.linalg.det, x)


@register_kernel("LogMatrixDeterminant", dtypes=_REAL)
def log_matrix_determinant(ctx, x):
    _matrices(ctx, x)
    xp = ctx.xp
    if x.shape[-1] == 0:
        return xp.ones(x.shape[:-2], dtype=x.dtype), xp.zeros(x.shape[:-2], dtype=x.dtype)
    sign, logabs = _lapack(ctx, "Determinant failed.", xp.linalg.slogdet, x)
    return sign.astype(x.dtype, copy=False), logabs.astype(x.dtype, copy=False)


@register_kernel("Cholesky", dtypes=_REAL)
def cholesky(ctx, x):
    _matrices(ctx, x)
    if _empty_batch(x):
        return x.copy()
    xp = ctx.xp
    lower = xp.tril(x)  # LAPACK reads one triangle; TF reads the lower one
    sym = lower + _t(xp.tril(x, -1))
    return _lapack(ctx, "Cholesky decomposition was not successful. The input might not be valid.",
                   xp.linalg.cholesky, sym)


@register_kernel("Qr", dtypes=_REAL)
def qr(ctx, x):
    _matrices(ctx, x, square=False)
    xp = ctx.xp
    m, n = x.shape[-2:]
    full = ctx.attrs.get("full_matrices")
    if _empty_batch(x):
        p = m if full else min(m, n)
        return xp.zeros(x.shape[:-2] + (m, p), x.dtype), xp.zeros(x.shape[:-2] + (p, n), x.dtype)
    return _lapack(ctx, "QR decomposition failed.", lambda a: tuple(xp.linalg.qr(a, mode="complete" if full
                                                                              else "reduced")), x)


@register_kernel("Svd", dtypes=_REAL)
def svd(ctx, x):
    _matrices(ctx, x, square=False)
    xp = ctx.xp
    m, n = x.shape[-2:]
    full, uv = ctx.attrs.get("full_matrices"), ctx.attrs.get("compute_uv")
    none = xp.zeros((0,), dtype=x.dtype)
    if _empty_batch(x):
        p = min(m, n)
        s = xp.zeros(x.shape[:-2] + (p,), x.dtype)
        if not uv:
            return s, none, none.copy()
        eye = xp.eye  # a batch of no matrices, or of 0-sized ones: any orthonormal bases
        u = xp.broadcast_to(eye(m, m if full else p, dtype=x.dtype), x.shape[:-2] + (m, m if full else p)).copy()
        v = xp.broadcast_to(eye(n, n if full else p, dtype=x.dtype), x.shape[:-2] + (n, n if full else p)).copy()
        return s, u, v
    if not uv:
        s = _lapack(ctx, "SVD did not converge.", lambda a: xp.linalg.svd(a, compute_uv=False), x)
        return s, none, none.copy()
    u, s, vh = _lapack(ctx, "SVD did not converge.",
                       lambda a: tuple(xp.linalg.svd(a, full_matrices=bool(full), compute_uv=True)), x)
    return s, u, _t(vh).copy()


@register_kernel("SelfAdjointEigV2", dtypes=_REAL)
def self_adjoint_eig(ctx, x):
    """numpy's and cupy's eigh read the lower triangle (UPLO="L"), as TF's kernel does."""
    _matrices(ctx, x)
    xp = ctx.xp
    compute_v = ctx.attrs.get("compute_v")
    if _empty_batch(x):
        return xp.zeros(x.shape[:-1], x.dtype), (x.copy() if compute_v else xp.zeros((0,), x.dtype))
    if not compute_v:
        return _lapack(ctx, "Self-adjoint eigen decomposition was not successful.", xp.linalg.eigvalsh,
                       x), xp.zeros((0,), x.dtype)
    return _lapack(ctx, "Self-adjoint eigen decomposition was not successful.",
                   lambda a: tuple(xp.linalg.eigh(a)), x)


@register_kernel("MatrixSquareRoot", devices=("CPU",), dtypes=_REAL)
def matrix_square_root(ctx, x):
    """V sqrt(D) V^-1 from the eigendecomposition (numpy only, as TF's kernel is CPU only); NaN for a matrix with
    a negative real eigenvalue (no real square root), as TF's real Schur method gives."""
    _matrices(ctx, x)
    if _empty_batch(x):
        return x.copy()
    a = x.astype(np.float64)
    w, v = _lapack(ctx, "Eigen decomposition failed.", np.linalg.eig, a)
    root = _lapack(ctx, "The input matrix's eigenvectors are singular: no square root was found.",
                   lambda vv: np.linalg.solve(np.swapaxes(vv, -1, -2), np.swapaxes(vv * np.sqrt(w)[..., None, :],
                                                                                   -1, -2)), v)
    out = np.real(np.swapaxes(root, -1, -2))
    negative = ((w.imag == 0) & (w.real < 0)).any(axis=-1)
    out[negative] = np.nan
    return out.astype(x.dtype)


@register_kernel("MatrixSolve", dtypes=_REAL)
def matrix_solve(ctx, a, b):
    _solve_operands(ctx, a, b)
    if a.size == 0 or b.size == 0:
        return ctx.xp.zeros(b.shape, dtype=b.dtype)
    if ctx.attrs.get("adjoint"):
        a = _t(a)
    return _lapack(ctx, "Input matrix is not invertible.", ctx.xp.linalg.solve, a, b)


@register_kernel("MatrixTriangularSolve", dtypes=_REAL)
def matrix_triangular_solve(ctx, a, b):
    _solve_operands(ctx, a, b)
    """A general solve of the chosen triangle (exact for triangular systems; TF checks for a zero diagonal)."""
    xp = ctx.xp
    if a.size == 0 or b.size == 0:
        return xp.zeros(b.shape, dtype=b.dtype)
    tri = xp.tril(a) if ctx.attrs.get("lower") else xp.triu(a)
    if ctx.attrs.get("adjoint"):
        tri = _t(tri)
    return _lapack(ctx, "Input matrix is not invertible.", xp.linalg.solve, tri, b)


# -- structure ops (any dtype) -----------------------------------------------------------------------------------
@register_kernel("MatrixBandPart")
@host_inputs(1, 2)
def matrix_band_part(ctx, x, num_lower, num_upper):
    xp = ctx.xp
    _matrices(ctx, x, square=False)
    lo, hi = np.asarray(to_host(num_lower)), np.asarray(to_host(num_upper))
    for v, what in ((lo, "num_lower"), (hi, "num_upper")):
        if v.ndim != 0:
            raise _fail(ctx, f"{what} must be scalar, got shape {list(v.shape)}")
    m, n = x.shape[-2:]
    lo, hi = int(lo), int(hi)
    if lo > m:
        raise _fail(ctx, f"num_lower must be negative or less or equal to number of rows ({m}) got: {lo}")
    if hi > n:
        raise _fail(ctx, f"num_upper must be negative or less or equal to number of columns ({n}) got: {hi}")
    i = xp.arange(m).reshape(m, 1)
    j = xp.arange(n).reshape(1, n)
    keep = xp.ones((m, n), dtype=bool)
    if lo >= 0:
        keep = keep & (i - j <= lo)
    if hi >= 0:
        keep = keep & (j - i <= hi)
    return xp.where(keep, x, xp.zeros((), dtype=x.dtype))


@register_kernel("MatrixDiag")
def matrix_diag(ctx, d):
    if d.ndim < 1:
        raise _fail(ctx, f"diagonal must be at least 1-dim, received shape: {list(d.shape)}")
    n = d.shape[-1]
    out = ctx.xp.zeros(d.shape + (n,), dtype=d.dtype)
    idx = ctx.xp.arange(n)
    out[..., idx, idx] = d
    return out


@register_kernel("MatrixDiagPart")
def matrix_diag_part(ctx, x):
    _matrices(ctx, x, square=False)
    return ctx.xp.diagonal(x, axis1=-2, axis2=-1).copy()


@register_kernel("MatrixSetDiag")
def matrix_set_diag(ctx, x, d):
    _matrices(ctx, x, square=False)
    m, n = x.shape[-2:]
    if d.shape != x.shape[:-2] + (min(m, n),):
        raise _fail(ctx, f"diagonal must have shape {list(x.shape[:-2]) + [min(m, n)]} (input's batch shape and "
                         f"min(M, N)), got {list(d.shape)}")
    out = x.copy()
    idx = ctx.xp.arange(min(m, n))
    out[..., idx, idx] = d
    return out


@register_kernel("Cross")
def cross(ctx, a, b):
    if a.shape != b.shape:
        raise _fail(ctx, f"Both inputs must be of same shape: {list(a.shape)} vs. {list(b.shape)}")
    if a.ndim == 0 or a.shape[-1] != 3:
        raise _fail(ctx, f"Inner dimension of inputs must be 3, got {a.shape[-1] if a.ndim else 'a scalar'}")
    return ctx.xp.cross(a, b)
