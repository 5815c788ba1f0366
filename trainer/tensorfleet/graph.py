"""Graph, Operation and Tensor: the data structure every other layer builds on.

Flow: op functions in `ops/` call `Graph.create_op`, which applies the current
name scope, control dependencies, device scopes and colocation, then runs the
op type's shape function from `op_registry`. `autodiff` walks these objects
backwards; the executor prunes and runs them. Nothing here executes anything.
`GraphKeys` (graph_keys.py, re-exported) and new ops' placement (device_scope.py) sit beside it.
"""
from __future__ import annotations

import contextlib
import re
import threading
from typing import Any, Callable, Iterable, Optional

from . import dtypes as _dtypes
from .device_scope import DeviceScope, place_new_op
from .device_spec import DeviceSpec
from .graph_keys import GraphKeys  # noqa: F401  (re-export: every module imports it from here)
from .op_registry import get_op_def
from .tensor_shape import TensorShape, as_shape

#: graphs entered with `Graph.as_default()`, innermost last (`default_graph.get_default_graph` reads it)
_default_graph_stack: list = []
#: sessions entered as default, innermost last (`Tensor.eval`, `Operation.run`, `tf.get_default_session`)
_default_session_stack: list = []


def get_default_session():
    return _default_session_stack[-1] if _default_session_stack else None

_VALID_OP_NAME = re.compile(r"^[A-Za-z0-9.][A-Za-z0-9_.\-/>]*$")
_VALID_SCOPE_NAME = re.compile(r"^[A-Za-z0-9_.\-/>]*$")


class Tensor:
    """A symbolic handle to one output of an Operation (`"op_name:index"`)."""

    # `_keras_history` / `_keras_mask`: set by tf.keras layers on the tensors they output (keras/engine/node.py),
    # unset (AttributeError, as TF's `hasattr(t, "_keras_history")` checks expect) on every other tensor.
    __slots__ = ("_op", "_value_index", "_dtype", "_shape", "_consumers", "_keras_history", "_keras_mask",
                 "__weakref__")

    # Let numpy defer to our operator overloads (np.float32(2) * tensor).
    __array_priority__ = 100

    def __init__(self, op: "Operation", value_index: int, dtype: _dtypes.DType, shape: TensorShape):
        self._op = op
        self._value_index = value_index
        self._dtype = dtype
        self._shape = shape
        self._consumers: list[Operation] = []

    @property
    def op(self) -> "Operation":
        return self._op

    @property
    def value_index(self) -> int:
        return self._value_index

    @property
    def dtype(self) -> _dtypes.DType:
        return self._dtype

    @property
    def graph(self) -> "Graph":
        return self._op.graph

    @property
    def name(self) -> str:
        return f"{self._op.name}:{self._value_index}"

    @property
    def device(self) -> str:
        return self._op.device

    @property
    def shape(self) -> TensorShape:
        return self._shape

    def get_shape(self) -> TensorShape:
        return self._shape

    def set_shape(self, shape) -> None:
        """Refines the static shape; incompatible shapes raise ValueError."""
        self._shape = self._shape.merge_with(as_shape(shape))

    def consumers(self) -> list:
        return list(self._consumers)

    def eval(self, feed_dict=None, session=None):
        session = session or get_default_session()
        if session is None:
            raise ValueError("Cannot evaluate tensor using `eval()`: No default session is registered. "
                             "Use `with sess.as_default()` or pass an explicit session to `eval(session=sess)`")
        return session.run(self, feed_dict)

    def __repr__(self):
        return f"<tf.Tensor '{self.name}' shape={self._shape} dtype={self._dtype.name}>"

    def __bool__(self):
        raise TypeError("Using a `tf.Tensor` as a Python `bool` is not allowed. "
                        "Use `if t is not None:` instead of `if t:` or use TensorFlow ops "
                        "such as tf.cond to execute subgraphs conditioned on the value of a tensor.")

    def __iter__(self):
        raise TypeError("Tensor objects are only iterable when eager execution is enabled. "
                        "To iterate over this tensor use tf.unstack or slicing.")

    def __len__(self):
        raise TypeError(f"len is not well defined for symbolic Tensors ({self.name}). Use tf.shape.")

    # Tensors are hashed and compared by identity (TF1 semantics), so they can key dicts.
    __hash__ = object.__hash__

    @classmethod
    def _override_operator(cls, operator: str, func: Callable) -> None:
        setattr(cls, operator, func)


