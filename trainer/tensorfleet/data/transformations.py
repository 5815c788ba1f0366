"""tf.data transformations: map (optionally on parallel threads), filter, batch, padded_batch, shuffle, repeat,
take, skip, concatenate, interleave / flat_map. (prefetch is in `prefetch.py`, cache in `cache_dataset.py`.)

Each is a Dataset over an upstream one; `_iter(env)` pulls from the upstream iterator lazily. Semantics and
error texts follow TF 1.15's dataset kernels (batch_dataset_op.cc, shuffle_dataset_op.cc, ...).
"""
from __future__ import annotations

import collections
import concurrent.futures as futures

import numpy as np

from .. import dtypes as _dtypes
from .. import errors
from ..graph import Tensor
from ..default_graph import get_default_graph
from ..ops import random_seed
from ..tensor_shape import TensorShape, as_shape
from . import structure as nest
from .dataset_ops import AUTOTUNE, Dataset, element_arrays
from .functions import TracedFunction


def _count(value, what: str) -> int:
    if isinstance(value, Tensor):
        raise TypeError(f"{what}: a tensor argument is not supported here; pass a Python int")
    return int(value)


def _scalar_arg(value, what: str):
    """A count argument: a Python int, or an integer scalar tensor (a capture, read when the iterator starts)."""
    if isinstance(value, Tensor):
        if not value.dtype.is_integer or not value.shape.is_compatible_with([]):
            raise TypeError(f"{what} must be an integer scalar, got {value.dtype.name} {value.shape}")
        return value
    return int(value)


class _Unary(Dataset):
    _args: tuple = ()

    def __init__(self, input_dataset: Dataset):
        if not isinstance(input_dataset, Dataset):
            raise TypeError(f"expected a Dataset, got {type(input_dataset).__name__}")
        self._input = input_dataset
        self._spec = input_dataset._spec

    def _inputs(self):
        return [self._input]

    def _captures(self):
        return [a for a in self._args if isinstance(a, Tensor)]

    @staticmethod
    def _int(env, arg) -> int:
        return int(env.value(arg))


# -- map / filter --------------------------------------------------------------------
class MapDataset(_Unary):
    """`map(fn, num_parallel_calls)`: fn runs on each element; with num_parallel_calls > 1 (or AUTOTUNE) that
    many elements are mapped at once on worker threads, and the results still come out in input order."""

    def __init__(self, input_dataset, map_func, num_parallel_calls=None):
        super().__init__(input_dataset)
        self._fn = TracedFunction(map_func, input_dataset._spec, "Dataset.map", get_default_graph().seed)
        self._spec = self._fn.out_spec
        n = 1 if num_parallel_calls is None else _count(num_parallel_calls, "num_parallel_calls")
        if n == AUTOTUNE:
            n = 4
        if n < 1:
            raise ValueError(f"num_parallel_calls must be positive or AUTOTUNE, got {num_parallel_calls}")
        self._parallel = n

    def _iter(self, env):
        if self._parallel == 1:
            for e in self._input._iter(env):
                yield self._fn(e)
            return
        pool = futures.ThreadPoolExecutor(max_workers=self._parallel, thread_name_prefix="tf.data.map")
        env.closers.append(lambda: pool.shutdown(wait=False, cancel_futures=True))
        pending: collections.deque = collections.deque()
        try:
            upstream = self._input._iter(env)
            for e in upstream:
                pending.append(pool.submit(self._fn, e))
                if len(pending) >= 2 * self._parallel:
                    yield pending.popleft().result()
            while pending:
                yield pending.popleft().result()
        finally:
            for f in pending:
                f.cancel()
            pool.shutdown(wait=False, cancel_futures=True)


class FilterDataset(_Unary):
    """`filter(predicate)`: keeps the elements for which predicate(element) is true (a scalar bool)."""

    def __init__(self, input_dataset, predicate):
        super().__init__(input_dataset)
        self._fn = TracedFunction(predicate, input_dataset._spec, "Dataset.filter", get_default_graph().seed)
        out = self._fn.out_spec
        if nest.is_structure(out) or out.dtype is not _dtypes.bool_ or not out.shape.is_compatible_with([]):
            raise ValueError("`predicate` return type must be convertible to a scalar boolean tensor.")

    def _iter(self, env):
        for e in self._input._iter(env):
            if bool(self._fn(e)):
                yield e


