"""Batched matrix structure ops of TF 1.15: matrix_band_part, matrix_diag, matrix_diag_part, matrix_set_diag,
cross, and the composites norm, matrix_transpose, adjoint and a batched trace -- each over the last two (cross:
last) dimensions, with leading batch dimensions.

Sits in `ops/` beside `linalg_ops` (tf.diag & co) and under `matrix_decomposition_ops` (the decompositions, whose
gradients use these); kernels in `kernels/linalg_kernels.py`. Gradients are TF's (array_grad.py, math_grad.py).
"""
from __future__ import annotations

__all__ = ["matrix_band_part", "matrix_diag", "matrix_diag_part", "matrix_set_diag", "cross", "norm",
           "matrix_transpose"]

import numpy as np

from .. import dtypes as _dtypes
from ..default_graph import name_scope
from . import array_ops as _a
from . import math_ops as _m
from .common import (TensorShape, binary_inputs, convert_to_tensor, make_tensor, register_gradient, register_op,
                     unknown_shape)


def at_least_rank(shape, rank):
    """Raises TF's shape-function error when a known rank is below `rank`."""
    if shape.ndims is not None and shape.ndims < rank:
        raise ValueError(f"Shape must be at least rank {rank} but is rank {shape.ndims}")


def _merge_dim(a, b):
    if a is not None and b is not None and a != b:
        raise ValueError(f"Dimensions must be equal, but are {a} and {b}")
    return a if a is not None else b


def _min_dim(m, n):
    return None if m is None or n is None else min(m, n)


# -- MatrixBandPart ---------------------------------------------------------------------------------------------
def _band_part_shape(op):
    x, lo, hi = op.inputs
    at_least_rank(x.shape, 2)
    for t in (lo, hi):
        if t.shape.ndims is not None and t.shape.ndims != 0:
            raise ValueError(f"Shape must be rank 0 but is rank {t.shape.ndims}")
    return [(x.dtype, x.shape)]


register_op("MatrixBandPart", _band_part_shape)


def _index(value, name):
    t = convert_to_tensor(value, dtype=_dtypes.int64) if not hasattr(value, "dtype") else convert_to_tensor(value)
    if t.dtype not in (_dtypes.int32, _dtypes.int64):
        raise TypeError(f"Value passed to parameter '{name}' has DataType {t.dtype.name} not in list of allowed "
                        f"values: int32, int64")
    return t


def matrix_band_part(input, num_lower, num_upper, name=None):
    """`tf.matrix_band_part` / `tf.linalg.band_part`: keeps the band of `num_lower` sub- and `num_upper`
    superdiagonals of each innermost matrix (a negative count keeps that whole triangle), zeros the rest."""
    x = convert_to_tensor(input)
    lo, hi = _index(num_lower, "num_lower"), _index(num_upper, "num_upper")
    if lo.dtype is not hi.dtype:
        hi = _m.cast(hi, lo.dtype)
    return make_tensor("MatrixBandPart", [x, lo, hi], {"Tindex": lo.dtype}, name=name,
                       default_name="MatrixBandPart")


@register_gradient("MatrixBandPart")
def _band_part_grad(op, grad):
    return [matrix_band_part(grad, op.inputs[1], op.inputs[2]), None, None]


# -- MatrixDiag / MatrixDiagPart / MatrixSetDiag ----------------------------------------------------------------
def _no_k(k, fn):
    if not (isinstance(k, (int, np.integer)) and int(k) == 0):
        raise NotImplementedError(f"{fn}: only the main diagonal (k=0) is supported here, got k={k!r}")


def _matrix_diag_shape(op):
    d = op.inputs[0]
    at_least_rank(d.shape, 1)
    if d.shape.ndims is None:
        return [(d.dtype, unknown_shape())]
    return [(d.dtype, d.shape.concatenate([d.shape[-1]]))]


def _matrix_diag_part_shape(op):
    x = op.inputs[0]
    at_least_rank(x.shape, 2)
    if x.shape.ndims is None:
        return [(x.dtype, unknown_shape())]
    dims = x.shape.as_tuple()
    return [(x.dtype, TensorShape(list(dims[:-2]) + [_min_dim(dims[-2], dims[-1])]))]


def _matrix_set_diag_shape(op):
    x, d = op.inputs
    at_least_rank(x.shape, 2)
    at_least_rank(d.shape, 1)
    if x.shape.ndims is not None and d.shape.ndims is not None:
        if d.shape.ndims != x.shape.ndims - 1:
            raise ValueError(f"Shape must be rank {x.shape.ndims - 1} but is rank {d.shape.ndims} (diagonal)")
        xs, ds = x.shape.as_tuple(), d.shape.as_tuple()
        for a, b in zip(xs[:-2] + (_min_dim(xs[-2], xs[-1]),), ds):
            _merge_dim(a, b)
    return [(x.dtype, x.shape)]


register_op("MatrixDiag", _matrix_diag_shape)
register_op("MatrixDiagPart", _matrix_diag_part_shape)
register_op("MatrixSetDiag", _matrix_set_diag_shape)