class Operation:
    """A node: an op type, input tensors, control inputs, attributes and a device."""

    def __init__(self, graph: "Graph", op_type: str, name: str, inputs: list, control_inputs: list,
                 attrs: dict, op_id: int):
        self._graph = graph
        self._type = op_type
        self._name = name
        self._inputs = tuple(inputs)
        self._control_inputs = list(control_inputs)
        self._attrs = dict(attrs)
        self._id = op_id
        self._device = ""
        self._colocation_groups: list[str] = []
        self._op_def = get_op_def(op_type)
        self._outputs: list[Tensor] = []

    def _infer_outputs(self) -> None:
        try:
            specs = self._op_def.shape_fn(self)
        except ValueError as e:
            shapes = ", ".join(_shape_text(t.shape) for t in self._inputs)
            raise ValueError(f"{e} for '{self._name}' (op: '{self._type}') with input shapes: {shapes}.") from None
        self._outputs = [Tensor(self, i, _dtypes.as_dtype(dt), as_shape(sh)) for i, (dt, sh) in enumerate(specs)]

    @property
    def name(self) -> str:
        return self._name

    @property
    def type(self) -> str:
        return self._type

    @property
    def graph(self) -> "Graph":
        return self._graph

    @property
    def inputs(self) -> tuple:
        return self._inputs

    @property
    def outputs(self) -> list:
        return list(self._outputs)

    @property
    def control_inputs(self) -> list:
        return list(self._control_inputs)

    @property
    def op_def(self):
        return self._op_def

    @property
    def device(self) -> str:
        return self._device

    @property
    def node_def(self) -> dict:
        return {"name": self._name, "op": self._type, "device": self._device,
                "input": [t.name for t in self._inputs] + ["^" + c.name for c in self._control_inputs]}

    def _set_device(self, device) -> None:
        self._device = (device if isinstance(device, DeviceSpec) else DeviceSpec.from_string(device)).to_string()

    def _add_control_input(self, op: "Operation") -> None:
        if op not in self._control_inputs:
            self._control_inputs.append(op)

    def colocation_groups(self) -> list:   # bytes, as TF's; the op's own group when it has none
        return [g.encode() for g in self._colocation_names()]

    def _colocation_names(self) -> list:   # str, for placement and device scopes
        return list(self._colocation_groups) or [f"loc:@{self._name}"]

    def get_attr(self, name: str) -> Any:
        if name == "_class" and self._colocation_groups:   # TF keeps colocation as this attr
            return [g.encode() for g in self._colocation_groups]
        try:
            return self._attrs[name]
        except KeyError:
            raise ValueError(f"Operation '{self._name}' has no attr named '{name}'.") from None

    @property
    def attrs(self) -> dict:
        return self._attrs

    def run(self, feed_dict=None, session=None) -> None:
        session = session or get_default_session()
        if session is None:
            raise ValueError("Cannot execute operation using `run()`: No default session is registered.")
        session.run(self, feed_dict)

    def __repr__(self):
        return f"<tf.Operation '{self._name}' type={self._type}>"


def _shape_text(shape: TensorShape) -> str:
    if shape.ndims is None:
        return "?"
    return "[" + ",".join("?" if d is None else str(d) for d in shape.as_tuple()) + "]"


