"""`tf.data.Dataset`: the base class and the source datasets (from_tensor_slices, from_tensors, from_generator,
range, zip).

A Dataset is a Python description of an input pipeline with a static element spec (a structure of
(DType, TensorShape)). It runs on the host, element by element, when an iterator's op runs in a session
(`iterator_ops.py`): `_iter(env)` yields elements (the same structure, of numpy arrays). Tensors of the user's
graph that a dataset takes as arguments (a placeholder given to from_tensor_slices, ...) are its *captures*:
the iterator's op has them as inputs, so their values are computed (or fed) when the iterator is initialized,
as in TF (`sess.run(it.initializer, {x: data})`). Transformations are in `transformations.py`.
"""
from __future__ import annotations

from typing import Iterator, Optional

import numpy as np

from .. import dtypes as _dtypes
from .. import errors
from ..graph import Tensor
from ..ops import array_ops
from ..tensor_shape import TensorShape, as_shape
from . import structure as nest

AUTOTUNE = -1


class IterEnv:
    """What one iterator initialization gives its datasets: capture values, per-pass counters, cleanups."""

    def __init__(self, values: dict, closers: list, counters: Optional[dict] = None,
                 caches: Optional[dict] = None):
        self.values = values  # id(Tensor) -> numpy value
        self.closers = closers  # called when the iterator is re-initialized or its session closes
        self.counters = {} if counters is None else counters  # dataset id -> passes started (shuffle epochs)
        self.caches = {} if caches is None else caches  # dataset id -> cached elements (cache())

    def value(self, t):
        return self.values[id(t)] if isinstance(t, Tensor) else t

    def child(self, values: dict) -> "IterEnv":
        return IterEnv(values, self.closers, self.counters, self.caches)

    def next_pass(self, key) -> int:
        n = self.counters.get(key, 0)
        self.counters[key] = n + 1
        return n


def to_component(value, dtype=None):
    """A dataset argument leaf: a Tensor stays (captured); anything else becomes a numpy value with TF's
    conversion rules (Python floats float32, ints int32, str/bytes tf.string)."""
    if isinstance(value, Tensor):
        if dtype is not None and value.dtype is not _dtypes.as_dtype(dtype):
            raise TypeError(f"Expected {_dtypes.as_dtype(dtype).name} for tensor {value.name}, got {value.dtype.name}")
        return value
    if hasattr(value, "_as_graph_element") or hasattr(value, "value") and hasattr(value, "initializer"):
        raise TypeError("tf.data: variables cannot be dataset arguments here; pass a tensor or a numpy value")
    arr = array_ops._to_numpy(value, dtype)
    arr = np.array(arr, copy=True) if isinstance(value, np.ndarray) else arr
    arr.setflags(write=False)
    return arr


def component_spec(c):
    if isinstance(c, Tensor):
        return nest.ComponentSpec(c.dtype, c.shape)
    return nest.ComponentSpec(_dtypes.as_dtype(c.dtype), TensorShape(list(c.shape)))


def _element_array(v, dtype) -> np.ndarray:
    return np.asarray(v, dtype=object) if dtype is _dtypes.string else np.asarray(v, dtype=dtype.np_dtype)


