"""Kernels for ops/index_ops.py (GatherNd, GatherNdGrad, ScatterNd, InvertPermutation, SequenceMask) and
BatchMatMulV2 (ops/linalg_ops.py). ScatterNd and InvertPermutation run on the host (CPU, numpy)."""
from __future__ import annotations

import numpy as np

from .. import errors
from .backend import to_host
from .registry import host_inputs, register_kernel

_CPU = ("CPU",)


def _bad(ctx, msg):
    return errors.InvalidArgumentError(None, ctx.op, f"{msg}\n\t [[node {ctx.op.name}]]")


def _nd_index(ctx, params_shape, indices):
    """The tuple of index arrays for params[...] (bounds checked with TF's message)."""
    m = indices.shape[-1]
    if m > len(params_shape):
        raise errors.InvalidArgumentError(None, ctx.op, f"index innermost dimension length must be <= params rank; "
                                                        f"saw: {m} vs. {len(params_shape)}")
    flat = to_host(indices).reshape(-1, m) if m else np.zeros((int(np.prod(indices.shape[:-1])), 0), np.int64)
    bounds = np.asarray(params_shape[:m], dtype=np.int64)
    bad = np.nonzero(((flat < 0) | (flat >= bounds)).any(axis=1))[0]
    if bad.size:
        i = int(bad[0])
        pos = np.unravel_index(i, indices.shape[:-1]) if indices.ndim > 1 else ()
        shape_text = "[" + ",".join(str(d) for d in params_shape) + "]"
        raise errors.InvalidArgumentError(
            None, ctx.op, f"indices[{','.join(str(int(p)) for p in pos)}] = [{', '.join(str(int(v)) for v in flat[i])}]"
                          f" does not index into param shape {shape_text}")
    return tuple(indices[..., j] for j in range(m))


def _nd_index_unchecked(xp, params, indices):
    """(index arrays, valid mask) for params[...] on a GPU: TF's GPU rule, no check (it would be a
    device->host sync per step); a row of out-of-range indices reads index 0 and is masked by `valid`."""
    m = indices.shape[-1]
    cols = [indices[..., j] for j in range(m)]
    valid = None
    for col, bound in zip(cols, params.shape):  # Python-int bounds: nothing to upload
        ok = (col >= 0) & (col < bound)
        valid = ok if valid is None else valid & ok
    mask = valid.reshape(valid.shape + (1,) * (params.ndim - m))
    return tuple(xp.where(valid, col, 0) for col in cols), mask


@register_kernel("GatherNd")
def gather_nd(ctx, params, indices):
    xp = ctx.xp
    if xp is not np and 0 < indices.shape[-1] <= params.ndim:  # TF's GPU rule: zeros for bad rows
        index, valid = _nd_index_unchecked(xp, params, indices)
        return xp.where(valid, params[index], xp.zeros((), dtype=params.dtype))
    return params[_nd_index(ctx, params.shape, indices)]


@register_kernel("GatherNdGrad")
def gather_nd_grad(ctx, grad, indices, params):
    xp = ctx.xp
    out = xp.zeros(params.shape, dtype=grad.dtype)
    if xp is not np and 0 < indices.shape[-1] <= params.ndim:  # bad rows (zeros forward) add nothing
        index, valid = _nd_index_unchecked(xp, params, indices)
        xp.add.at(out, index, xp.where(valid, grad, xp.zeros((), dtype=grad.dtype)))
        return out
    xp.add.at(out, _nd_index(ctx, params.shape, indices), grad)
    return out


@host_inputs(0, 2)
@register_kernel("ScatterNd", devices=_CPU)
def scatter_nd(ctx, indices, updates, shape):
    idx, upd = np.asarray(to_host(indices)), np.asarray(to_host(updates))
    shape = tuple(int(d) for d in np.asarray(to_host(shape)).reshape(-1))
    k = idx.shape[-1]
    out = np.zeros(shape, dtype=upd.dtype)
    flat_idx = idx.reshape(-1, k)
    for j, row in enumerate(flat_idx):
        if np.any(row < 0) or np.any(row >= np.array(shape[:k])):
            raise _bad(ctx, f"indices[{j}] = {row.tolist()} does not index into shape {list(shape)}")
    np.add.at(out, tuple(flat_idx.T), upd.reshape((flat_idx.shape[0],) + shape[k:]))
    return out


@register_kernel("InvertPermutation", devices=_CPU)
def invert_permutation(ctx, x):
    x = np.asarray(to_host(x))
    if x.ndim != 1 or sorted(x.tolist()) != list(range(x.size)):
        raise _bad(ctx, f"invert_permutation: {x.tolist()[:10]} is not a permutation of 0..{x.size - 1}")
    out = np.empty_like(x)
    out[x] = np.arange(x.size, dtype=x.dtype)
    return out


@register_kernel("SequenceMask")
def sequence_mask(ctx, lengths, maxlen=None):
    xp = ctx.xp
    n = int(lengths.max()) if maxlen is None and lengths.size else (0 if maxlen is None else int(maxlen))
    if n < 0:
        raise errors.InvalidArgumentError(None, ctx.op, f"maxlen must be non-negative, got {n}")
    return xp.arange(n) < lengths[..., None]


@register_kernel("BatchMatMulV2")
def batch_matmul(ctx, x, y):
    xp = ctx.xp
    if ctx.attrs["adj_x"]:
        x = xp.swapaxes(x, -1, -2)
    if ctx.attrs["adj_y"]:
        y = xp.swapaxes(y, -1, -2)
    if x.shape[-1] != y.shape[-2]:
        raise errors.InvalidArgumentError(None, ctx.op, f"In[0] mismatch In[1] shape: {x.shape[-1]} vs. "
                                                        f"{y.shape[-2]}: {list(x.shape)} {list(y.shape)}")
    return xp.matmul(x, y)
