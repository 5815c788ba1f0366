"""`tf.keras.Sequential` (TF 1.15's keras/engine/sequential.py): a linear stack of layers.

When the first layer knows its input shape (`input_shape=`/`input_dim=`/`batch_input_shape=`, or an
`InputLayer`/`Input` tensor is added first), `add` creates an Input named `<first layer>_input` and calls each
added layer on the previous output at once, so the model is a functional graph network from the start
(weights `dense/kernel:0`). Otherwise the build is deferred: the first call (or `fit`, which makes
placeholders from the data, or `build(input_shape)`) runs the layers in order inside the model's name scope
(weights `sequential/dense/kernel:0`, as in TF 1.15). `layers` omits the auto-created InputLayer.
"""
from __future__ import annotations

from ...ops.functional_ops import nest_flatten
from ...tensor_shape import TensorShape
from .. import backend
from .base_layer import Layer
from .input_layer import Input, InputLayer
from .network_graph import get_source_inputs
from .training import Model


def _input_shape_and_dtype(layer):
    """The batch input shape and dtype the layer was declared with, looking into wrapped/nested layers."""
    while True:
        if hasattr(layer, "_batch_input_shape"):
            return layer._batch_input_shape, layer.dtype
        inner = getattr(layer, "layer", None) or (layer.layers[0] if getattr(layer, "_is_graph_network", False)
                                                  and layer.layers else None)
        if inner is None or inner is layer:
            return None, None
        layer = inner


class Sequential(Model):
    """`Sequential(layers=None, name=None)`; `add(layer)`, `pop()`."""

    def __init__(self, layers=None, name=None):
        super().__init__(name=name)
        self.supports_masking = True
        self._build_input_shape = None
        self._layer_call_argspecs: dict = {}
        if layers:
            for layer in layers:
                self.add(layer)

    @property
    def layers(self):
        layers = list(self._layers)
        if layers and isinstance(layers[0], InputLayer):
            return layers[1:]
        return layers

    def add(self, layer):
        """Appends a layer (built at once when the input shape is known)."""
        if hasattr(layer, "_keras_history"):
            origin = layer._keras_history[0]
            if isinstance(origin, InputLayer):
                layer = origin
        if not isinstance(layer, Layer):
            raise TypeError("The added layer must be an instance of class Layer. Found: " + str(layer))
        self.built = False
        set_inputs = False
        if not self._layers:
            if isinstance(layer, InputLayer):
                set_inputs = True
            else:
                batch_shape, dtype = _input_shape_and_dtype(layer)
                if batch_shape:
                    x = Input(batch_shape=batch_shape, dtype=dtype, name=layer.name + "_input")
                    layer(x)
                    set_inputs = True
            if set_inputs:
                if len(nest_flatten(layer._inbound_nodes[-1].output_tensors)) != 1:
                    raise ValueError("All layers in a Sequential model should have a single output tensor. For "
                                     "multi-output layers, use the functional API.")
                with self._no_tracking():
                    self.outputs = [nest_flatten(layer._inbound_nodes[-1].output_tensors)[0]]
                    self.inputs = get_source_inputs(self.outputs[0])
        elif self.outputs:
            output = layer(self.outputs[0])
            if len(nest_flatten(output)) != 1:
                raise TypeError("All layers in a Sequential model should have a single output tensor. For "
                                "multi-output layers, use the functional API.")
            with self._no_tracking():
                self.outputs = [output]
        if set_inputs or self._is_graph_network:
            self._rebuild_graph_network()
        else:
            self._layers.append(layer)
        self._layer_call_argspecs[layer] = layer._call_fn_args

    def _rebuild_graph_network(self):
        object.__setattr__(self, "_is_graph_network", False)
        inputs, outputs = self.inputs, self.outputs
        for layer in self._layers:  # the model's own node is re-created below
            layer._outbound_nodes = [n for n in layer._outbound_nodes if n.outbound_layer is not self]
        self._inbound_nodes = []
        self._init_graph_network(inputs, outputs, name=self.name)
        self.built = True

    def pop(self):
        """Removes the last layer."""
        if not self.layers:
            raise TypeError("There are no layers in the model.")
        self._layers.pop()
        if not self.layers:
            with self._no_tracking():
                self.outputs = None
                self.inputs = None
            if self._layers and isinstance(self._layers[0], InputLayer):
                self._layers.pop()
            object.__setattr__(self, "_is_graph_network", False)
            self.built = False
        elif self._is_graph_network:
            self.layers[-1]._outbound_nodes = []
            with self._no_tracking():
                self.outputs = [self.layers[-1].output]
            self._rebuild_graph_network()

    def build(self, input_shape=None):
        if self._is_graph_network:
            self._rebuild_graph_network()
        else:
            if input_shape is None:
                raise ValueError("You must provide an `input_shape` argument.")
            input_shape = tuple(TensorShape(input_shape).as_list())
            self._build_input_shape = input_shape
            with backend.get_graph().as_default():
                x = backend.placeholder(shape=input_shape)
                self._set_inputs(x)
        self.built = True

    build._is_default = True  # type: ignore[attr-defined]

    def call(self, inputs, training=None, mask=None):
        if self._is_graph_network:
            return super().call(inputs, training=training, mask=mask)
        outputs = inputs
        for layer in self.layers:
            kwargs = {}
            args = self._layer_call_argspecs.get(layer, layer._call_fn_args)
            if "mask" in args:
                kwargs["mask"] = mask
            if "training" in args:
                kwargs["training"] = training
            outputs = layer(inputs, **kwargs)
            inputs = outputs
            mask = getattr(outputs, "_keras_mask", None)
        return outputs

    def compute_output_shape(self, input_shape):
        shape = input_shape
        for layer in self.layers:
            shape = layer.compute_output_shape(shape)
        return shape

    def get_config(self):
        from ..layers.serialization import serialize as serialize_layer
        config = {"name": self.name, "layers": [serialize_layer(layer) for layer in self.layers]}
        if self._build_input_shape is not None:
            config["build_input_shape"] = self._build_input_shape
        return config

    @classmethod
    def from_config(cls, config, custom_objects=None):
        from ..layers.serialization import deserialize as deserialize_layer
        if "name" in config:
            name, layer_configs = config["name"], config["layers"]
            build_input_shape = config.get("build_input_shape")
        else:
            name, layer_configs, build_input_shape = None, config, None
        model = cls(name=name)
        for layer_config in layer_configs:
            model.add(deserialize_layer(layer_config, custom_objects=custom_objects))
        if not model.inputs and build_input_shape:
            model.build(build_input_shape)
        return model

    @property
    def input_spec(self):
        if self._layers and getattr(self.layers[0] if self.layers else None, "input_spec", None) is not None:
            return self.layers[0].input_spec
        return None

    @input_spec.setter
    def input_spec(self, value):
        object.__setattr__(self, "_input_spec_value", value)