# -- batching --------------------------------------------------------------------------
def _batch_spec(spec, batch_size, drop_remainder):
    dim = batch_size if drop_remainder else None
    return nest.map_structure(lambda s: nest.ComponentSpec(s.dtype, TensorShape([dim]).concatenate(s.shape)), spec)


def _take_batch(it, n):
    batch = []
    for e in it:
        batch.append(e)
        if len(batch) == n:
            break
    return batch


class BatchDataset(_Unary):
    """`batch(batch_size, drop_remainder=False)`: stacks consecutive elements; the last batch may be smaller
    unless drop_remainder."""

    def __init__(self, input_dataset, batch_size, drop_remainder=False):
        super().__init__(input_dataset)
        self._n = _scalar_arg(batch_size, "batch_size")
        if not isinstance(self._n, Tensor) and self._n <= 0:
            raise errors.InvalidArgumentError(None, None, "Batch size must be greater than zero.")
        self._args = (self._n,)
        self._drop = bool(drop_remainder)
        self._spec = _batch_spec(input_dataset._spec, None if isinstance(self._n, Tensor) else self._n, self._drop)

    def _iter(self, env):
        it = self._input._iter(env)
        n = self._int(env, self._n)
        if n <= 0:
            raise errors.InvalidArgumentError(None, None, "Batch size must be greater than zero.")
        while True:
            batch = _take_batch(it, n)
            if not batch or (self._drop and len(batch) < n):
                return
            flat = [nest.flatten(e) for e in batch]
            out = []
            for c in range(len(flat[0])):
                first = np.shape(flat[0][c])
                for k, e in enumerate(flat):
                    if np.shape(e[c]) != first:
                        raise errors.InvalidArgumentError(
                            None, None, f"Cannot batch tensors with different shapes in component {c}. First "
                                        f"element had shape {list(first)} and element {k} had shape "
                                        f"{list(np.shape(e[c]))}.")
                out.append(np.stack([e[c] for e in flat]))
            yield nest.pack_as(self._spec, out)


class PaddedBatchDataset(_Unary):
    """`padded_batch(batch_size, padded_shapes, padding_values=None, drop_remainder=False)`: pads each component
    to `padded_shapes` (None or -1: the longest in the batch) with `padding_values` (0 / b'' by default)."""

    def __init__(self, input_dataset, batch_size, padded_shapes=None, padding_values=None, drop_remainder=False):
        super().__init__(input_dataset)
        spec = input_dataset._spec
        self._n = _count(batch_size, "batch_size")
        if self._n <= 0:
            raise errors.InvalidArgumentError(None, None, "Batch size must be greater than zero.")
        self._drop = bool(drop_remainder)
        if padded_shapes is None:
            padded_shapes = nest.map_structure(lambda s: TensorShape([None] * (s.shape.ndims or 0)), spec)
        flat_spec = nest.flatten(spec)
        shapes = [as_shape([None if d == -1 else d for d in s] if isinstance(s, (list, tuple)) else s)
                  for s in _flat_like(spec, padded_shapes)]
        for i, (s, p) in enumerate(zip(flat_spec, shapes, strict=True)):
            if s.shape.ndims is not None and p.ndims != s.shape.ndims:
                raise ValueError(f"padded_batch: padded shape {p} of component {i} does not have the element's rank "
                                 f"({s.shape})")
        self._shapes = shapes
        if padding_values is None:
            self._pads = [b"" if s.dtype is _dtypes.string else 0 for s in flat_spec]
        else:
            self._pads = _flat_like(spec, padding_values)
        dim = self._n if self._drop else None
        self._spec = nest.pack_as(spec, [nest.ComponentSpec(s.dtype, TensorShape([dim]).concatenate(
            TensorShape([d if d is not None else None for d in p.as_list()]))) for s, p in
            zip(flat_spec, shapes, strict=True)])

    def _iter(self, env):
        it = self._input._iter(env)
        specs = nest.flatten(self._spec)
        while True:
            batch = _take_batch(it, self._n)
            if not batch or (self._drop and len(batch) < self._n):
                return
            flat = [nest.flatten(e) for e in batch]
            out = []
            for c, (shape, pad, spec) in enumerate(zip(self._shapes, self._pads, specs, strict=True)):
                longest = np.max([np.shape(e[c]) for e in flat], axis=0) if shape.ndims else ()
                target = [int(m) if d is None else d for d, m in zip(shape.as_list(), np.atleast_1d(longest),
                                                                      strict=False)]
                arr = np.empty([len(flat)] + target, dtype=spec.dtype.np_dtype)
                arr[...] = pad
                for k, e in enumerate(flat):
                    v = np.asarray(e[c])
                    if any(n > t for n, t in zip(v.shape, target, strict=True)):
                        raise errors.InvalidArgumentError(
                            None, None, f"Attempted to pad to a smaller size than the input element: component {c} "
                                        f"has shape {list(v.shape)}, padded shape {target}")
                    arr[(k,) + tuple(slice(0, n) for n in v.shape)] = v
                out.append(arr)
            yield nest.pack_as(self._spec, out)


