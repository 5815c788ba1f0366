"""The op registry: for each op type, its shape function, gradient and flags.

Bottom layer beside `dtypes`: `graph` consults it when an op is created (shape
inference), `autodiff` when differentiating, the executor for the cost class and for which ops write variables.
Op modules under `ops/` fill it; `@register_gradient` sits right beside the op.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Optional

if TYPE_CHECKING:
    from .graph import Operation  # type only: graph imports this module

ShapeFn = Callable[["Operation"], list]  # -> [(DType, TensorShape), ...]
GradFn = Callable[..., list]  # (op, *output_grads) -> [input grad or None, ...]


@dataclass
class OpDef:
    type: str
    shape_fn: ShapeFn
    grad_fn: Optional[GradFn] = None
    #: no gradient flows through this op (tf.NoGradient / ops.NotDifferentiable)
    not_differentiable: bool = False
    #: stateful ops (variables, assigns, random) are never constant-folded or deduplicated
    stateful: bool = False
    #: the executor may hand expensive ops to the inter-op pool; cheap ones run inline
    expensive: bool = False
    #: attrs holding the variable ops this op writes (Assign: ("var",); ApplyAdam: ("var", "m", "v"));
    #: the CUDA graph replay keeps those variables' arrays in place
    updates_variables: tuple = ()
    attrs_doc: dict = field(default_factory=dict)


_REGISTRY: dict[str, OpDef] = {}


def register_op(op_type: str, shape_fn: ShapeFn, *, stateful: bool = False, expensive: bool = False,
                updates_variables: tuple = ()) -> OpDef:
    """Declares an op type. Re-registering the same type is an error.

    `updates_variables` names the attrs that hold the variable ops the op writes
    (implies `stateful`).
    """
    if op_type in _REGISTRY:
        raise KeyError(f"Op type {op_type!r} is already registered")
    op_def = OpDef(op_type, shape_fn, stateful=stateful or bool(updates_variables), expensive=expensive,
                   updates_variables=tuple(updates_variables))
    _REGISTRY[op_type] = op_def
    return op_def


def register_gradient(op_type: str):
    """Decorator: `@register_gradient("MatMul") def _grad(op, grad): ...` (TF's RegisterGradient)."""

    def deco(fn: GradFn) -> GradFn:
        op_def = _REGISTRY.get(op_type)
        if op_def is None:
            raise KeyError(f"Cannot register a gradient for unknown op type {op_type!r}")
        if op_def.grad_fn is not None:
            raise KeyError(f"Gradient for op type {op_type!r} is already registered")
        op_def.grad_fn = fn
        return fn

    return deco


def not_differentiable(op_type: str) -> None:
    """Marks an op as having no gradient (TF's `ops.NotDifferentiable`)."""
    _REGISTRY[op_type].not_differentiable = True


NotDifferentiable = not_differentiable
#: gradients registered under a name that is not an op type, for `Graph.gradient_override_map`
_GRADIENTS_BY_NAME: dict[str, GradFn] = {}


class RegisterGradient:
    """`tf.RegisterGradient(name)`: a decorator registering `f(op, *grads)` as the gradient of op type `name`,
    or, for a name that is no op type, a gradient that `Graph.gradient_override_map` can assign to ops."""

    def __init__(self, op_type: str):
        if not isinstance(op_type, str):
            raise TypeError("op_type must be a string")
        self._op_type = op_type

    def __call__(self, f: GradFn) -> GradFn:
        op_def = _REGISTRY.get(self._op_type)
        if self._op_type in _GRADIENTS_BY_NAME or (op_def is not None and op_def.grad_fn is not None):
            raise KeyError(f"Registering two gradient with name '{self._op_type}'!")
        if op_def is not None:
            op_def.grad_fn = f
        else:
            _GRADIENTS_BY_NAME[self._op_type] = f
        return f


def gradient_function(op) -> Optional[GradFn]:
    """The gradient of `op`: the one its `gradient_override_map` entry names, else its type's (None if none).
    LookupError when an override names no registered gradient."""
    override = getattr(op, "_gradient_override", None)
    if override is None:
        return _REGISTRY[op.type].grad_fn
    if override in _GRADIENTS_BY_NAME:
        return _GRADIENTS_BY_NAME[override]
    op_def = _REGISTRY.get(override)
    if op_def is not None and op_def.grad_fn is not None:
        return op_def.grad_fn
    raise LookupError(f"No gradient defined for operation '{op.name}' (op type: {op.type}): its "
                      f"gradient_override_map entry names {override!r}, which no RegisterGradient defined")


def get_op_def(op_type: str) -> OpDef:
    try:
        return _REGISTRY[op_type]
    except KeyError:
        raise KeyError(f"Op type not registered: {op_type!r}") from None


def registered_op_types() -> list[str]:
    return sorted(_REGISTRY)
