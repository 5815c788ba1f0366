"""Kernels of ops/scatter_ops.py: ScatterUpdate/Add/Sub, ScatterMul/Div/Min/Max and ScatterNdUpdate/Add/Sub (CPU
and GPU, written against `ctx.xp`).

Under the resource store's lock, each reads the variable, checks the indices on the host (TF's messages, naming
the node) and stores the new array. ScatterUpdate/Add/Sub write in place when the store's array is theirs alone
(`ctx.resources.exclusive`), else into a copy; the others always write a copy. Repeated rows of mul/div/min/max
are applied in rounds of distinct rows, in the order they come, so every contribution combines (cupy's ufunc.at
has add only); nd_add/nd_sub accumulate with add.at.
"""
from __future__ import annotations

import numpy as np

from .. import dtypes as _dtypes
from .. import errors
from .backend import to_host
from .registry import register_kernel

_NO_INT32_ON_GPU = [_dtypes.float16, _dtypes.float32, _dtypes.float64, _dtypes.int64, _dtypes.bool_]
_NUMBERS_NO_INT32_ON_GPU = [_dtypes.float16, _dtypes.float32, _dtypes.float64, _dtypes.int64]


def _bad(ctx, msg):
    return errors.InvalidArgumentError(None, ctx.op, f"{msg}\n\t [[node {ctx.op.name}]]")


def _shape_text(shape):
    return "[" + ",".join(str(int(d)) for d in shape) + "]"


# -- scatter_update / add / sub ---------------------------------------------------------------------------
def _scatter(ctx, indices, updates, mode):
    xp = ctx.xp
    name = ctx.attrs["var"].name
    with ctx.resources.lock:
        old = ctx.resources.read(name, ctx.op.name)
        n = old.shape[0]
        if indices.size and (int(indices.min()) < 0 or int(indices.max()) >= n):
            host = to_host(indices)
            pos = np.argwhere((host < 0) | (host >= n))[0]
            raise errors.InvalidArgumentError(None, ctx.op, f"indices[{','.join(map(str, pos))}] = "
                                                            f"{int(host[tuple(pos)])} is not in [0, {n})")
        del old
        new = ctx.resources.exclusive(name)  # the store's own array when nothing else holds it: in place
        if new is None:
            new = xp.array(ctx.resources.read(name, ctx.op.name), copy=True)
        updates = updates.astype(new.dtype, copy=False)
        if mode == "update":
            new[indices] = updates
        elif mode == "add" or xp is not np:  # cupy's ufunc.at supports add only: add the negated updates
            xp.add.at(new, indices, updates if mode == "add" else -updates)
        else:
            xp.subtract.at(new, indices, updates)
        ctx.resources.store(name, new)
        return new


@register_kernel("ScatterUpdate", devices=("CPU",))
@register_kernel("ScatterUpdate", devices=("GPU",), dtypes=_NO_INT32_ON_GPU)
def scatter_update(ctx, indices, updates):
    return _scatter(ctx, indices, updates, "update")


@register_kernel("ScatterAdd", devices=("CPU",))
@register_kernel("ScatterAdd", devices=("GPU",), dtypes=_NO_INT32_ON_GPU)
def scatter_add(ctx, indices, updates):
    return _scatter(ctx, indices, updates, "add")


@register_kernel("ScatterSub", devices=("CPU",))
@register_kernel("ScatterSub", devices=("GPU",), dtypes=_NO_INT32_ON_GPU)
def scatter_sub(ctx, indices, updates):
    return _scatter(ctx, indices, updates, "sub")


# -- scatter_mul / div / min / max ------------------------------------------------------------------------
def _rounds(flat):
    """[(positions, rows)]: round r holds each row's r-th occurrence (positions in input order)."""
    order = np.argsort(flat, kind="stable")
    srt = flat[order]
    starts = np.r_[0, np.nonzero(srt[1:] != srt[:-1])[0] + 1] if srt.size else np.zeros(0, np.int64)
    first = np.repeat(starts, np.diff(np.r_[starts, srt.size]))
    occurrence = np.empty(flat.size, np.int64)
    occurrence[order] = np.arange(flat.size) - first
    out = []
    for r in range(int(occurrence.max()) + 1 if flat.size else 0):
        pos = np.nonzero(occurrence == r)[0]
        out.append((pos, flat[pos]))
    return out


def _truncating_div(xp, a, b):
    """C's integer division (toward zero), as TF's ScatterDiv on integers."""
    q = xp.floor_divide(xp.abs(a), xp.abs(b))
    return xp.where((a < 0) != (b < 0), -q, q).astype(a.dtype)


_COMBINE = {
    "mul": lambda xp, a, b: a * b,
    "div": lambda xp, a, b: a / b if a.dtype.kind in "fc" else _truncating_div(xp, a, b),
    "min": lambda xp, a, b: xp.minimum(a, b),
    "max": lambda xp, a, b: xp.maximum(a, b),
}


