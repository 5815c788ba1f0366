"""tf.data iterators in the graph: `make_one_shot_iterator`, `make_initializable_iterator`,
`Iterator.from_structure` + `make_initializer`, and `get_next`, with their ops and (CPU) kernels.

Ops: `MakeIterator` (inputs: the dataset's captured tensors; (re)starts the iterator's state in the session)
and `IteratorGetNext` (one output per component; a one-shot iterator's also takes the captures and starts
itself on first use). The state lives in the session's ResourceStore, keyed by the iterator's name, so each
session iterates independently, as in TF. Past the end, get_next raises OutOfRangeError("End of sequence").
Closing the session (or re-initializing) stops the state's prefetch threads and worker pools.
"""
from __future__ import annotations

import threading
from typing import Any, Optional

import numpy as np

from .. import dtypes as _dtypes

from .. import errors
from ..graph import Tensor
from ..default_graph import get_default_graph
from ..kernels.registry import register_kernel
from ..op_registry import NotDifferentiable, register_op
from ..ops.common import convert_to_tensor, make_op
from ..tensor_shape import TensorShape, as_shape
from . import structure as nest
from .dataset_ops import Dataset, IterEnv, element_arrays

_STATES = "_tf_data_iterators"


class _IteratorState:
    """One initialization of an iterator in one session: the element generator and what to clean up."""

    def __init__(self, dataset: Dataset, captures: list, values):
        self.closers: list = []
        env = IterEnv({id(t): v for t, v in zip(captures, values, strict=True)}, self.closers)
        self.spec = dataset._spec
        self._gen: Any = dataset._iter(env)
        self.lock = threading.Lock()
        self.done = False

    def next(self):
        with self.lock:
            if self.done:
                return None
            try:
                return element_arrays(next(self._gen), self.spec)
            except StopIteration:
                self.done = True
                self.close()
                return None

    def close(self) -> None:
        closers, self.closers[:] = list(self.closers), []
        for fn in closers:
            fn()
        try:
            self._gen.close()
        except (RuntimeError, ValueError):  # a generator being advanced on another thread
            pass


def _close_all(states: dict) -> None:
    for state in list(states.values()):
        state.close()


def _states(resources) -> dict:
    with resources.lock:
        states = resources.__dict__.get(_STATES)
        if states is None:
            states = resources.__dict__[_STATES] = {}
            hooks = resources.__dict__.setdefault("_close_hooks", [])
            hooks.append(lambda: _close_all(states))
        return states


# -- ops ----------------------------------------------------------------------
register_op("MakeIterator", lambda op: [], stateful=True)
register_op("IteratorGetNext", lambda op: [(s.dtype, s.shape) for s in nest.flatten(op.get_attr("output_spec"))],
            stateful=True)
register_op("IteratorToStringHandle", lambda op: [(_dtypes.string, TensorShape([]))], stateful=True)
register_op("IteratorFromStringHandleGetNext",
            lambda op: [(s.dtype, s.shape) for s in nest.flatten(op.get_attr("output_spec"))], stateful=True)
for _t in ("MakeIterator", "IteratorGetNext", "IteratorToStringHandle", "IteratorFromStringHandleGetNext"):
    NotDifferentiable(_t)


@register_kernel("MakeIterator", devices=("CPU",))
def make_iterator(ctx, *values):
    a = ctx.op.attrs
    states = _states(ctx.resources)
    new = _IteratorState(a["dataset"], a["captures"], values)
    with ctx.resources.lock:
        old = states.get(a["iterator"])
        states[a["iterator"]] = new
    if old is not None:
        old.close()
    return None


def _state_for(ctx, name, one_shot, captures, values):
    """The iterator's state in this session; a one-shot iterator starts itself on first use."""
    states = _states(ctx.resources)
    with ctx.resources.lock:
        state = states.get(name)
        if state is None and one_shot is not None:
            state = states[name] = _IteratorState(one_shot, captures, values)
    return state


def _next_element(ctx, state):
    if state is None:
        raise errors.FailedPreconditionError(
            None, ctx.op, "GetNext() failed because the iterator has not been initialized. Ensure that you have run "
                          "the initializer operation for this iterator before getting the next element.")
    element = state.next()
    if element is None:
        raise errors.OutOfRangeError(None, ctx.op, "End of sequence")
    flat = nest.flatten(element)
    return flat[0] if len(flat) == 1 else tuple(flat)  # (a one-output kernel returns the value itself)


@register_kernel("IteratorGetNext", devices=("CPU",))
def iterator_get_next(ctx, *values):
    a = ctx.op.attrs
    return _next_element(ctx, _state_for(ctx, a["iterator"], a["one_shot"], a["captures"], values))


@register_kernel("IteratorToStringHandle", devices=("CPU",))
def iterator_to_string_handle(ctx, *values):
    a = ctx.op.attrs
    _state_for(ctx, a["iterator"], a["one_shot"], a["captures"], values)
    return np.array(a["iterator"].encode("utf-8"), dtype=object)


@register_kernel("IteratorFromStringHandleGetNext", devices=("CPU",))
def iterator_from_string_handle_get_next(ctx, handle):
    name = np.asarray(handle, dtype=object).reshape(())[()]
    name = name.decode("utf-8") if isinstance(name, bytes) else str(name)
    state = _states(ctx.resources).get(name)
    if state is not None and not _compatible(ctx.op.attrs["output_spec"], state.spec):
        raise errors.InvalidArgumentError(None, ctx.op, f"The iterator behind handle {name!r} produces "
                                                        f"{state.spec}, not {ctx.op.attrs['output_spec']}")
    return _next_element(ctx, state)


