"""Defining and asking for other gradients: `Graph.gradient_override_map`, `tf.custom_gradient` and
`tf.hessians`.

Above `autodiff` (which asks `op_registry.gradient_function` for each op's gradient, honouring an
override), as TF builds them:
- `gradient_override_map({"Round": "Identity"})`: ops of those types created in the block use the
  gradient registered under the mapped name (`tf.RegisterGradient(name)`, or another op type's).
- `@tf.custom_gradient`: `f(*x)` returns `(y, grad_fn)`; the result passes through one IdentityN over
  `y + x` whose gradient is overridden by `grad_fn(*dy)` for `x` (and, for variables `f` creates, by the
  second list `grad_fn` returns when it takes a `variables` keyword).
- `tf.hessians(ys, xs)`: for each x, the gradient of each element of d(sum ys)/dx, stacked and
  reshaped to `shape(x) + shape(x)`. TF loops in the graph (while_loop); here x's size must be known
  when the graph is built, and the loop is unrolled.
"""
from __future__ import annotations

import contextlib
import inspect
import itertools

from .autodiff import gradients
from .default_graph import convert_to_tensor, get_default_graph
from .graph import Graph, GraphKeys
from .op_registry import RegisterGradient
from .ops import array_ops, join_ops
from .ops.identity_n_op import identity_n

__all__ = ["custom_gradient", "hessians"]
_uid = itertools.count()


@contextlib.contextmanager
def gradient_override_map(self: Graph, op_type_map: dict):
    """`tf.Graph.gradient_override_map`: within the block, new ops whose type is a key of `op_type_map` use the
    gradient registered under its value."""
    if not isinstance(op_type_map, dict) or not all(isinstance(k, str) and isinstance(v, str)
                                                    for k, v in op_type_map.items()):
        raise TypeError("op_type_map must be a dictionary mapping strings to strings")
    saved = dict(self.__dict__.get("_gradient_override_map") or {})
    self._gradient_override_map = {**saved, **op_type_map}
    try:
        yield
    finally:
        self._gradient_override_map = saved


Graph.gradient_override_map = gradient_override_map  # type: ignore[attr-defined]


def _flat(value) -> list:
    return list(value) if isinstance(value, (list, tuple)) else [value]


def custom_gradient(f):
    """`tf.custom_gradient`: decorates `f(*x) -> (y, grad_fn)`; `tf.gradients` through the result uses
    `grad_fn(*dy)` (one gradient per x) instead of differentiating `f`'s ops."""

    def decorated(*args, **kwargs):
        if kwargs:
            raise ValueError("The custom_gradient decorator currently supports keywords arguments only when "
                             "eager execution is enabled.")
        g = get_default_graph()
        args = [convert_to_tensor(a) for a in args]
        before = set(map(id, g.get_collection(GraphKeys.GLOBAL_VARIABLES)))
        result, grad_fn = f(*args)
        variables = [v for v in g.get_collection(GraphKeys.GLOBAL_VARIABLES) if id(v) not in before]
        takes_variables = "variables" in inspect.signature(grad_fn).parameters
        if variables and not takes_variables:
            raise TypeError("If using @custom_gradient with a function that creates variables, then grad_fn "
                            "must accept a keyword argument 'variables'.")
        flat_result = [convert_to_tensor(t) for t in _flat(result)]
        n = len(flat_result)
        name = f"CustomGradient-{next(_uid)}"

        @RegisterGradient(name)
        def _grad(op, *result_grads):
            dys = result_grads[:n]
            if takes_variables:
                input_grads, variable_grads = grad_fn(*dys, variables=variables)
            else:
                input_grads, variable_grads = grad_fn(*dys), []
            input_grads = _flat(input_grads)
            if len(input_grads) != len(args):
                raise ValueError(f"custom_gradient function {getattr(f, '__name__', f)!r} returned "
                                 f"{len(input_grads)} gradients for {len(args)} inputs")
            return [None] * n + input_grads + list(variable_grads)

        with g.gradient_override_map({"IdentityN": name}):
            outs = identity_n(flat_result + args + [v.value() for v in variables])
        outs = outs[:n]
        return outs if isinstance(result, (list, tuple)) else outs[0]

    decorated.__name__ = getattr(f, "__name__", "custom_gradient")
    decorated.__doc__ = f.__doc__
    return decorated


def hessians(ys, xs, name="hessians", colocate_gradients_with_ops=False, gate_gradients=False,
             aggregation_method=None):
    """`tf.hessians`: for each x in `xs`, the Hessian of sum(ys) with respect to x, shaped
    `shape(x) + shape(x)`."""
    xs = [convert_to_tensor(x) for x in _flat(xs)]
    first = gradients(ys, xs, name=name, colocate_gradients_with_ops=colocate_gradients_with_ops)
    out = []
    for x, grad in zip(xs, first):
        if grad is None:
            out.append(None)
            continue
        if not x.shape.is_fully_defined():
            raise ValueError(f"tf.hessians needs the shape of {x.name} when the graph is built, got {x.shape}")
        size = x.shape.num_elements()
        flat = array_ops.reshape(grad, [-1])
        rows = []
        for j in range(size):
            (second,) = gradients(flat[j], [x], name=name, unconnected_gradients="zero",
                                  colocate_gradients_with_ops=colocate_gradients_with_ops)
            rows.append(second)
        shape = x.shape.as_list()
        out.append(array_ops.reshape(join_ops.stack(rows), shape + shape))
    return out

