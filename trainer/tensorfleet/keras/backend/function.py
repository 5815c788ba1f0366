"""`tf.keras.backend.function` and the value helpers that run the Keras session (TF 1.15 graph mode).

`function(inputs, outputs, updates)` returns a `GraphExecutionFunction`: calling it with a list of numpy
values feeds them to `inputs` and runs `outputs` plus one grouped update op (the updates run after the first
output, as Keras's control dependency does) in ONE `Session.run`, through a callable made once per
(session, fed inputs) with `Session.make_callable` and reused for every batch. This is the training step of
`Model.fit`. Values given as symbolic tensors (TF connects them with `tensor_connection`) are evaluated by a
first run and fed: use numpy values on hot paths.
"""
from __future__ import annotations

import sys

import numpy as np

from ... import dtypes as _dtypes
from ...autodiff import gradients as _gradients
from ...graph import Tensor
from ...ops import array_ops, control_flow_ops, state_ops, string_ops
from ...ops.state_ops import Variable
from .session import get_graph, get_session


def _flatten(x):
    if isinstance(x, dict):
        return [v for _, v in sorted(x.items())]
    if isinstance(x, (list, tuple)):
        out = []
        for item in x:
            out.extend(_flatten(item))
        return out
    return [x]


def _as_tensor(x):
    return x.value() if isinstance(x, Variable) else x


class GraphExecutionFunction:
    """A compiled step: feeds `inputs`, fetches `outputs`, runs `updates` (ops, or (variable, value) pairs)."""

    def __init__(self, inputs, outputs, updates=None, name=None, **session_kwargs):
        updates = updates or []
        if not isinstance(updates, (list, tuple)):
            raise TypeError("`updates` in a Keras backend function should be a list or tuple.")
        self.inputs = _flatten(inputs)
        self._outputs_structure = outputs
        self.outputs = [_as_tensor(o) for o in _flatten(outputs)]
        with get_graph().as_default():
            deps = [self.outputs[0]] if self.outputs else []
            with get_graph().control_dependencies(deps):
                update_ops = []
                for update in updates:
                    if isinstance(update, tuple):
                        p, new_p = update
                        update_ops.append(state_ops.assign(p, new_p))
                    else:
                        update_ops.append(update)
                self.updates_op = control_flow_ops.group(*update_ops)
        self.name = name
        self.feed_dict = session_kwargs.pop("feed_dict", None)
        fetches = session_kwargs.pop("fetches", [])
        if not isinstance(fetches, list):
            fetches = [fetches]
        with get_graph().as_default():
            self.fetches = [array_ops.identity(x) for x in fetches]
        self.run_options = session_kwargs.pop("options", None)
        self.run_metadata = session_kwargs.pop("run_metadata", None)
        self.fetch_callbacks: dict = {}
        if session_kwargs:
            raise ValueError(f"Some keys in session_kwargs are not supported at this time: {session_kwargs.keys()}")
        self._callable_fn = None
        self._callable_key = None
        self._np_dtypes = [t.dtype.as_numpy_dtype for t in self.inputs]
        self._flat_outputs = isinstance(outputs, list) and not any(isinstance(o, (list, tuple, dict))
                                                                    for o in outputs)

    def _make_callable(self, session, feed_tensors):
        fetch_list = list(self.outputs) + list(self.fetches) + [self.updates_op]
        feed_list = list(feed_tensors)
        extra = sorted(self.feed_dict, key=lambda t: t.name) if self.feed_dict else []
        run = session.make_callable(fetch_list, feed_list + extra)
        self._callable_fn = run
        self._callable_key = self._key(session, feed_list)

    def _key(self, session, feed_tensors):
        """What the cached callable depends on: the session, the fed tensors and the extra fetches (callbacks
        such as TensorBoard add fetches between runs)."""
        return (session, tuple(feed_tensors), tuple(id(f) for f in self.fetches))

    def __call__(self, inputs):
        if inputs.__class__ is not list or any(isinstance(v, (list, tuple, dict)) for v in inputs):
            inputs = _flatten(inputs)
        session = get_session(inputs)
        feed_tensors, values, symbols, symbol_values = [], [], [], []
        for tensor, np_dtype, value in zip(self.inputs, self._np_dtypes, inputs):
            if value is None:
                continue
            if isinstance(value, (Tensor, Variable)):
                symbols.append(tensor)
                symbol_values.append(value)
                continue
            feed_tensors.append(tensor)
            values.append(value if value.__class__ is np.ndarray and value.dtype == np_dtype
                          else np.asarray(value, dtype=np_dtype))
        if symbols:  # evaluate the symbolic values first (TF connects them inside the same run)
            feed_tensors.extend(symbols)
            values.extend(session.run(symbol_values))
        if self.feed_dict:
            values.extend(np.asarray(self.feed_dict[k], dtype=k.dtype.as_numpy_dtype)
                          for k in sorted(self.feed_dict, key=lambda t: t.name))
        if self._callable_fn is None or self._callable_key != self._key(session, feed_tensors):
            self._make_callable(session, feed_tensors)
        fetched = self._callable_fn(*values)
        n_out = len(self.outputs)
        if self.fetches:
            self._call_fetch_callbacks(fetched[n_out:n_out + len(self.fetches)])
        if self._flat_outputs:
            return list(fetched[:n_out])
        return _pack(self._outputs_structure, fetched[:n_out])

    def _call_fetch_callbacks(self, fetches_output):
        for fetch, output in zip(self.fetches, fetches_output):
            if fetch in self.fetch_callbacks:
                self.fetch_callbacks[fetch](output)


