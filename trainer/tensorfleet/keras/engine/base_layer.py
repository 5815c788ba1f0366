"""`tf.keras.layers.Layer` (TF 1.15's keras/engine/base_layer.py, graph mode).

A layer is called on tensors: `__call__` checks `input_spec`, opens the name scope `self.name` (unique per
graph like any `tf.name_scope`: the first call gets `dense`, a second `dense_1`), builds the layer on the first
call (`build(input_shape)` creates weights with `add_weight`, so they are named `dense/kernel:0`), runs
`call`, and, when the inputs are Keras tensors (they carry `_keras_history`), records a `Node` so the
functional `Model` can find the layer. Names are `to_snake_case(ClassName)` made unique per graph
(`dense`, `dense_1`, ...; engine/../backend/session.py). Losses (`add_loss`, weight regularizers, activity
regularizers) and updates (`add_update`) are kept per layer, tagged as conditional on the call's inputs
when they depend on them. Layers assigned as attributes of a layer are tracked (their weights, losses and
updates are the outer layer's too). docs/keras.md explains how to write a layer.
"""
from __future__ import annotations

import contextlib
import inspect

import numpy as np

from ... import dtypes as _dtypes
from ...default_graph import convert_to_tensor
from ...graph import Tensor
from ...ops import array_ops, math_ops
from ...ops.functional_ops import nest_flatten, nest_pack
from ...ops.state_ops import Variable
from .. import backend, constraints, initializers, regularizers
from ..utils.generic_utils import to_snake_case
from . import base_layer_utils as utils
from .input_spec import assert_input_compatibility
from .layer_losses import LossesAndUpdates
from .node import Node, NodeProperties

_ALLOWED_KWARGS = {"input_shape", "batch_input_shape", "batch_size", "weights", "activity_regularizer"}


def _map(fn, structure):
    return nest_pack(structure, [fn(x) for x in nest_flatten(structure)])


