"""`tf.keras.backend` (TF 1.15, graph mode): the session, the learning phase, settings and tensor functions.

Modules: `config` (floatx, epsilon, image_data_format), `session` (get_session, learning_phase, name counters,
variable tracking), `tensors` (variable, placeholder, int_shape, ...), `math` (reductions, element-wise,
dot, shapes), `nn` (activations, cross-entropies, dropout, in_train_phase), `conv` (convolutions, pooling,
padding, resizing, batch normalization), `rnn` (K.rnn), `function` (K.function and the value helpers that run
the session). docs/keras.md describes where the session lives.
"""
from __future__ import annotations

from .conv import (batch_normalization, conv1d, conv2d, conv2d_transpose, depthwise_conv2d,
                   normalize_batch_in_training, pool2d, resize_images, separable_conv2d, spatial_2d_padding,
                   temporal_padding)
from .config import (cast_to_floatx, epsilon, floatx, image_data_format, set_epsilon, set_floatx,
                     set_image_data_format)
from .function import (GraphExecutionFunction, batch_get_value, batch_set_value, eval, function, get_value,
                       gradients, print_tensor, set_value)
from .math import (abs, all, any, arange, argmax, argmin, batch_dot, batch_flatten, clip, concatenate, cos,
                   cumprod, cumsum, dot, equal, exp, expand_dims, flatten, gather, greater, greater_equal,
                   l2_normalize, less, less_equal, log, logsumexp, max, maximum, mean, min, minimum, not_equal,
                   one_hot, permute_dimensions, pow, prod, repeat, repeat_elements, reshape, reverse, round,
                   sign, sin, sqrt, square, squeeze, stack, std, stop_gradient, sum, tile, transpose, var)
from .nn import (bias_add, binary_crossentropy, categorical_crossentropy, dropout, elu, hard_sigmoid, in_test_phase,
                 in_top_k, in_train_phase, relu, sigmoid, softmax, softplus, softsign,
                 sparse_categorical_crossentropy, switch, tanh)
from .rnn import rnn
from .session import (clear_session, get_graph, get_session, get_uid, learning_phase, learning_phase_scope,
                      manual_variable_initialization, name_scope, reset_uids, set_learning_phase, set_session,
                      symbolic_learning_phase, track_variable, unique_object_name)
from .tensors import (cast, constant, count_params, dtype, eye, identity, int_shape, is_keras_tensor,
                      is_placeholder, is_sparse, moving_average_update, ndim, ones, ones_like, placeholder,
                      random_binomial, random_normal, random_normal_variable, random_uniform,
                      random_uniform_variable, shape, to_dense, truncated_normal, update, update_add, update_sub,
                      variable, zeros, zeros_like)


def backend():
    """'tensorflow' (the Keras backend's name)."""
    return "tensorflow"


__all__ = [n for n in dir() if not n.startswith("_") and n not in {"annotations", "config", "conv", "function",
                                                                    "math", "nn", "session", "tensors"}]
__all__ += ["function"]
