"""`tf.contrib.layers`: TF 1.15's contrib layers, initializers, regularizers, `optimize_loss` and summaries.

Modules: `core` (fully_connected, bias_add, flatten, dropout, one_hot_encoding, repeat, stack),
`convolutional` (conv2d, conv2d_transpose, max_pool2d, avg_pool2d), `normalization` (batch_norm,
layer_norm), `encoders` (embed_sequence), `initializers`, `regularizers`, `optimizers` (optimize_loss),
`summaries`, and `utils` (the model-variable scope, output collections). The layers build on `tf.layers`
(tensorfleet/layers/) under contrib's scopes and variable names (`fully_connected/weights`,
`Conv/biases`, `BatchNorm/moving_mean`, ...), create model variables, and take their defaults from
`tf.contrib.framework.arg_scope`. What TF 1.15's tf.contrib.layers has beyond these names is not provided
(an AttributeError names it); docs/contrib.md lists the differences.
"""
from .convolutional import (avg_pool2d, conv2d, conv2d_transpose, convolution, convolution2d, convolution2d_transpose,
                            max_pool2d)
from .core import bias_add, dropout, elu, flatten, fully_connected, linear, one_hot_encoding, relu, relu6, repeat, stack
from .encoders import embed_sequence
from .initializers import variance_scaling_initializer, xavier_initializer, xavier_initializer_conv2d
from .normalization import batch_norm, layer_norm
from .optimizers import OPTIMIZER_CLS_NAMES, OPTIMIZER_SUMMARIES, optimize_loss
from .regularizers import apply_regularization, l1_l2_regularizer, l1_regularizer, l2_regularizer, sum_regularizer
from .summaries import (summarize_activation, summarize_activations, summarize_biases, summarize_collection,
                        summarize_tensor, summarize_tensors, summarize_variables, summarize_weights)

__all__ = ["avg_pool2d", "conv2d", "conv2d_transpose", "convolution", "convolution2d", "convolution2d_transpose",
           "max_pool2d", "bias_add", "dropout", "elu", "flatten", "fully_connected", "linear", "one_hot_encoding",
           "relu", "relu6", "repeat", "stack", "embed_sequence", "variance_scaling_initializer", "xavier_initializer",
           "xavier_initializer_conv2d", "batch_norm", "layer_norm", "OPTIMIZER_CLS_NAMES", "OPTIMIZER_SUMMARIES",
           "optimize_loss", "apply_regularization", "l1_l2_regularizer", "l1_regularizer", "l2_regularizer",
           "sum_regularizer", "summarize_activation", "summarize_activations", "summarize_biases",
           "summarize_collection", "summarize_tensor", "summarize_tensors", "summarize_variables",
           "summarize_weights"]


def __getattr__(name):  # PEP 562: names TF 1.15's tf.contrib.layers has and tensorfleet does not
    if name.startswith("__"):
        raise AttributeError(name)
    raise AttributeError(f"tf.contrib.layers.{name} is not supported by tensorfleet (docs/contrib.md lists what "
                         f"tf.contrib.layers provides)")
