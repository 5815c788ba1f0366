"""The layer graph of a functional model (TF 1.15's `_map_graph_network` and `run_internal_graph`).

`map_graph_network(inputs, outputs)` walks the Nodes back from the outputs (`_keras_history`) and returns
the nodes and layers by depth (inputs deepest); it raises on cycles, on an output that cannot be computed
from the inputs ("Graph disconnected") and on duplicate layer names. `run_internal_graph` re-applies the
layers, deepest first, to new input tensors: calling a functional model on new tensors builds a new copy
of its ops that shares the weights.
"""
from __future__ import annotations

import collections

from ...ops.functional_ops import nest_flatten, nest_pack


def make_node_key(layer_name, node_index):
    return f"{layer_name}_ib-{node_index}"


def map_graph_network(inputs, outputs):
    """(network node keys, {depth: nodes}, layers in Keras's order, {depth: layers})."""
    network_nodes: set = set()
    nodes_depths: dict = {}
    layers_depths: dict = {}
    layer_indices: dict = {}
    nodes_in_decreasing_depth: list = []
    finished, in_progress = set(), set()

    def build_map(tensor, layer, node_index):
        node = layer._inbound_nodes[node_index]
        if node in in_progress:
            raise ValueError(f'The tensor {tensor} at layer "{layer.name}" is part of a cycle.')
        if node in finished:
            return
        network_nodes.add(make_node_key(layer.name, node_index))
        layer_indices.setdefault(layer, len(layer_indices))
        in_progress.add(node)
        for in_layer, in_node_index, _, in_tensor in node.iterate_inbound():
            build_map(in_tensor, in_layer, in_node_index)
        finished.add(node)
        in_progress.remove(node)
        nodes_in_decreasing_depth.append(node)

    for x in outputs:
        layer, node_index, _ = x._keras_history
        build_map(x, layer, node_index)

    for node in reversed(nodes_in_decreasing_depth):
        depth = nodes_depths.setdefault(node, 0)
        depth = max(depth, layers_depths.get(node.outbound_layer, 0))
        layers_depths[node.outbound_layer] = depth
        nodes_depths[node] = depth
        for dep in node._get_all_node_dependencies():
            nodes_depths[dep] = max(depth + 1, nodes_depths.get(dep, 0))

    for x in inputs:  # inputs not connected to the outputs still belong to the network
        layer = x._keras_history[0]
        if layer not in layers_depths:
            layers_depths[layer] = 0
            layer_indices[layer] = -1
            nodes_depths[layer._inbound_nodes[0]] = 0
            network_nodes.add(make_node_key(layer.name, 0))

    nodes_by_depth: dict = collections.defaultdict(list)
    for node, depth in nodes_depths.items():
        nodes_by_depth[depth].append(node)
    layers_by_depth: dict = collections.defaultdict(list)
    for layer, depth in layers_depths.items():
        layers_by_depth[depth].append(layer)

    layers = []
    for depth in sorted(layers_by_depth, reverse=True):
        layers.extend(sorted(layers_by_depth[depth], key=lambda x: layer_indices[x]))

    _check_computable(inputs, nodes_by_depth)
    _check_unique_names(layers)
    return network_nodes, nodes_by_depth, layers, layers_by_depth


def _check_computable(inputs, nodes_by_depth):
    computable = {id(x) for x in inputs}
    done_layers: list = []
    for depth in sorted(nodes_by_depth, reverse=True):
        for node in nodes_by_depth[depth]:
            layer = node.outbound_layer
            for x in nest_flatten(node.input_tensors):
                if id(x) not in computable:
                    raise ValueError(f'Graph disconnected: cannot obtain value for tensor {x} at layer '
                                     f'"{layer.name}". The following previous layers were accessed without issue: '
                                     f"{done_layers}")
            for x in nest_flatten(node.output_tensors):
                computable.add(id(x))
            done_layers.append(layer.name)


def _check_unique_names(layers):
    names = [layer.name for layer in layers]
    for name in names:
        if names.count(name) != 1:
            raise ValueError(f'The name "{name}" is used {names.count(name)} times in the model. All layer names '
                             f"should be unique.")


def get_source_inputs(tensor, layer=None, node_index=None):
    """The Input tensors `tensor` was computed from (following `_keras_history`)."""
    if not hasattr(tensor, "_keras_history"):
        return tensor
    if layer is None or node_index:
        layer, node_index, _ = tensor._keras_history
    if not layer._inbound_nodes:
        return [tensor]
    node = layer._inbound_nodes[node_index]
    if not node.inbound_layers:
        return nest_flatten(node.input_tensors)
    sources: list = []
    for in_layer, in_node_index, _, in_tensor in node.iterate_inbound():
        for x in get_source_inputs(in_tensor, in_layer, in_node_index):
            if all(x is not t for t in sources):
                sources.append(x)
    return sources


def run_internal_graph(network, inputs, training=None, mask=None):
    """The network's outputs recomputed from `inputs` (flat, in `network.inputs` order)."""
    masks = [None] * len(inputs) if mask is None else nest_flatten(mask)
    computed: dict = {}
    for x, y, m in zip(network.inputs, inputs, masks):
        if m is not None:
            y._keras_mask = m
        if hasattr(y, "set_shape") and y is not x:
            try:
                y.set_shape(y.shape.merge_with(x.shape))
            except ValueError:
                pass
        computed[id(x)] = y
    learning_phases = network._learning_phase_tensors()
    for depth in sorted(network._nodes_by_depth, reverse=True)[1:]:  # the deepest level holds the InputLayers
        for node in network._nodes_by_depth[depth]:
            layer = node.outbound_layer
            flat_in = nest_flatten(node.input_tensors)
            if not all(id(t) in computed for t in flat_in):
                continue
            layer_inputs = nest_pack(node.input_tensors, [computed[id(t)] for t in flat_in])
            kwargs = dict(node.arguments) if node.arguments else {}
            if "training" in network._layer_call_argspecs[layer]:
                kwargs.setdefault("training", training)
                if any(kwargs["training"] is p for p in learning_phases):
                    kwargs["training"] = training
            kwargs = {k: (computed.get(id(v), v) if hasattr(v, "_keras_history") else v) for k, v in kwargs.items()}
            outputs = layer(layer_inputs, **kwargs)
            for x, y in zip(nest_flatten(node.output_tensors), nest_flatten(outputs)):
                computed[id(x)] = y
    for x in network.outputs:
        if id(x) not in computed:
            raise ValueError(f"Could not compute output {x}")
    return nest_pack(network._nested_outputs, [computed[id(x)] for x in network.outputs])
