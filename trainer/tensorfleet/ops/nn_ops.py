"""`tf.nn` activations, softmax and the softmax/sigmoid cross-entropy losses.

Sits in `ops/` (wrappers + shape functions + gradients, TF 1.15 names and arguments);
kernels live in `kernels/nn_kernels.py`. Every op here is fused and self-contained:
gradients are their own ops (`ReluGrad`, `SoftmaxGrad`, ...) rather than compositions
of math ops, so `tf.nn` does not depend on which general math ops exist.
`ops/nn_impl.py` holds bias_add, dropout, l2_loss & co; `ops/conv_ops.py` conv2d and pools.
"""
from __future__ import annotations

__all__ = ["relu", "relu6", "elu", "leaky_relu", "sigmoid", "tanh", "softplus", "softmax", "log_softmax",
           "softmax_cross_entropy_with_logits", "softmax_cross_entropy_with_logits_v2",
           "sparse_softmax_cross_entropy_with_logits", "sigmoid_cross_entropy_with_logits"]

import numpy as np

from .. import dtypes as _dtypes
from ..default_graph import name_scope
from .common import (TensorShape, convert_to_tensor, make_op, make_tensor, register_gradient, register_op,
                     static_value, unchanged_shape)
from . import math_ops
from .array_ops import stop_gradient

_FLOAT_TYPES = "half, float32, float64"


def float_input(x, op_type: str, arg: str = "features", dtype=None):
    """Converts `x` and checks it is floating point (TF's 'not in list of allowed values' TypeError)."""
    x = convert_to_tensor(x, dtype=dtype)
    if not x.dtype.is_floating:
        raise TypeError(f"Value passed to parameter '{arg}' has DataType {x.dtype.name} not in list of allowed "
                        f"values: {_FLOAT_TYPES} (op '{op_type}')")
    return x


def _same_shape_binary(op):
    """Shape of a grad op (a, b): both must agree; the output is their merged shape."""
    a, b = op.inputs[0], op.inputs[1]
    if not a.shape.is_compatible_with(b.shape):
        raise ValueError(f"Shapes {a.shape} and {b.shape} are incompatible")
    return [(a.dtype, a.shape.merge_with(b.shape))]


# -- elementwise activations --------------------------------------------------
# (op type, python name, grad op type, grad takes the op's output (True) or its input (False))
_ACTIVATIONS = [
    ("Relu", "relu", "ReluGrad", True),  # TF: relu_grad(grad, op.outputs[0])
    ("Relu6", "relu6", "Relu6Grad", False),
    ("Elu", "elu", "EluGrad", True),
    ("Sigmoid", "sigmoid", "SigmoidGrad", True),
    ("Tanh", "tanh", "TanhGrad", True),
    ("Softplus", "softplus", "SoftplusGrad", False),
]
for _op_type, _py, _grad_type, _ in _ACTIVATIONS:
    register_op(_op_type, unchanged_shape)
    register_op(_grad_type, _same_shape_binary)
register_op("LeakyRelu", unchanged_shape)
register_op("LeakyReluGrad", _same_shape_binary)


def relu(features, name=None):
    """`tf.nn.relu`: max(features, 0)."""
    return make_tensor("Relu", [float_input(features, "Relu")], name=name, default_name="Relu")


def relu6(features, name=None):
    """`tf.nn.relu6`: min(max(features, 0), 6)."""
    return make_tensor("Relu6", [float_input(features, "Relu6")], name=name, default_name="Relu6")


def elu(features, name=None):
    """`tf.nn.elu`: features if > 0 else exp(features) - 1."""
    return make_tensor("Elu", [float_input(features, "Elu")], name=name, default_name="Elu")


def softplus(features, name=None):
    """`tf.nn.softplus`: log(exp(features) + 1), computed stably."""
    return make_tensor("Softplus", [float_input(features, "Softplus")], name=name, default_name="Softplus")


def sigmoid(x, name=None):
    """`tf.sigmoid` / `tf.nn.sigmoid`: 1 / (1 + exp(-x)), computed stably."""
    return make_tensor("Sigmoid", [float_input(x, "Sigmoid", "x")], name=name, default_name="Sigmoid")


def tanh(x, name=None):
    """`tf.tanh` / `tf.nn.tanh`."""
    return make_tensor("Tanh", [float_input(x, "Tanh", "x")], name=name, default_name="Tanh")


def leaky_relu(features, alpha=0.2, name=None):
    """`tf.nn.leaky_relu(features, alpha=0.2)`: features if > 0 else alpha * features."""
    x = float_input(features, "LeakyRelu")
    return make_tensor("LeakyRelu", [x], {"alpha": float(alpha)}, name=name, default_name="LeakyRelu")