def matrix_diag(diagonal, name="diag", k=0, num_rows=-1, num_cols=-1, padding_value=0):
    """`tf.matrix_diag` / `tf.linalg.diag`: [..., N] -> [..., N, N] with `diagonal` on the main diagonal
    (TF 1.15's MatrixDiag; the V2 arguments k/num_rows/num_cols/padding_value only at their defaults)."""
    _no_k(k, "matrix_diag")
    if num_rows != -1 or num_cols != -1 or padding_value != 0:
        raise NotImplementedError("matrix_diag: num_rows, num_cols and padding_value are not supported here")
    return make_tensor("MatrixDiag", [convert_to_tensor(diagonal)], name=name, default_name="MatrixDiag")


def matrix_diag_part(input, name="diag_part", k=0, padding_value=0):
    """`tf.matrix_diag_part` / `tf.linalg.diag_part`: [..., M, N] -> [..., min(M, N)], the main diagonals."""
    _no_k(k, "matrix_diag_part")
    if padding_value != 0:
        raise NotImplementedError("matrix_diag_part: padding_value is not supported here")
    return make_tensor("MatrixDiagPart", [convert_to_tensor(input)], name=name, default_name="MatrixDiagPart")


def matrix_set_diag(input, diagonal, name="set_diag", k=0):
    """`tf.matrix_set_diag` / `tf.linalg.set_diag`: `input` with its main diagonals replaced by `diagonal`
    ([..., min(M, N)])."""
    _no_k(k, "matrix_set_diag")
    x, d = binary_inputs(input, diagonal, "MatrixSetDiag", ("input", "diagonal"))
    return make_tensor("MatrixSetDiag", [x, d], name=name, default_name="MatrixSetDiag")


@register_gradient("MatrixDiag")
def _matrix_diag_grad(op, grad):
    return [matrix_diag_part(grad)]


@register_gradient("MatrixDiagPart")
def _matrix_diag_part_grad(op, grad):
    x = op.inputs[0]
    dims = x.shape.as_tuple() if x.shape.ndims is not None else ()
    if len(dims) >= 2 and dims[-1] is not None and dims[-1] == dims[-2]:
        return [matrix_diag(grad)]
    return [matrix_set_diag(_a.zeros_like(x), grad)]


@register_gradient("MatrixSetDiag")
def _matrix_set_diag_grad(op, grad):
    return [matrix_set_diag(grad, _a.zeros_like(op.inputs[1])), matrix_diag_part(grad)]


# -- Cross ------------------------------------------------------------------------------------------------------
def _cross_shape(op):
    a, b = op.inputs
    at_least_rank(a.shape, 1)
    at_least_rank(b.shape, 1)
    if a.shape.ndims is not None and b.shape.ndims is not None:
        if a.shape.ndims != b.shape.ndims:
            raise ValueError(f"Shapes must be equal rank, but are {a.shape.ndims} and {b.shape.ndims}")
        for x, y in zip(a.shape.as_tuple(), b.shape.as_tuple()):
            _merge_dim(x, y)
    shape = a.shape if a.shape.ndims is not None else b.shape
    if shape.ndims is not None and shape[-1] is not None and shape[-1] != 3:
        raise ValueError(f"Dimension must be 3 but is {shape[-1]}")
    return [(a.dtype, a.shape.merge_with(b.shape))]


register_op("Cross", _cross_shape)


def cross(a, b, name=None):
    """`tf.cross` / `tf.linalg.cross`: pairwise cross products of the 3-vectors along the last dimension
    (both inputs the same shape)."""
    a, b = binary_inputs(a, b, "Cross", ("a", "b"))
    if not (a.dtype.is_floating or a.dtype.is_integer):
        raise TypeError(f"Value passed to parameter 'a' has DataType {a.dtype.name} not in list of allowed "
                        f"values: real number types (Cross)")
    return make_tensor("Cross", [a, b], name=name, default_name="Cross")


@register_gradient("Cross")
def _cross_grad(op, grad):
    u, v = op.inputs
    return [cross(v, grad), cross(grad, u)]


# -- composites -------------------------------------------------------------------------------------------------
def matrix_transpose(a, name="matrix_transpose", conjugate=False):
    """`tf.matrix_transpose` / `tf.linalg.matrix_transpose`: swaps the last two dimensions."""
    with name_scope(name, "matrix_transpose", [a]):
        a = convert_to_tensor(a)
        n = a.shape.ndims
        if n is None or n < 2:
            raise ValueError(f"Argument 'a' should be a (batch) matrix, with rank >= 2.  Found: {a.shape}")
        return _a.transpose(a, list(range(n - 2)) + [n - 1, n - 2])