class Graph:
    """A TF1 dataflow graph. Thread-safe for op creation."""

    def __init__(self):
        self._lock = threading.RLock()
        self._ops: list[Operation] = []
        self._ops_by_name: dict[str, Operation] = {}
        self._names_in_use: dict[str, int] = {}
        self._name_stack = ""
        self._control_dependencies_stack: list[list[Operation]] = []
        self._device_stack: list[DeviceScope] = []
        self._colocation_stack: list[Operation] = []
        self._collections: dict[str, list] = {}
        self._finalized = False
        self.seed: Optional[int] = None
        self._var_scope_store = None  # owned by ops.variable_scope
        self._last_id = 0

    # -- op creation ----------------------------------------------------------
    def create_op(self, op_type: str, inputs: Iterable = (), attrs: Optional[dict] = None,
                  name: Optional[str] = None) -> Operation:
        """Creates an Operation; `name` defaults to the op type and is made unique."""
        inputs = list(inputs)
        for t in inputs:
            if not isinstance(t, Tensor):
                raise TypeError(f"Input to op {op_type} must be a Tensor, got {type(t).__name__}")
            if t.graph is not self:
                raise ValueError(f"Tensor {t!r} must be from the same graph as the op being created ({op_type}).")
        with self._lock:
            self._check_not_finalized()
            name = self._op_name(name or op_type)
            self._last_id += 1
            controls = self._current_control_inputs(inputs)
            op = Operation(self, op_type, name, inputs, controls, attrs or {}, self._last_id)
            op._infer_outputs()
            overrides = self.__dict__.get("_gradient_override_map")  # set by gradient_overrides.py
            if overrides and op_type in overrides:
                op._gradient_override = overrides[op_type]
            place_new_op(op, self._colocation_stack, self._device_stack)
            self._ops.append(op)
            self._ops_by_name[name] = op
            for t in inputs:
                t._consumers.append(op)
            return op

    def _op_name(self, name: str) -> str:
        if name.endswith("/"):  # a scope name, as returned by name_scope: used verbatim
            name = name[:-1]
            if name in self._ops_by_name:
                raise ValueError(f"Duplicate node name in graph: '{name}'")
            self._names_in_use.setdefault(name.lower(), 1)
            return name
        return self.unique_name(name)

    def _current_control_inputs(self, inputs) -> list:
        if not self._control_dependencies_stack:
            return []
        input_ops = {t.op for t in inputs}
        out: list[Operation] = []
        for frame in self._control_dependencies_stack:
            for c in frame:
                if c not in input_ops and c not in out:
                    out.append(c)
        return out

    def _check_not_finalized(self) -> None:
        if self._finalized:
            raise RuntimeError("Graph is finalized and cannot be modified.")

    def finalize(self) -> None:
        self._finalized = True

    @property
    def finalized(self) -> bool:
        return self._finalized

    def _unsafe_unfinalize(self) -> None:
        self._finalized = False

    # -- names and scopes -----------------------------------------------------
    def unique_name(self, name: str, mark_as_used: bool = True) -> str:
        """TF's rule: prefix the scope, then append _1, _2... (case-insensitively) on collision."""
        if self._name_stack:
            name = f"{self._name_stack}/{name}"
        key = name.lower()
        i = self._names_in_use.get(key, 0)
        if mark_as_used:
            self._names_in_use[key] = i + 1
        if i > 0:
            base = key
            while key in self._names_in_use:
                key = f"{base}_{i}"
                i += 1
            if mark_as_used:
                self._names_in_use[key] = 1
            name = f"{name}_{i - 1}"
        return name

    def get_name_scope(self) -> str:
        return self._name_stack

    @contextlib.contextmanager
    def name_scope(self, name: Optional[str]):
        """Opens a name scope; a name ending in '/' re-enters that exact scope, '' or None resets."""
        if name:
            pattern = _VALID_SCOPE_NAME if self._name_stack else _VALID_OP_NAME
            if not pattern.match(name):
                raise ValueError(f"'{name}' is not a valid scope name")
        old = self._name_stack
        if not name:
            new = ""
        elif name.endswith("/"):
            new = name[:-1]
        else:
            new = self.unique_name(name)
        self._name_stack = new
        try:
            yield "" if not new else new + "/"
        finally:
            self._name_stack = old

    # -- dependency, device and colocation scopes -----------------------------
    @contextlib.contextmanager
    def control_dependencies(self, control_inputs):
        """Ops created inside run after `control_inputs`; None clears outer scopes."""
        if control_inputs is None:
            saved = self._control_dependencies_stack
            self._control_dependencies_stack = []
            try:
                yield
            finally:
                self._control_dependencies_stack = saved
            return
        ops = []
        for c in control_inputs:
            op = _as_operation(c)
            if op.graph is not self:
                raise ValueError(f"Control input {op.name} must be from the same graph.")
            ops.append(op)
        self._control_dependencies_stack.append(ops)
        try:
            yield
        finally:
            self._control_dependencies_stack.pop()

    @contextlib.contextmanager
    def device(self, device_name_or_function):
        """Device scope: a name (merged field by field), a function(op) -> name, or None."""
        self._device_stack.append(DeviceScope(device_name_or_function))
        try:
            yield
        finally:
            self._device_stack.pop()

    @contextlib.contextmanager
    def colocate_with(self, op, ignore_existing: bool = False):
        """New ops share `op`'s device and colocation group; device scopes are suspended."""
        saved_devices = self._device_stack
        saved_coloc = self._colocation_stack
        self._device_stack = []
        if ignore_existing:
            self._colocation_stack = []
        if op is not None:
            self._colocation_stack = self._colocation_stack + [_as_operation(op)]
        else:
            self._colocation_stack = []
        try:
            yield
        finally:
            self._device_stack = saved_devices
            self._colocation_stack = saved_coloc

    # -- lookup ---------------------------------------------------------------
    def get_operations(self) -> list:
        return list(self._ops)

    def get_operation_by_name(self, name: str) -> Operation:
        if not isinstance(name, str):
            raise TypeError(f"Operation names are strings (or similar), not {type(name).__name__}.")
        try:
            return self._ops_by_name[name]
        except KeyError:
            raise KeyError(f"The name '{name}' refers to an Operation not in the graph.") from None

    def get_tensor_by_name(self, name: str) -> Tensor:
        if not isinstance(name, str):
            raise TypeError(f"Tensor names are strings (or similar), not {type(name).__name__}.")
        return self.as_graph_element(name, allow_tensor=True, allow_operation=False)

    def as_graph_element(self, obj, allow_tensor: bool = True, allow_operation: bool = True):
        """Resolves a Tensor, Operation, variable or name ("op" or "op:0") in this graph."""
        if isinstance(obj, str):
            if ":" in obj:
                if not allow_tensor:
                    raise ValueError(f"Name '{obj}' appears to refer to a Tensor, not an Operation.")
                op_name, _, idx = obj.rpartition(":")
                if not idx.isdigit():
                    raise ValueError(f"The name '{obj}' looks like a Tensor name, but is not a valid one.")
                op = self._ops_by_name.get(op_name)
                if op is None:
                    raise KeyError(f"The name '{obj}' refers to a Tensor which does not exist. "
                                   f"The operation, '{op_name}', does not exist in the graph.")
                if int(idx) >= len(op._outputs):
                    raise KeyError(f"The name '{obj}' refers to a Tensor which does not exist. The operation, "
                                   f"'{op_name}', exists but only has {len(op._outputs)} outputs.")
                return op._outputs[int(idx)]
            if not allow_operation:
                raise ValueError(f"The name '{obj}' looks like an (invalid) Operation name, not a Tensor. "
                                 f"Tensor names must be of the form \"<op_name>:<output_index>\".")
            op = self._ops_by_name.get(obj)
            if op is None:
                raise KeyError(f"The name '{obj}' refers to an Operation not in the graph.")
            return op
        if isinstance(obj, Tensor) and allow_tensor:
            if obj.graph is not self:
                raise ValueError(f"Tensor {obj!r} is not an element of this graph.")
            return obj
        if isinstance(obj, Operation) and allow_operation:
            if obj.graph is not self:
                raise ValueError(f"Operation {obj!r} is not an element of this graph.")
            return obj
        conv = getattr(obj, "_as_graph_element", None)
        if conv is not None:
            return self.as_graph_element(conv(), allow_tensor, allow_operation)
        wanted = ('Tensor or Operation' if allow_tensor and allow_operation
                  else 'Tensor' if allow_tensor else 'Operation')
        raise TypeError(f"Can not convert a {type(obj).__name__} into a {wanted}.")

    # -- collections ----------------------------------------------------------
    def add_to_collection(self, name: str, value) -> None:
        self._check_not_finalized()
        self._collections.setdefault(name, []).append(value)

    def add_to_collections(self, names, value) -> None:
        for n in ([names] if isinstance(names, str) else set(names)):
            self.add_to_collection(n, value)

    def get_collection_ref(self, name: str) -> list:
        return self._collections.setdefault(name, [])

    def get_collection(self, name: str, scope: Optional[str] = None) -> list:
        items = list(self._collections.get(name, []))
        if scope is None:
            return items
        rx = re.compile(scope)
        return [v for v in items if getattr(v, "name", None) is not None and rx.match(v.name)]

    def get_all_collection_keys(self) -> list:
        return [k for k, v in self._collections.items() if v]

    def clear_collection(self, name: str) -> None:
        self._collections.pop(name, None)

    # -- default graph --------------------------------------------------------
    @contextlib.contextmanager
    def as_default(self):
        _default_graph_stack.append(self)
        try:
            yield self
        finally:
            _default_graph_stack.pop()

    @property
    def version(self) -> int:
        return self._last_id


def _as_operation(x) -> Operation:
    if isinstance(x, Operation):
        return x
    if isinstance(x, Tensor):
        return x.op
    op = getattr(x, "op", None)
    if isinstance(op, Operation):
        return op
    raise TypeError(f"Can not convert a {type(x).__name__} into an Operation.")
