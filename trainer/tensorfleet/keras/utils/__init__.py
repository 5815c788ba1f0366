"""`tf.keras.utils` (TF 1.15, the parts graph-mode training uses)."""
from ..engine.network_graph import get_source_inputs
from .generic_utils import (CustomObjectScope, custom_object_scope, deserialize_keras_object, get_custom_objects,
                            serialize_keras_object)
from .np_utils import normalize, to_categorical
from .progbar import Progbar

__all__ = ["CustomObjectScope", "Progbar", "custom_object_scope", "deserialize_keras_object", "get_custom_objects",
           "get_source_inputs", "normalize", "serialize_keras_object", "to_categorical"]
