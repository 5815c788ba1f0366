"""`tf.contrib.layers` core layers: fully_connected (and its linear/relu/relu6/elu partials), bias_add,
flatten, dropout, one_hot_encoding, repeat and stack -- TF 1.15's names, defaults, scopes and variables.

fully_connected opens `variable_scope(scope or 'fully_connected', reuse=reuse)` and builds `tf.layers`'
dense inside it, its variables renamed `weights` [in, out] and `biases` [out] and made model variables.
With a `normalizer_fn` there are no biases: the normalizer (e.g. batch_norm, with `normalizer_params`)
runs on x @ weights, then `activation_fn` (default `tf.nn.relu`). `biases_initializer=None` drops the
biases too. Every layer adds its output to `outputs_collections` under its scope name.
"""
from __future__ import annotations

import functools

from ...default_graph import convert_to_tensor, name_scope
from ...ops import init_ops, math_ops, nn_impl, nn_ops
from ...ops.array_ops import one_hot
from ...ops import variable_scope as _vs
from ...layers import core as _core
from ...layers.base import float_inputs
from ..framework.arg_scope import add_arg_scope
from ..framework.variables import model_variable
from .initializers import xavier_initializer
from .utils import (CORE_RENAMES, add_weights_to_collections, collect_named_outputs, get_variable_collections,
                    model_variable_scope)

# TF's defaults, evaluated once as in TF's signatures
XAVIER = xavier_initializer()
ZEROS = init_ops.zeros_initializer()

__all__ = ["fully_connected", "linear", "relu", "relu6", "elu", "bias_add", "flatten", "dropout",
           "one_hot_encoding", "repeat", "stack"]


@add_arg_scope
def fully_connected(inputs, num_outputs, activation_fn=nn_ops.relu, normalizer_fn=None, normalizer_params=None,
                    weights_initializer=XAVIER, weights_regularizer=None,
                    biases_initializer=ZEROS, biases_regularizer=None, reuse=None,
                    variables_collections=None, outputs_collections=None, trainable=True, scope=None):
    """activation_fn(normalizer_fn(x @ weights) or x @ weights + biases); inputs of rank > 2 contract their
    last axis. Variables `<scope>/weights`, `<scope>/biases`."""
    if not isinstance(num_outputs, int):
        raise ValueError(f"num_outputs type should be one of [<class 'int'>], got {type(num_outputs)}.")
    with model_variable_scope(scope, "fully_connected", [inputs], reuse, CORE_RENAMES) as sc:
        x, in_dim = _core.dense_input(inputs)
        use_bias = bool(not normalizer_fn and biases_initializer)
        weights, biases = _core.dense_weights(in_dim, num_outputs, x.dtype.base_dtype, use_bias, weights_initializer,
                                              biases_initializer, weights_regularizer, biases_regularizer, None,
                                              None, trainable)
        outputs = _core.dense_apply(x, weights, biases, num_outputs)
        add_weights_to_collections(weights, biases, variables_collections)
        return _normalize_activate(outputs, normalizer_fn, normalizer_params, activation_fn, outputs_collections,
                                   sc.name)


def _normalize_activate(outputs, normalizer_fn, normalizer_params, activation_fn, outputs_collections, alias):
    if normalizer_fn is not None:
        outputs = normalizer_fn(outputs, **(normalizer_params or {}))
    if activation_fn is not None:
        outputs = activation_fn(outputs)
    return collect_named_outputs(outputs_collections, alias, outputs)


linear = functools.partial(fully_connected, activation_fn=None)
relu = functools.partial(fully_connected, activation_fn=nn_ops.relu)
relu6 = functools.partial(fully_connected, activation_fn=nn_ops.relu6)
elu = functools.partial(fully_connected, activation_fn=nn_ops.elu)


