"""`tf.train.ExponentialMovingAverage`: shadow variables updated by `shadow -= (shadow - var) * (1 - decay)`.

Top layer, beside the optimizers: shadows are slot-like variables `<var>/<name>` created with
`optimizer.create_slot` (colocated with their variable, outside name/control scopes), initialized
from the variable's initial value; `apply()` returns one grouped op of AssignSub updates (TF's
`assign_moving_average`), so `tf.control_dependencies([train_op])` + `ema.apply()` works as in TF.
"""
from __future__ import annotations

from .. import dtypes as _dtypes
from ..graph import GraphKeys
from ..default_graph import convert_to_tensor, get_default_graph, name_scope
from ..ops import array_ops, control_flow_ops, math_ops, state_ops
from .optimizer import create_slot

__all__ = ["ExponentialMovingAverage"]

_FLOATS = (_dtypes.float16, _dtypes.float32, _dtypes.float64)


def assign_moving_average(variable, value, decay, name=None):
    """`variable -= (variable - value) * (1 - decay)`, i.e. `decay * variable + (1 - decay) * value`."""
    with name_scope(name, "AssignMovingAvg", [variable, value, decay]):
        decay = math_ops.cast(convert_to_tensor(decay), variable.dtype.base_dtype)
        with get_default_graph().colocate_with(variable.op):
            delta = (variable.value() - value) * (1.0 - decay)
            return state_ops.assign_sub(variable, delta)


class ExponentialMovingAverage:
    """Maintains moving averages of variables (TF 1.15 API)."""

    def __init__(self, decay, num_updates=None, zero_debias=False, name="ExponentialMovingAverage"):
        self._decay = decay
        self._num_updates = num_updates
        self._zero_debias = zero_debias
        self._name = name
        self._averages: dict = {}

    @property
    def name(self) -> str:
        return self._name

    def apply(self, var_list=None):
        """Creates the shadows (first call per variable) and returns the op that updates them all."""
        if var_list is None:
            var_list = get_default_graph().get_collection(GraphKeys.TRAINABLE_VARIABLES)
        var_list = list(var_list)
        for var in var_list:
            if var.dtype.base_dtype not in _FLOATS:
                raise TypeError(f"The variables must be half, float, or double: {var.name}")
            if var in self._averages:
                continue
            if not isinstance(var, state_ops.Variable):
                raise TypeError(f"ExponentialMovingAverage.apply: only variables are supported, got {var!r}")
            init = var.initial_value
            self._averages[var] = create_slot(var, lambda init=init: array_ops.identity(init), self._name)
            get_default_graph().add_to_collection(GraphKeys.MOVING_AVERAGE_VARIABLES, var)
        with name_scope(self._name) as scope:
            decay = convert_to_tensor(self._decay, dtype=_dtypes.float32, name="decay")
            if self._num_updates is not None:
                n = math_ops.cast(self._num_updates, _dtypes.float32, name="num_updates")
                decay = math_ops.minimum(decay, (1.0 + n) / (10.0 + n))
            # read_value(): TF reads the variable when the update runs (after any enclosing control deps).
            updates = [assign_moving_average(self._averages[var], var.read_value(), decay) for var in var_list]
            return control_flow_ops.group(*updates, name=scope)  # named exactly like the scope, as TF

    def average(self, var):
        """The shadow variable of `var`, or None."""
        return self._averages.get(var)

    def average_name(self, var) -> str:
        """The shadow's name in checkpoints: `<var op name>/<name>`."""
        return f"{var.op.name}/{self._name}"

    def variables_to_restore(self, moving_avg_variables=None) -> dict:
        """A Saver var_list mapping the shadows' names to the variables (the rest by their own names)."""
        g = get_default_graph()
        if moving_avg_variables is None:
            moving_avg_variables = g.get_collection(GraphKeys.TRAINABLE_VARIABLES) + \
                g.get_collection(GraphKeys.MOVING_AVERAGE_VARIABLES)
        name_map = {}
        for v in moving_avg_variables:
            name_map[self.average_name(v)] = v
        moving = set(moving_avg_variables)
        for v in g.get_collection(GraphKeys.GLOBAL_VARIABLES):
            if v not in moving and v.op.name not in name_map:
                name_map[v.op.name] = v
        return name_map
