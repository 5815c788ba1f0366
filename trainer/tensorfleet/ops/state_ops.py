"""Variables and their state ops: VariableV2, Assign, AssignAdd, AssignSub, CountUpTo, initializers.

A variable's value lives in the session's state (the executor's resource store),
keyed by the variable op's name. `VariableV2` reads it (FailedPreconditionError
if never assigned); assign ops carry the variable op in their `var` attr and are
colocated with it, so the placer keeps a variable and its updates together.
`tf.count_up_to` (CountUpTo) increments an int scalar variable and returns its value before the increment;
it raises OutOfRangeError "Reached limit of N" once the value is >= limit.
"""

from __future__ import annotations

__all__ = [
    "Variable", "assign", "assign_add", "assign_sub", "is_variable_initialized", "count_up_to", "global_variables",
    "all_variables", "local_variables", "trainable_variables", "model_variables", "variables_initializer",
    "global_variables_initializer", "local_variables_initializer", "initialize_all_variables",
]

from typing import Optional

from .. import dtypes as _dtypes
from ..graph import GraphKeys, Operation, Tensor
from ..default_graph import convert_to_tensor, get_default_graph, register_tensor_conversion_function
from ..func_graph import FuncGraph, lift_out_of_function
from ..tensor_shape import TensorShape, as_shape
from .common import NotDifferentiable, check_dtype, make_tensor, register_op
from .control_flow_ops import group
from .array_ops import identity
from ..default_graph import get_default_session

register_op("VariableV2", lambda op: [(op.get_attr("dtype"), op.get_attr("shape"))], stateful=True)
NotDifferentiable("VariableV2")


def _assign_shape(op):
    var: Operation = op.get_attr("var")
    value = op.inputs[0]
    shape = var.outputs[0].shape
    if op.get_attr("validate_shape") and not value.shape.is_compatible_with(shape):
        value_rank = len(value.shape) if value.shape.ndims is not None else '?'
        raise ValueError(f"Shapes must be equal rank, but are {value_rank} "
                         f"and {shape.ndims}" if value.shape.ndims != shape.ndims else
                         f"Dimension mismatch: cannot assign value of shape {value.shape} to variable "
                         f"'{var.name}' of shape {shape}")
    out_shape = shape if op.get_attr("validate_shape") else value.shape
    return [(var.outputs[0].dtype, out_shape)]


for _t in ("Assign", "AssignAdd", "AssignSub"):
    register_op(_t, _assign_shape, stateful=True, updates_variables=("var",))
    NotDifferentiable(_t)

register_op("IsVariableInitialized", lambda op: [(_dtypes.bool_, TensorShape([]))], stateful=True)
NotDifferentiable("IsVariableInitialized")


register_op("InitializedValue", lambda op: [(op.inputs[0].dtype, op.get_attr("var").outputs[0].shape)],
            stateful=True)
NotDifferentiable("InitializedValue")


def _var_op(ref) -> Operation:
    if isinstance(ref, Variable):
        return ref.op
    if isinstance(ref, Tensor) and ref.op.type == "VariableV2":
        return ref.op
    raise TypeError(f"Expected a variable, got {ref!r}")


def _assign_like(op_type: str, ref, value, validate_shape: bool, name: Optional[str]) -> Tensor:
    var_op = _var_op(ref)
    value = convert_to_tensor(value, dtype=var_op.outputs[0].dtype)
    g = var_op.graph
    with g.colocate_with(var_op):
        return make_tensor(op_type, [value], {"var": var_op, "validate_shape": validate_shape}, name=name,
                           default_name=op_type)


def assign(ref, value, validate_shape=True, use_locking=None, name=None) -> Tensor:
    """`tf.assign`: stores `value` in the variable; the output is the new value."""
    return _assign_like("Assign", ref, value, validate_shape, name)


def assign_add(ref, value, use_locking=None, name=None) -> Tensor:
    return _assign_like("AssignAdd", ref, value, True, name)


def assign_sub(ref, value, use_locking=None, name=None) -> Tensor:
    return _assign_like("AssignSub", ref, value, True, name)


def is_variable_initialized(variable, name=None) -> Tensor:
    var_op = _var_op(variable)
    with var_op.graph.colocate_with(var_op):
        return make_tensor("IsVariableInitialized", [], {"var": var_op}, name=name,
                           default_name="IsVariableInitialized")


