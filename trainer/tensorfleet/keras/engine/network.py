"""`Network`: a layer made of layers, the base of `tf.keras.Model` (TF 1.15's keras/engine/network.py).

Two kinds, chosen by the constructor's arguments as in Keras:
- functional (`Model(inputs, outputs)`): the layers are found by walking `_keras_history` back from the
  outputs (network_graph.py); calling the model on new tensors re-applies them (shared weights); the
  model gets a node of its own, so it can be used as a layer of another model.
- subclassed (`class M(Model)` with a `call`): layers assigned as attributes are tracked (`_layers`), and
  its weights, losses and updates are theirs; weights are created on the first call, inside the model's
  name scope (`my_model/dense/kernel:0`).
"""
from __future__ import annotations

import inspect

from ... import tf_logging as logging
from ...graph import Tensor
from ...ops.functional_ops import nest_flatten
from .. import backend
from ..backend.session import _GRAPH_LEARNING_PHASES
from . import base_layer_utils as utils
from .base_layer import Layer
from .network_graph import map_graph_network, run_internal_graph
from .node import Node


def _is_functional_call(args, kwargs):
    return len(args) == 2 or (len(args) == 1 and "outputs" in kwargs) or ("inputs" in kwargs and "outputs" in kwargs)


class Network(Layer):
    """A graph of layers (functional) or a layer with a user-written `call` over tracked sublayers."""

    def __init__(self, *args, **kwargs):
        if _is_functional_call(args, kwargs):
            self._init_graph_network(*args, **kwargs)
        else:
            self._init_subclassed_network(**kwargs)

    def _base_init(self, name=None, **kwargs):
        for k in kwargs:
            if k not in ("trainable", "dtype", "dynamic", "autocast"):
                raise TypeError("Keyword argument not understood:", k)
        object.__setattr__(self, "_is_graph_network", False)
        Layer.__init__(self, trainable=kwargs.get("trainable", True), name=name, dtype=kwargs.get("dtype"),
                       dynamic=kwargs.get("dynamic", False))
        with self._no_tracking():
            if not hasattr(self, "optimizer"):
                self.optimizer = None
            self._graph = backend.get_graph()
            self.inputs, self.outputs = [], []
            self._input_spec_value = None

    def _init_subclassed_network(self, name=None, **kwargs):
        self._base_init(name=name, **kwargs)
        self.built = False

    def _init_graph_network(self, inputs, outputs, name=None, **kwargs):
        for k in kwargs:
            if k != "trainable":
                raise TypeError("Functional models may only specify `name` and `trainable` keyword arguments "
                                f"during initialization. Got an unexpected argument: {k}")
        if isinstance(inputs, list) and len(nest_flatten(inputs)) == 1:
            inputs = inputs[0]
        if isinstance(outputs, list) and len(nest_flatten(outputs)) == 1:
            outputs = outputs[0]
        self._base_init(name=name, **kwargs)
        with self._no_tracking():
            self._nested_inputs, self._nested_outputs = inputs, outputs
            self.inputs, self.outputs = nest_flatten(inputs), nest_flatten(outputs)
        object.__setattr__(self, "_is_graph_network", True)
        self._validate_graph_inputs_and_outputs()
        self.built = True
        self._expects_training_arg = True
        self._expects_mask_arg = True
        self._input_layers = [x._keras_history.layer for x in self.inputs]
        self._output_layers = [x._keras_history.layer for x in self.outputs]
        self._input_coordinates = [tuple(x._keras_history) for x in self.inputs]
        self._output_coordinates = [tuple(x._keras_history) for x in self.outputs]
        self._network_nodes, self._nodes_by_depth, self._layers, _ = map_graph_network(self.inputs, self.outputs)
        self._layer_call_argspecs = {layer: layer._call_fn_args for layer in self._layers}
        Node(self, inbound_layers=[], node_indices=[], tensor_indices=[], input_tensors=self._nested_inputs,
             output_tensors=self._nested_outputs)
        self._set_output_names()
        self.input_names = [layer.name for layer in self._input_layers]
        self._feed_input_names, self._feed_inputs, self._feed_input_shapes = [], [], []
        for layer in self._input_layers:
            if getattr(layer, "is_placeholder", False):
                self._feed_input_names.append(layer.name)
                self._feed_input_shapes.append(layer._batch_input_shape)
                self._feed_inputs.append(layer.input)

    def _validate_graph_inputs_and_outputs(self):
        cls_name = self.__class__.__name__
        if len({id(x) for x in self.inputs}) != len(self.inputs):
            raise ValueError("The list of inputs passed to the model is redundant. All inputs should only appear "
                             f"once. Found: {self.inputs}")
        for x in self.inputs:
            if not hasattr(x, "_keras_history"):
                raise ValueError(f"Input tensors to a {cls_name} must come from `tf.keras.Input`. Received: {x} "
                                 "(missing previous layer metadata).")
            layer = x._keras_history.layer
            if len(layer._inbound_nodes) > 1 or (layer._inbound_nodes and layer._inbound_nodes[0].inbound_layers):
                logging.warning(f"{cls_name} inputs must come from `tf.keras.Input` (thus holding past layer "
                                f'metadata), they cannot be the output of a previous non-Input layer. Here, a tensor '
                                f'specified as input to "{self.name}" was not an Input tensor, it was generated by '
                                f"layer {layer.name}.")
        if len({id(x) for x in self.outputs}) != len(self.outputs):
            logging.warning(f"The list of outputs passed to the model is redundant: {self.outputs}")
        for x in self.outputs:
            if not hasattr(x, "_keras_history"):
                raise ValueError(f"Output tensors to a {cls_name} must be the output of a TensorFlow `Layer` (thus "
                                 f"holding past layer metadata). Found: {x}. (tensorfleet does not wrap raw TF ops "
                                 f"between Keras layers: use a `tf.keras.layers.Lambda` layer.)")

    def _set_output_names(self):
        names, seen, counts = [], set(), {}
        for layer in self._output_layers:
            proposal = layer.name
            while proposal in seen:
                count = counts.get(layer.name, 1)
                proposal = f"{layer.name}_{count}"
                counts[layer.name] = count + 1
            seen.add(proposal)
            names.append(proposal)
        self.output_names = names

    def _learning_phase_tensors(self):
        return [p for p in list(_GRAPH_LEARNING_PHASES.values()) if isinstance(p, Tensor)]

    # -- layers and weights ---------------------------------------------------------------------------
    @property
    def layers(self):
        return list(self._layers)

    def get_layer(self, name=None, index=None):
        """A layer by name or by index in `layers`."""
        if index is not None:
            if len(self.layers) <= index:
                raise ValueError(f"Was asked to retrieve layer at index {index} but model only has "
                                 f"{len(self.layers)} layers.")
            return self.layers[index]
        if not name:
            raise ValueError("Provide either a layer name or layer index.")
        for layer in self.layers:
            if layer.name == name:
                return layer
        raise ValueError("No such layer: " + name)

    @property
    def weights(self):
        """Each layer's weights in layer order, then the model's own."""
        weights = []
        for layer in self._layers:
            weights += layer.weights
        return self._dedup_weights(weights + self._trainable_weights + self._non_trainable_weights)

    variables = weights

    @property
    def input_spec(self):
        if self.__dict__.get("_is_graph_network"):
            return [None] * len(self._input_layers) if len(self._input_layers) > 1 else None
        return self.__dict__.get("_input_spec_value")

    @input_spec.setter
    def input_spec(self, value):
        object.__setattr__(self, "_input_spec_value", value)

    def _relevant_inputs(self):
        relevant = []
        for node in self._inbound_nodes:
            relevant += nest_flatten(node.input_tensors)
        return relevant or None

    @property
    def losses(self):
        """The model's own losses, its layers' unconditional ones and those depending on its inputs."""
        all_losses = super().losses
        if not self._is_graph_network:
            return all_losses
        unconditional = [x for x in all_losses if utils.is_unconditional(x)]
        conditional = utils.filter_for_inputs(all_losses, self._relevant_inputs()) if self._relevant_inputs() else []
        return self._dedup_weights(conditional + unconditional)

    @property
    def updates(self):
        if not self.trainable and not self.stateful:
            return []
        all_updates = super().updates
        if not self._is_graph_network:
            return all_updates
        unconditional = [x for x in all_updates if utils.is_unconditional(x)]
        relevant = self._relevant_inputs()
        conditional = utils.filter_for_inputs(all_updates, relevant) if relevant else []
        return self._dedup_weights(conditional + unconditional)

    def get_losses_for(self, inputs):
        """Unconditional losses (inputs None), or the losses of every layer that depend on `inputs`."""
        return utils.filter_for_inputs(Layer.losses.fget(self), inputs)

    def get_updates_for(self, inputs):
        if not self.trainable and not self.stateful:
            return []
        return utils.filter_for_inputs(Layer.updates.fget(self), inputs)

    @property
    def stateful(self):
        return any(getattr(layer, "stateful", False) for layer in self.layers)

    @stateful.setter
    def stateful(self, value):
        self._stateful = value  # a model is stateful when one of its layers is (TF's Network.stateful)

    def reset_states(self):
        """Resets the states of the stateful layers (RNNs with `stateful=True`)."""
        for layer in self.layers:
            if hasattr(layer, "reset_states") and getattr(layer, "stateful", False):
                layer.reset_states()

    @property
    def state_updates(self):
        return [u for layer in self.layers if getattr(layer, "stateful", False) for u in layer.updates]

    def count_params(self):
        if not self.built:
            raise ValueError("This model has not yet been built. Build the model first by calling `build()` or "
                             "calling `fit()` with some data, or specify an `input_shape` argument in the first "
                             "layer(s) for automatic build.")
        return int(sum(w.shape.num_elements() for w in self.weights))

    # -- calling ----------------------------------------------------------------------------------------
    def call(self, inputs, training=None, mask=None):
        if not self._is_graph_network:
            raise NotImplementedError("When subclassing the `Model` class, you should implement a `call` method.")
        if isinstance(inputs, dict):
            names = [x._keras_history.layer.name for x in self.inputs]
            flat = [inputs[n] for n in names]
        else:
            flat = nest_flatten(inputs)
        if len(flat) != len(self.inputs):
            raise ValueError(f"Model {self.name} expects {len(self.inputs)} input(s), but it received {len(flat)} "
                             f"input tensors. Inputs received: {inputs}")
        return run_internal_graph(self, flat, training=training, mask=mask)

    def compute_output_shape(self, input_shape):
        if not self._is_graph_network:
            return super().compute_output_shape(input_shape)
        shapes = nest_flatten(input_shape) if isinstance(input_shape, list) and input_shape and \
            isinstance(input_shape[0], (list, tuple)) else [input_shape]
        known = [tuple(x.shape.as_list()) for x in self.inputs]
        if [tuple(s) for s in shapes] == known or all(
                all(a is None or b is None or a == b for a, b in zip(s, k)) for s, k in zip(shapes, known)):
            out = [tuple(x.shape.as_list()) for x in self.outputs]
            return out[0] if len(out) == 1 else out
        raise NotImplementedError(f"{self.name}.compute_output_shape: input shape {input_shape} differs from the "
                                  f"model's {known}")

    def build(self, input_shape):
        """Subclassed models: creates the weights by calling `call` on placeholders of `input_shape`."""
        if self._is_graph_network:
            self.built = True
            return
        if input_shape is None:
            raise ValueError("Input shape must be defined when calling build on a model subclass network.")
        if not isinstance(input_shape, (tuple, list)) and not hasattr(input_shape, "as_list"):
            raise ValueError("Specified input shape is not one of the valid types. Please specify a batch input "
                             "shape of type tuple or list of input shapes. User provided input type: "
                             f"{type(input_shape)}")
        if input_shape and not self.inputs:
            with backend.get_graph().as_default():
                if isinstance(input_shape, list) and all(d is None or isinstance(d, int) for d in input_shape):
                    input_shape = tuple(input_shape)
                if isinstance(input_shape, list):
                    x = [utils.generate_placeholders_from_shape(s) for s in input_shape]
                else:
                    x = utils.generate_placeholders_from_shape(input_shape)
                kwargs = {}
                params = inspect.signature(self.call).parameters
                required = [n for n, p in list(params.items())[1:] if p.default is p.empty
                            and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
                for arg in required:
                    if arg != "training":
                        raise ValueError("Currently, you cannot build your model if it has positional or keyword "
                                         "arguments that are not inputs to the model, but are required for its "
                                         "`call` method.")
                    kwargs["training"] = False
                self.call(x, **kwargs)
        self.built = True

    build._is_default = True  # type: ignore[attr-defined]

    def summary(self, line_length=None, positions=None, print_fn=None):
        """Prints the layer table, parameter counts and the model's name as Keras 1.15 does."""
        if not self.built:
            raise ValueError("This model has not yet been built. Build the model first by calling `build()` or "
                             "calling `fit()` with some data, or specify an `input_shape` argument in the first "
                             "layer(s) for automatic build.")
        from ..utils.layer_utils import print_summary
        print_summary(self, line_length=line_length, positions=positions, print_fn=print_fn)

    # -- saving (keras/saving) ------------------------------------------------------------------------------
    def save(self, filepath, overwrite=True, include_optimizer=True, save_format=None, signatures=None):
        """The whole model: HDF5 by default, a SavedModel with save_format='tf' (`tf.keras.models.save_model`)."""
        from ..saving import save_model
        save_model(self, filepath, overwrite, include_optimizer, save_format, signatures)

    def save_weights(self, filepath, overwrite=True, save_format=None):
        """The weights: HDF5 for `.h5`/`.keras`/`.hdf5` paths, else a TensorFlow object-based checkpoint."""
        from ..saving import save_weights
        save_weights(self, filepath, overwrite, save_format)

    def load_weights(self, filepath, by_name=False):
        """Loads weights saved by `save_weights` (either format; HDF5 `by_name` matches layers by name)."""
        from ..saving import load_weights
        return load_weights(self, filepath, by_name)

    def get_config(self):
        if not self._is_graph_network:
            raise NotImplementedError
        from .network_config import get_network_config
        return get_network_config(self)

    @classmethod
    def from_config(cls, config, custom_objects=None):
        from .network_config import reconstruct_from_config
        inputs, outputs, _ = reconstruct_from_config(config, custom_objects)
        return cls(inputs=inputs, outputs=outputs, name=config.get("name"))

    def to_json(self, **kwargs):
        """The model's config as JSON, as Keras writes it (class_name, config, keras_version, backend)."""
        import json
        config = {"class_name": self.__class__.__name__, "config": self.get_config(), "keras_version": "2.2.4-tf",
                  "backend": "tensorflow"}
        return json.dumps(config, default=_json_default, **kwargs)


def _json_default(obj):
    import numpy as np
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if hasattr(obj, "as_list"):
        return obj.as_list()
    if hasattr(obj, "name") and hasattr(obj, "as_numpy_dtype"):
        return obj.name
    raise TypeError(f"Not JSON Serializable: {obj!r}")
