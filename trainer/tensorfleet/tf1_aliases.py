"""TF 1.15's deprecated top-level aliases that old scripts still call (`tf.arg_max`, `tf.arg_min`, ...).

Top layer: thin wrappers over ops already defined in `ops/`, exported by the package `__init__`.
"""
from __future__ import annotations

from . import dtypes as _dtypes
from .ops import reduction_ops as _r

__all__ = ["arg_max", "arg_min"]


def arg_max(input, dimension, output_type=_dtypes.int64, name=None):
    """`tf.arg_max` (deprecated in TF 1.15 for tf.argmax): `dimension` is required."""
    return _r.argmax(input, axis=dimension, name=name, output_type=output_type)


def arg_min(input, dimension, output_type=_dtypes.int64, name=None):
    """`tf.arg_min` (deprecated in TF 1.15 for tf.argmin): `dimension` is required."""
    return _r.argmin(input, axis=dimension, name=name, output_type=output_type)


# -- tf.NodeDef and Operation.node_def ------------------------------------------
# Multi-GPU TF1 scripts write device functions as
#   node_def = op if isinstance(op, tf.NodeDef) else op.node_def; if node_def.op in PS_OPS: ...
# A device function runs while the op is being created, so `node_def` is built on demand from the op.
try:  # the framework protos (TF's field numbers), when this build has them
    from . import graph_def as _graph_def
    from .protos.node_def_pb2 import NodeDef
except ImportError:  # pragma: no cover - depends on whether the protos package is present
    _graph_def = None

    class NodeDef:  # type: ignore[no-redef]
        """`tf.NodeDef`'s fields that Python code reads: name, op, device, input (list), attr (dict)."""

        def __init__(self, name: str = "", op: str = "", device: str = ""):
            self.name, self.op, self.device = name, op, device
            self.input: list = []
            self.attr: dict = {}

        def __repr__(self) -> str:
            return f"NodeDef(name={self.name!r}, op={self.op!r}, device={self.device!r}, input={self.input!r})"


_BIG_ATTR_BYTES = 1 << 20


def _has_big_value(op) -> bool:
    value = op.attrs.get("value")
    return getattr(value, "nbytes", 0) > _BIG_ATTR_BYTES


def _node_def(op) -> "NodeDef":
    """`Operation.node_def`: the op as a NodeDef (built on each access; attributes without a proto encoding, and
    constants over 1 MiB, which device functions never read, are left out)."""
    if _graph_def is not None and not _has_big_value(op):
        try:
            return _graph_def.node_def(op, add_shapes=False)
        except Exception:  # noqa: BLE001 - an attribute without a proto encoding: fall back to the plain fields
            pass
    nd = NodeDef(name=op.name, op=op.type, device=op.device)
    nd.input.extend(t.op.name if t.value_index == 0 else f"{t.op.name}:{t.value_index}" for t in op.inputs)
    nd.input.extend("^" + c.name for c in op.control_inputs)
    return nd


def _install_node_def() -> None:
    """Operation.node_def becomes a NodeDef (graph.py's own is a plain dict: the graph layer cannot see protos)."""
    from .graph import Operation
    Operation.node_def = property(_node_def, doc=_node_def.__doc__)


_install_node_def()
__all__ += ["NodeDef"]


# -- tf.nn / tf.math composites (gradients come from the ops they are built of) ----------
def _ops():
    from .ops import array_ops, comparison_ops, conv_ops, math_ops, nn_ops, reduction_ops
    return array_ops, comparison_ops, conv_ops, math_ops, nn_ops, reduction_ops


def softsign(features, name=None):
    """`tf.nn.softsign` = x / (1 + |x|)."""
    _, _, _, m, _, _ = _ops()
    x = _convert(features)
    with _name_scope(name, "Softsign", [x]):
        return m.divide(x, m.add(m.abs(x), 1.0))


def selu(features, name=None):
    """`tf.nn.selu`: scale * (x if x > 0 else alpha * (exp(x) - 1)), TF's alpha and scale."""
    _, c, _, m, n, _ = _ops()
    x = _convert(features)
    alpha, scale = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946
    with _name_scope(name, "Selu", [x]):
        return m.multiply(scale, c.where_v2(c.greater(x, 0.0), x, m.multiply(alpha, n.elu(x))))


def swish(features, name=None):
    """`tf.nn.swish` = x * sigmoid(x)."""
    _, _, _, m, n, _ = _ops()
    x = _convert(features)
    with _name_scope(name, "swish", [x]):
        return m.multiply(x, n.sigmoid(x))