class Dataset:
    """`tf.data.Dataset` (TF 1.15 graph mode). Subclasses set `_spec` and implement `_iter` / `_captures`."""

    _spec = None

    # -- what the graph sees ----------------------------------------------------
    @property
    def output_types(self):
        return nest.map_structure(lambda s: s[0], self._spec)

    @property
    def output_shapes(self):
        return nest.map_structure(lambda s: s[1], self._spec)

    @property
    def output_classes(self):
        return nest.map_structure(lambda s: Tensor, self._spec)

    def _captures(self) -> list:
        return []

    def _inputs(self) -> list:
        """Upstream datasets (their captures are this dataset's too)."""
        return []

    def _all_captures(self) -> list:
        seen, out = set(), []
        for t in self._captures() + [c for d in self._inputs() for c in d._all_captures()]:
            if id(t) not in seen:
                seen.add(id(t))
                out.append(t)
        return out

    def _iter(self, env: IterEnv) -> Iterator:
        raise NotImplementedError

    def __iter__(self):
        raise TypeError("tf.data.Dataset is not iterable in graph mode: use dataset.make_one_shot_iterator() "
                        "(or make_initializable_iterator()) and run get_next() in a session")

    # -- sources ------------------------------------------------------------------
    @staticmethod
    def from_tensor_slices(tensors):
        return TensorSliceDataset(tensors)

    @staticmethod
    def from_tensors(tensors):
        return TensorDataset(tensors)

    @staticmethod
    def from_generator(generator, output_types, output_shapes=None, args=None):
        return GeneratorDataset(generator, output_types, output_shapes, args)

    @staticmethod
    def range(*args):
        return RangeDataset(*args)

    @staticmethod
    def zip(datasets):
        return ZipDataset(datasets)

    @staticmethod
    def list_files(file_pattern, shuffle=None, seed=None):
        from .file_datasets import list_files
        return list_files(file_pattern, shuffle, seed)

    # -- transformations (transformations.py) ---------------------------------------
    def map(self, map_func, num_parallel_calls=None):
        from .transformations import MapDataset
        return MapDataset(self, map_func, num_parallel_calls)

    def filter(self, predicate):
        from .transformations import FilterDataset
        return FilterDataset(self, predicate)

    def batch(self, batch_size, drop_remainder=False):
        from .transformations import BatchDataset
        return BatchDataset(self, batch_size, drop_remainder)

    def padded_batch(self, batch_size, padded_shapes=None, padding_values=None, drop_remainder=False):
        from .transformations import PaddedBatchDataset
        return PaddedBatchDataset(self, batch_size, padded_shapes, padding_values, drop_remainder)

    def shuffle(self, buffer_size, seed=None, reshuffle_each_iteration=True):
        from .transformations import ShuffleDataset
        return ShuffleDataset(self, buffer_size, seed, reshuffle_each_iteration)

    def repeat(self, count=None):
        from .transformations import RepeatDataset
        return RepeatDataset(self, count)

    def take(self, count):
        from .transformations import TakeDataset
        return TakeDataset(self, count)

    def skip(self, count):
        from .transformations import SkipDataset
        return SkipDataset(self, count)

    def cache(self, filename=""):
        from .cache_dataset import CacheDataset
        return CacheDataset(self, filename)

    def concatenate(self, dataset):
        from .transformations import ConcatenateDataset
        return ConcatenateDataset(self, dataset)

    def interleave(self, map_func, cycle_length=AUTOTUNE, block_length=1, num_parallel_calls=None):
        from .transformations import InterleaveDataset
        return InterleaveDataset(self, map_func, cycle_length, block_length)

    def flat_map(self, map_func):
        from .transformations import InterleaveDataset
        return InterleaveDataset(self, map_func, 1, 1)

    def prefetch(self, buffer_size):
        from .prefetch import PrefetchDataset
        return PrefetchDataset(self, buffer_size)

    def apply(self, transformation_func):
        out = transformation_func(self)
        if not isinstance(out, Dataset):
            raise TypeError("`transformation_func` must return a Dataset.")
        return out

    # -- iterators (iterator_ops.py) --------------------------------------------------
    def make_one_shot_iterator(self):
        from .iterator_ops import Iterator
        return Iterator._one_shot(self)

    def make_initializable_iterator(self, shared_name=None):
        from .iterator_ops import Iterator
        it = Iterator.from_structure(self.output_types, self.output_shapes, shared_name=shared_name)
        it._initializer = it.make_initializer(self)
        return it


# -- sources ----------------------------------------------------------------------
class TensorDataset(Dataset):
    """`Dataset.from_tensors`: one element."""

    def __init__(self, tensors):
        self._components = nest.map_structure(to_component, tensors)
        self._spec = nest.map_structure(component_spec, self._components)

    def _captures(self):
        return [c for c in nest.flatten(self._components) if isinstance(c, Tensor)]

    def _iter(self, env):
        yield nest.map_structure(env.value, self._components)


class TensorSliceDataset(Dataset):
    """`Dataset.from_tensor_slices`: one element per row of the first dimension (all components alike)."""

    def __init__(self, tensors):
        self._components = nest.map_structure(to_component, tensors)
        flat = nest.flatten(self._components)
        dims = set()
        for c in flat:
            _, shape = component_spec(c)
            if shape.ndims == 0:
                raise ValueError("from_tensor_slices: every component needs at least one dimension to slice")
            if shape.ndims is not None and shape.as_tuple()[0] is not None:
                dims.add(shape.as_tuple()[0])
        if len(dims) > 1:
            raise ValueError(f"from_tensor_slices: all components must have the same size in dimension 0, got "
                             f"{sorted(dims)}")
        self._spec = nest.map_structure(lambda c: nest.ComponentSpec(component_spec(c).dtype,
                                                                     _slice_shape(component_spec(c).shape)),
                                        self._components)

    def _captures(self):
        return [c for c in nest.flatten(self._components) if isinstance(c, Tensor)]

    def _iter(self, env):
        flat = [np.asarray(env.value(c)) if not isinstance(env.value(c), np.ndarray) else env.value(c)
                for c in nest.flatten(self._components)]
        sizes = {a.shape[0] if a.ndim else None for a in flat}
        if len(sizes) != 1 or None in sizes:
            raise errors.InvalidArgumentError(None, None, f"from_tensor_slices: components have different sizes "
                                                          f"in dimension 0: {sorted(map(str, sizes))}")
        for i in range(sizes.pop()):
            yield nest.pack_as(self._components, [a[i, ...] for a in flat])


