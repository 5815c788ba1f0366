"""The op-form tables: how each op is written in TensorFlow's form and read back from it.

Beside `graph_def` (the internal wire form). Each op type with a TF form registers a writer
(`@writes("Reshape")`: internal Operation -> TF NodeDefs through an `Emitter`) and TF op types
register readers (`@reads("Reshape")`: TF NodeDef -> internal NodeDef through a `Reader`). Most ops
are `simple`: the same name and inputs in both forms, TF's type attributes (`T`, `Tidx`, ...) taken
from the input dtypes, the other attributes copied with TF's defaults. The form modules
(`forms_*.py`) fill the tables; `export.py` and `importer.py` drive them.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional

import numpy as np

from .. import dtypes as _dtypes
from .. import errors
from ..graph import Operation
from ..graph_def import decode_attr, encode_attr
from ..protos.attr_value_pb2 import AttrValue
from ..protos.node_def_pb2 import NodeDef
from ..tensor_proto import dtype_to_enum, ndarray_to_proto, proto_to_ndarray, shape_to_proto
from ..tensor_shape import TensorShape

#: marks an attribute without a TF default (it must be present)
REQUIRED = object()
WRITERS: dict = {}
READERS: dict = {}


class NoTFForm(errors.InvalidArgumentError):
    """An op (or one of its attribute values) has no form in TensorFlow's op set."""

    def __init__(self, op_name: str, op_type: str, why: str):
        super().__init__(None, None, f"Node '{op_name}' (op {op_type}) has no TensorFlow form: {why}")


def tf_attr(value) -> AttrValue:
    """A Python value -> an AttrValue of one of TF's kinds (no tagged values: those have no TF form)."""
    if isinstance(value, AttrValue):
        return value
    if isinstance(value, (bool, np.bool_)):
        return AttrValue(b=bool(value))
    if isinstance(value, (int, np.integer)):
        return AttrValue(i=int(value))
    if isinstance(value, (float, np.floating)):
        return AttrValue(f=float(value))
    if isinstance(value, str):
        return AttrValue(s=value.encode())
    if isinstance(value, bytes):
        return AttrValue(s=value)
    if isinstance(value, _dtypes.DType):
        return AttrValue(type=dtype_to_enum(value))  # type: ignore[arg-type]
    if isinstance(value, TensorShape):
        return AttrValue(shape=shape_to_proto(value))
    if isinstance(value, np.ndarray):
        return AttrValue(tensor=ndarray_to_proto(value))
    if isinstance(value, (list, tuple)):
        av = AttrValue()
        av.list.SetInParent()
        items = [tf_attr(v) for v in value]
        for item in items:
            kind = item.WhichOneof("value")
            if kind in ("list", "tensor", None):
                raise TypeError(f"list attribute item {item} has no TF list form")
            getattr(av.list, kind).append(getattr(item, kind))
        return av
    raise TypeError(f"attribute value {value!r} ({type(value).__name__}) has no TF attribute form")


def _same_value(av: AttrValue, default) -> bool:
    try:
        return av == tf_attr(default)
    except TypeError:
        return False


class Emitter:
    """What a writer uses to write one internal op as TF nodes: the op's TF input names, its attributes, and
    `node`/`const` to add NodeDefs. The node named like the op ("main") carries its control inputs, device and
    colocation; its outputs are the op's outputs unless `alias` says otherwise."""

    def __init__(self, op: Operation, export):
        self.op = op
        self._export = export
        self.name = op.name

    def inp(self, i: int) -> str:
        return self._export.tensor_name(self.op.inputs[i])

    def dtype(self, i: int):
        return self.op.inputs[i].dtype

    def attr(self, key: str, default=None):
        return self.op.attrs.get(key, default)

    def ref(self, key: str = "var") -> str:
        """The TF name of the variable an op-reference attribute (Assign's `var`) points at."""
        return self._export.op_name(self.op.attrs[key])

    def fail(self, why: str):
        raise NoTFForm(self.op.name, self.op.type, why)

    def node(self, op_type: str, inputs: list, attrs: Optional[dict] = None, name: Optional[str] = None,
             defaults: Optional[dict] = None) -> str:
        """Adds a NodeDef (the main one when `name` is None) and returns its name; attributes equal to their
        TF default (`defaults`) are left out when the export strips default attributes."""
        main = name is None
        nd = NodeDef(name=self.name if main else self._export.fresh_name(f"{self.name}/{name}"), op=op_type)
        nd.input.extend(inputs)
        for key, value in (attrs or {}).items():
            try:
                av = tf_attr(value)
            except TypeError as e:
                self.fail(f"attribute '{key}': {e}")
            if self._export.strip_default_attrs and defaults and key in defaults and _same_value(av, defaults[key]):
                continue
            nd.attr[key].CopyFrom(av)
        self._export.add(nd, self.op if main else None)
        return nd.name

    def const(self, value, dtype, suffix: str) -> str:
        """A Const helper node `<op>/<suffix>` holding `value` as `dtype`; returns its name."""
        arr = np.asarray(value, dtype=_dtypes.as_dtype(dtype).as_numpy_dtype)
        return self.node("Const", [], {"value": arr, "dtype": _dtypes.as_dtype(dtype)}, name=suffix)

    def alias(self, index: int, tensor_name: str) -> None:
        """Output `index` of the op is TF tensor `tensor_name` (a lowered op whose result is not its main node)."""
        self._export.alias(self.op.outputs[index], tensor_name)


