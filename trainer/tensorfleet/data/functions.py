"""User functions of tf.data transformations (`map`, `filter`), traced once into a graph of their own.

Sits above the session layer: `TracedFunction(fn, spec)` calls `fn` on placeholders shaped like the input
element in a fresh `Graph` (as TF traces a dataset function into a FunctionDef), records the output structure
and spec, and later runs that graph on each element's numpy values in a session taken from a small pool (one
per concurrent call, so `num_parallel_calls` workers run it at once; idle sessions are reused, never more than
the largest number of simultaneous calls). Those sessions run on the calling thread
(inter_op_parallelism_threads=1), so a dataset function never waits for the executor's shared thread pool that
the training step pulling from the iterator may hold, and on the CPU, as TF runs input pipelines. The function
may use any op (string ops, decode_csv, random ops seeded from the dataset's graph seed); it cannot capture
tensors of the outer graph or create variables.
"""
from __future__ import annotations

import threading

import numpy as np

from .. import dtypes as _dtypes
from ..graph import Graph, Tensor
from ..default_graph import convert_to_tensor
from ..ops import array_ops
from . import structure as nest


def spec_of_tensors(struct):
    return nest.map_structure(lambda t: nest.ComponentSpec(t.dtype, t.shape), struct)


class TracedFunction:
    """`fn` traced on placeholders of `in_spec`; `__call__(element)` runs it on numpy values."""

    def __init__(self, fn, in_spec, what: str, graph_seed=None):
        self.what = what
        self.graph = Graph()
        self.graph.seed = graph_seed
        with self.graph.as_default():
            self._inputs = [array_ops.placeholder(dt, shape, name=f"arg{i}")
                            for i, (dt, shape) in enumerate(nest.flatten(in_spec))]
            args = nest.pack_as(in_spec, self._inputs)
            out = nest.call_with_element(fn, args)
            if isinstance(out, list):  # TF: a list returned from a dataset function is a tuple of components
                out = tuple(out)
            try:
                out = nest.map_structure(convert_to_tensor, out)
            except (TypeError, ValueError) as e:
                raise TypeError(f"{what}: the function must return tensors (or values convertible to them), got "
                                f"{out!r}: {e}") from None
            for t in nest.flatten(out):
                if t.graph is not self.graph:
                    raise ValueError(f"{what}: the function uses tensor {t.name} of another graph; tf.data "
                                     f"functions here cannot capture outer tensors (pass them in the dataset)")
        self._outputs = out
        self._flat_outputs = nest.flatten(out)
        self.out_spec = spec_of_tensors(out)
        self._idle: list = []
        self._lock = threading.Lock()

    def _take_session(self):
        with self._lock:
            if self._idle:
                return self._idle.pop()
        from ..config import ConfigProto
        from ..session import Session
        return Session(graph=self.graph, config=ConfigProto(inter_op_parallelism_threads=1, device_count={"GPU": 0}))

    def __call__(self, element):
        flat = nest.flatten(element)
        feed = dict(zip(self._inputs, flat, strict=True))
        sess = self._take_session()
        try:
            values = sess.run(self._flat_outputs, feed)
        finally:
            with self._lock:
                self._idle.append(sess)
        return nest.pack_as(self._outputs, [_as_array(v, t.dtype) for v, t in
                                            zip(values, self._flat_outputs, strict=True)])


def _as_array(v, dtype) -> np.ndarray:
    if dtype is _dtypes.string:
        return np.asarray(v, dtype=object)
    return np.asarray(v, dtype=dtype.np_dtype)


def check_is_tensor_free(value, what: str) -> None:
    if isinstance(value, Tensor):
        raise TypeError(f"{what}: expected a Python value here, got tensor {value.name}")
