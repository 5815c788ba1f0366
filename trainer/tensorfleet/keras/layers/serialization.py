"""`tf.keras.layers.serialize` / `deserialize`: a layer as `{'class_name', 'config'}` and back, resolved against
the layer classes tensorfleet has (and Model/Sequential, for nested models) plus custom objects."""
from __future__ import annotations

from ..utils.generic_utils import deserialize_keras_object, serialize_keras_object


def _layer_table():
    from .. import layers as layers_module
    from ..engine import input_layer, sequential, training
    table = {name: getattr(layers_module, name) for name in layers_module.__all__
             if isinstance(getattr(layers_module, name), type)}
    table.update({"InputLayer": input_layer.InputLayer, "Model": training.Model,
                  "Sequential": sequential.Sequential})
    return table


def serialize(layer):
    return serialize_keras_object(layer)


def deserialize(config, custom_objects=None):
    """A new layer from `{'class_name': ..., 'config': ...}`."""
    return deserialize_keras_object(config, module_objects=_layer_table(), custom_objects=custom_objects,
                                    printable_module_name="layer")