class Reader:
    """What a reader uses to turn one TF NodeDef into the internal form: constant inputs' values, and `node`
    to build the internal NodeDef (same name, device and `_`-attributes)."""

    def __init__(self, nd: NodeDef, importer):
        self.nd = nd
        self._importer = importer

    def fail(self, why: str):
        raise errors.InvalidArgumentError(None, None, f"Node '{self.nd.name}' (TensorFlow op {self.nd.op}): {why}")

    def attr(self, key: str, default=REQUIRED):
        if key in self.nd.attr:
            return decode_attr(self.nd.attr[key], f"Node '{self.nd.name}' attribute '{key}'", self._no_ref)
        if default is REQUIRED:
            self.fail(f"attribute '{key}' is missing")
        return default

    def _no_ref(self, name):
        self.fail(f"unexpected op reference {name!r}")

    def data_inputs(self) -> list:
        return [t for t in self.nd.input if not t.startswith("^")]

    def const(self, i: int, what: str) -> np.ndarray:
        """The value of data input `i`, which must come from a Const node (through Identity nodes)."""
        value = self._importer.const_value(self.data_inputs()[i])
        if value is None:
            self.fail(f"input {i} ({what}) must be a constant here, got {self.data_inputs()[i]!r}")
        return value

    def maybe_const(self, i: int):
        return self._importer.const_value(self.data_inputs()[i])

    def node(self, op_type: str, inputs: Optional[list] = None, attrs: Optional[dict] = None) -> NodeDef:
        """The internal NodeDef: `inputs` are data input indices or names (default: all data inputs, in order);
        control inputs, device and `_` attributes are kept."""
        data = self.data_inputs()
        nd = NodeDef(name=self.nd.name, op=op_type, device=self.nd.device)
        chosen = data if inputs is None else [data[i] if isinstance(i, int) else i for i in inputs]
        nd.input.extend(chosen)
        nd.input.extend(t for t in self.nd.input if t.startswith("^"))
        for key, value in (attrs or {}).items():
            nd.attr[key].CopyFrom(value if isinstance(value, AttrValue) else encode_attr(value))
        for key in self.nd.attr:  # (TF's `_output_shapes` only where the op stays the same op)
            if key.startswith("_") and (key != "_output_shapes" or op_type == self.nd.op):
                nd.attr[key].CopyFrom(self.nd.attr[key])
        return nd

    def op_ref(self, tensor_input: str) -> AttrValue:
        """An internal op-reference attribute naming the node that produces `tensor_input` (a ref input)."""
        av = AttrValue()
        av.func.name = "tensorfleet.op"
        av.func.attr["name"].s = tensor_input.split(":")[0].lstrip("^").encode()
        return av


def _register(table: dict, op_types, fn, what: str) -> None:
    for t in op_types:
        if t in table:
            raise KeyError(f"a TF-form {what} for {t!r} is already registered")
        table[t] = fn


def writes(*op_types: str):
    def deco(fn):
        _register(WRITERS, op_types, fn, "writer")
        return fn
    return deco


def reads(*op_types: str):
    def deco(fn):
        _register(READERS, op_types, fn, "reader")
        return fn
    return deco


@dataclass(frozen=True)
class Simple:
    """A form shared by both sides: `type_attrs[i]` names the TF type attribute input i sets (None: a fixed
    dtype; "N*T": every input, counted by N); `attrs` are copied, with TF's default or REQUIRED; `out_types`
    are TF type attributes set from the output dtypes; `tf_type` is TF's name when it differs."""
    type_attrs: tuple
    attrs: dict
    out_types: tuple = ()
    tf_type: Optional[str] = None


def _type_attrs_of(spec: Simple, op: Operation) -> dict:
    out: dict = {}
    for i, name in enumerate(spec.type_attrs):
        if name is None:
            continue
        if name.startswith("N*"):
            out["N"] = len(op.inputs)
            if name != "N*-":
                out[name[2:]] = op.inputs[0].dtype
            break
        out.setdefault(name, op.inputs[i].dtype)
    for i, name in enumerate(spec.out_types):
        if name is not None:
            out[name] = op.outputs[i].dtype
    return out


def simple(op_type: str, type_attrs: str = "T", out_types: str = "", tf_type: Optional[str] = None,
           **attrs) -> None:
    """Registers `op_type` with a simple form: `type_attrs` one word per input ("T T", "- T T", "N*T")."""
    spec = Simple(tuple(None if w == "-" else w for w in type_attrs.split()), dict(attrs),
                  tuple(None if w == "-" else w for w in out_types.split()), tf_type)

    def write(e: Emitter):
        values = _type_attrs_of(spec, e.op)
        for key, default in spec.attrs.items():
            value = e.attr(key, None if default is REQUIRED else default)
            if value is None:
                e.fail(f"attribute '{key}' is missing")
            values[key] = value
        e.node(spec.tf_type or op_type, [e.inp(i) for i in range(len(e.op.inputs))], values, defaults=spec.attrs)

    def read(r: Reader) -> NodeDef:
        values = {key: r.nd.attr[key] if key in r.nd.attr else r.attr(key, default)
                  for key, default in spec.attrs.items()}
        return r.node(op_type, None, values)

    _register(WRITERS, [op_type], write, "writer")
    _register(READERS, [spec.tf_type or op_type], read, "reader")


def const_attr_value(av: AttrValue, where: str) -> np.ndarray:
    return proto_to_ndarray(av.tensor, where)


def int_list(value) -> list:
    return [int(v) for v in np.asarray(value).reshape(-1)]


Writer = Callable[[Emitter], None]
