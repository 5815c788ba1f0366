"""`tf.keras.models.clone_model` and `clone_and_build_model` (TF 1.15's keras/models.py): a model with the same
architecture and new weights, optionally on given input tensors, optionally compiled like the original.

- Functional: every layer re-created from its config (same names, so the same variable names in a new graph),
  the graph re-applied node by node in depth order; given input tensors that are not Keras tensors are wrapped
  in `Input(tensor=x, name='input_wrapper_for_<input name>')`.
- Sequential: the layers re-created in order, on top of an InputLayer wrapping the given tensor (or a copy of
  the original InputLayer).
- Subclassed models (only `clone_and_build_model`, which model_to_estimator uses): a new instance from
  `get_config`/`from_config`, called on the input tensors.
`clone_and_build_model(..., compile_clone=True)` compiles the clone with a new optimizer of the same config
(`optimizer_iterations` becomes its `iterations`, e.g. the global step), the loss, metrics, loss weights and
sample-weight mode of the original, and `target_tensors`.
"""
from __future__ import annotations

from ..graph import Tensor
from ..ops.functional_ops import nest_flatten
from .engine.input_layer import Input, InputLayer
from .engine.sequential import Sequential
from .engine.training import Model
from .optimizers import TFOptimizer
from .utils.generic_utils import CustomObjectScope


def _clone_layer(layer):
    return layer.__class__.from_config(layer.get_config())


def _is_keras_tensor(x):
    return isinstance(x, Tensor) and hasattr(x, "_keras_history")


def _clone_functional_model(model, input_tensors=None):
    layer_map: dict = {}
    tensor_map: dict = {}
    if input_tensors is None:
        new_inputs = []
        for layer in model._input_layers:
            x = Input(batch_shape=layer._batch_input_shape, dtype=layer.dtype, sparse=getattr(layer, "sparse", False),
                      name=layer.name)
            new_inputs.append(x)
            layer_map[layer] = x._keras_history.layer
    else:
        new_inputs = []
        for i, x in enumerate(nest_flatten(input_tensors)):
            original = model._input_layers[i]
            if not _is_keras_tensor(x):
                x = Input(tensor=x, name="input_wrapper_for_" + original.name)
            new_inputs.append(x)
            layer_map[original] = x._keras_history.layer
    if len(new_inputs) != len(model.inputs):
        raise ValueError(f"clone_model: the model has {len(model.inputs)} inputs, got {len(new_inputs)} input tensors")
    for old, new in zip(model.inputs, new_inputs):
        tensor_map[id(old)] = new
    for depth in sorted(model._nodes_by_depth, reverse=True):
        for node in model._nodes_by_depth[depth]:
            layer = node.outbound_layer
            if layer not in layer_map:
                layer_map[layer] = _clone_layer(layer)
            new_layer = layer_map[layer]
            if isinstance(new_layer, InputLayer):
                continue
            references = nest_flatten(node.input_tensors)
            if not all(id(x) in tensor_map for x in references):
                continue
            computed = [tensor_map[id(x)] for x in references]
            outputs = new_layer(computed[0] if len(computed) == 1 else computed, **(node.arguments or {}))
            for old, new in zip(nest_flatten(node.output_tensors), nest_flatten(outputs)):
                tensor_map[id(old)] = new
    outputs = [tensor_map[id(x)] for x in model.outputs]
    return Model(new_inputs, outputs if len(outputs) > 1 else outputs[0], name=model.name)


def _clone_sequential_model(model, input_tensors=None):
    if input_tensors is None:
        return Sequential(layers=[_clone_layer(layer) for layer in model._layers], name=model.name)
    layers = [_clone_layer(layer) for layer in model._layers if not isinstance(layer, InputLayer)]
    tensors = nest_flatten(input_tensors)
    if len(tensors) != 1:
        raise ValueError("To clone a `Sequential` model, we expect at most one tensor as part of `input_tensors`.")
    x = tensors[0]
    if _is_keras_tensor(x):
        origin = x._keras_history.layer
        if not isinstance(origin, InputLayer):
            raise ValueError("Cannot clone a `Sequential` model on top of a tensor that comes from a Keras layer other "
                             "than an `InputLayer`. Use the functional API instead.")
        return Sequential(layers=[origin] + layers, name=model.name)
    wrapper = Input(tensor=x, name="input_wrapper_for_" + x.op.name.replace("/", "_"))
    return Sequential(layers=[wrapper._keras_history.layer] + layers, name=model.name)


def clone_model(model, input_tensors=None, clone_function=None):
    """A new functional or Sequential model with the original's architecture and new weights."""
    if clone_function is not None:
        raise NotImplementedError("clone_model(clone_function=...) is not supported")
    if isinstance(model, Sequential):
        return _clone_sequential_model(model, input_tensors)
    if not model.__dict__.get("_is_graph_network"):
        raise ValueError(f"Expected `model` argument to be a functional `Model` instance, but got a subclass model "
                         f"instead: {model}")
    return _clone_functional_model(model, input_tensors)


def clone_and_build_model(model, input_tensors=None, target_tensors=None, custom_objects=None, compile_clone=True,
                          in_place_reset=False, optimizer_iterations=None, optimizer_config=None,
                          sample_weight_tensors=None):
    """A clone of `model` on `input_tensors`, compiled like it (see the module doc)."""
    if compile_clone and not model.optimizer:
        raise ValueError("Error when cloning model: compile_clone was set to True, but the original model has not been "
                         "compiled.")
    with CustomObjectScope(custom_objects or {}):
        if model.__dict__.get("_is_graph_network") or isinstance(model, Sequential):
            clone = clone_model(model, input_tensors=input_tensors)
        else:
            clone = model.__class__.from_config(model.get_config())
            if input_tensors is not None:
                tensors = nest_flatten(input_tensors)
                clone._set_inputs(tensors[0] if len(tensors) == 1 else tensors)
    if not compile_clone:
        return clone
    original = model.optimizer
    if isinstance(original, TFOptimizer):
        optimizer = TFOptimizer(original.optimizer, optimizer_iterations)
    else:
        config = optimizer_config or original.get_config()
        optimizer = original.__class__.from_config(config)
        if optimizer_iterations is not None:
            optimizer.iterations = optimizer_iterations
    args = model._compile_args
    extra = {"_sample_weight_tensors": sample_weight_tensors} if sample_weight_tensors is not None else {}
    clone.compile(optimizer, model.loss, metrics=_clone_metrics(args.get("metrics")),
                  loss_weights=args.get("loss_weights"), sample_weight_mode=args.get("sample_weight_mode"),
                  weighted_metrics=_clone_metrics(args.get("weighted_metrics")), target_tensors=target_tensors, **extra)
    return clone


def _clone_metrics(metrics):
    """Metric objects re-created from their configs (their variables belong to the original's graph)."""
    from .metrics import Metric
    if metrics is None:
        return None
    if isinstance(metrics, dict):
        return {k: _clone_metrics(v) for k, v in metrics.items()}
    if isinstance(metrics, list):
        return [_clone_metrics(m) for m in metrics]
    if isinstance(metrics, Metric):
        return metrics.__class__.from_config(metrics.get_config())
    return metrics
