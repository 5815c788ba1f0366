"""`tf.layers`: TF1's functional layers and layer classes, on `tf.nn` and `tf.get_variable`.

Split by concept: `base` (the layer scope and variables, argument normalizers, `Layer`), `core` (dense,
flatten, dropout), `convolutional` (conv1d/2d, conv2d_transpose, separable_conv2d), `pooling`, and
`normalization` (batch_normalization). Every layer builds its variables inside `variable_scope(name or a
unique default)` with TF's variable names (`dense/kernel`, `conv2d/bias`, `batch_normalization/moving_mean`),
so `reuse=` and checkpoints line up with TF's. `tf.contrib.layers` builds on these modules.
"""
from .base import Layer
from .core import Dense, Dropout, Flatten, dense, dropout, flatten
from .convolutional import (Conv1D, Conv2D, Conv2DTranspose, SeparableConv2D, conv1d, conv2d, conv2d_transpose,
                            separable_conv2d)
from .pooling import (AveragePooling1D, AveragePooling2D, MaxPooling1D, MaxPooling2D, average_pooling1d,
                      average_pooling2d, max_pooling1d, max_pooling2d)
from .normalization import BatchNormalization, batch_normalization

__all__ = ["Dense", "dense", "conv2d", "max_pooling2d", "average_pooling2d", "flatten", "dropout",
           "batch_normalization", "conv2d_transpose", "Conv2D", "Conv2DTranspose", "MaxPooling2D",
           "AveragePooling2D", "Flatten", "Dropout", "BatchNormalization", "Layer", "conv1d", "max_pooling1d",
           "average_pooling1d", "Conv1D", "MaxPooling1D", "AveragePooling1D", "separable_conv2d", "SeparableConv2D"]
