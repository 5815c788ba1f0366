"""`model.summary()` (TF 1.15's keras/utils/layer_utils.py `print_summary`) and `count_params`.

Sequential-like models (a single chain, or any Sequential/subclassed model) get 3 columns in 65 characters at
[.45, .85, 1.]; other functional models 4 (with `Connected to`, one row per inbound tensor) in 98 characters
at [.33, .55, .67, 1.]. Rows are separated by `_` lines, the header and the end by `=` lines, then
`Total params: 50,890` / `Trainable params` / `Non-trainable params` (trainable as compiled, when compiled).
A layer whose output shape is ambiguous (several calls, or never called on Keras tensors) shows `multiple`.
"""
from __future__ import annotations

import numpy as np

from ...ops.functional_ops import nest_flatten


def count_params(weights):
    """The number of scalars in `weights` (each variable counted once)."""
    unique = {id(w): w for w in weights}
    return int(sum(np.prod(p.shape.as_list()) for p in unique.values()))


def _sequential_like(model):
    if model.__class__.__name__ == "Sequential" or not getattr(model, "_is_graph_network", False):
        return True
    nodes = []
    for v in model._nodes_by_depth.values():
        if len(v) > 1 or (len(v) == 1 and len(nest_flatten(v[0].inbound_layers)) > 1):
            return False
        nodes += v
    for layer in model.layers:
        if sum(1 for node in layer._inbound_nodes if node in nodes) > 1:
            return False
    return True


def print_summary(model, line_length=None, positions=None, print_fn=None):
    """Prints the summary table of `model` through `print_fn` (default print), one call per line."""
    print_fn = print_fn or print
    sequential_like = _sequential_like(model)
    if sequential_like:
        line_length = line_length or 65
        positions = positions or [0.45, 0.85, 1.0]
        to_display = ["Layer (type)", "Output Shape", "Param #"]
        relevant_nodes = None
    else:
        line_length = line_length or 98
        positions = positions or [0.33, 0.55, 0.67, 1.0]
        to_display = ["Layer (type)", "Output Shape", "Param #", "Connected to"]
        relevant_nodes = [node for v in model._nodes_by_depth.values() for node in v]
    if positions[-1] <= 1:
        positions = [int(line_length * p) for p in positions]

    def print_row(fields):
        line = ""
        for i, field in enumerate(fields):
            if i > 0:
                line = line[:-1] + " "
            line += str(field)
            line = line[:positions[i]]
            line += " " * (positions[i] - len(line))
        print_fn(line)

    def output_shape_of(layer):
        try:
            return layer.output_shape
        except AttributeError:
            return "multiple"

    def layer_row(layer):
        fields = [layer.name + " (" + layer.__class__.__name__ + ")", output_shape_of(layer), layer.count_params()]
        if sequential_like:
            print_row(fields)
            return
        connections = []
        for node in layer._inbound_nodes:
            if relevant_nodes and node not in relevant_nodes:
                continue
            for inbound_layer, node_index, tensor_index, _ in node.iterate_inbound():
                connections.append(f"{inbound_layer.name}[{node_index}][{tensor_index}]")
        print_row(fields + [connections[0] if connections else ""])
        for connection in connections[1:]:
            print_row(["", "", "", connection])

    print_fn(f'Model: "{model.name}"')
    print_fn("_" * line_length)
    print_row(to_display)
    print_fn("=" * line_length)
    layers = model.layers
    for i, layer in enumerate(layers):
        layer_row(layer)
        print_fn("=" * line_length if i == len(layers) - 1 else "_" * line_length)
    trainable = getattr(model, "_collected_trainable_weights", None)
    trainable_count = count_params(trainable if trainable is not None else model.trainable_weights)
    non_trainable_count = count_params(model.non_trainable_weights)
    print_fn(f"Total params: {trainable_count + non_trainable_count:,}")
    print_fn(f"Trainable params: {trainable_count:,}")
    print_fn(f"Non-trainable params: {non_trainable_count:,}")
    print_fn("_" * line_length)