# -- the Python API -------------------------------------------------------------
def _compatible(spec, dataset_spec) -> bool:
    if not nest.same_structure(spec, dataset_spec):
        return False
    return all(a.dtype is b.dtype and a.shape.is_compatible_with(b.shape)
               for a, b in zip(nest.flatten(spec), nest.flatten(dataset_spec), strict=True))


class Iterator:
    """`tf.data.Iterator` (TF1): get_next() gives tensors; each run of them advances the iterator once."""

    def __init__(self, spec, name: str, one_shot: Optional[Dataset] = None):
        self._spec = spec
        self._name = name
        self._one_shot_dataset = one_shot
        self._initializer = None

    @staticmethod
    def from_structure(output_types, output_shapes=None, shared_name=None, output_classes=None):
        types = nest.map_structure(_dtypes.as_dtype, output_types)
        if output_shapes is None:
            shapes = nest.map_structure(lambda _: as_shape(None), types)
        else:
            from .dataset_ops import _shapes_like
            shapes = _shapes_like(types, output_shapes)
        spec = nest.pack_as(types, [nest.ComponentSpec(t, s) for t, s in
                                    zip(nest.flatten(types), nest.flatten(shapes), strict=True)])
        g = get_default_graph()
        return Iterator(spec, shared_name or g.unique_name("Iterator", mark_as_used=True))

    @staticmethod
    def _one_shot(dataset: Dataset) -> "Iterator":
        for t in dataset._all_captures():
            if t.op.type in ("Placeholder", "PlaceholderWithDefault"):
                raise ValueError(f"Failed to create a one-shot iterator for a dataset that captures placeholder "
                                 f"{t.name}; use make_initializable_iterator() and feed it to the initializer")
        return Iterator(dataset._spec, get_default_graph().unique_name("OneShotIterator", mark_as_used=True),
                        one_shot=dataset)

    @property
    def output_types(self):
        return nest.map_structure(lambda s: s.dtype, self._spec)

    @property
    def output_shapes(self):
        return nest.map_structure(lambda s: s.shape, self._spec)

    @property
    def output_classes(self):
        return nest.map_structure(lambda s: Tensor, self._spec)

    @property
    def initializer(self):
        if self._initializer is None:
            raise ValueError("Iterator does not have an initializer (make it with make_initializable_iterator, "
                             "or use make_initializer(dataset))")
        return self._initializer

    def make_initializer(self, dataset, name=None):
        """An op that (re)starts this iterator on `dataset` (same structure and dtypes, compatible shapes)."""
        if not isinstance(dataset, Dataset):
            raise TypeError(f"make_initializer expects a Dataset, got {type(dataset).__name__}")
        if not _compatible(self._spec, dataset._spec):
            raise TypeError(f"Expected output types/shapes {self.output_types}/{self.output_shapes} but got dataset "
                            f"with {dataset.output_types}/{dataset.output_shapes}")
        captures = dataset._all_captures()
        return make_op("MakeIterator", captures, {"iterator": self._name, "dataset": dataset,
                                                  "captures": captures}, name=name, default_name="MakeIterator")

    @staticmethod
    def from_string_handle(string_handle, output_types, output_shapes=None, output_classes=None):
        """A feedable iterator: get_next() reads from whichever iterator's string_handle() is fed in."""
        proto = Iterator.from_structure(output_types, output_shapes)
        handle = convert_to_tensor(string_handle, dtype=_dtypes.string)
        return _HandleIterator(proto._spec, handle)

    def string_handle(self, name=None):
        """A scalar tf.string naming this iterator in the session (feed it to a from_string_handle iterator)."""
        captures = self._one_shot_dataset._all_captures() if self._one_shot_dataset is not None else []
        return make_op("IteratorToStringHandle", captures, {"iterator": self._name, "one_shot": self._one_shot_dataset,
                                                            "captures": captures},
                       name=name, default_name="IteratorToStringHandle").outputs[0]

    def get_next(self, name=None):
        """The next element as tensors (the dataset's structure); running them raises OutOfRangeError at the end."""
        captures = self._one_shot_dataset._all_captures() if self._one_shot_dataset is not None else []
        op = make_op("IteratorGetNext", captures, {"iterator": self._name, "output_spec": self._spec,
                                                   "one_shot": self._one_shot_dataset, "captures": captures},
                     name=name, default_name="IteratorGetNext")
        return nest.pack_as(self._spec, list(op.outputs))


class _HandleIterator(Iterator):
    """What Iterator.from_string_handle returns: its get_next reads the iterator named by the fed handle."""

    def __init__(self, spec, handle):
        super().__init__(spec, "")
        self._handle = handle

    def make_initializer(self, dataset, name=None):
        raise TypeError("An iterator made by from_string_handle has no initializer of its own: initialize the "
                        "iterators whose handles you feed")

    def string_handle(self, name=None):
        return self._handle

    def get_next(self, name=None):
        op = make_op("IteratorFromStringHandleGetNext", [self._handle], {"output_spec": self._spec},
                     name=name, default_name="IteratorGetNext")
        return nest.pack_as(self._spec, list(op.outputs))


def make_one_shot_iterator(dataset: Dataset) -> Iterator:
    """`tf.data.make_one_shot_iterator(dataset)` (tf.compat.v1)."""
    return dataset.make_one_shot_iterator()


def make_initializable_iterator(dataset: Dataset, shared_name=None) -> Iterator:
    """`tf.data.make_initializable_iterator(dataset)` (tf.compat.v1)."""
    return dataset.make_initializable_iterator(shared_name)
