"""A functional model's config and its reconstruction (TF 1.15's Network.get_config / from_config).

The config lists every layer (`class_name`, `config`, `inbound_nodes`) and the `input_layers` /
`output_layers` coordinates `[layer name, node index, tensor index]`; node indices are renumbered to count
only the nodes that belong to this model. `reconstruct_from_config` re-creates the layers
(`tf.keras.layers.deserialize`) and calls them in order, re-queueing a node whose inbound node does not
exist yet (layers shared at different depths). Only the flat-list node inputs Keras itself produces are
supported (a nested structure of inputs raises).
"""
from __future__ import annotations

import copy
import json

from ... import tf_logging as logging
from ...ops.functional_ops import nest_flatten, nest_pack
from .network_graph import make_node_key


def _skips_first_node(layer):
    return getattr(layer, "_is_graph_network", False)


def _node_conversion_map(network):
    conversion = {}
    for layer in network.layers:
        kept = 1 if _skips_first_node(layer) else 0
        for index, _ in enumerate(layer._inbound_nodes):
            key = make_node_key(layer.name, index)
            if key in network._network_nodes:
                conversion[key] = kept
                kept += 1
    return conversion


def _coordinates(network, coordinates, conversion, nested):
    out = []
    for layer, node_index, tensor_index in coordinates:
        key = make_node_key(layer.name, node_index)
        if key in network._network_nodes:
            out.append([layer.name, conversion[key], tensor_index])
    if isinstance(nested, (list, tuple, dict)):
        return out if not isinstance(nested, dict) else dict(zip(sorted(nested), out))
    return out


def get_network_config(network):
    """The JSON-serialisable config of a functional model."""
    conversion = _node_conversion_map(network)
    layer_configs = []
    for layer in network.layers:
        inbound = []
        for index, node in enumerate(layer._inbound_nodes):
            if make_node_key(layer.name, index) not in network._network_nodes:
                continue
            kwargs = dict(node.arguments or {})
            try:
                json.dumps(kwargs)
            except TypeError:
                logging.warning(f"Layer {layer.name} was passed non-serializable keyword arguments: {node.arguments}. "
                                f"They will not be included in the serialized model (and thus will be missing at "
                                f"deserialization time).")
                kwargs = {}
            if node.inbound_layers:
                inbound.append([[in_layer.name, conversion.get(make_node_key(in_layer.name, node_id), 0), tensor_id,
                                 kwargs] for in_layer, node_id, tensor_id, _ in node.iterate_inbound()])
        layer_configs.append({"name": layer.name, "class_name": layer.__class__.__name__,
                              "config": layer.get_config(), "inbound_nodes": inbound})
    config = {"name": network.name, "layers": layer_configs,
              "input_layers": _coordinates(network, network._input_coordinates, conversion, network._nested_inputs),
              "output_layers": _coordinates(network, network._output_coordinates, conversion,
                                            network._nested_outputs)}
    return copy.deepcopy(config)


def reconstruct_from_config(config, custom_objects=None):
    """(input tensors, output tensors, {name: layer}) of the model the config describes."""
    from ..layers.serialization import deserialize as deserialize_layer
    created: dict = {}
    unprocessed: dict = {}

    def process_node(layer, node_data):
        tensors, kwargs = [], {}
        for entry in node_data:
            if not isinstance(entry, (list, tuple)) or len(entry) not in (3, 4):
                raise ValueError(f"Improperly formatted model config: node {entry} of layer {layer.name}")
            name, node_index, tensor_index = entry[0], entry[1], entry[2]
            kwargs = entry[3] if len(entry) == 4 else {}
            inbound = created[name]
            if len(inbound._inbound_nodes) <= node_index:
                unprocessed.setdefault(layer, []).append(node_data)
                return
            tensors.append(nest_flatten(inbound._inbound_nodes[node_index].output_tensors)[tensor_index])
        layer(tensors[0] if len(tensors) == 1 else tensors, **kwargs)

    for layer_data in config["layers"]:
        layer = deserialize_layer(layer_data, custom_objects=custom_objects)
        created[layer_data["name"]] = layer
        for node_data in layer_data["inbound_nodes"]:
            unprocessed.setdefault(layer, []).append(node_data)
    rounds = 0
    while unprocessed:
        rounds += 1
        if rounds > len(config["layers"]) + 1:
            raise ValueError("Improperly formatted model config: nodes that can never be computed: "
                             f"{sorted(layer.name for layer in unprocessed)}")
        for layer_data in config["layers"]:
            layer = created[layer_data["name"]]
            for node_data in unprocessed.pop(layer, []):
                process_node(layer, node_data)

    def tensors_of(coords):
        flat = coords.values() if isinstance(coords, dict) else coords
        if flat and not isinstance(next(iter(flat)), (list, tuple)):
            flat = [flat]
        out = [nest_flatten(created[name]._inbound_nodes[node_index].output_tensors)[tensor_index]
               for name, node_index, tensor_index in flat]
        if isinstance(coords, dict):
            return nest_pack({k: None for k in coords}, out)
        return out

    return tensors_of(config["input_layers"]), tensors_of(config["output_layers"]), created