@add_arg_scope
def bias_add(inputs, activation_fn=None, initializer=ZEROS, regularizer=None, reuse=None,
             variables_collections=None, outputs_collections=None, trainable=True, data_format="NHWC", scope=None):
    """inputs + `<scope>/biases` (scope `BiasAdd`), over the last axis (NHWC) or axis 1 (NCHW, rank 4 only)."""
    if data_format not in ("NCHW", "NHWC"):
        raise ValueError("data_format has to be either NCHW or NHWC.")
    with _vs.variable_scope(scope, "BiasAdd", [inputs], reuse=reuse) as sc:
        x = convert_to_tensor(inputs)
        rank = x.shape.ndims
        if rank is None:
            raise ValueError("Dims of shape must be known but is None")
        if rank != 4 and data_format == "NCHW":
            raise ValueError("Data format NCHW only supports 4D Tensor")
        num_features = x.shape[1 if data_format == "NCHW" else -1]
        if num_features is None:
            raise ValueError("`C` dimension must be known but is None")
        biases = model_variable("biases", shape=[num_features], dtype=x.dtype.base_dtype, initializer=initializer,
                                regularizer=regularizer, collections=get_variable_collections(
                                    variables_collections, "biases"), trainable=trainable)
        outputs = nn_impl.bias_add(x, biases, data_format=data_format)
        if activation_fn is not None:
            outputs = activation_fn(outputs)
        return collect_named_outputs(outputs_collections, sc.name, outputs)


@add_arg_scope
def flatten(inputs, outputs_collections=None, scope=None):
    """[batch, ...] -> [batch, k] (name scope `Flatten`)."""
    with name_scope(scope, "Flatten", [inputs]) as sc:
        outputs = _core.flatten(convert_to_tensor(inputs))
        return collect_named_outputs(outputs_collections, sc, outputs)


@add_arg_scope
def dropout(inputs, keep_prob=0.5, noise_shape=None, is_training=True, outputs_collections=None, scope=None,
            seed=None):
    """Keeps each element with probability `keep_prob` (scaled by 1 / keep_prob) when `is_training` (a bool or
    a bool Tensor: note the default True), else returns the inputs (scope `Dropout`)."""
    with _vs.variable_scope(scope, "Dropout", [inputs]) as sc:
        x = float_inputs(inputs, "Dropout")
        rate = math_ops.subtract(1.0, convert_to_tensor(keep_prob, dtype=x.dtype)) \
            if hasattr(keep_prob, "op") else 1.0 - keep_prob
        outputs = _core.apply_dropout(x, rate, noise_shape, seed, is_training)
        return collect_named_outputs(outputs_collections, sc.name, outputs)


@add_arg_scope
def one_hot_encoding(labels, num_classes, on_value=1.0, off_value=0.0, outputs_collections=None, scope=None):
    """`tf.one_hot(labels, num_classes, on_value, off_value)` (int32 labels are cast to int64 first, as TF)."""
    with name_scope(scope, "OneHotEncoding", [labels, num_classes]) as sc:
        labels = convert_to_tensor(labels)
        if labels.dtype.name == "int32":
            labels = math_ops.to_int64(labels)
        outputs = one_hot(labels, num_classes, on_value=on_value, off_value=off_value)
        return collect_named_outputs(outputs_collections, sc, outputs)


def _layer_name(layer, default):
    return getattr(layer, "__name__", None) or getattr(getattr(layer, "func", None), "__name__", None) or default


def repeat(inputs, repetitions, layer, *args, **kwargs):
    """`layer` applied `repetitions` times in scope `Repeat` (or `scope`), the i-th under
    `<scope>/<scope>_<i>` (scope defaults to the layer's name)."""
    scope = kwargs.pop("scope", None)
    with _vs.variable_scope(scope, "Repeat", [inputs]):
        outputs = convert_to_tensor(inputs)
        scope = scope or _layer_name(layer, "repeat")
        for i in range(repetitions):
            kwargs["scope"] = f"{scope}_{i + 1}"
            outputs = layer(outputs, *args, **kwargs)
        return outputs


def stack(inputs, layer, stack_args, **kwargs):
    """`layer` applied once per entry of `stack_args` (its extra positional arguments) in scope `Stack`."""
    scope = kwargs.pop("scope", None)
    if not isinstance(stack_args, (list, tuple)):
        raise ValueError("stack_args need to be a list or tuple")
    with _vs.variable_scope(scope, "Stack", [inputs]):
        outputs = convert_to_tensor(inputs)
        scope = scope or _layer_name(layer, "stack")
        for i, layer_args in enumerate(stack_args):
            kwargs["scope"] = f"{scope}_{i + 1}"
            layer_args = layer_args if isinstance(layer_args, (list, tuple)) else [layer_args]
            outputs = layer(outputs, *layer_args, **kwargs)
        return outputs