def _register_activation_grad(op_type: str, grad_type: str, uses_output: bool):
    @register_gradient(op_type)
    def _grad(op, grad):
        other = op.outputs[0] if uses_output else op.inputs[0]
        # TF's convention: (gradients, features) for *Grad ops that read the input,
        # (y, dy) for SigmoidGrad / TanhGrad which read the output.
        if op_type in ("Sigmoid", "Tanh"):
            return [make_tensor(grad_type, [other, grad], name=grad_type)]
        return [make_tensor(grad_type, [grad, other], name=grad_type)]

    return _grad


for _op_type, _py, _grad_type, _uses_out in _ACTIVATIONS:
    _register_activation_grad(_op_type, _grad_type, _uses_out)


@register_gradient("LeakyRelu")
def _leaky_relu_grad(op, grad):
    return [make_tensor("LeakyReluGrad", [grad, op.inputs[0]], {"alpha": op.get_attr("alpha")},
                        name="LeakyReluGrad")]


# -- second order: the activation gradient ops' own gradients (TF's *GradGrad rules) --
# Each *Grad op is linear in its incoming gradient, so that input's gradient is the same op
# applied to the new cotangent; the other input gets d/d(other) (None where it is zero a.e.).
def _m():
    return math_ops


@register_gradient("ReluGrad")
def _relu_grad_grad(op, g):
    return [make_tensor("ReluGrad", [g, op.inputs[1]], name="ReluGrad"), None]


@register_gradient("Relu6Grad")
def _relu6_grad_grad(op, g):
    return [make_tensor("Relu6Grad", [g, op.inputs[1]], name="Relu6Grad"), None]


@register_gradient("LeakyReluGrad")
def _leaky_relu_grad_grad(op, g):
    return [make_tensor("LeakyReluGrad", [g, op.inputs[1]], {"alpha": op.get_attr("alpha")},
                        name="LeakyReluGrad"), None]


@register_gradient("EluGrad")
def _elu_grad_grad(op, g):
    # EluGrad(grad, y) = grad * (y + 1) where y <= 0, else grad
    m = _m()
    grad, y = op.inputs
    negative = m.cast(m.less_equal(y, 0.0), y.dtype)
    return [make_tensor("EluGrad", [g, y], name="EluGrad"), m.multiply(m.multiply(g, grad), negative)]


@register_gradient("SigmoidGrad")
def _sigmoid_grad_grad(op, g):
    # SigmoidGrad(y, dy) = dy * y * (1 - y)
    m = _m()
    y, dy = op.inputs
    return [m.multiply(m.multiply(g, dy), m.subtract(1.0, m.multiply(2.0, y))),
            make_tensor("SigmoidGrad", [y, g], name="SigmoidGrad")]


@register_gradient("TanhGrad")
def _tanh_grad_grad(op, g):
    # TanhGrad(y, dy) = dy * (1 - y^2)
    m = _m()
    y, dy = op.inputs
    return [m.multiply(m.multiply(-2.0, g), m.multiply(dy, y)), make_tensor("TanhGrad", [y, g], name="TanhGrad")]


@register_gradient("SoftplusGrad")
def _softplus_grad_grad(op, g):
    # SoftplusGrad(grad, x) = grad * sigmoid(x)
    m = _m()
    grad, x = op.inputs
    sig = make_tensor("Sigmoid", [x], name="Sigmoid")
    return [make_tensor("SoftplusGrad", [g, x], name="SoftplusGrad"),
            make_tensor("SigmoidGrad", [sig, m.multiply(g, grad)], name="SigmoidGrad")]


# -- softmax / log_softmax ----------------------------------------------------
def _axis_of(x, axis, op_name: str) -> int:
    """Normalises a static axis to a non-negative int (TF's InvalidArgument for out-of-range axes)."""
    if not isinstance(axis, int):
        raise TypeError(f"{op_name}: axis must be a Python int, got {type(axis).__name__}")
    n = x.shape.ndims
    if n is None:
        return axis
    if n < 1:
        raise ValueError(f"Shape must be at least rank 1 but is rank {n}")
    if not -n <= axis < n:
        raise ValueError(f"dim {axis} must be in the range [{-n}, {n}) where {n} is the number of dimensions "
                         f"in the input.")
    return axis % n


register_op("Softmax", unchanged_shape)
register_op("LogSoftmax", unchanged_shape)
register_op("SoftmaxGrad", _same_shape_binary)
register_op("LogSoftmaxGrad", _same_shape_binary)


