"""Small linear-algebra ops: eye, diag, diag_part, trace, einsum, tensordot (on Einsum), and BatchMatMulV2
(`tf.matmul` on rank > 2 inputs, via math_ops.matmul).

Sits in `ops/` beside `array_ops` (re-exported from there); kernels in `kernels/array_kernels.py`
(BatchMatMulV2's in `kernels/index_kernels.py`).
"""
from __future__ import annotations

__all__ = ["eye", "diag", "diag_part", "trace", "einsum", "tensordot"]

import numpy as np

from .. import dtypes as _dtypes
from ..default_graph import name_scope
from .common import (TensorShape, convert_to_tensor, make_tensor, register_gradient, register_op, unknown_shape)
from .common import broadcast_shape
from .common import binary_inputs


def eye(num_rows, num_columns=None, batch_shape=None, dtype=_dtypes.float32, name=None):
    """`tf.eye`: an identity matrix (a constant; batch_shape prepends batch dims)."""
    from .array_ops import constant  # late: array_ops imports linalg_ops at load
    dtype = _dtypes.as_dtype(dtype)
    m = np.eye(int(num_rows), int(num_columns if num_columns is not None else num_rows), dtype=dtype.np_dtype)
    if batch_shape:
        m = np.broadcast_to(m, tuple(batch_shape) + m.shape).copy()
    return constant(m, name=name or "eye")


# -- Diag / DiagPart ----------------------------------------------------------
def _diag_shape(op):
    x = op.inputs[0]
    if x.shape.ndims is None:
        return [(x.dtype, unknown_shape())]
    if x.shape.ndims == 0:
        raise ValueError("Shape must be at least rank 1 but is rank 0")
    return [(x.dtype, x.shape.concatenate(x.shape))]


