"""`fit`/`evaluate`/`predict` on a `tf.data.Dataset` in graph mode, with one session run per step.

TF 1.15 feeds the iterator's `get_next()` tensors into the model's placeholders inside the same run
(`tensor_connection` of a session callable). Tensorfleet instead applies the model to the `get_next()`
tensors once per (dataset, mode) — the layers' weights are shared, so it is the same model — and builds the
loss, metrics (the compiled metric objects) and optimizer updates on those outputs: each step is one run of
that function, with no feed but the learning phase. Elements are `(x, y)` or `(x, y, sample_weight)` (x: a
tensor, a tuple/list in input order, or a dict by input name; y likewise by output); `predict` also accepts
a dataset of `x` alone. The iterator is initialisable: re-initialised at each epoch when the number of
steps is not given (the epoch ends at OutOfRange).
"""
from __future__ import annotations

from ...data.cache_dataset import CacheDataset
from ...data.dataset_ops import TensorSliceDataset
from ...data.iterator_ops import make_initializable_iterator
from ...data.prefetch import PrefetchDataset
from ...data.structure import flatten
from ...data.transformations import (BatchDataset, MapDataset, RepeatDataset, ShuffleDataset, SkipDataset,
                                     TakeDataset)
from ...graph import Tensor
from ...ops import array_ops
from ...ops.functional_ops import nest_flatten
from .. import backend as K
from ..callbacks.base import ModeKeys
from . import training_compile as tc


INFINITE, UNKNOWN = -1, -2


def _static_int(v):
    return v if isinstance(v, int) else None


def cardinality(dataset):
    """The number of elements when it can be told without running (TF's `cardinality`): from_tensor_slices of
    arrays, then map/shuffle/prefetch/cache (same), batch, repeat, take, skip; INFINITE for a bare `repeat()`;
    UNKNOWN otherwise."""
    if isinstance(dataset, TensorSliceDataset):
        dims = {c.shape[0] if not isinstance(c, Tensor) else c.shape.as_list()[0] if c.shape.ndims else None
                for c in flatten(dataset._components)}
        return dims.pop() if len(dims) == 1 and None not in dims else UNKNOWN
    if isinstance(dataset, (MapDataset, ShuffleDataset, PrefetchDataset, CacheDataset)):
        return cardinality(dataset._input)
    if isinstance(dataset, BatchDataset):
        n, b = cardinality(dataset._input), _static_int(dataset._n)
        if n < 0 or b is None:
            return n if n < 0 else UNKNOWN
        return n // b if dataset._drop else -(-n // b)
    if isinstance(dataset, RepeatDataset):
        n, times = cardinality(dataset._input), _static_int(dataset._times)
        if times is None:
            return UNKNOWN
        if times < 0:
            return 0 if n == 0 else (INFINITE if n != UNKNOWN else UNKNOWN)
        return n * times if n >= 0 else n
    if isinstance(dataset, TakeDataset):
        n, k = cardinality(dataset._input), _static_int(dataset._n)
        if k is None:
            return UNKNOWN
        if k < 0:
            return n
        return k if n == INFINITE else (UNKNOWN if n == UNKNOWN else min(n, k))
    if isinstance(dataset, SkipDataset):
        n, k = cardinality(dataset._input), _static_int(dataset._n)
        if k is None or n == UNKNOWN:
            return UNKNOWN
        if n == INFINITE:
            return INFINITE
        return 0 if k < 0 else max(n - k, 0)
    return UNKNOWN


def infer_steps(dataset, steps, epochs=1, steps_name="steps"):
    """TF 1.15's `infer_steps_for_dataset`: the dataset's size when `steps` is None (None if unknown); errors
    for an infinite dataset without steps and for more steps than the dataset has."""
    size = cardinality(dataset)
    if size == INFINITE and steps is None:
        raise ValueError(f"When passing an infinitely repeating dataset, you must specify the `{steps_name}` "
                         f"argument.")
    if size >= 0 and steps is not None and steps * epochs > size:
        if epochs > 1:
            raise ValueError(f"The dataset you passed contains {size} batches, but you passed `epochs={epochs}` and "
                             f"`{steps_name}={steps}`, which is a total of {steps * epochs} steps. We cannot draw "
                             f"that many steps from this dataset. We suggest to set `{steps_name}={size // epochs}`.")
        raise ValueError(f"The dataset you passed contains {size} batches, but you passed `{steps_name}={steps}`. We "
                         f"cannot draw that many steps from this dataset. We suggest to set `{steps_name}={size}`.")
    if steps is None:
        return size if size >= 0 else None
    return steps


