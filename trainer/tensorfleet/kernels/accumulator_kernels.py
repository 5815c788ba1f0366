"""Kernels of the gradient accumulators (`ops/accumulator_ops.py`): `tf.ConditionalAccumulator` and
`tf.SparseConditionalAccumulator`, the building blocks of `tf.train.SyncReplicasOptimizer`.

Beside the queue kernels (`queue_kernels.py`), whose resource lookup and blocking
wait they share: an accumulator lives in the session's (on a cluster: the task's)
`ResourceStore` under its `resource_name`, so every session whose partitions name
it on that task shares it (the workers' gradients meet on their ps).

TF 1.15 semantics: `apply_grad(grad, local_step)` adds the gradient unless
`local_step` is older than the accumulator's global step (a stale gradient,
dropped); `take_grad(n)` blocks until `n` gradients have arrived, returns their
mean (sparse: per index, averaged over the gradients that had that index) and
advances the global step, so gradients of the step just taken are stale from then
on; `set_global_step(s)` sets the step (TF warns, and still sets it, when it goes
back). Extensions: each accumulator counts the stale gradients it dropped
(`AccumulatorNumDropped`), and `AccumulatorCancelTakes` makes a blocked take (and any
later one that would block) fail with `CancelledError` until the next `set_global_step`, which is
how the sync chief's queue runner stops without waiting out its grace period.
"""
from __future__ import annotations

import threading
from typing import Optional

import numpy as np

from .. import errors
from ..platform import tf_logging as logging
from .queue_kernels import lookup_object, shape_fits, wait_until
from .registry import register_kernel


class AccumulatorState:
    """Sums gradients of the current global step; stale ones (local_step < global step) are dropped."""

    def __init__(self, name: str, attrs: dict, state: dict):
        self.name = name
        self.state = state
        self.cond = threading.Condition()
        self.dtype = attrs["dtype"]
        self.shape = attrs["shape"]
        self.sparse = bool(attrs.get("sparse", False))
        self.global_step = 0
        self.count = 0
        self.dropped = 0
        self.takes_cancelled = False
        self.total: Optional[np.ndarray] = None  # dense: the sum; sparse: the summed rows of `indices`
        self.indices: Optional[np.ndarray] = None  # sparse: sorted int64 row indices
        self.counts: Optional[np.ndarray] = None  # sparse: how many gradients had each row

    def is_stale(self, local_step) -> bool:
        """True (and counted) when a gradient of `local_step` is older than the accumulator's step."""
        if int(local_step) < self.global_step:
            self.dropped += 1
            return True
        return False

    def wait_for(self, need: int, ctx) -> None:
        wait_until(self, lambda: self.count >= need, ctx, "take_grad",
                   cancelled=lambda: self.takes_cancelled and "the chief stopped its takes: AccumulatorCancelTakes")

    def taken(self) -> None:
        self.total = self.indices = self.counts = None
        self.count = 0
        self.global_step += 1  # TF: a take bumps the accumulator's step, so gradients of the old step are stale


def _accumulator(ctx) -> AccumulatorState:
    return lookup_object(ctx, AccumulatorState)


def _invalid(ctx, acc, msg: str):
    return errors.InvalidArgumentError(None, ctx.op, f"{msg} (accumulator {acc.name}, node {ctx.op.name})")


def _num_required(ctx, acc, num_required) -> int:
    need = int(num_required)
    if need < 1:
        raise _invalid(ctx, acc, f"Argument num_required must be positive, got {need}")
    return need


@register_kernel("AccumulatorHandle", devices=("CPU",))
def accumulator_handle(ctx):
    _accumulator(ctx)
    return np.int32(0)


@register_kernel("AccumulatorApplyGradient", devices=("CPU",))
def accumulator_apply_gradient(ctx, handle, local_step, grad):
    acc = _accumulator(ctx)
    g = np.asarray(grad, dtype=acc.dtype.as_numpy_dtype)
    with acc.cond:
        if acc.is_stale(local_step):
            return None
        if acc.shape is not None and not shape_fits(g.shape, acc.shape, False):
            raise _invalid(ctx, acc, f"Shape mismatch: expected {list(acc.shape)}, got {list(g.shape)}")
        if acc.total is not None and acc.total.shape != g.shape:
            raise _invalid(ctx, acc, f"Shape mismatch: accumulated {list(acc.total.shape)}, got {list(g.shape)}")
        acc.total = g.copy() if acc.total is None else acc.total + g
        acc.count += 1
        acc.cond.notify_all()
    return None


@register_kernel("AccumulatorTakeGradient", devices=("CPU",))
def accumulator_take_gradient(ctx, handle, num_required):
    acc = _accumulator(ctx)
    need = _num_required(ctx, acc, num_required)
    with acc.cond:
        acc.wait_for(need, ctx)
        avg = (acc.total / acc.count).astype(acc.dtype.as_numpy_dtype)
        acc.taken()
        return avg


@register_kernel("AccumulatorNumAccumulated", devices=("CPU",))
def accumulator_num_accumulated(ctx, handle):
    acc = _accumulator(ctx)
    with acc.cond:
        return np.int32(acc.count)