def _pack(structure, flat):
    if isinstance(structure, dict):
        keys = sorted(structure)
        return dict(zip(keys, flat))
    if isinstance(structure, (list, tuple)):
        out, i = [], 0
        for item in structure:
            n = len(_flatten(item))
            out.append(_pack(item, flat[i:i + n]) if isinstance(item, (list, tuple, dict)) else flat[i])
            i += n
        return out if isinstance(structure, list) else tuple(out)
    return flat[0]


def function(inputs, outputs, updates=None, name=None, **kwargs):
    """`tf.keras.backend.function`: a callable running `outputs` (and `updates`) for fed `inputs`."""
    if kwargs:
        allowed = {"feed_dict", "fetches", "options", "run_metadata"}
        unknown = set(kwargs) - allowed
        if unknown:
            raise ValueError(f"Invalid argument {sorted(unknown)[0]} passed to K.function with TensorFlow backend")
    return GraphExecutionFunction(inputs, outputs, updates=updates, name=name, **kwargs)


def gradients(loss, variables):
    """d loss / d variables (`tf.gradients`, colocated with the forward ops)."""
    return _gradients(loss, variables, colocate_gradients_with_ops=True)


def get_value(x):
    """The value of a variable or tensor, run in the Keras session."""
    if isinstance(x, (np.ndarray, float, int)):
        return x
    return get_session((x,)).run(_as_tensor(x))


def eval(x):  # noqa: A001
    return get_value(x)


def batch_get_value(tensors):
    if not tensors:
        return []
    return get_session(tensors).run([_as_tensor(t) for t in tensors])


def _assign_pair(x, value):
    """(the variable's cached assign placeholder, its assign op), made once per variable and value shape."""
    cache = getattr(x, "_keras_assign", None)
    if cache is None or cache[0].shape.as_list() != list(value.shape):
        with x.graph.as_default():
            ph = array_ops.placeholder(_dtypes.as_dtype(x.dtype), shape=value.shape)
            op = state_ops.assign(x, ph)
        cache = x._keras_assign = (ph, op)
    return cache


def set_value(x, value):
    """Assigns a numpy value to a variable (one cached placeholder + Assign per variable)."""
    batch_set_value([(x, value)])


def batch_set_value(tuples):
    """Assigns several (variable, numpy value) pairs in one session run."""
    if not tuples:
        return
    feed, ops = {}, []
    for x, value in tuples:
        value = np.asarray(value, dtype=x.dtype.as_numpy_dtype)
        ph, op = _assign_pair(x, value)
        feed[ph] = value
        ops.append(op)
    get_session([x for x, _ in tuples]).run(ops, feed_dict=feed)


def print_tensor(x, message=""):
    """`x` after printing `message` and its value to stdout when it is evaluated."""
    op = string_ops.print_v2(message, x, output_stream=sys.stdout)
    with get_graph().control_dependencies([op]):
        return array_ops.identity(x)
