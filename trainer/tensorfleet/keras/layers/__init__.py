"""`tf.keras.layers` (TF 1.15): the layer classes, the functional merge forms, `InputSpec`, `Input`/`InputLayer`,
`serialize`/`deserialize`.

Modules by kind: `core` (Dense, Dropout, Flatten, Reshape, Lambda, ...), `merge` (Add, Concatenate, Dot,
...). A new kind of layer gets its own module here and its names added below (docs/keras.md).
"""
from ..engine.base_layer import Layer
from ..engine.input_layer import Input, InputLayer
from ..engine.input_spec import InputSpec
from .core import (Activation, ActivityRegularization, Dense, Dropout, Flatten, Lambda, Masking, Permute,
                   RepeatVector, Reshape)
from .merge import (Add, Average, Concatenate, Dot, Maximum, Minimum, Multiply, Subtract, add, average, concatenate,
                    dot, maximum, minimum, multiply, subtract)
from .serialization import deserialize, serialize

__all__ = ["Activation", "ActivityRegularization", "Add", "Average", "Concatenate", "Dense", "Dot", "Dropout",
           "Flatten", "Input", "InputLayer", "InputSpec", "Lambda", "Layer", "Masking", "Maximum", "Minimum",
           "Multiply", "Permute", "RepeatVector", "Reshape", "Subtract", "add", "average", "concatenate",
           "deserialize", "dot", "maximum", "minimum", "multiply", "serialize", "subtract"]
