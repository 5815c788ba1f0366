"""Helpers shared by the `tf.contrib.layers` modules (TF 1.15's contrib/layers/python/layers/utils.py and the
model-variable getter of layers.py).

- `model_variable_scope`: the layer's `variable_scope(scope, default_name, reuse=...)` whose custom getter
  makes every variable a model variable (GLOBAL_VARIABLES + MODEL_VARIABLES) and renames the core layers'
  `kernel`/`bias` to contrib's `weights`/`biases`.
- `variable_collections` / `add_variable_to_collections`: `variables_collections` is a list of collections for
  every variable, or a dict {"weights": [...], "biases": [...], "beta": [...], ...}.
- `collect_named_outputs`: adds a layer's output to `outputs_collections`, recording its alias (the layer's
  scope name). TF sets `tensor.aliases`; tensorfleet's tensors have fixed slots, so the aliases live in a
  weak map read by `convert_collection_to_dict`/`get_tensor_aliases`.
- `static_bool`: a Python bool, or the value of a constant tensor, or None when only known at run time
  (TF's utils.constant_value for `is_training`).
"""
from __future__ import annotations

import weakref
from typing import Optional

import numpy as np

from ...graph import GraphKeys, Tensor
from ...default_graph import get_collection, get_default_graph
from ...ops import variable_scope as _vs
from ...ops.shape_util import constant_value

__all__ = ["collect_named_outputs", "append_tensor_alias", "get_tensor_aliases", "convert_collection_to_dict",
           "get_variable_collections", "constant_value", "static_bool"]

_ALIASES: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()
CORE_RENAMES = {"kernel": "weights", "bias": "biases"}


def _model_variable_getter(rename):
    def getter(true_getter, name, *args, **kwargs):
        short = name.rsplit("/", 1)[-1]
        if rename and short in rename:
            name = name[:len(name) - len(short)] + rename[short]
        collections = list(kwargs.pop("collections", None) or [])
        kwargs["collections"] = list(dict.fromkeys(collections + [GraphKeys.GLOBAL_VARIABLES,
                                                                  GraphKeys.MODEL_VARIABLES]))
        return true_getter(name, *args, **kwargs)
    return getter


def model_variable_scope(scope, default_name, values, reuse=None, rename=None):
    """variable_scope(scope, default_name) whose variables are model variables (renamed per `rename`)."""
    return _vs.variable_scope(scope, default_name, values, reuse=reuse, custom_getter=_model_variable_getter(rename))


def get_variable_collections(variables_collections, name) -> Optional[list]:
    """The collections for the variable called `name`: the dict's entry, or the list itself."""
    if isinstance(variables_collections, dict):
        return variables_collections.get(name)
    return variables_collections


def add_variable_to_collections(variable, variables_collections, name) -> None:
    """Adds `variable` (or each part of a partitioned one) to its collections, once each."""
    parts = list(variable) if hasattr(variable, "_get_variable_list") else [variable]
    g = get_default_graph()
    for collection in get_variable_collections(variables_collections, name) or []:
        for var in parts:
            if var not in g.get_collection(collection):
                g.add_to_collection(collection, var)


def add_weights_to_collections(weights, biases, variables_collections) -> None:
    """A layer's `weights` (and `biases`, if any) into the collections `variables_collections` names."""
    add_variable_to_collections(weights, variables_collections, "weights")
    if biases is not None:
        add_variable_to_collections(biases, variables_collections, "biases")


def append_tensor_alias(tensor, alias: str):
    """Records `alias` (a trailing '/' dropped) as a name of `tensor`."""
    alias = alias[:-1] if alias.endswith("/") else alias
    _ALIASES.setdefault(tensor, []).append(alias)
    return tensor


def get_tensor_aliases(tensor) -> list:
    """The aliases recorded for `tensor`, else its op's name (TF's utils.get_tensor_aliases)."""
    return list(_ALIASES.get(tensor) or [tensor.op.name])


def collect_named_outputs(collections, alias, outputs):
    """Adds `outputs` to `collections` (if any) under `alias`; returns `outputs`."""
    if collections:
        append_tensor_alias(outputs, alias)
        get_default_graph().add_to_collections(collections, outputs)
    return outputs


def convert_collection_to_dict(collection, clear_collection=False) -> dict:
    """{alias: tensor} for every tensor of `collection` (slim's end_points)."""
    out = {}
    for tensor in get_collection(collection):
        for alias in get_tensor_aliases(tensor):
            out[alias] = tensor
    if clear_collection:
        get_default_graph().clear_collection(collection)
    return out


def static_bool(value) -> Optional[bool]:
    """`value` as a Python bool when known while building the graph (a bool, or a constant tensor); else None."""
    if isinstance(value, Tensor):
        known = constant_value(value)
        return None if known is None else bool(np.asarray(known))
    if hasattr(value, "_as_graph_element") or hasattr(value, "op"):  # a Variable: read at run time
        return None
    return bool(value)
