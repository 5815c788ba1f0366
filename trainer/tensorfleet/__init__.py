"""Tensorfleet: a TensorFlow-1 graph/session runtime on numpy (and cupy).

Use it as `import tensorfleet as tf`. Layers, bottom up: dtypes, tensor_shape,
device_spec, op_registry -> graph -> ops (+ kernels) -> autodiff / placement ->
executor -> session -> distributed -> train.
"""
from . import dtypes, errors
from .dtypes import (DType, as_dtype, bool_ as bool, double, float16, float32, float64, half, int8, int16, int32,
                     int64, uint8)
from .tensor_shape import Dimension, TensorShape
from .device_spec import DeviceSpec
from .graph import (Graph, GraphKeys, Operation, Tensor, add_to_collection, add_to_collections, colocate_with,
                    control_dependencies, convert_to_tensor, device, get_collection, get_collection_ref,
                    get_default_graph, get_default_session, name_scope, register_tensor_conversion_function,
                    reset_default_graph, set_random_seed)
from . import kernels as _kernels  # noqa: F401  (kernel registration)
from . import ops as _ops  # noqa: F401  (op registration)
from .ops.array_ops import constant, identity, placeholder, placeholder_with_default, stop_gradient
from .ops.control_flow_ops import group, no_op, tuple_ as tuple
from .ops.math_ops import add, add_n, cast, matmul, multiply, negative, reduce_sum, subtract
from .ops.state_ops import (Variable, all_variables, assign, assign_add, assign_sub, global_variables,
                            global_variables_initializer, initialize_all_variables, is_variable_initialized,
                            local_variables, local_variables_initializer, model_variables, trainable_variables,
                            variables_initializer)
from .op_registry import NotDifferentiable, RegisterGradient
from .autodiff import gradients
from .session import InteractiveSession, Session

newaxis = None