def _softmax_like(op_type, logits, axis, name, dim):
    if axis is None:
        axis = -1 if dim is None else dim
    elif dim is not None:
        raise ValueError("Cannot specify both 'axis' and 'dim'.")
    x = float_input(logits, op_type, "logits")
    return make_tensor(op_type, [x], {"axis": _axis_of(x, axis, op_type)}, name=name, default_name=op_type)


def softmax(logits, axis=None, name=None, dim=None):
    """`tf.nn.softmax(logits, axis=None, name=None, dim=None)`: exp(x) / sum(exp(x), axis), stably (any rank)."""
    return _softmax_like("Softmax", logits, axis, name, dim)


def log_softmax(logits, axis=None, name=None, dim=None):
    """`tf.nn.log_softmax`: x - log(sum(exp(x), axis)) via log-sum-exp."""
    return _softmax_like("LogSoftmax", logits, axis, name, dim)


@register_gradient("Softmax")
def _softmax_grad(op, grad):
    # dx = (grad - sum(grad * y, axis)) * y
    return [make_tensor("SoftmaxGrad", [grad, op.outputs[0]], {"axis": op.get_attr("axis")}, name="SoftmaxGrad")]


@register_gradient("LogSoftmax")
def _log_softmax_grad(op, grad):
    # dx = grad - exp(y) * sum(grad, axis)
    return [make_tensor("LogSoftmaxGrad", [grad, op.outputs[0]], {"axis": op.get_attr("axis")},
                        name="LogSoftmaxGrad")]


@register_gradient("SoftmaxGrad")
def _softmax_grad_grad(op, g):
    # SoftmaxGrad(grad, y) = (grad - s) * y, s = sum(grad * y): self-adjoint in grad;
    # d/dy = g * (grad - s) - grad * sum(g * y)
    m = _m()
    grad, y = op.inputs
    axis = op.get_attr("axis")
    s = m.reduce_sum(m.multiply(grad, y), axis=axis, keepdims=True)
    gy = m.reduce_sum(m.multiply(g, y), axis=axis, keepdims=True)
    return [make_tensor("SoftmaxGrad", [g, y], {"axis": axis}, name="SoftmaxGrad"),
            m.subtract(m.multiply(g, m.subtract(grad, s)), m.multiply(grad, gy))]


@register_gradient("LogSoftmaxGrad")
def _log_softmax_grad_grad(op, g):
    # LogSoftmaxGrad(grad, y) = grad - exp(y) * sum(grad)
    m = _m()
    grad, y = op.inputs
    axis = op.get_attr("axis")
    p = m.exp(y)
    return [m.subtract(g, m.reduce_sum(m.multiply(g, p), axis=axis, keepdims=True)),
            m.negative(m.multiply(m.multiply(g, p), m.reduce_sum(grad, axis=axis, keepdims=True)))]


# -- softmax cross entropy ----------------------------------------------------
def _is_zero(t) -> bool:
    """True for autodiff's stand-in gradient of an unused output (a broadcast constant 0)."""
    if t.op.type == "Const":
        v = static_value(t)
    elif t.op.type == "BroadcastLike":
        v = static_value(t.op.inputs[0])
    else:
        return False
    return v is not None and not np.any(v)


def _xent_shape(op):
    logits, labels = op.inputs
    axis = op.get_attr("axis")
    shape = logits.shape
    if not shape.is_compatible_with(labels.shape):
        raise ValueError(f"logits and labels must be broadcastable: logits_size={logits.shape} "
                         f"labels_size={labels.shape}")
    shape = shape.merge_with(labels.shape)
    if shape.ndims is None:
        return [(logits.dtype, TensorShape(None)), (logits.dtype, TensorShape(None))]
    loss = TensorShape([d for i, d in enumerate(shape.as_tuple()) if i != axis % shape.ndims])
    return [(logits.dtype, loss), (logits.dtype, shape)]


# outputs: (loss, backprop = softmax(logits) - labels), like TF's SoftmaxCrossEntropyWithLogits
register_op("SoftmaxCrossEntropyWithLogits", _xent_shape)
# (grad_loss, like) -> grad_loss with `axis` re-inserted, times `like` along it
register_op("XentScaleAlongAxis", lambda op: [(op.inputs[1].dtype, op.inputs[1].shape)])
# (grad_loss, logits) -> -grad_loss[..., None] * log_softmax(logits): the labels' gradient
register_op("XentLabelsGrad", lambda op: [(op.inputs[1].dtype, op.inputs[1].shape)])