def _diag_part_shape(op):
    x = op.inputs[0]
    if x.shape.ndims is None:
        return [(x.dtype, unknown_shape())]
    n = x.shape.ndims
    if n % 2 or n == 0:
        raise ValueError(f"Input must have even rank, got rank {n}")
    a, b = x.shape[:n // 2], x.shape[n // 2:]
    if not a.is_compatible_with(b):
        raise ValueError(f"Invalid shape {x.shape}: dimensions must match between the two halves")
    return [(x.dtype, a.merge_with(b))]


register_op("Diag", _diag_shape)
register_op("DiagPart", _diag_part_shape)


def diag(diagonal, name=None):
    """`tf.diag`: rank-k input -> rank-2k output with the input on the diagonal."""
    return make_tensor("Diag", [convert_to_tensor(diagonal)], name=name, default_name="Diag")


def diag_part(input, name=None):
    """`tf.diag_part`: the inverse of diag."""
    return make_tensor("DiagPart", [convert_to_tensor(input)], name=name, default_name="DiagPart")


@register_gradient("Diag")
def _diag_grad(op, grad):
    return [diag_part(grad)]


@register_gradient("DiagPart")
def _diag_part_grad(op, grad):
    return [diag(grad)]


def trace(x, name=None):
    """`tf.trace` / `tf.linalg.trace`: the sum of each innermost matrix's main diagonal ([..., M, N] -> [...])."""
    from .matrix_ops import trace as batched_trace  # late: matrix_ops imports array_ops, which imports this
    return batched_trace(x, name=name)


# -- Einsum -------------------------------------------------------------------
def _parse_einsum(equation: str, n_inputs: int):
    eq = equation.replace(" ", "")
    if "." in eq:
        raise ValueError("einsum: ellipsis (...) is not supported")
    if "->" in eq:
        lhs, out = eq.split("->")
    else:
        lhs = eq
        letters = lhs.replace(",", "")
        out = "".join(sorted(c for c in set(letters) if letters.count(c) == 1))
    ins = lhs.split(",")
    if len(ins) != n_inputs:
        raise ValueError(f"einsum: equation {equation!r} has {len(ins)} inputs but {n_inputs} were given")
    return ins, out


def _einsum_shape(op):
    ins, out = op.get_attr("ins"), op.get_attr("out")
    sizes = {}
    for spec, t in zip(ins, op.inputs):
        if t.shape.ndims is None:
            continue
        if len(spec) != t.shape.ndims:
            raise ValueError(f"einsum: subscripts {spec!r} do not match rank {t.shape.ndims}")
        for c, d in zip(spec, t.shape.as_tuple()):
            if d is None:
                continue
            if sizes.get(c, d) != d:
                raise ValueError(f"Dimensions must be equal, but are {sizes[c]} and {d} (subscript {c!r})")
            sizes[c] = d
    return [(op.inputs[0].dtype, TensorShape([sizes.get(c) for c in out]))]


register_op("Einsum", _einsum_shape, expensive=True)


def einsum(equation, *inputs, **kwargs):
    """`tf.einsum(equation, *inputs)` without ellipsis; gradients need every input subscript to appear
    in the output or another input, with no repeated subscript within one input."""
    name = kwargs.pop("name", None)
    if kwargs:
        raise TypeError(f"Invalid keyword arguments for einsum: {sorted(kwargs)}")
    ts = [convert_to_tensor(t) for t in inputs]
    for t in ts[1:]:
        if t.dtype is not ts[0].dtype:
            raise TypeError(f"einsum: all inputs must have the same dtype, got {ts[0].dtype.name} and {t.dtype.name}")
    ins, out = _parse_einsum(equation, len(ts))
    return make_tensor("Einsum", ts, {"ins": tuple(ins), "out": out,
                                      "equation": ",".join(ins) + "->" + out}, name=name, default_name="einsum")


@register_gradient("Einsum")
def _einsum_grad(op, grad):
    ins, out = op.get_attr("ins"), op.get_attr("out")
    grads = []
    for i, spec in enumerate(ins):
        others = [(s, t) for j, (s, t) in enumerate(zip(ins, op.inputs)) if j != i]
        avail = set(out).union(*[set(s) for s, _ in others])
        if len(set(spec)) != len(spec) or not set(spec) <= avail:
            raise LookupError(f"einsum gradient for subscripts {spec!r} in {op.get_attr('equation')!r} is not "
                              f"supported (repeated or input-only subscripts)")
        grads.append(einsum(",".join([out] + [s for s, _ in others]) + "->" + spec, grad, *[t for _, t in others]))
    return grads


# -- BatchMatMulV2 (tf.matmul on rank > 2) -----------------------------------
def _batch_matmul_shape(op):
    x, y = op.inputs
    if x.shape.ndims is None or y.shape.ndims is None:
        return [(x.dtype, unknown_shape())]
    for t, arg in ((x, "x"), (y, "y")):
        if t.shape.ndims < 2:
            raise ValueError(f"Shape must be at least rank 2 but is rank {t.shape.ndims} for '{arg}' of "
                             f"'BatchMatMulV2'")
    sx, sy = x.shape.as_tuple(), y.shape.as_tuple()
    m, kx = (sx[-1], sx[-2]) if op.get_attr("adj_x") else (sx[-2], sx[-1])
    ky, n = (sy[-1], sy[-2]) if op.get_attr("adj_y") else (sy[-2], sy[-1])
    if kx is not None and ky is not None and kx != ky:
        raise ValueError(f"Dimensions must be equal, but are {kx} and {ky}")
    batch = broadcast_shape(TensorShape(sx[:-2]), TensorShape(sy[:-2]))
    return [(x.dtype, batch.concatenate([m, n]))]


register_op("BatchMatMulV2", _batch_matmul_shape, expensive=True)


def batch_matmul(x, y, adj_x=False, adj_y=False, name=None):
    """Matrix products over the last two axes with broadcasting batch axes (TF's BatchMatMulV2)."""
    x, y = binary_inputs(x, y, "BatchMatMulV2")
    return make_tensor("BatchMatMulV2", [x, y], {"adj_x": bool(adj_x), "adj_y": bool(adj_y)}, name=name,
                       default_name="MatMul")


@register_gradient("BatchMatMulV2")
def _batch_matmul_grad(op, grad):
    """TF's _BatchMatMulV2 gradient; broadcast batch axes are summed back to each input's shape."""
    from .math_ops import sum_to_shape_of  # late: arithmetic_ops imports linalg_ops at load
    x, y = op.inputs
    ax, ay = op.get_attr("adj_x"), op.get_attr("adj_y")
    if not ax and not ay:
        gx, gy = batch_matmul(grad, y, adj_y=True), batch_matmul(x, grad, adj_x=True)
    elif not ax and ay:
        gx, gy = batch_matmul(grad, y), batch_matmul(grad, x, adj_x=True)
    elif ax and not ay:
        gx, gy = batch_matmul(y, grad, adj_y=True), batch_matmul(x, grad)
    else:
        gx, gy = batch_matmul(y, grad, adj_x=True, adj_y=True), batch_matmul(grad, x, adj_x=True, adj_y=True)
    return [sum_to_shape_of(gx, x), sum_to_shape_of(gy, y)]


# -- tensordot ----------------------------------------------------------------
_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def tensordot(a, b, axes, name=None):
    """`tf.tensordot`: contracts `axes` of a with those of b (an int N: a's last N with b's first N; or a pair of
    axis lists). Built on Einsum; the ranks must be known at graph-build time and `axes` static."""
    a, b = convert_to_tensor(a), convert_to_tensor(b)
    if a.shape.ndims is None or b.shape.ndims is None:
        raise ValueError("tensordot: the ranks of a and b must be known")
    ra, rb = a.shape.ndims, b.shape.ndims
    if isinstance(axes, (int, np.integer)) or (isinstance(axes, np.ndarray) and axes.ndim == 0):
        n = int(axes)
        if n < 0 or n > min(ra, rb):
            raise ValueError(f"'axes' must be at most the rank of a and b, got {n}")
        a_axes, b_axes = list(range(ra - n, ra)), list(range(n))
    else:
        if len(axes) != 2:
            raise ValueError("'axes' must be an integer or have length 2.")
        a_axes, b_axes = ([int(v) for v in np.atleast_1d(ax)] for ax in axes)
        if len(a_axes) != len(b_axes):
            raise ValueError(f"Different number of contraction axes 'a' and 'b', {len(a_axes)} != {len(b_axes)}.")
    a_axes = [ax % ra for ax in a_axes]
    b_axes = [ax % rb for ax in b_axes]
    if ra + rb - len(a_axes) > len(_LETTERS):
        raise ValueError("tensordot: too many axes")
    sa = list(_LETTERS[:ra])
    free = iter(_LETTERS[ra:])
    sb = [None] * rb
    for i, j in zip(a_axes, b_axes):
        da, db = a.shape[i], b.shape[j]
        if da is not None and db is not None and da != db:
            raise ValueError(f"Dimensions must be equal, but are {da} and {db}")
        sb[j] = sa[i]
    sb = [c if c is not None else next(free) for c in sb]
    out = [c for i, c in enumerate(sa) if i not in a_axes] + [c for j, c in enumerate(sb) if j not in b_axes]
    with name_scope(name, "Tensordot", [a, b]):
        return einsum(f"{''.join(sa)},{''.join(sb)}->{''.join(out)}", a, b)
