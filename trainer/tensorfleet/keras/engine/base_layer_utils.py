"""Helpers of `Layer` (TF 1.15's keras/engine/base_layer_utils.py): variable creation, the call context,
Keras history on tensors, and which losses/updates depend on which inputs.

- `make_variable` creates a plain `tf.Variable` named `name` in the current name scope (so a layer's weights
  are `<layer scope>/kernel:0`, also under an enclosing `tf.variable_scope`), in GLOBAL_VARIABLES and, when
  trainable, TRAINABLE_VARIABLES: a TF1 `tf.train` optimizer finds them.
- `CallContext` is the thread-local stack of layer calls: the outer call's `training` value reaches inner
  layers that were not given one (TF 1.15's priority 2).
- `KerasHistory(layer, node_index, tensor_index)` is stored on each output tensor (`tensor._keras_history`).
- A loss or update is *conditional* on inputs when it is reachable from them in the graph
  (`get_reachable_from_inputs`); `get_losses_for(None)` / `get_updates_for(None)` are the unconditional ones.
"""
from __future__ import annotations

import collections
import threading
import weakref

from ... import dtypes as _dtypes
from ...graph import Operation, Tensor
from ...ops import array_ops
from ...ops.functional_ops import nest_flatten
from ...ops.state_ops import Variable
from ...tensor_shape import TensorShape

KerasHistory = collections.namedtuple("KerasHistory", ["layer", "node_index", "tensor_index"])

# loss tensor / update op -> True when it does not depend on any layer input
_UNCONDITIONAL: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def make_variable(name, shape=None, dtype=_dtypes.float32, initializer=None, trainable=None, caching_device=None,
                  validate_shape=True, constraint=None, use_resource=None, collections=None, synchronization=None,
                  aggregation=None, partitioner=None):
    """A `tf.Variable` initialised by `initializer(shape, dtype=dtype)` (or by `initializer` as a value)."""
    if partitioner is not None:
        raise NotImplementedError(f"Partitioned Keras weights are not supported (weight {name!r})")
    dtype = _dtypes.as_dtype(dtype)
    if initializer is not None and not callable(initializer):
        init_val, var_dtype = initializer, None
    else:
        if isinstance(initializer, type):
            initializer = initializer(dtype=dtype)

        def init_val():
            return initializer(shape, dtype=dtype)
        var_dtype = dtype
    return Variable(initial_value=init_val, name=name, trainable=bool(trainable), dtype=var_dtype,
                    validate_shape=validate_shape, constraint=constraint, collections=collections,
                    shape=TensorShape(shape) if shape is not None else None)


# -- the call context ---------------------------------------------------------------------------------------
class _CallFrame:
    __slots__ = ("layer", "inputs", "training")

    def __init__(self, layer, inputs, training):
        self.layer, self.inputs, self.training = layer, inputs, training


class CallContext(threading.local):
    """The stack of Layer.__call__s in progress on this thread."""

    def __init__(self):
        self.frames: list = []

    @property
    def in_call(self):
        return bool(self.frames)

    @property
    def training(self):
        for frame in reversed(self.frames):
            if frame.training is not None:
                return frame.training
        return None

    @property
    def inputs(self):
        return self.frames[-1].inputs if self.frames else None

    @property
    def layer(self):
        return self.frames[-1].layer if self.frames else None


_CALL_CONTEXT = CallContext()


def call_context():
    return _CALL_CONTEXT


# -- Keras history --------------------------------------------------------------------------------------------
def have_all_keras_metadata(tensors):
    return all(hasattr(x, "_keras_history") for x in nest_flatten(tensors))


def is_symbolic(x):
    return isinstance(x, (Tensor, Variable))


def generate_placeholders_from_shape(shape):
    return array_ops.placeholder(_dtypes.float32, shape=shape)


# -- conditional losses and updates ----------------------------------------------------------------------------
def _op_of(x):
    if isinstance(x, Operation):
        return x
    if isinstance(x, Variable):
        return x.op
    return getattr(x, "op", None)


def get_reachable_from_inputs(inputs, targets=None):
    """Tensors and ops reachable from `inputs` (tensors, ops or variables) through consumers; stops early once
    every target is found."""
    reachable = set()
    queue = collections.deque()
    for x in nest_flatten(inputs):
        if isinstance(x, Variable):
            x = x.value()
        if isinstance(x, (Tensor, Operation)):
            queue.append(x)
    targets = set(targets) if targets is not None else None
    while queue:
        x = queue.popleft()
        if x in reachable:
            continue
        reachable.add(x)
        if targets is not None and targets <= reachable:
            break
        if isinstance(x, Tensor):
            queue.extend(x.consumers())
        else:
            queue.extend(x.outputs)
    return reachable


def set_unconditional(item, flag):
    _UNCONDITIONAL[item] = bool(flag)


def mark_conditional(item, relevant_inputs):
    """Records whether an update op depends on `relevant_inputs` (None or empty: unconditional)."""
    if relevant_inputs is None or not nest_flatten(relevant_inputs):
        _UNCONDITIONAL[item] = True
        return
    key = item if isinstance(item, (Tensor, Operation)) else _op_of(item)
    _UNCONDITIONAL[item] = key not in get_reachable_from_inputs(relevant_inputs, [key])


def is_unconditional(item):
    return _UNCONDITIONAL.get(item, True)


def filter_for_inputs(items, inputs):
    """The unconditional items (inputs None) or those reachable from `inputs`."""
    if inputs is None:
        return [x for x in items if is_unconditional(x)]
    conditional = [x for x in items if not is_unconditional(x)]
    if not conditional:
        return []
    keys = {x: (x if isinstance(x, (Tensor, Operation)) else _op_of(x)) for x in conditional}
    reachable = get_reachable_from_inputs(inputs, list(keys.values()))
    return [x for x in conditional if keys[x] in reachable]