@register_kernel("AccumulatorNumDropped", devices=("CPU",))
def accumulator_num_dropped(ctx, handle):
    acc = _accumulator(ctx)
    with acc.cond:
        return np.int64(acc.dropped)


@register_kernel("AccumulatorSetGlobalStep", devices=("CPU",))
def accumulator_set_global_step(ctx, handle, new_global_step):
    acc = _accumulator(ctx)
    with acc.cond:
        step = int(new_global_step)
        if step < acc.global_step:
            logging.warning("Attempt to set current_global_step_ to smaller value: current_global_step_ = %d "
                            ">= %d = new_global_step (accumulator %s).", acc.global_step, step, acc.name)
        acc.global_step = step
        acc.takes_cancelled = False  # a (restarted) chief initialises the accumulators: takes work again
    return None


@register_kernel("AccumulatorCancelTakes", devices=("CPU",))
def accumulator_cancel_takes(ctx, handle):
    acc = _accumulator(ctx)
    with acc.cond:
        acc.takes_cancelled = True
        acc.cond.notify_all()
    return None


# -- SparseConditionalAccumulator -----------------------------------------------
def _check_sparse(ctx, acc, indices, values, shape, has_shape: bool):
    idx = np.asarray(indices)
    vals = np.asarray(values, dtype=acc.dtype.as_numpy_dtype)
    if idx.ndim != 1:
        raise _invalid(ctx, acc, f"Input indices should be vector but received shape: {list(idx.shape)}")
    if vals.ndim == 0:
        raise _invalid(ctx, acc, "Values cannot be 0-dimensional.")
    if vals.shape[0] != idx.shape[0]:
        raise _invalid(ctx, acc, f"Expected {idx.shape[0]} non-empty input values, got {vals.shape[0]}")
    want = acc.shape
    if has_shape and want is not None:
        got = [int(d) for d in np.asarray(shape).ravel()]
        if len(want) > len(got):
            raise _invalid(ctx, acc, f"Shape mismatch: expected shape rank at least {len(want)}, got {len(got)}")
        for i, d in enumerate(want):
            if d not in (None, -1) and d != got[i]:
                raise _invalid(ctx, acc, f"Shape mismatch: expected shape dim {i} to be {d}, got {got[i]}")
    if want and want[0] not in (None, -1) and idx.size and (idx.max() >= want[0] or idx.min() < 0):
        raise _invalid(ctx, acc, f"Shape mismatch: an index of {list(idx)} exceeds the limit {want[0]} of dim 0")
    ref = acc.total.shape if acc.total is not None else \
        (tuple(want) if want is not None else None)
    if ref is not None:
        if acc.total is None and len(ref) > vals.ndim:
            raise _invalid(ctx, acc, f"Shape mismatch: expected values rank at least {len(ref)}, got {vals.ndim}")
        if acc.total is not None and len(ref) != vals.ndim:
            raise _invalid(ctx, acc, f"Shape mismatch: expected values rank {len(ref)}, got {vals.ndim}")
        for i in range(1, min(len(ref), vals.ndim)):
            if ref[i] not in (None, -1) and ref[i] != vals.shape[i]:
                raise _invalid(ctx, acc, f"Shape mismatch: expected values dim {i} to be {ref[i]}, "
                                         f"got {vals.shape[i]}")
    return idx.astype(np.int64), vals


@register_kernel("SparseAccumulatorApplyGradient", devices=("CPU",))
def sparse_accumulator_apply_gradient(ctx, handle, local_step, indices, values, shape):
    acc = _accumulator(ctx)
    with acc.cond:
        if acc.is_stale(local_step):
            return None
        idx, vals = _check_sparse(ctx, acc, indices, values, shape, bool(ctx.attrs.get("has_known_shape")))
        if acc.total is None:
            all_idx, all_vals = idx, vals
            all_counts = np.ones(len(idx), dtype=np.int64)
        else:
            all_idx = np.concatenate([acc.indices, idx])
            all_vals = np.concatenate([acc.total, vals])
            all_counts = np.concatenate([acc.counts, np.ones(len(idx), dtype=np.int64)])
        uniq, inverse = np.unique(all_idx, return_inverse=True)
        summed = np.zeros((len(uniq),) + all_vals.shape[1:], dtype=all_vals.dtype)
        np.add.at(summed, inverse, all_vals)
        acc.indices, acc.total = uniq, summed
        acc.counts = np.bincount(inverse, weights=all_counts, minlength=len(uniq)).astype(np.int64)
        acc.count += 1
        acc.cond.notify_all()
    return None


@register_kernel("SparseAccumulatorTakeGradient", devices=("CPU",))
def sparse_accumulator_take_gradient(ctx, handle, num_required):
    acc = _accumulator(ctx)
    need = _num_required(ctx, acc, num_required)
    with acc.cond:
        acc.wait_for(need, ctx)
        per_row = acc.counts.reshape((-1,) + (1,) * (acc.total.ndim - 1))
        values = (acc.total / per_row).astype(acc.dtype.as_numpy_dtype)
        first = acc.shape[0] if acc.shape and acc.shape[0] not in (None, -1) else -1
        shape = np.array([first] + list(values.shape[1:]), dtype=np.int64)
        indices = acc.indices
        acc.taken()
        return indices, values, shape