def _slice_shape(shape: TensorShape) -> TensorShape:
    return TensorShape(None) if shape.ndims is None else TensorShape(shape.as_list()[1:])


class RangeDataset(Dataset):
    """`Dataset.range(stop)` / `range(start, stop[, step])`: int64 scalars, like Python's range."""

    def __init__(self, *args):
        if not 1 <= len(args) <= 3:
            raise ValueError(f"Dataset.range takes 1 to 3 arguments, got {len(args)}")
        self._args = [to_component(a, _dtypes.int64) if isinstance(a, Tensor) else int(a) for a in args]
        if len(self._args) == 3 and not isinstance(self._args[2], Tensor) and self._args[2] == 0:
            raise errors.InvalidArgumentError(None, None, "step must be a non-zero integer.")
        self._spec = nest.ComponentSpec(_dtypes.int64, TensorShape([]))

    def _captures(self):
        return [a for a in self._args if isinstance(a, Tensor)]

    def _iter(self, env):
        args = [int(env.value(a)) for a in self._args]
        for i in range(*args):
            yield np.asarray(i, dtype=np.int64)


class GeneratorDataset(Dataset):
    """`Dataset.from_generator`: calls `generator(*args)` anew for each pass; each value is converted to
    `output_types` and checked against `output_shapes`."""

    def __init__(self, generator, output_types, output_shapes=None, args=None):
        if not callable(generator):
            raise TypeError("`generator` must be callable.")
        types = nest.map_structure(_dtypes.as_dtype, output_types)
        if output_shapes is None:
            shapes = nest.map_structure(lambda _: TensorShape(None), types)
        else:
            shapes = _shapes_like(types, output_shapes)
        self._generator, self._args = generator, tuple(args or ())
        self._spec = nest.pack_as(types, [nest.ComponentSpec(t, s) for t, s in
                                          zip(nest.flatten(types), nest.flatten(shapes), strict=True)])

    def _iter(self, env):
        specs = nest.flatten(self._spec)
        for value in self._generator(*self._args):
            if isinstance(value, list) and nest.is_structure(self._spec):
                value = tuple(value)
            flat = nest.flatten(value) if nest.is_structure(self._spec) else [value]
            if len(flat) != len(specs):
                raise errors.InvalidArgumentError(None, None, f"`generator` yielded an element that did not match "
                                                              f"the expected structure ({len(flat)} components, "
                                                              f"expected {len(specs)})")
            out = []
            for v, (dt, shape) in zip(flat, specs, strict=True):
                try:
                    arr = _dtypes.string_array(v) if dt is _dtypes.string else np.asarray(v, dtype=dt.np_dtype)
                except (TypeError, ValueError) as e:
                    raise errors.InvalidArgumentError(None, None, f"`generator` yielded an element that could not "
                                                                  f"be converted to {dt.name}: {e}") from None
                if not shape.is_compatible_with(TensorShape(list(arr.shape))):
                    raise errors.InvalidArgumentError(None, None, f"`generator` yielded an element of shape "
                                                                  f"{list(arr.shape)} where an element of shape "
                                                                  f"{shape} was expected.")
                out.append(arr)
            yield nest.pack_as(self._spec, out)


def _shapes_like(types, shapes):
    if not nest.is_structure(types):
        return as_shape(shapes)
    if isinstance(types, dict):
        return {k: _shapes_like(types[k], shapes[k]) for k in types}
    return tuple(_shapes_like(t, s) for t, s in zip(types, shapes, strict=True))


class ZipDataset(Dataset):
    """`Dataset.zip((a, b, ...))` or a dict of datasets: stops at the shortest."""

    def __init__(self, datasets):
        if not nest.is_structure(datasets) or not all(isinstance(d, Dataset) for d in nest.flatten(datasets)):
            raise TypeError("Dataset.zip expects a (nested) tuple or dict of Datasets")
        self._datasets = datasets
        self._spec = nest.map_structure(lambda d: d._spec, datasets)

    def _inputs(self):
        return nest.flatten(self._datasets)

    def _iter(self, env):
        iters = [d._iter(env) for d in nest.flatten(self._datasets)]
        for items in zip(*iters):  # noqa: B905 - zip stops at the shortest dataset, as TF's
            yield nest.pack_as(self._datasets, list(items))


def element_arrays(element, spec):
    """An element's leaves as arrays of their spec's dtypes (what map/filter functions and get_next produce)."""
    return nest.pack_as(spec, [_element_array(v, dt) for v, (dt, _) in
                               zip(nest.flatten(element), nest.flatten(spec), strict=True)])