def relu_layer(x, weights, biases, name=None):
    """`tf.nn.relu_layer` = relu(x @ weights + biases)."""
    from .ops import nn_impl
    _, _, _, m, n, _ = _ops()
    with _name_scope(name, "relu_layer", [x, weights, biases]):
        return n.relu(nn_impl.bias_add(m.matmul(x, weights), biases))


def weighted_cross_entropy_with_logits(labels=None, logits=None, pos_weight=None, name=None, targets=None):
    """`tf.nn.weighted_cross_entropy_with_logits`: (1 - z) * x + (1 + (q - 1) * z) * log(1 + exp(-x)), stably."""
    _, _, _, m, n, _ = _ops()
    z = _convert(labels if labels is not None else targets)
    x = _convert(logits)
    with _name_scope(name, "logistic_loss", [x, z]):
        from .default_graph import convert_to_tensor
        pos_weight = convert_to_tensor(pos_weight, dtype=x.dtype)
        log_weight = m.add(1.0, m.multiply(m.subtract(pos_weight, 1.0), z))
        soft = m.add(n.softplus(m.negative(m.abs(x))), n.relu(m.negative(x)))
        return m.add(m.multiply(m.subtract(1.0, z), x), m.multiply(log_weight, soft))


def zero_fraction(value, name=None):
    """`tf.math.zero_fraction` / `tf.nn.zero_fraction`: the fraction of zeros in `value` (float32)."""
    _, c, _, m, _, r = _ops()
    with _name_scope(name, "zero_fraction", [value]):
        v = _convert(value)
        return r.reduce_mean(m.cast(c.equal(v, _zero_like(v)), _dtypes.float32))


def _zero_like(v):
    from .ops import array_ops
    return array_ops.zeros([], dtype=v.dtype)


def max_pool2d(input, ksize, strides, padding, data_format="NHWC", name=None):
    _, _, cv, _, _, _ = _ops()
    return cv.max_pool(input, ksize, strides, padding, data_format=data_format, name=name)


def avg_pool2d(input, ksize, strides, padding, data_format="NHWC", name=None):
    _, _, cv, _, _, _ = _ops()
    return cv.avg_pool(input, ksize, strides, padding, data_format=data_format, name=name)


def xlogy(x, y, name=None):
    """`tf.math.xlogy` = 0 where x == 0, else x * log(y)."""
    _, c, _, m, _, _ = _ops()
    with _name_scope(name, "xlogy", [x, y]):
        x, y = _convert(x), _convert(y)
        safe_y = c.where_v2(c.equal(x, 0.0), m.add(m.multiply(y, 0.0), 1.0), y)
        return c.where_v2(c.equal(x, 0.0), m.multiply(x, 0.0), m.multiply(x, m.log(safe_y)))


def xdivy(x, y, name=None):
    """`tf.math.xdivy` = 0 where x == 0, else x / y."""
    _, c, _, m, _, _ = _ops()
    with _name_scope(name, "xdivy", [x, y]):
        x, y = _convert(x), _convert(y)
        safe_y = c.where_v2(c.equal(x, 0.0), m.add(m.multiply(y, 0.0), 1.0), y)
        return c.where_v2(c.equal(x, 0.0), m.multiply(x, 0.0), m.divide(x, safe_y))


def reciprocal_no_nan(x, name=None):
    """`tf.math.reciprocal_no_nan` = 0 where x == 0, else 1 / x."""
    _, _, _, m, _, _ = _ops()
    with _name_scope(name, "reciprocal_no_nan", [x]):
        x = _convert(x)
        return m.div_no_nan(m.add(m.multiply(x, 0.0), 1.0), x)


def multiply_no_nan(x, y, name=None):
    """`tf.math.multiply_no_nan` = 0 where y == 0 (even if x is inf or nan), else x * y."""
    _, c, _, m, _, _ = _ops()
    with _name_scope(name, "multiply_no_nan", [x, y]):
        x, y = _convert(x), _convert(y)
        return m.multiply(c.where_v2(c.equal(y, 0.0), m.multiply(y, 0.0), x), y)


def reduce_variance(input_tensor, axis=None, keepdims=False, name=None):
    """`tf.math.reduce_variance`: the population variance (divides by N), as TF."""
    _, _, _, m, _, r = _ops()
    with _name_scope(name, "reduce_variance", [input_tensor]):
        x = _convert(input_tensor)
        mean = r.reduce_mean(x, axis=axis, keepdims=True)
        return r.reduce_mean(m.square(m.subtract(x, mean)), axis=axis, keepdims=keepdims)