def _count_up_to_shape(op):
    var = op.get_attr("var").outputs[0]
    if var.shape.ndims not in (None, 0):
        raise ValueError(f"Shape must be rank 0 but is rank {var.shape.ndims}")
    return [(var.dtype, TensorShape([]))]


register_op("CountUpTo", _count_up_to_shape, updates_variables=("var",))
NotDifferentiable("CountUpTo")


def count_up_to(ref, limit, name=None):
    """`tf.count_up_to`: increments the int scalar variable `ref` and returns its value before the increment;
    OutOfRangeError "Reached limit of <limit>" at run time when the value is already >= limit."""
    var_op = _var_op(ref)
    check_dtype("ref", var_op.outputs[0], (_dtypes.int32, _dtypes.int64))
    with var_op.graph.colocate_with(var_op):
        return make_tensor("CountUpTo", [], {"var": var_op, "limit": int(limit)}, name=name,
                           default_name="CountUpTo")


class Variable:
    """`tf.Variable` (TF1 RefVariable semantics, value kept in the session)."""

    def __init__(self, initial_value=None, trainable=True, collections=None, validate_shape=True,
                 caching_device=None, name=None, variable_def=None, dtype=None, expected_shape=None,
                 import_scope=None, constraint=None, use_resource=None, synchronization=None,
                 aggregation=None, shape=None):
        if variable_def is not None:
            if initial_value is not None:
                raise ValueError("variable_def and initial_value are mutually exclusive.")
            self._init_from_proto(variable_def, import_scope)
            return
        if initial_value is None:
            raise ValueError("initial_value must be specified.")
        g = get_default_graph()
        if isinstance(g, FuncGraph):  # created while a cond/while body is traced: the variable lives outside it
            with lift_out_of_function(g) as outer:
                if isinstance(initial_value, Tensor) and initial_value.graph is not outer:
                    raise ValueError(f"The initial value of variable {name or 'Variable'} created inside the "
                                     f"control-flow function '{g.name}' depends on that function: use a callable "
                                     f"initializer, or create the variable before tf.cond / tf.while_loop")
                self.__init__(initial_value, trainable, collections, validate_shape, caching_device, name,
                              variable_def, dtype, expected_shape, import_scope, constraint, use_resource,
                              synchronization, aggregation, shape)
            return
        self._trainable = trainable
        self._constraint = constraint
        with g.name_scope(name or "Variable") as scope:
            if callable(initial_value):
                with g.name_scope("Initializer"), g.colocate_with(None, ignore_existing=True), g.device(None):
                    initial_value = initial_value()
            self._initial_value = convert_to_tensor(initial_value, dtype=dtype, name="initial_value")
            var_shape = as_shape(shape) if shape is not None else self._initial_value.shape
            if validate_shape and not var_shape.is_fully_defined():
                raise ValueError(f"initial_value must have a shape specified: {self._initial_value!r}")
            # A name ending in "/" is taken verbatim: the op is named exactly like its scope.
            self._variable = g.create_op("VariableV2", [], {"dtype": self._initial_value.dtype,
                                                            "shape": var_shape}, name=scope).outputs[0]
            with g.colocate_with(self._variable.op):
                self._initializer_op = assign(self._variable, self._initial_value, validate_shape=validate_shape,
                                              name="Assign").op
        if collections is None:
            collections = [GraphKeys.GLOBAL_VARIABLES]
        collections = list(collections)
        if trainable and GraphKeys.TRAINABLE_VARIABLES not in collections:
            collections.append(GraphKeys.TRAINABLE_VARIABLES)
        g.add_to_collections(collections, self)

    def _init_from_proto(self, variable_def, import_scope=None) -> None:
        """A Variable over ops already in the default graph (an imported meta graph), named by a VariableDef;
        added to no collection (the importer restores those)."""
        g = get_default_graph()

        def scoped(name: str) -> str:
            return f"{import_scope}/{name}" if import_scope else name

        self._variable = g.get_tensor_by_name(scoped(variable_def.variable_name))
        self._initializer_op = g.get_operation_by_name(scoped(variable_def.initializer_name))
        self._initial_value = (g.get_tensor_by_name(scoped(variable_def.initial_value_name))
                               if variable_def.initial_value_name else None)
        self._trainable = bool(variable_def.trainable)
        self._constraint = None

    @staticmethod
    def from_proto(variable_def, import_scope=None) -> "Variable":
        """`tf.Variable.from_proto`."""
        return Variable(variable_def=variable_def, import_scope=import_scope)

    # -- identity -------------------------------------------------------------
    @property
    def name(self) -> str:
        return self._variable.name

    @property
    def op(self) -> Operation:
        return self._variable.op

    @property
    def graph(self):
        return self._variable.graph

    @property
    def dtype(self):
        return self._variable.dtype

    @property
    def device(self) -> str:
        return self._variable.device

    @property
    def shape(self) -> TensorShape:
        return self._variable.shape

    def get_shape(self) -> TensorShape:
        return self._variable.shape

    @property
    def trainable(self) -> bool:
        return self._trainable

    @property
    def initializer(self) -> Operation:
        return self._initializer_op

    @property
    def initial_value(self) -> Tensor:
        return self._initial_value

    @property
    def constraint(self):
        return self._constraint

    # -- reading and writing --------------------------------------------------
    def value(self) -> Tensor:
        return self._variable

    def read_value(self) -> Tensor:

        with self._variable.graph.colocate_with(self._variable.op):  # TF: reads live with the variable
            return identity(self._variable, name="read")

    def initialized_value(self) -> Tensor:
        """The variable's value if it is initialized, else its initial value (TF1's cond, as one op).

        For initializing one variable from another in the same `global_variables_initializer` run.
        Unlike TF's `cond`, the initial value is computed on every run of this op.
        """
        g = self.graph
        with g.name_scope(self.op.name + "/"), g.colocate_with(self.op):
            return make_tensor("InitializedValue", [self._initial_value], {"var": self.op},
                               name="initialized_value")

    def _as_graph_element(self):
        return self._variable

    def assign(self, value, use_locking=False, name=None, read_value=True):
        t = assign(self, value, name=name)
        return t if read_value else t.op

    def assign_add(self, delta, use_locking=False, name=None, read_value=True):
        t = assign_add(self, delta, name=name)
        return t if read_value else t.op

    def assign_sub(self, delta, use_locking=False, name=None, read_value=True):
        t = assign_sub(self, delta, name=name)
        return t if read_value else t.op

    def count_up_to(self, limit):
        """`Variable.count_up_to`: tf.count_up_to on this variable."""
        return count_up_to(self, limit)

    def eval(self, session=None):
        return self._variable.eval(session=session)

    def load(self, value, session=None):

        session = session or get_default_session()
        if session is None:
            raise ValueError("Either session argument should be provided or default session should be established")
        session.run(self._initializer_op, {self._initial_value: value})

    def is_initialized(self):
        return is_variable_initialized(self)

    def __repr__(self):
        return f"<tf.Variable '{self.name}' shape={self.shape} dtype={self.dtype.name}_ref>"

    __hash__ = object.__hash__


