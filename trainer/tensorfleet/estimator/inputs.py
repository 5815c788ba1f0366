"""What an `input_fn` gives the Estimator, and `tf.estimator.inputs.numpy_input_fn`.

`call_input_fn` calls the user's function (passing `mode`, `params`, `config` when it takes them)
inside the model's graph. A returned `tf.data.Dataset` is iterated by a `DatasetFeeder` in its
own host-side graph and local session and each element is fed into placeholders of the model's
graph, one element per training/eval/predict step: the model's graph then holds no iterator,
so the same graph runs on a local session and on a `grpc://` master (whose partitions are sent
as GraphDefs, which an iterator's Python dataset cannot be). A dataset that captures tensors of
the model's graph is iterated in-graph instead (local sessions only). `(features, labels)` tensors
are used as they are.
"""
from __future__ import annotations

import inspect

import numpy as np

from .. import errors
from ..data import dataset_ops
from ..data import structure as nest
from ..data.iterator_ops import make_initializable_iterator, make_one_shot_iterator
from ..default_graph import get_default_graph
from ..graph import Graph
from ..ops import array_ops
from ..session import Session
from ..train.basic_session_run_hooks import SessionRunArgs, SessionRunHook

__all__ = ["numpy_input_fn"]


def fn_args(fn) -> tuple:
    try:
        return tuple(inspect.signature(fn).parameters)
    except (TypeError, ValueError):
        return ()


def call_input_fn(input_fn, mode, params, config):
    args = fn_args(input_fn)
    kwargs = {}
    if "mode" in args:
        kwargs["mode"] = mode
    if "params" in args:
        kwargs["params"] = params
    if "config" in args:
        kwargs["config"] = config
    if not callable(input_fn):
        raise TypeError(f"input_fn must be callable, got {input_fn!r}")
    return input_fn(**kwargs)


class DatasetFeeder(SessionRunHook):
    """Feeds the next element of `dataset` into placeholders of the current graph before every run;
    the end of the data raises `OutOfRangeError` out of that run (a MonitoredSession's `with` ends cleanly)."""

    def __init__(self, dataset):
        types, shapes = dataset.output_types, dataset.output_shapes
        flat_types, flat_shapes = nest.flatten(types), nest.flatten(shapes)
        names = _leaf_names(types)
        with get_default_graph().name_scope("input_feeder"):
            flat = [array_ops.placeholder(t, s, name=n) for t, s, n in zip(flat_types, flat_shapes, names)]
        self.placeholders = flat
        self.structure = nest.pack_as(types, flat)
        self._graph = Graph()
        with self._graph.as_default():
            self._next = nest.flatten(make_one_shot_iterator(dataset).get_next())
        self._session = None

    def begin(self):
        self.close()
        self._session = Session(graph=self._graph)

    def before_run(self, run_context):
        if self._session is None:
            self._session = Session(graph=self._graph)
        try:
            values = self._session.run(self._next)
        except errors.OutOfRangeError:
            self.close()
            raise
        return SessionRunArgs(fetches=None, feed_dict=dict(zip(self.placeholders, values)))

    def end(self, session):
        self.close()

    def close(self):
        if self._session is not None:
            self._session.close()
            self._session = None


class _IteratorInitializerHook(SessionRunHook):
    def __init__(self, iterator):
        self._iterator = iterator

    def after_create_session(self, session, coord):
        session.run(self._iterator.initializer)


def _leaf_names(structure, prefix="") -> list:
    if isinstance(structure, dict):
        return [n for k in sorted(structure) for n in _leaf_names(structure[k], f"{prefix}{k}_")]
    if isinstance(structure, tuple):
        return [n for i, item in enumerate(structure) for n in _leaf_names(item, f"{prefix}{i}_")]
    return [(prefix.rstrip("_") or "value").replace("/", "_")]


def parse_input_fn_result(result):
    """-> (features, labels or None, input hooks)."""
    hooks: list = []
    if isinstance(result, dataset_ops.Dataset):
        if result._all_captures():
            it = make_initializable_iterator(result)
            hooks.append(_IteratorInitializerHook(it))
            result = it.get_next()
        else:
            feeder = DatasetFeeder(result)
            hooks.append(feeder)
            result = feeder.structure
    if isinstance(result, (list, tuple)):
        if len(result) != 2:
            raise ValueError("input_fn should return (features, labels) as a len 2 tuple.")
        return result[0], result[1], hooks
    return result, None, hooks


def numpy_input_fn(x, y=None, batch_size=128, num_epochs=1, shuffle=None, queue_capacity=1000, num_threads=1):
    """`tf.estimator.inputs.numpy_input_fn`: an input_fn over numpy arrays (a dict of them for `x`). It returns
    a `tf.data.Dataset` of `(features, labels)` batches (TF's returns tensors fed by queue runners); the last
    batch of the last epoch may be smaller, as with TF's `dequeue_up_to`."""
    if not isinstance(shuffle, bool):
        raise ValueError("shuffle must be provided and explicitly set as boolean (it is recommended to set it as "
                         f"True for training); got {shuffle}")
    if not isinstance(x, (dict, np.ndarray)):
        raise TypeError(f"x must be a dict or array; got {type(x).__name__}")
    if isinstance(x, dict) and isinstance(y, dict) and set(x) & set(y):
        raise ValueError(f"{sorted(set(x) & set(y))} duplicate keys are found in both x and y.")

    def input_fn():
        xs = {k: np.asarray(v) for k, v in x.items()} if isinstance(x, dict) else np.asarray(x)
        lengths = {len(v) for v in (xs.values() if isinstance(xs, dict) else [xs])}
        ys = None
        if y is not None:
            ys = {k: np.asarray(v) for k, v in y.items()} if isinstance(y, dict) else np.asarray(y)
            lengths |= {len(v) for v in (ys.values() if isinstance(ys, dict) else [ys])}
        if len(lengths) != 1:
            raise ValueError("Length of tensors in x and y is mismatched. All elements in x and y must have the "
                             "same length.")
        n = lengths.pop()
        ds = dataset_ops.Dataset.from_tensor_slices((xs, ys) if ys is not None else xs)
        if shuffle:
            ds = ds.shuffle(max(1, min(n, max(queue_capacity, batch_size * 4))))
        ds = ds.repeat(num_epochs)
        return ds.batch(batch_size)

    return input_fn