def _by_names(value, names, what):
    if isinstance(value, dict):
        missing = [n for n in names if n not in value]
        if missing:
            raise ValueError(f"The dataset's {what} dict has no entry for {missing} (expected keys: {names})")
        return [value[n] for n in names]
    flat = nest_flatten(value)
    if len(flat) != len(names):
        raise ValueError(f"The dataset gives {len(flat)} {what} tensor(s), but the model expects {len(names)} "
                         f"({names})")
    return flat


class DatasetFeed:
    """A dataset bound to a model: its iterator and the per-mode step functions built on its tensors."""

    def __init__(self, model, dataset):
        self.model, self.dataset = model, dataset
        self.steps = None
        self._functions: dict = {}
        with K.get_graph().as_default():
            self.iterator = make_initializable_iterator(dataset)
            element = self.iterator.get_next()
        if isinstance(element, (tuple, list)):
            if len(element) not in (2, 3):
                raise ValueError("Please provide model inputs as a list or tuple of 2 or 3 elements: (input, target) "
                                 f"or (input, target, sample_weights) Received {element}")
            self.x, self.y = element[0], element[1]
            self.sample_weights = element[2] if len(element) == 3 else None
        else:
            self.x, self.y, self.sample_weights = element, None, None
        if not model.inputs:
            model._set_inputs(self._placeholders_like(self.x))
        if model._is_compiled and not model._endpoints:
            model._compile_endpoints()

    @staticmethod
    def _placeholders_like(x):
        def ph(t):
            return K.placeholder(shape=(None,) + tuple(t.shape.as_list()[1:]), dtype=t.dtype)
        if isinstance(x, dict):
            return {k: ph(v) for k, v in x.items()}
        if isinstance(x, (tuple, list)):
            return [ph(t) for t in x]
        return ph(x)

    def initialize(self):
        K.get_session().run(self.iterator.initializer)

    def _model_inputs(self):
        model = self.model
        if isinstance(self.x, dict):
            return {n: self.x[n] for n in model.input_names} if model._is_graph_network else self.x
        flat = _by_names(self.x, model.input_names, "input")
        return flat[0] if len(flat) == 1 else flat

    def _targets(self, outputs):
        model = self.model
        names = [e.output_name for e in model._endpoints if e.loss_fn is not None]
        if self.y is None:
            raise ValueError("The dataset gives no targets: its elements must be (inputs, targets) to train or "
                             "evaluate.")
        flat_y = iter(_by_names(self.y, names, "target"))
        flat_w = iter(_by_names(self.sample_weights, names, "sample weight")) if self.sample_weights is not None \
            else None
        targets, weights = [], []
        for e, out in zip(model._endpoints, outputs):
            if e.loss_fn is None:
                targets.append(None)
                weights.append(None)
                continue
            y = next(flat_y)
            if y.shape.ndims == 1 and out.shape.ndims is not None and out.shape.ndims != 1:
                y = array_ops.expand_dims(y, 1)
            targets.append(y)
            weights.append(next(flat_w) if flat_w is not None else None)
        return targets, weights

    def function(self, mode):
        """The step function of `mode` (built on first use): no arguments, one session run."""
        if mode not in self._functions:
            self._functions[mode] = self._build(mode)
        return self._functions[mode]

    def _build(self, mode):
        model = self.model
        phase = model._learning_phase_feed() if mode == ModeKeys.TRAIN else []
        with K.get_graph().as_default():
            x = self._model_inputs()
            outputs = nest_flatten(model(x))
            if mode == ModeKeys.PREDICT:
                fn = K.function([], outputs, updates=model.state_updates)
                return lambda *_: fn([])
            targets, weights = self._targets(outputs)
            total_loss, loss_results, metric_results = tc.build_loss_and_metrics(model, outputs, targets, weights,
                                                                                 inputs=nest_flatten(x))
            fetches = [total_loss] + loss_results + metric_results
            if mode == ModeKeys.TRAIN:
                model._check_trainable_weights_consistency()
                with K.name_scope("training"):
                    updates = model.optimizer.get_updates(params=model._collected_trainable_weights, loss=total_loss)
                    updates += model.get_updates_for(None) + model.get_updates_for(nest_flatten(x))
            else:
                updates = model.state_updates
            fn = K.function(phase, fetches, updates=updates)
        values = [True] * len(phase)
        return lambda *_: fn(values)