def _scatter_combine(ctx, indices, updates, mode):
    xp = ctx.xp
    name = ctx.attrs["var"].name
    with ctx.resources.lock:
        old = ctx.resources.read(name, ctx.op.name)
        if old.ndim < 1:
            raise _bad(ctx, "Shape must be at least rank 1 but is rank 0")
        host = np.asarray(to_host(indices))
        n = old.shape[0]
        if host.size and (int(host.min()) < 0 or int(host.max()) >= n):
            pos = np.argwhere((host < 0) | (host >= n))[0]
            raise _bad(ctx, f"indices[{','.join(map(str, pos))}] = {int(host[tuple(pos)])} is not in [0, {n})")
        flat = host.reshape(-1)
        want = tuple(host.shape) + tuple(old.shape[1:])
        if updates.ndim and tuple(updates.shape) != want:
            raise _bad(ctx, f"Must have updates.shape = indices.shape + params.shape[1:] or updates.shape = [], "
                            f"got updates.shape {_shape_text(updates.shape)}, indices.shape "
                            f"{_shape_text(host.shape)}, params.shape {_shape_text(old.shape)}")
        upd = updates.astype(old.dtype, copy=False)
        upd = xp.broadcast_to(upd, want) if upd.ndim == 0 else upd
        upd = upd.reshape((flat.size,) + tuple(old.shape[1:]))
        if mode == "div" and old.dtype.kind in "iu" and bool((upd == 0).any()):
            raise _bad(ctx, "Integer division by zero in scatter_div")
        new = xp.array(old, copy=True)
        combine = _COMBINE[mode]
        for pos, rows in _rounds(flat):
            new[rows] = combine(xp, new[rows], upd[pos])
        ctx.resources.store(name, new)
        return new


for _mode, _op in (("mul", "ScatterMul"), ("div", "ScatterDiv"), ("min", "ScatterMin"), ("max", "ScatterMax")):
    def _kernel(ctx, indices, updates, _mode=_mode):
        return _scatter_combine(ctx, indices, updates, _mode)

    register_kernel(_op, devices=("CPU",))(_kernel)
    register_kernel(_op, devices=("GPU",), dtypes=_NUMBERS_NO_INT32_ON_GPU)(_kernel)


# -- scatter_nd_* ------------------------------------------------------------------------------------------
def _nd_rows(ctx, shape, indices, updates):
    """(index tuple, updates as [rows] + shape[K:]) after TF's checks on indices and updates."""
    host = np.asarray(to_host(indices))
    k = host.shape[-1]
    if k > len(shape):
        raise _bad(ctx, f"Output must be at least {k} dimensions, got shape {_shape_text(shape)}")
    flat = host.reshape(-1, k)
    want = tuple(host.shape[:-1]) + tuple(shape[k:])
    if tuple(updates.shape) != want:
        raise _bad(ctx, f"Must have updates.shape = indices.shape[:-1] + params.shape[{k}:], got updates.shape "
                        f"{_shape_text(updates.shape)}, indices.shape {_shape_text(host.shape)}, params.shape "
                        f"{_shape_text(shape)}")
    bounds = np.asarray(shape[:k], dtype=np.int64)
    bad = np.nonzero(((flat < 0) | (flat >= bounds)).any(axis=1))[0]
    if bad.size:
        i = int(bad[0])
        pos = np.unravel_index(i, host.shape[:-1]) if host.ndim > 1 else ()
        raise _bad(ctx, f"indices[{','.join(str(int(p)) for p in pos)}] = [{', '.join(str(int(v)) for v in flat[i])}]"
                        f" does not index into shape {_shape_text(shape)}")
    return tuple(flat[:, j] for j in range(k)), updates.reshape((flat.shape[0],) + tuple(shape[k:]))


def _scatter_nd(ctx, indices, updates, mode):
    xp = ctx.xp
    name = ctx.attrs["var"].name
    with ctx.resources.lock:
        old = ctx.resources.read(name, ctx.op.name)
        index, upd = _nd_rows(ctx, old.shape, indices, updates.astype(old.dtype, copy=False))
        new = xp.array(old, copy=True)
        if not index:  # K = 0: every update applies to the whole variable
            for j in range(upd.shape[0]):
                new = upd[j].copy() if mode == "update" else new + upd[j] if mode == "add" else new - upd[j]
        elif mode == "update":
            new[index] = upd  # repeated index tuples: the last one wins (TF: unspecified)
        else:
            xp.add.at(new, index, upd if mode == "add" else -upd)
        ctx.resources.store(name, new)
        return new


for _mode, _op in (("update", "ScatterNdUpdate"), ("add", "ScatterNdAdd"), ("sub", "ScatterNdSub")):
    def _nd_kernel(ctx, indices, updates, _mode=_mode):
        return _scatter_nd(ctx, indices, updates, _mode)

    register_kernel(_op, devices=("CPU",))(_nd_kernel)
    register_kernel(_op, devices=("GPU",), dtypes=_NUMBERS_NO_INT32_ON_GPU)(_nd_kernel)