def softmax_cross_entropy_with_logits_v2(labels, logits, axis=None, name=None, dim=None):
    """`tf.nn.softmax_cross_entropy_with_logits_v2`: -sum(labels * log_softmax(logits), axis); labels get a gradient."""
    if axis is None:
        axis = -1 if dim is None else dim
    elif dim is not None:
        raise ValueError("Cannot specify both 'axis' and 'dim'.")
    with name_scope(name, "softmax_cross_entropy_with_logits", [logits, labels]) as scope:
        logits = float_input(logits, "SoftmaxCrossEntropyWithLogits", "features")
        labels = convert_to_tensor(labels, dtype=logits.dtype)
        axis = _axis_of(logits, axis, "SoftmaxCrossEntropyWithLogits")
        op = make_op("SoftmaxCrossEntropyWithLogits", [logits, labels], {"axis": axis}, name=scope)
    return op.outputs[0]


def softmax_cross_entropy_with_logits(_sentinel=None, labels=None, logits=None, dim=-1, name=None, axis=None):
    """`tf.nn.softmax_cross_entropy_with_logits` (v1): like _v2 but no gradient flows into `labels`."""
    if _sentinel is not None:
        raise ValueError("Only call `softmax_cross_entropy_with_logits` with named arguments (labels=..., "
                         "logits=..., ...)")
    if labels is None or logits is None:
        raise ValueError("Both labels and logits must be provided.")
    with name_scope(name, "softmax_cross_entropy_with_logits_sg", [logits, labels]) as scope:
        labels = stop_gradient(labels, name="labels_stop_gradient")
    return softmax_cross_entropy_with_logits_v2(labels=labels, logits=logits, axis=dim if axis is None else axis,
                                                name=scope)


@register_gradient("SoftmaxCrossEntropyWithLogits")
def _xent_grad(op, grad_loss, grad_backprop):
    axis = op.get_attr("axis")
    logits, labels = op.inputs
    g_logits = make_tensor("XentScaleAlongAxis", [grad_loss, op.outputs[1]], {"axis": axis}, name="XentGrad")
    g_labels = make_tensor("XentLabelsGrad", [grad_loss, logits], {"axis": axis}, name="XentLabelsGrad")
    if not _is_zero(grad_backprop):
        # the backprop output (softmax(logits) - labels) is used, e.g. by a second derivative
        m = _m()
        sm = make_tensor("Softmax", [logits], {"axis": axis}, name="Softmax")
        g_logits = m.add(g_logits, make_tensor("SoftmaxGrad", [grad_backprop, sm], {"axis": axis},
                                               name="SoftmaxGrad"))
        g_labels = m.subtract(g_labels, grad_backprop)
    return [g_logits, g_labels]


@register_gradient("XentScaleAlongAxis")
def _xent_scale_grad(op, g):
    # XentScaleAlongAxis(grad_loss, like) = expand_dims(grad_loss, axis) * like
    grad_loss, like = op.inputs
    axis = op.get_attr("axis")
    return [_m().reduce_sum(_m().multiply(g, like), axis=axis),
            make_tensor("XentScaleAlongAxis", [grad_loss, g], {"axis": axis}, name="XentGrad")]


@register_gradient("XentLabelsGrad")
def _xent_labels_grad_grad(op, g):
    # XentLabelsGrad(grad_loss, logits) = -expand_dims(grad_loss, axis) * log_softmax(logits)
    m = _m()
    grad_loss, logits = op.inputs
    axis = op.get_attr("axis")
    logp = make_tensor("LogSoftmax", [logits], {"axis": axis}, name="LogSoftmax")
    scaled = m.negative(make_tensor("XentScaleAlongAxis", [grad_loss, g], {"axis": axis}, name="XentGrad"))
    return [m.negative(m.reduce_sum(m.multiply(g, logp), axis=axis)),
            make_tensor("LogSoftmaxGrad", [scaled, logp], {"axis": axis}, name="LogSoftmaxGrad")]


# -- sparse softmax cross entropy ---------------------------------------------
def _sparse_xent_shape(op):
    logits, labels = op.inputs
    return [(logits.dtype, labels.shape), (logits.dtype, logits.shape)]


register_op("SparseSoftmaxCrossEntropyWithLogits", _sparse_xent_shape)