def reduce_std(input_tensor, axis=None, keepdims=False, name=None):
    """`tf.math.reduce_std` = sqrt(reduce_variance)."""
    _, _, _, m, _, _ = _ops()
    with _name_scope(name, "reduce_std", [input_tensor]):
        return m.sqrt(reduce_variance(input_tensor, axis=axis, keepdims=keepdims))


def reduce_euclidean_norm(input_tensor, axis=None, keepdims=False, name=None):
    """`tf.math.reduce_euclidean_norm` = sqrt(sum(x^2))."""
    _, _, _, m, _, r = _ops()
    with _name_scope(name, "reduce_euclidean_norm", [input_tensor]):
        return m.sqrt(r.reduce_sum(m.square(_convert(input_tensor)), axis=axis, keepdims=keepdims))


# -- top-level odds and ends -------------------------------------------------------------
def is_tensor(x) -> bool:
    """`tf.is_tensor`: a Tensor or SparseTensor."""
    from .graph import Tensor
    from .ops.string_ops import SparseTensor
    return isinstance(x, (Tensor, SparseTensor))


def is_numeric_tensor(tensor) -> bool:
    from .graph import Tensor
    return isinstance(tensor, Tensor) and tensor.dtype.is_numeric


def executing_eagerly() -> bool:
    """`tf.executing_eagerly`: always False (tensorfleet is graph mode only)."""
    return False


def get_seed(op_seed):
    """`tf.get_seed`: TF1's (graph seed, op seed) rule."""
    from .ops import random_seed
    return random_seed.get_seed(op_seed)


def dimension_value(dimension):
    """`tf.dimension_value`: a Dimension's int value (or None); ints pass through."""
    return getattr(dimension, "value", dimension)


def dimension_at_index(shape, index):
    from .tensor_shape import Dimension, as_shape
    s = as_shape(shape)
    return Dimension(None) if s.ndims is None else Dimension(s.as_list()[index])


def initialize_local_variables():
    """Deprecated alias of tf.local_variables_initializer."""
    from .ops import state_ops
    return state_ops.local_variables_initializer()


def initialize_variables(var_list, name="init"):
    """Deprecated alias of tf.variables_initializer."""
    from .ops import state_ops
    return state_ops.variables_initializer(var_list, name=name)


def moving_average_variables(scope=None):
    """`tf.moving_average_variables`: the MOVING_AVERAGE_VARIABLES collection."""
    from .default_graph import get_collection
    return get_collection("moving_average_variables", scope)


def no_regularizer(_):
    """`tf.no_regularizer`: use as a regularizer to switch regularization off."""
    return None


def _convert(x):
    from .default_graph import convert_to_tensor
    return convert_to_tensor(x)


def _name_scope(name, default, values):
    from .default_graph import name_scope
    return name_scope(name, default, values)


__all__ += ["is_tensor", "is_numeric_tensor", "executing_eagerly", "get_seed", "dimension_value",
            "dimension_at_index", "initialize_local_variables", "initialize_variables", "moving_average_variables",
            "no_regularizer"]

NN_EXTRAS = {"softsign": softsign, "selu": selu, "swish": swish, "relu_layer": relu_layer,
             "weighted_cross_entropy_with_logits": weighted_cross_entropy_with_logits, "zero_fraction": zero_fraction,
             "max_pool2d": max_pool2d, "avg_pool2d": avg_pool2d}
MATH_EXTRAS = {"softsign": softsign, "xlogy": xlogy, "xdivy": xdivy, "reciprocal_no_nan": reciprocal_no_nan,
               "multiply_no_nan": multiply_no_nan, "reduce_variance": reduce_variance, "reduce_std": reduce_std,
               "reduce_euclidean_norm": reduce_euclidean_norm, "zero_fraction": zero_fraction}


# -- more TF 1.15 top-level names: aliases and static checks ------------------------------
class AggregationMethod:
    """`tf.AggregationMethod` (gradients are summed with AddN whatever the choice)."""
    ADD_N = 0
    DEFAULT = ADD_N
    EXPERIMENTAL_TREE = 1
    EXPERIMENTAL_ACCUMULATE_N = 2


def no_gradient(op_type):
    """`tf.no_gradient` / `tf.NoGradient`: alias of tf.NotDifferentiable."""
    from .op_registry import NotDifferentiable
    return NotDifferentiable(op_type)


NoGradient = no_gradient


def get_logger():
    """`tf.get_logger`: the Python logger named "tensorflow" (what tf.logging writes to)."""
    import logging
    return logging.getLogger("tensorflow")


def tables_initializer(name="init_all_tables"):
    """`tf.tables_initializer`: a no-op (tensorfleet has no lookup tables to initialize)."""
    from .ops.control_flow_ops import no_op
    return no_op(name=name)