def _install_variable_operators():
    for name in ("__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__", "__matmul__",
                 "__rmatmul__", "__neg__", "__truediv__", "__rtruediv__", "__div__", "__floordiv__",
                 "__rfloordiv__", "__mod__", "__pow__", "__rpow__", "__lt__", "__le__", "__gt__", "__ge__",
                 "__and__", "__or__", "__xor__", "__invert__", "__abs__", "__getitem__"):
        def method(self, *args, _n=name):
            return getattr(self._variable, _n)(*args)
        setattr(Variable, name, method)


_install_variable_operators()
register_tensor_conversion_function(Variable, lambda v, dtype=None, name=None: v._variable)


# -- initialization helpers ---------------------------------------------------
def global_variables(scope=None) -> list:
    return get_default_graph().get_collection(GraphKeys.GLOBAL_VARIABLES, scope)


all_variables = global_variables


def local_variables(scope=None) -> list:
    return get_default_graph().get_collection(GraphKeys.LOCAL_VARIABLES, scope)


def trainable_variables(scope=None) -> list:
    return get_default_graph().get_collection(GraphKeys.TRAINABLE_VARIABLES, scope)


def model_variables(scope=None) -> list:
    return get_default_graph().get_collection(GraphKeys.MODEL_VARIABLES, scope)


def variables_initializer(var_list, name="init") -> Operation:
    return group(*[v.initializer for v in var_list], name=name)


def global_variables_initializer() -> Operation:
    return variables_initializer(global_variables(), name="init")


def local_variables_initializer() -> Operation:
    return variables_initializer(local_variables(), name="init")


initialize_all_variables = global_variables_initializer
