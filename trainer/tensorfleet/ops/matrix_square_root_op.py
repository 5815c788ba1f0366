"""`tf.matrix_square_root` / `tf.linalg.sqrtm`: the principal square root of each innermost square matrix, with
TF's gradient (the Sylvester equation R dR + dR R = dA, solved as a Kronecker-product linear system).

Sits in `ops/` above `matrix_decomposition_ops` (its gradient solves with matrix_solve); the kernel, CPU only
as TF's, is in `kernels/linalg_kernels.py`.
"""
from __future__ import annotations

__all__ = ["matrix_square_root"]

from . import array_ops as _a
from .common import make_tensor, register_gradient, register_op
from .join_ops import concat
from .matrix_decomposition_ops import _real_input, _square, matrix_solve
from .matrix_ops import adjoint, matrix_diag, matrix_diag_part

def _square_root_shape(op):
    _square(op.inputs[0].shape)
    return [(op.inputs[0].dtype, op.inputs[0].shape)]


register_op("MatrixSquareRoot", _square_root_shape, expensive=True)


def matrix_square_root(input, name=None):
    """`tf.matrix_square_root` / `tf.linalg.sqrtm`: R with R R = input, whose eigenvalues have non-negative real
    parts; NaN where the matrix has a negative real eigenvalue (no real square root)."""
    x = _real_input(input, "MatrixSquareRoot")
    return make_tensor("MatrixSquareRoot", [x], name=name, default_name="MatrixSquareRoot")


def _kron(b1, b2, m):
    """Kronecker products of the m x m matrices of two batches: [..., m*m, m*m]."""
    k = _a.expand_dims(_a.expand_dims(b1, -1), -3) * _a.expand_dims(_a.expand_dims(b2, -3), -2)
    return _a.reshape(k, concat([_a.shape(b1)[:-2], [m * m, m * m]], 0))


@register_gradient("MatrixSquareRoot")
def _matrix_square_root_grad(op, grad):
    """TF's _MatrixSquareRootGrad: dL/dA = X with R^T X + X R^T = dL/dR, X solved as a vector (row-major:
    vec(R^T X) = (R^T kron I) vec(X), vec(X R^T) = (I kron R) vec(X))."""
    sqrtm = op.outputs[0]
    m = sqrtm.shape.as_tuple()[-1] if sqrtm.shape.ndims is not None else None
    if m is None:
        raise NotImplementedError("MatrixSquareRoot gradient needs a known matrix size")
    eye = matrix_diag(_a.ones_like(matrix_diag_part(sqrtm)))  # identity matrices, batched like sqrtm
    system = _kron(adjoint(sqrtm), eye, m) + _kron(eye, sqrtm, m)
    batch = _a.shape(grad)[:-2]
    vec = _a.reshape(grad, concat([batch, [m * m, 1]], 0))
    return [_a.reshape(matrix_solve(system, vec), _a.shape(grad))]
