"""`Node`: one call of a Keras layer on Keras tensors (TF 1.15's keras/engine/node.py).

Calling a layer on tensors that carry `_keras_history` appends a Node to the layer's `_inbound_nodes` and to
each inbound layer's `_outbound_nodes`, and tags every output tensor with
`KerasHistory(layer, node_index, tensor_index)`. The functional `Model` walks these nodes back from its
outputs to find its layers (engine/network.py). `NodeProperties` gives a layer TF's `input`, `output`,
`input_shape`, `output_shape` and `get_*_at(node_index)` from its nodes.
"""
from __future__ import annotations

from ...ops.functional_ops import nest_flatten, nest_pack
from ..backend.tensors import int_shape


def _map(fn, structure):
    return nest_pack(structure, [fn(x) for x in nest_flatten(structure)])


class Node:
    """A call of `outbound_layer` on `input_tensors` (outputs of `inbound_layers[i]`'s node `node_indices[i]`,
    position `tensor_indices[i]`) that produced `output_tensors`; `arguments` are the call's other kwargs."""

    def __init__(self, outbound_layer, inbound_layers, node_indices, tensor_indices, input_tensors, output_tensors,
                 arguments=None):
        self.outbound_layer = outbound_layer
        self.inbound_layers = inbound_layers
        self.node_indices = node_indices
        self.tensor_indices = tensor_indices
        self.input_tensors = input_tensors
        self.output_tensors = output_tensors
        self.arguments = arguments
        self.input_shapes = _map(int_shape, input_tensors)
        self.output_shapes = _map(int_shape, output_tensors)
        for layer in nest_flatten(inbound_layers):
            if layer is not None:
                layer._outbound_nodes.append(self)
        outbound_layer._inbound_nodes.append(self)

    def iterate_inbound(self):
        """(inbound layer, node index, tensor index, input tensor) for each input."""
        return zip(nest_flatten(self.inbound_layers), nest_flatten(self.node_indices),
                   nest_flatten(self.tensor_indices), nest_flatten(self.input_tensors))

    def _get_all_node_dependencies(self):
        return [layer._inbound_nodes[node_index]
                for layer, node_index in zip(nest_flatten(self.inbound_layers), nest_flatten(self.node_indices))]

    def get_config(self):
        inbound_names = _map(lambda layer: layer.name if layer else None, self.inbound_layers)
        return {"outbound_layer": self.outbound_layer.name, "inbound_layers": inbound_names,
                "node_indices": self.node_indices, "tensor_indices": self.tensor_indices}


def _unwrap_single(values):
    return values[0] if isinstance(values, list) and len(values) == 1 else values


class NodeProperties:
    """`input`/`output`/shapes of a layer, read from its inbound nodes (mixed into `Layer`)."""

    def _get_node_attribute_at_index(self, node_index, attr, attr_name):
        if not self._inbound_nodes:
            raise RuntimeError(f"The layer has never been called and thus has no defined {attr_name}.")
        if not len(self._inbound_nodes) > node_index:
            raise ValueError(f"Asked to get {attr_name} at node {node_index}, but the layer has only "
                             f"{len(self._inbound_nodes)} inbound nodes.")
        return _unwrap_single(getattr(self._inbound_nodes[node_index], attr))

    def get_input_at(self, node_index):
        return self._get_node_attribute_at_index(node_index, "input_tensors", "input")

    def get_output_at(self, node_index):
        return self._get_node_attribute_at_index(node_index, "output_tensors", "output")

    def get_input_shape_at(self, node_index):
        return self._get_node_attribute_at_index(node_index, "input_shapes", "input shape")

    def get_output_shape_at(self, node_index):
        return self._get_node_attribute_at_index(node_index, "output_shapes", "output shape")

    def get_input_mask_at(self, node_index):
        inputs = self.get_input_at(node_index)
        return _map(lambda t: getattr(t, "_keras_mask", None), inputs)

    def get_output_mask_at(self, node_index):
        outputs = self.get_output_at(node_index)
        return _map(lambda t: getattr(t, "_keras_mask", None), outputs)

    @property
    def input(self):
        if not self._inbound_nodes:
            raise AttributeError("Layer " + self.name + " is not connected, no input to return.")
        return self._get_node_attribute_at_index(0, "input_tensors", "input")

    @property
    def output(self):
        if not self._inbound_nodes:
            raise AttributeError("Layer " + self.name + " has no inbound nodes.")
        return self._get_node_attribute_at_index(0, "output_tensors", "output")

    @property
    def input_mask(self):
        return self.get_input_mask_at(0) if len(self._inbound_nodes) == 1 else None

    @property
    def output_mask(self):
        return self.get_output_mask_at(0) if len(self._inbound_nodes) == 1 else None

    @property
    def input_shape(self):
        if not self._inbound_nodes:
            raise AttributeError("The layer has never been called and thus has no defined input shape.")
        if len({str(node.input_shapes) for node in self._inbound_nodes}) == 1:
            return self._inbound_nodes[0].input_shapes
        raise AttributeError(f'The layer "{self.name}" has multiple inbound nodes, with different input shapes. '
                             f'Hence the notion of "input shape" is ill-defined for the layer. Use '
                             f'`get_input_shape_at(node_index)` instead.')

    @property
    def output_shape(self):
        if not self._inbound_nodes:
            raise AttributeError("The layer has never been called and thus has no defined output shape.")
        if len({str(node.output_shapes) for node in self._inbound_nodes}) == 1:
            return self._inbound_nodes[0].output_shapes
        raise AttributeError(f'The layer "{self.name}" has multiple inbound nodes, with different output shapes. '
                             f'Hence the notion of "output shape" is ill-defined for the layer. Use '
                             f'`get_output_shape_at(node_index)` instead.')