class Layer(LossesAndUpdates, NodeProperties):
    """Base class of every Keras layer; subclasses implement `build`, `call`, `compute_output_shape` and
    `get_config`."""

    def __init__(self, trainable=True, name=None, dtype=None, dynamic=False, **kwargs):
        object.__setattr__(self, "_self_setattr_tracking", False)
        for kwarg in kwargs:
            if kwarg not in _ALLOWED_KWARGS:
                raise TypeError("Keyword argument not understood:", kwarg)
        self._trainable = trainable
        self._stateful = False
        self.built = False
        self.input_spec = None
        self.supports_masking = False
        self._init_set_name(name)
        self._activity_regularizer = kwargs.pop("activity_regularizer", None)
        self._trainable_weights: list = []
        self._non_trainable_weights: list = []
        self._updates: list = []
        self._losses: list = []
        self._callable_losses: list = []
        self._callable_loss_values: dict = {}
        self._metrics: list = []
        self._layers: list = []
        self._inbound_nodes: list = []
        self._outbound_nodes: list = []
        self._dtype = None if dtype is None else _dtypes.as_dtype(dtype).name
        self._dynamic = dynamic
        params = inspect.signature(self.call).parameters
        self._call_fn_args = [n for n, p in params.items()
                              if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY, p.POSITIONAL_ONLY)]
        self._call_accepts_kwargs = any(p.kind is p.VAR_KEYWORD for p in params.values())
        self._expects_training_arg = "training" in self._call_fn_args or self._call_accepts_kwargs
        self._expects_mask_arg = "mask" in self._call_fn_args or self._call_accepts_kwargs
        if "input_shape" in kwargs or "batch_input_shape" in kwargs:
            if "batch_input_shape" in kwargs:
                batch_input_shape = tuple(kwargs["batch_input_shape"])
            else:
                batch_input_shape = (kwargs.get("batch_size"),) + tuple(kwargs["input_shape"])
            self._batch_input_shape = batch_input_shape
        self._initial_weights = kwargs.get("weights")
        object.__setattr__(self, "_self_setattr_tracking", True)

    def _init_set_name(self, name, zero_based=True):
        if not name:
            self._name = backend.unique_object_name(to_snake_case(self.__class__.__name__), zero_based=zero_based)
        else:
            self._name = name

    # -- attribute tracking ------------------------------------------------------------------------------------
    def __setattr__(self, name, value):
        if (not self.__dict__.get("_self_setattr_tracking", False) or self.__dict__.get("_is_graph_network")
                or hasattr(type(self), name)):
            object.__setattr__(self, name, value)
            return
        tracked = False
        for item in nest_flatten(value) if isinstance(value, (list, tuple, dict)) else [value]:
            if isinstance(item, Layer) and item is not self:
                tracked = True
                if not any(layer is item for layer in self._layers):
                    self._layers.append(item)
            elif isinstance(item, Variable):
                tracked = True
                weights = self._trainable_weights if item.trainable else self._non_trainable_weights
                if not any(w is item for w in weights):
                    weights.append(item)
                backend.track_variable(item)
        if tracked:  # the attribute names checkpoints track these by (keras/saving/object_graph.py)
            self.__dict__.setdefault("_tracked_attribute_names", {})[name] = None
        object.__setattr__(self, name, value)

    @contextlib.contextmanager
    def _no_tracking(self):
        previous = self.__dict__.get("_self_setattr_tracking", True)
        object.__setattr__(self, "_self_setattr_tracking", False)
        try:
            yield
        finally:
            object.__setattr__(self, "_self_setattr_tracking", previous)

    # -- the API subclasses implement --------------------------------------------------------------------------
    def build(self, input_shape):
        """Creates the weights (called once, before the first `call`, with the inputs' TensorShape(s))."""
        self.built = True

    build._is_default = True  # type: ignore[attr-defined]

    def call(self, inputs, **kwargs):
        """The layer's computation on tensors."""
        return inputs

    def compute_output_shape(self, input_shape):
        raise NotImplementedError

    def compute_mask(self, inputs, mask=None):
        if not self.supports_masking:
            if any(m is not None for m in nest_flatten(mask)):
                raise TypeError("Layer " + self.name + " does not support masking, but was passed an input_mask: "
                                + str(mask))
            return None
        return mask

    def get_config(self):
        """name, trainable, dtype (and batch_input_shape); layers with other `__init__` arguments override it."""
        config = {"name": self.name, "trainable": self.trainable}
        if hasattr(self, "_batch_input_shape"):
            config["batch_input_shape"] = self._batch_input_shape
        config["dtype"] = self.dtype
        if self.dynamic:
            config["dynamic"] = self.dynamic
        init_args = [n for n in inspect.signature(self.__init__).parameters if n not in ("args", "kwargs")]
        extra = [a for a in init_args if a not in config and a != "dynamic"]
        if extra and type(self).get_config is Layer.get_config:
            raise NotImplementedError("Layers with arguments in `__init__` must override `get_config`.")
        return config

    @classmethod
    def from_config(cls, config):
        return cls(**config)

    # -- weights -------------------------------------------------------------------------------------------------
    def add_weight(self, name=None, shape=None, dtype=None, initializer=None, regularizer=None, trainable=None,
                   constraint=None, partitioner=None, use_resource=None, synchronization=None, aggregation=None,
                   **kwargs):
        """Creates a weight variable `<name scope>/<name>:0` and records it (and its regularizer's loss)."""
        for kwarg in kwargs:
            if kwarg not in ("getter", "collections", "experimental_autocast", "caching_device"):
                raise TypeError("Unknown keyword argument:", kwarg)
        getter = kwargs.pop("getter", None) or utils.make_variable
        shape = () if shape is None else shape
        dtype = _dtypes.as_dtype(dtype or self.dtype or backend.floatx())
        initializer = initializers.get(initializer)
        regularizer = regularizers.get(regularizer)
        constraint = constraints.get(constraint)
        if trainable is None:
            trainable = True
        if initializer is None:
            if dtype.is_floating:
                initializer = initializers.glorot_uniform()
            elif dtype.is_integer or dtype == _dtypes.bool_:
                initializer = initializers.zeros()
            else:
                raise ValueError(f"An initializer for variable {name} of type {dtype.name} is required for layer "
                                 f"{self.name}")
        pending = self.__dict__.get("_deferred_restorations")
        if pending and name in pending:  # a checkpoint loaded before this weight existed (keras/saving/tf_format)
            initializer = np.asarray(pending.pop(name), dtype=dtype.as_numpy_dtype)
        variable = getter(name=name, shape=shape, dtype=dtype, initializer=initializer,
                          trainable=trainable and self.trainable, constraint=constraint, partitioner=partitioner,
                          collections=kwargs.get("collections"))
        backend.track_variable(variable)
        if regularizer is not None:
            self._handle_weight_regularization(variable.op.name, variable, regularizer)
        (self._trainable_weights if trainable else self._non_trainable_weights).append(variable)
        return variable

    add_variable = add_weight

    def _handle_weight_regularization(self, name, variable, regularizer):
        def loss_for_variable():
            with variable.graph.as_default(), variable.graph.name_scope(None), \
                    variable.graph.name_scope(name + "/Regularizer"):
                return regularizer(variable)

        self.add_loss(loss_for_variable)

    @staticmethod
    def _dedup_weights(weights):
        out = []
        for w in weights:
            if not any(w is x for x in out):
                out.append(w)
        return out

    def _gather_children_attribute(self, attribute):
        return [item for layer in self._layers for item in getattr(layer, attribute)]

    @property
    def trainable_weights(self):
        if not self.trainable:
            return []
        return self._dedup_weights(self._trainable_weights + self._gather_children_attribute("trainable_weights"))

    @property
    def non_trainable_weights(self):
        if self.trainable:
            nested = self._non_trainable_weights + self._gather_children_attribute("non_trainable_weights")
        else:
            nested = self._trainable_weights + self._non_trainable_weights + self._gather_children_attribute("weights")
        return self._dedup_weights(nested)

    @property
    def weights(self):
        """trainable_weights + non_trainable_weights."""
        return self.trainable_weights + self.non_trainable_weights

    trainable_variables = trainable_weights
    non_trainable_variables = non_trainable_weights
    variables = weights

    def get_weights(self):
        """The weights' values as numpy arrays (run in the Keras session)."""
        return backend.batch_get_value(self.weights)

    def set_weights(self, weights):
        """Assigns numpy arrays to the weights, in the order of `weights`."""
        params = self.weights
        if len(params) != len(weights):
            raise ValueError(f'You called `set_weights(weights)` on layer "{self.name}" with a  weight list of '
                             f"length {len(weights)}, but the layer was expecting {len(params)} weights. Provided "
                             f"weights: {str(weights)[:50]}...")
        pairs = []
        for p, w in zip(params, weights):
            w = np.asarray(w)
            if not p.shape.is_compatible_with(w.shape):
                raise ValueError(f"Layer weight shape {p.shape} not compatible with provided weight shape {w.shape}")
            pairs.append((p, w))
        backend.batch_set_value(pairs)

    def count_params(self):
        if not self.built:
            raise ValueError(f"You tried to call `count_params` on {self.name}, but the layer isn't built. You can "
                             f"build it manually via: `{self.name}.build(batch_input_shape)`.")
        return int(sum(np.prod(w.shape.as_list()) for w in self.weights))

    # -- calling -------------------------------------------------------------------------------------------
    def _call_arg_was_passed(self, arg_name, args, kwargs):
        return arg_name in kwargs or arg_name in dict(zip(self._call_fn_args[1:], args))

    def _get_call_arg_value(self, arg_name, args, kwargs):
        if arg_name in kwargs:
            return kwargs[arg_name]
        return dict(zip(self._call_fn_args[1:], args))[arg_name]

    def _name_scope(self):
        return self.name

    def __call__(self, inputs, *args, **kwargs):
        """Builds (first call), then calls the layer on `inputs`; records a Node for Keras tensors."""
        ctx = utils.call_context()
        if any(isinstance(x, (np.ndarray, float, int)) for x in nest_flatten(inputs)):
            inputs = _map(lambda x: convert_to_tensor(x) if isinstance(x, (np.ndarray, float, int)) else x, inputs)
        kwargs = dict(kwargs)
        mask_by_framework = False
        input_masks = self._collect_input_masks(inputs, args, kwargs)
        if self._expects_mask_arg and input_masks is not None and not self._call_arg_was_passed("mask", args,
                                                                                                 kwargs):
            mask_by_framework = True
            kwargs["mask"] = input_masks
        training_by_framework = False
        if self._call_arg_was_passed("training", args, kwargs):
            training_value = self._get_call_arg_value("training", args, kwargs)
            if not self._expects_training_arg:
                kwargs.pop("training")
        else:
            training_value = ctx.training
            if self._expects_training_arg and training_value is not None:
                kwargs["training"] = training_value
                training_by_framework = True
        ctx.frames.append(utils._CallFrame(self, inputs, training_value))
        try:
            assert_input_compatibility(self.input_spec, inputs, self.name)
            graph = backend.get_graph()
            with graph.as_default(), backend.name_scope(self._name_scope()):
                self._maybe_build(inputs)
                outputs = self.call(inputs, *args, **kwargs)
                if outputs is None:
                    raise ValueError("A layer's `call` method should return a Tensor or a list of Tensors, not "
                                     f"None (layer: {self.name}).")
                if utils.have_all_keras_metadata(inputs):
                    if training_by_framework:
                        kwargs.pop("training")
                    if mask_by_framework:
                        kwargs.pop("mask")
                    inputs, outputs = self._set_connectivity_metadata_(inputs, outputs, args, kwargs)
                self._handle_activity_regularization(inputs, outputs)
                self._set_mask_metadata(inputs, outputs, input_masks)
                if hasattr(self, "_set_inputs") and not self.inputs:
                    self._set_inputs(inputs, outputs)
        finally:
            ctx.frames.pop()
        return outputs

    apply = __call__

    def _maybe_build(self, inputs):
        if self.built:
            return
        assert_input_compatibility(self.input_spec, inputs, self.name)
        input_list = nest_flatten(inputs)
        if input_list and self._dtype is None:
            dt = getattr(input_list[0], "dtype", None)
            if dt is not None:
                self._dtype = dt.name if dt.is_floating else backend.floatx()
        input_shapes = None
        if all(hasattr(x, "shape") for x in input_list):
            input_shapes = _map(lambda x: x.shape, inputs)
        if not getattr(self.build, "_is_default", False):  # a layer that defines no `build` has nothing to build
            self.build(input_shapes)
        self.built = True
        if self._initial_weights is not None:
            self.set_weights(self._initial_weights)
            self._initial_weights = None

    def _collect_input_masks(self, inputs, args, kwargs):
        if self._call_arg_was_passed("mask", args, kwargs):
            return self._get_call_arg_value("mask", args, kwargs)
        masks = [getattr(t, "_keras_mask", None) for t in nest_flatten(inputs)]
        if all(m is None for m in masks):
            return None
        return _map(lambda t: getattr(t, "_keras_mask", None), inputs)

    def _set_mask_metadata(self, inputs, outputs, previous_mask):
        flat_outputs = nest_flatten(outputs)
        if all(getattr(x, "_keras_mask", None) is not None for x in flat_outputs):
            return
        computes_mask = self.supports_masking or type(self).compute_mask is not Layer.compute_mask
        flat_masks = [None] * len(flat_outputs)
        if computes_mask:
            output_masks = self.compute_mask(inputs, previous_mask)
            if output_masks is not None:
                flat_masks = nest_flatten(output_masks)
        for output, mask in zip(flat_outputs, flat_masks):
            if isinstance(output, Tensor):
                output._keras_mask = mask

    def _set_connectivity_metadata_(self, inputs, outputs, args, kwargs):
        input_ids = {id(x) for x in nest_flatten(inputs)}
        if any(id(x) in input_ids for x in nest_flatten(outputs)):  # outputs that are inputs get copied
            with backend.name_scope(self.name):
                outputs = _map(lambda x: array_ops.identity(x) if id(x) in input_ids else x, outputs)
        arguments = dict(zip(self._call_fn_args[1:], args))
        arguments.update(kwargs)
        self._add_inbound_node(inputs, outputs, arguments)
        return inputs, outputs

    def _add_inbound_node(self, input_tensors, output_tensors, arguments=None):
        Node(self, inbound_layers=_map(lambda t: t._keras_history.layer, input_tensors),
             node_indices=_map(lambda t: t._keras_history.node_index, input_tensors),
             tensor_indices=_map(lambda t: t._keras_history.tensor_index, input_tensors),
             input_tensors=input_tensors, output_tensors=output_tensors, arguments=arguments)
        node_index = len(self._inbound_nodes) - 1
        for i, tensor in enumerate(nest_flatten(output_tensors)):
            tensor._keras_history = utils.KerasHistory(self, node_index, i)

    def _handle_activity_regularization(self, inputs, outputs):
        if self._activity_regularizer is None:
            return
        with backend.name_scope("ActivityRegularizer"):
            for output in nest_flatten(outputs):
                activity_loss = self._activity_regularizer(output)
                batch_size = math_ops.cast(array_ops.shape(output)[0], activity_loss.dtype)
                self.add_loss(activity_loss / batch_size, inputs=inputs)

    # -- properties ------------------------------------------------------------------------------------------
    @property
    def name(self):
        return self._name

    @property
    def dtype(self):
        return self._dtype

    @property
    def dynamic(self):
        return self._dynamic

    @property
    def trainable(self):
        return self._trainable

    @trainable.setter
    def trainable(self, value):
        self._trainable = value
        for layer in self._layers:
            layer.trainable = value

    @property
    def stateful(self):
        return self._stateful

    @stateful.setter
    def stateful(self, value):
        self._stateful = value

    @property
    def activity_regularizer(self):
        return self._activity_regularizer

    @activity_regularizer.setter
    def activity_regularizer(self, regularizer):
        self._activity_regularizer = regularizer

    @property
    def inbound_nodes(self):
        return self._inbound_nodes

    @property
    def outbound_nodes(self):
        return self._outbound_nodes

    def __repr__(self):
        return f"<{type(self).__module__}.{type(self).__name__} name={self.name}>"