def adjoint(matrix, name=None):
    """`tf.linalg.adjoint`: the conjugate transpose of each innermost matrix (the transpose for real dtypes)."""
    with name_scope(name, "adjoint", [matrix]):
        x = convert_to_tensor(matrix)
        n = x.shape.ndims
        if n is None or n < 2:
            raise ValueError(f"Argument 'a' should be a (batch) matrix, with rank >= 2.  Found: {x.shape}")
        if x.dtype.is_complex:
            raise TypeError("adjoint: complex dtypes are not supported here")
        return _a.transpose(x, list(range(n - 2)) + [n - 1, n - 2])


def matvec(a, b, transpose_a=False, adjoint_a=False, a_is_sparse=False, b_is_sparse=False, name=None):
    """`tf.linalg.matvec`: matrix [..., M, N] times vector [..., N] -> [..., M] (the sparsity hints are ignored)."""
    with name_scope(name, "MatVec", [a, b]):
        b = convert_to_tensor(b)
        out = _m.matmul(a, _a.expand_dims(b, -1), transpose_a=transpose_a, adjoint_a=adjoint_a)
        return _a.squeeze(out, [-1])


def trace(x, name=None):
    """`tf.linalg.trace` / `tf.trace`: the sum of each innermost matrix's main diagonal ([..., M, N] -> [...])."""
    with name_scope(name, "Trace", [x]) as scope:
        x = convert_to_tensor(x, name="x")
        return _m.reduce_sum(matrix_diag_part(x), [-1], name=scope)


_VECTOR_NORMS = ("euclidean", 1, 2, np.inf)
_MATRIX_NORMS = ("euclidean", "fro", 1, 2, np.inf)


def _norm_args(ord, axis):
    is_matrix = isinstance(axis, (tuple, list)) and len(axis) == 2
    if is_matrix:
        axis = tuple(axis)
        if not all(isinstance(a, (int, np.integer)) for a in axis) or axis[0] == axis[1]:
            raise ValueError("'axis' must be None, an integer, or a tuple of 2 unique integers")
        if not any(ord == o and type(ord) is not bool for o in _MATRIX_NORMS):
            raise ValueError(f"'ord' must be a supported matrix norm in {list(_MATRIX_NORMS)}, got {ord}")
        return True, axis
    if not (axis is None or isinstance(axis, (int, np.integer))):
        raise ValueError("'axis' must be None, an integer, or a tuple of 2 unique integers")
    if ord not in _VECTOR_NORMS and (isinstance(ord, str) or not np.isreal(ord) or ord <= 0):
        raise ValueError(f"'ord' must be a supported vector norm, got {ord}")
    return False, (None if axis is None else (int(axis),))


def norm(tensor, ord="euclidean", axis=None, keepdims=None, name=None, keep_dims=None):
    """`tf.norm` / `tf.linalg.norm`: vector norms (euclidean, 1, inf, any p > 0) over `axis` (None: the whole
    tensor as one vector) or matrix norms (fro/euclidean, 1, 2, inf) over a pair of axes. Composed of existing
    ops (the matrix 2-norm: the largest singular value), so its gradient comes from theirs."""
    if keepdims is not None and keep_dims is not None:
        raise ValueError("Cannot specify both 'keepdims' and 'keep_dims'")
    keepdims = bool(keepdims if keepdims is not None else keep_dims)
    is_matrix, axis = _norm_args(ord, axis)
    with name_scope(name, "norm", [tensor]):
        x = convert_to_tensor(tensor)
        if is_matrix and ord == 2:
            result = _matrix_2_norm(x, axis)
        elif isinstance(ord, str) or ord == 2:
            result = _m.sqrt(_m.reduce_sum(x * x, None if axis is None else list(axis), keepdims=True))
        else:
            result = _m.abs(x)
            if ord == 1:
                result = _m.reduce_sum(result, None if axis is None else axis[0], keepdims=True)
                if is_matrix:
                    result = _m.reduce_max(result, axis[-1], keepdims=True)
            elif ord == np.inf:
                if is_matrix:
                    result = _m.reduce_sum(result, axis[1], keepdims=True)
                result = _m.reduce_max(result, None if axis is None else axis[0], keepdims=True)
            else:
                p = convert_to_tensor(float(ord), dtype=x.dtype)
                summed = _m.reduce_sum(_m.pow(result, p), None if axis is None else list(axis), keepdims=True)
                result = _m.pow(summed, _m.reciprocal(p))
        if not keepdims:
            result = _a.squeeze(result, None if axis is None else list(axis))
        return result


def _matrix_2_norm(x, axis):
    from .matrix_decomposition_ops import svd  # late: matrix_decomposition_ops imports this module
    rank = x.shape.ndims
    if rank is None:
        raise ValueError("norm: ord=2 over a pair of axes needs a known rank")
    pos = [a % rank for a in axis]
    perm_before = [i for i in range(rank) if i not in pos] + pos
    perm_after = [int(i) for i in np.argsort(perm_before)]
    s = svd(_a.transpose(x, perm_before), compute_uv=False)
    top = _a.expand_dims(_m.reduce_max(_m.abs(s), axis=-1, keepdims=True), -1)
    return _a.transpose(top, perm_after)
