"""What an `input_fn` gives the Estimator, and `tf.estimator.inputs.numpy_input_fn`.

`build_input` calls the user's function (passing `mode`, `params`, `config` when it takes them) in a
host-side *input graph* of its own, and an `InputFeeder` runs that graph in a local session before
every step of the model's graph, feeding its values into placeholders there: the next element of a
returned `tf.data.Dataset`, or the returned `(features, labels)` tensors (a one-shot iterator's
`get_next()`, constants, ...). The model's graph therefore holds no input pipeline, so the same graph
runs on a local session and on a `grpc://` master (whose partitions cross the wire as GraphDefs, which
an iterator's Python dataset cannot). The end of the data (`OutOfRangeError` from the input graph) is
raised out of that step, which ends a MonitoredSession's `with` block cleanly, as in TF.
"""
from __future__ import annotations

import inspect

import numpy as np

from .. import errors
from ..data import dataset_ops
from ..data import structure as nest
from ..data.iterator_ops import make_one_shot_iterator
from ..default_graph import get_default_graph
from ..graph import Graph, GraphKeys, Tensor
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
    if not callable(input_fn):
        raise TypeError(f"input_fn must be callable, got {input_fn!r}")
    args = fn_args(input_fn)
    kwargs = {}
    if "mode" in args:
        kwargs["mode"] = mode
    if "params" in args:
        kwargs["params"] = params
    if "config" in args:
        kwargs["config"] = config
    return input_fn(**kwargs)


class InputFeeder(SessionRunHook):
    """Before every run of the model's graph: one run of the input graph, its values fed into placeholders."""

    def __init__(self, graph, fetches):
        self._graph, self._fetches = graph, fetches
        with get_default_graph().name_scope("input_feeder"):
            self.placeholders = [array_ops.placeholder(t.dtype, t.shape, name=_name(t)) for t in fetches]
        with graph.as_default():
            init = [op for op in (_initializer(graph, GraphKeys.GLOBAL_VARIABLES),
                                  _initializer(graph, GraphKeys.LOCAL_VARIABLES)) if op is not None]
        self._init = init
        self._session = None

    def _open(self):
        if self._session is None:
            self._session = Session(graph=self._graph)
            if self._init:
                self._session.run(self._init)
        return self._session

    def begin(self):
        self.close()

    def before_run(self, run_context):
        try:
            values = self._open().run(self._fetches)
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


def _initializer(graph, key):
    from ..ops.state_ops import variables_initializer
    variables = graph.get_collection(key)
    return variables_initializer(variables) if variables else None


def _name(t) -> str:
    return t.op.name.replace("/", "_")


def build_input(input_fn, mode, params, config):
    """-> (features, labels or None, [InputFeeder]) with features/labels in the current graph."""
    host = Graph()
    with host.as_default():
        result = call_input_fn(input_fn, mode, params, config)
        if isinstance(result, dataset_ops.Dataset):
            result = make_one_shot_iterator(result).get_next()
        if isinstance(result, list):
            result = tuple(result)
        if isinstance(result, tuple) and len(result) != 2:
            raise ValueError("input_fn should return (features, labels) as a len 2 tuple.")
        features, labels = result if isinstance(result, tuple) else (result, None)
        flat = nest.flatten((features, labels))
        leaves = [leaf if isinstance(leaf, Tensor) or leaf is None else array_ops.convert_to_tensor(np.asarray(leaf))
                  for leaf in flat]
    tensors = [t for t in leaves if t is not None]
    for t in tensors:
        if t.graph is not host:
            raise ValueError(f"input_fn returned {t.name}, a tensor of another graph: build every input tensor "
                             "inside input_fn")
    feeder = InputFeeder(host, tensors)
    it = iter(feeder.placeholders)
    model_leaves = [None if leaf is None else next(it) for leaf in leaves]
    features, labels = nest.pack_as((features, labels), model_leaves)
    return features, labels, [feeder]


def numpy_input_fn(x, y=None, batch_size=128, num_epochs=1, shuffle=None, queue_capacity=1000, num_threads=1):
    """`tf.estimator.inputs.numpy_input_fn`: an input_fn over numpy arrays (a dict of them for `x`) returning
    `(features, labels)` batch tensors (features alone without `y`), from a `tf.data` iterator where TF uses
    queue runners; the last batch of the last epoch may be smaller, as with TF's `dequeue_up_to`."""
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
        ds = ds.repeat(num_epochs).batch(batch_size)
        return make_one_shot_iterator(ds).get_next()

    return input_fn