initialize_all_tables = tables_initializer


def identity_n(input, name=None):
    """`tf.identity_n`: identity of each tensor of a list."""
    from .ops.array_ops import identity
    with _name_scope(name, "IdentityN", input):
        return [identity(t) for t in input]


def parallel_stack(values, name="parallel_stack"):
    """`tf.parallel_stack`: tf.stack along a new first axis."""
    from .ops.join_ops import stack
    return stack(values, axis=0, name=name)


def space_to_depth(input, block_size, name=None, data_format="NHWC"):
    from .ops.nn_composite import space_to_depth as _s2d
    return _s2d(input, block_size, name=name, data_format=data_format)


def depth_to_space(input, block_size, name=None, data_format="NHWC"):
    from .ops.nn_composite import depth_to_space as _d2s
    return _d2s(input, block_size, name=name, data_format=data_format)


def floor_div(x, y, name=None):
    from .ops.math_ops import floordiv
    return floordiv(x, y, name=name)


def op_scope(values, name, default_name=None):
    """Deprecated `tf.op_scope(values, name, default_name)`: tf.name_scope(name, default_name, values)."""
    return _name_scope(name, default_name, values)


def variable_op_scope(values, name_or_scope, default_name=None, **kwargs):
    """Deprecated `tf.variable_op_scope`: tf.variable_scope(name_or_scope, default_name, values, ...)."""
    from .ops.variable_scope import variable_scope
    return variable_scope(name_or_scope, default_name=default_name, values=values, **kwargs)


def container(container_name):
    """`tf.container(name)`: accepted and ignored (one resource container per session here)."""
    import contextlib
    return contextlib.nullcontext()


def assert_type(tensor, tf_type, message=None, name=None):
    """`tf.assert_type`: TypeError now if the tensor's dtype is not `tf_type` (TF checks it statically too)."""
    t = _convert(tensor)
    want = _dtypes.as_dtype(tf_type)
    if t.dtype is not want:
        raise TypeError(f"{message or ''}{t.name} must be of type {want!r}; got {t.dtype!r}")
    from .ops.control_flow_ops import no_op
    return no_op(name=name or "statically_determined_correct_type")


def assert_integer(x, message=None, name=None):
    """`tf.assert_integer`: TypeError now unless x has an integer dtype."""
    t = _convert(x)
    if not t.dtype.is_integer:
        raise TypeError(f"{message or ''}Expected Tensor {t.name} to be of integer type, got {t.dtype.name}")
    from .ops.control_flow_ops import no_op
    return no_op(name=name or "statically_determined_was_integer")


def assert_scalar(tensor, name=None, message=None):
    """`tf.assert_scalar`: ValueError now unless the tensor's (known) rank is 0; returns the tensor."""
    t = _convert(tensor)
    if t.shape.ndims is not None and t.shape.ndims != 0:
        raise ValueError(f"{message or ''}Expected scalar shape for {t.name}, saw shape: {t.shape}.")
    return t


def assert_same_float_dtype(tensors=None, dtype=None):
    """`tf.assert_same_float_dtype`: the common floating dtype of `tensors` (and `dtype`), float32 if none."""
    seen = [_dtypes.as_dtype(dtype)] if dtype is not None else []
    seen += [t.dtype for t in (tensors or []) if hasattr(t, "dtype")]
    for d in seen:
        if not d.is_floating:
            raise ValueError(f"Expected floating point type, got {d.name}.")
    if any(d is not seen[0] for d in seen):
        raise ValueError(f"Expected all of the same floating point type, got {[d.name for d in seen]}.")
    return seen[0] if seen else _dtypes.float32


def assert_proper_iterable(values):
    """`tf.assert_proper_iterable`: TypeError for a tensor, ndarray or string (iterable, but not as a list)."""
    import numpy as np
    from .graph import Tensor
    if isinstance(values, (Tensor, np.ndarray, str, bytes)):
        raise TypeError(f"Expected argument 'values' to be a \"proper\" iterable.  Found: {type(values)}")
    if not hasattr(values, "__iter__"):
        raise TypeError(f"Expected argument 'values' to be iterable.  Found: {type(values)}")


__all__ += ["AggregationMethod", "no_gradient", "NoGradient", "get_logger", "tables_initializer",
            "initialize_all_tables", "identity_n", "space_to_depth", "depth_to_space", "parallel_stack", "floor_div",
            "op_scope", "variable_op_scope", "container", "assert_type", "assert_integer", "assert_scalar",
            "assert_same_float_dtype", "assert_proper_iterable"]
