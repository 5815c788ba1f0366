"""The weight arguments Keras layers share (`kernel_initializer`, `bias_regularizer`, `activation`, ...): resolved
with the matching module's `get` when a layer is made, serialised with its `serialize` in `get_config`.

A name's last word says its kind: `*_initializer`, `*_regularizer`, `*_constraint`, `activation`.
"""
from __future__ import annotations

from .. import activations, constraints, initializers, regularizers

_MODULES = {"initializer": initializers, "regularizer": regularizers, "constraint": constraints,
            "activation": activations}


def _module(name):
    return _MODULES[name.rsplit("_", 1)[-1]]


def set_weight_args(layer, **values) -> None:
    """`layer.<name> = <kind module>.get(value)` for each argument."""
    for name, value in values.items():
        setattr(layer, name, _module(name).get(value))


def weight_args_config(layer, names) -> dict:
    """{name: <kind module>.serialize(layer.<name>)} for `get_config`."""
    return {n: _module(n).serialize(getattr(layer, n)) for n in names}