def _flat_like(spec, values):
    """`values` given per component (a structure like spec) or once for a single component."""
    if nest.is_structure(spec):
        return nest.flatten(values) if isinstance(values, dict) else \
            [v for sub_s, sub_v in zip(spec, values, strict=True) for v in _flat_like(sub_s, sub_v)]
    return [values]


# -- shuffle / repeat / take / skip / concatenate ---------------------------------
class ShuffleDataset(_Unary):
    """`shuffle(buffer_size, seed=None, reshuffle_each_iteration=True)`: TF's algorithm (a buffer of
    `buffer_size` elements; each output is a uniformly chosen buffer slot, refilled from upstream).

    Seeds follow TF1's rule (graph seed and op seed): a fixed seed gives the same order for every new iterator;
    with reshuffle_each_iteration each later pass (under repeat) gets a different, still reproducible, order.
    """

    def __init__(self, input_dataset, buffer_size, seed=None, reshuffle_each_iteration=True):
        super().__init__(input_dataset)
        self._buffer = _scalar_arg(buffer_size, "buffer_size")
        if not isinstance(self._buffer, Tensor) and self._buffer <= 0:
            raise errors.InvalidArgumentError(None, None, "buffer_size must be greater than zero.")
        self._args = (self._buffer,)
        self._seed = random_seed.get_seed(seed)
        self._reshuffle = bool(reshuffle_each_iteration)

    def _iter(self, env):
        epoch = env.next_pass(id(self))
        if self._seed[0] is None:
            rng = np.random.default_rng()
        else:
            rng = np.random.default_rng([self._seed[0], self._seed[1], epoch if self._reshuffle else 0])
        buf: list = []
        size = self._int(env, self._buffer)
        it = self._input._iter(env)
        for e in it:
            buf.append(e)
            if len(buf) == size:
                break
        for e in it:
            i = int(rng.integers(len(buf)))
            yield buf[i]
            buf[i] = e
        while buf:
            i = int(rng.integers(len(buf)))
            buf[i], buf[-1] = buf[-1], buf[i]
            yield buf.pop()


class RepeatDataset(_Unary):
    """`repeat(count=None)`: count passes over the input (None or -1: forever; an empty input ends it)."""

    def __init__(self, input_dataset, count=None):
        super().__init__(input_dataset)
        self._times = -1 if count is None else _scalar_arg(count, "count")
        self._args = (self._times,)

    def _iter(self, env):
        n, times = 0, self._int(env, self._times)
        while times < 0 or n < times:
            produced = False
            for e in self._input._iter(env):
                produced = True
                yield e
            n += 1
            if not produced:
                return


class TakeDataset(_Unary):
    """`take(count)`: the first count elements (-1: all)."""

    def __init__(self, input_dataset, count):
        super().__init__(input_dataset)
        self._n = _scalar_arg(count, "count")
        self._args = (self._n,)

    def _iter(self, env):
        n = self._int(env, self._n)
        if n == 0:
            return
        for i, e in enumerate(self._input._iter(env)):
            yield e
            if i + 1 == n:
                return