def sparse_softmax_cross_entropy_with_logits(_sentinel=None, labels=None, logits=None, name=None):
    """`tf.nn.sparse_softmax_cross_entropy_with_logits`: labels [d0..dn-1] int32/int64, logits [d0..dn-1, C].

    A label outside [0, C) fails at run time with TF's InvalidArgumentError.
    """
    if _sentinel is not None:
        raise ValueError("Only call `sparse_softmax_cross_entropy_with_logits` with named arguments "
                         "(labels=..., logits=..., ...)")
    if labels is None or logits is None:
        raise ValueError("Both labels and logits must be provided.")
    with name_scope(name, "SparseSoftmaxCrossEntropyWithLogits", [labels, logits]):
        labels = convert_to_tensor(labels)
        logits = float_input(logits, "SparseSoftmaxCrossEntropyWithLogits", "features")
        if labels.dtype not in (_dtypes.int32, _dtypes.int64):
            raise TypeError(f"Value passed to parameter 'labels' has DataType {labels.dtype.name} not in list of "
                            f"allowed values: int32, int64")
        ls, gs = labels.shape, logits.shape
        if ls.ndims is not None and gs.ndims is not None:
            if gs.ndims == 0:
                raise ValueError(f"Logits cannot be scalars - received shape {gs}.")
            if ls.ndims != gs.ndims - 1:
                raise ValueError(f"Rank mismatch: Rank of labels (received {ls.ndims}) should equal rank of logits "
                                 f"minus 1 (received {gs.ndims}).")
            if not ls.is_compatible_with(gs[:-1]):
                raise ValueError(f"Shape mismatch: The shape of labels (received {ls}) should equal the shape of "
                                 f"logits except for the last dimension (received {gs}).")
        op = make_op("SparseSoftmaxCrossEntropyWithLogits", [logits, labels],
                     default_name="SparseSoftmaxCrossEntropyWithLogits")
    return op.outputs[0]


@register_gradient("SparseSoftmaxCrossEntropyWithLogits")
def _sparse_xent_grad(op, grad_loss, grad_backprop):
    g = make_tensor("XentScaleAlongAxis", [grad_loss, op.outputs[1]], {"axis": -1}, name="SparseXentGrad")
    if not _is_zero(grad_backprop):  # backprop = softmax(logits) - onehot(labels), e.g. a second derivative
        sm = make_tensor("Softmax", [op.inputs[0]], {"axis": -1}, name="Softmax")
        g = _m().add(g, make_tensor("SoftmaxGrad", [grad_backprop, sm], {"axis": -1}, name="SoftmaxGrad"))
    return [g, None]


# -- sigmoid cross entropy ----------------------------------------------------
register_op("SigmoidCrossEntropyWithLogits", _same_shape_binary)
# (grad, logits, labels) -> (d logits, d labels)
register_op("SigmoidCrossEntropyWithLogitsGrad",
            lambda op: [(op.inputs[1].dtype, op.inputs[1].shape), (op.inputs[2].dtype, op.inputs[2].shape)])


def sigmoid_cross_entropy_with_logits(_sentinel=None, labels=None, logits=None, name=None):
    """`tf.nn.sigmoid_cross_entropy_with_logits`: max(x, 0) - x * z + log(1 + exp(-|x|)), elementwise."""
    if _sentinel is not None:
        raise ValueError("Only call `sigmoid_cross_entropy_with_logits` with named arguments (labels=..., "
                         "logits=..., ...)")
    if labels is None or logits is None:
        raise ValueError("Both labels and logits must be provided.")
    with name_scope(name, "logistic_loss", [logits, labels]) as scope:
        logits = float_input(logits, "SigmoidCrossEntropyWithLogits", "logits")
        try:
            labels = convert_to_tensor(labels, dtype=logits.dtype)
        except ValueError as e:
            raise ValueError(f"logits and labels must have the same type: {e}") from None
        if not logits.shape.is_compatible_with(labels.shape):
            raise ValueError(f"logits and labels must have the same shape ({logits.shape} vs {labels.shape})")
        return make_tensor("SigmoidCrossEntropyWithLogits", [logits, labels], name=scope)


@register_gradient("SigmoidCrossEntropyWithLogits")
def _sigmoid_xent_grad(op, grad):
    g = make_op("SigmoidCrossEntropyWithLogitsGrad", [grad, op.inputs[0], op.inputs[1]], name="SigmoidXentGrad")
    return list(g.outputs)


@register_gradient("SigmoidCrossEntropyWithLogitsGrad")
def _sigmoid_xent_grad_grad(op, g_x, g_z):
    # outputs: (grad * (sigmoid(x) - z), -grad * x)
    m = _m()
    grad, x, z = op.inputs
    sig = make_tensor("Sigmoid", [x], name="Sigmoid")
    d_grad = m.subtract(m.multiply(g_x, m.subtract(sig, z)), m.multiply(g_z, x))
    d_x = m.subtract(make_tensor("SigmoidGrad", [sig, m.multiply(g_x, grad)], name="SigmoidGrad"),
                     m.multiply(g_z, grad))
    return [d_grad, d_x, m.negative(m.multiply(g_x, grad))]