class SkipDataset(_Unary):
    """`skip(count)`: all but the first count elements (-1: skips everything)."""

    def __init__(self, input_dataset, count):
        super().__init__(input_dataset)
        self._n = _scalar_arg(count, "count")
        self._args = (self._n,)

    def _iter(self, env):
        n = self._int(env, self._n)
        for i, e in enumerate(self._input._iter(env)):
            if n < 0 or i < n:
                continue
            yield e


class ConcatenateDataset(Dataset):
    """`a.concatenate(b)`: a's elements, then b's (same structure and dtypes)."""

    def __init__(self, first, second):
        if not nest.same_structure(first._spec, second._spec) or \
                [s.dtype for s in nest.flatten(first._spec)] != [s.dtype for s in nest.flatten(second._spec)]:
            raise TypeError("Two datasets to concatenate have different types or structures")
        self._first, self._second = first, second
        self._spec = nest.pack_as(first._spec, [nest.ComponentSpec(a.dtype, a.shape.most_specific_compatible_shape(
            b.shape) if hasattr(a.shape, "most_specific_compatible_shape") else TensorShape(None))
            for a, b in zip(nest.flatten(first._spec), nest.flatten(second._spec), strict=True)])

    def _inputs(self):
        return [self._first, self._second]

    def _iter(self, env):
        yield from self._first._iter(env)
        yield from self._second._iter(env)


# -- interleave / flat_map ------------------------------------------------------------------
class InterleaveDataset(_Unary):
    """`interleave(map_func, cycle_length, block_length)`: map_func(element) returns a Dataset; `cycle_length`
    of them are open at once and `block_length` elements are taken from each in turn (flat_map: 1, 1).

    map_func is traced once on placeholders (as TF traces it); the dataset it returns may depend on them, and
    each element's values are fed in to open that element's dataset.
    """

    def __init__(self, input_dataset, map_func, cycle_length=AUTOTUNE, block_length=1):
        super().__init__(input_dataset)
        self._cycle = 2 if cycle_length in (None, AUTOTUNE) else _count(cycle_length, "cycle_length")
        self._block = _count(block_length, "block_length")
        if self._cycle < 1 or self._block < 1:
            raise ValueError("cycle_length and block_length must be positive")
        holder = {}

        def trace(*args):
            ds = map_func(*args)
            if not isinstance(ds, Dataset):
                raise TypeError("`map_func` must return a `Dataset` object.")
            holder["ds"] = ds
            captures = ds._all_captures()
            return tuple(captures)

        self._fn = TracedFunction(lambda *a: trace(*a), input_dataset._spec, "Dataset.interleave",
                                  get_default_graph().seed)
        self._inner = holder["ds"]
        self._inner_captures = self._inner._all_captures()
        self._spec = self._inner._spec

    def _open(self, env, element):
        values = self._fn(element) if self._inner_captures else ()
        if not isinstance(values, tuple):
            values = (values,)
        return iter(self._inner._iter(env.child({id(t): v for t, v in zip(self._inner_captures, values,
                                                                              strict=True)})))

    def _iter(self, env):
        """TF's InterleaveDatasetOp loop: slots open lazily, an exhausted slot is refilled on its next turn."""
        upstream = iter(self._input._iter(env))
        slots: list = [None] * self._cycle
        idx = block_i = num_open = 0
        end_of_input = False
        while not (end_of_input and num_open == 0):
            slot = slots[idx]
            if slot is not None:
                item = next(slot, _END)
                if item is not _END:
                    block_i += 1
                    if block_i == self._block:
                        idx, block_i = (idx + 1) % self._cycle, 0
                    yield element_arrays(item, self._spec)
                    continue
                slots[idx] = None
                num_open -= 1
            elif not end_of_input:
                e = next(upstream, _END)
                if e is _END:
                    end_of_input = True
                else:
                    slots[idx] = self._open(env, e)
                    num_open += 1
                    continue
            idx, block_i = (idx + 1) % self._cycle, 0


_END = object()
