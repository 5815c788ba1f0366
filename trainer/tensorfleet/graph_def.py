"""Graph <-> GraphDef: the wire and file form of a graph (TensorFlow's field numbers).

Sits just above the framework layer (graph, dtypes, tensor_shape, op_registry):
the distributed master ships a client's graph to workers with it, TensorBoard's
`add_graph` writes it, and `import_graph_def` rebuilds a Graph from one.

Export: every node's op type (from the op registry), inputs ("x", "x:1", "^ctrl"),
device, attributes and, as TF writes them, `_output_shapes` and `_class`
(colocation). Constants travel as raw little-endian bytes with dtype and shape
(`TensorProto.tensor_content`), never pickled.

Attributes: TF's own AttrValue kinds where the value is one (int, float exact in
float32, bool, str, DType, TensorShape, ndarray, homogeneous tuples); the Python
values TF has no kind for (None, slices, Ellipsis, nested/mixed tuples, a float
not exact in float32, an op reference) are tagged `func` values named
`tensorfleet.<kind>`, which TensorBoard shows as names; a control-flow body
(`func_graph.Function`, an attribute of If/While) is `tensorfleet.function`
holding its serialized GraphDef and its input/output names, rebuilt as a
FuncGraph on import (nesting bounded by `func_graph.MAX_NESTING`). A value with no
form at all (a tf.data Dataset) is an error, or, in graphs written for display
(`opaque_ok`: summaries, `Graph.as_graph_def`), a `tensorfleet.opaque` placeholder
naming its type, which import refuses. Import rejects an unknown
op type, an attribute kind it does not know, a dangling input or a cycle with
`InvalidArgumentError` naming the node; nothing received is evaluated.
"""
from __future__ import annotations

import graphlib
import math
from typing import Callable, Iterable, Optional

import numpy as np

from . import dtypes as _dtypes
from . import errors
from .default_graph import get_default_graph
from .func_graph import FuncGraph, Function
from .graph import Graph, Operation, Tensor
from .op_registry import get_op_def
from .tensor_shape import TensorShape
from .version import GRAPH_DEF_VERSION

from .protos.attr_value_pb2 import AttrValue
from .protos.graph_pb2 import GraphDef
from .protos.node_def_pb2 import NodeDef
from .protos.tensor_pb2 import TensorProto  # noqa: F401  (re-exported)
from .protos.tensor_shape_pb2 import TensorShapeProto  # noqa: F401  (re-exported)
from .tensor_proto import (dtype_to_enum, enum_to_dtype, ndarray_to_proto, proto_to_ndarray,  # noqa: F401
                           proto_to_shape, shape_to_proto)

#: TF 1.15's GRAPH_DEF_VERSION, written as the producer version
PRODUCER_VERSION = GRAPH_DEF_VERSION
#: prefix of the tagged `func` attribute values that carry Python values TF has no kind for
_TAG = "tensorfleet."

# -- attributes --------------------------------------------------------------------------------
def _float32_exact(v: float) -> bool:
    return math.isnan(v) or float(np.float32(v)) == v


def _tagged(kind: str, **fields) -> AttrValue:
    av = AttrValue()
    av.func.name = _TAG + kind
    for k, v in fields.items():
        av.func.attr[k].CopyFrom(v)
    return av


def _list_kind(items: list) -> Optional[str]:
    """The ListValue field for a homogeneous tuple/list, or None if it needs the tagged form."""
    if all(type(x) is bool for x in items):
        return "b"
    if all(isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_)) for x in items):
        return "i"
    if all(isinstance(x, str) for x in items):
        return "s"
    if all(isinstance(x, float) and _float32_exact(x) for x in items):
        return "f"
    if all(isinstance(x, _dtypes.DType) for x in items):
        return "type"
    if all(isinstance(x, TensorShape) for x in items):
        return "shape"
    return None


def _encode_float(value: float) -> AttrValue:
    if _float32_exact(value):
        return AttrValue(f=value)
    return _tagged("float64", hex=AttrValue(s=value.hex().encode()))


def _encode_sequence(value) -> AttrValue:
    items = list(value)
    kind = _list_kind(items) if items else "empty"
    if kind is None:
        return _tagged("tuple", **{str(i): encode_attr(x) for i, x in enumerate(items)}, n=AttrValue(i=len(items)))
    av = AttrValue()
    av.list.SetInParent()
    convert: dict = {"s": lambda x: x.encode(), "type": dtype_to_enum, "shape": shape_to_proto, "i": int}
    if kind != "empty":
        getattr(av.list, kind).extend(convert.get(kind, lambda x: x)(x) for x in items)
    return av


def _encode_slice(value: slice) -> AttrValue:
    return _tagged("slice", start=encode_attr(value.start), stop=encode_attr(value.stop), step=encode_attr(value.step))


# (type(s), encoder): checked in order (bool before int: a bool is an int)
_ENCODERS: tuple = (
    ((bool, np.bool_), lambda v: AttrValue(b=bool(v))),
    ((int, np.integer), lambda v: AttrValue(i=int(v))),
    (float, _encode_float),
    (str, lambda v: AttrValue(s=v.encode())),
    (bytes, lambda v: _tagged("bytes", value=AttrValue(s=v))),
    (_dtypes.DType, lambda v: AttrValue(type=dtype_to_enum(v))),  # type: ignore[arg-type]
    (TensorShape, lambda v: AttrValue(shape=shape_to_proto(v))),
    ((np.ndarray, np.generic), lambda v: AttrValue(tensor=ndarray_to_proto(v))),
    (Operation, lambda v: _tagged("op", name=AttrValue(s=v.name.encode()))),
    (Function, lambda v: _encode_function(v)),
    (slice, _encode_slice),
    ((tuple, list), _encode_sequence),
)


def _encode_function(fn: Function) -> AttrValue:
    """A control-flow body: its FuncGraph as a serialized GraphDef, its input and output tensor names."""
    body = as_graph_def(fn.graph).SerializeToString()
    return _tagged("function", name=AttrValue(s=fn.name.encode()), graph=AttrValue(s=body),
                   inputs=encode_attr(tuple(t.name for t in fn.inputs)),
                   outputs=encode_attr(tuple(t.name for t in fn.outputs)))


def encode_attr(value) -> AttrValue:
    """A Python attribute value -> AttrValue (see the module docstring for the mapping)."""
    if value is None:
        return _tagged("none")
    if value is Ellipsis:
        return _tagged("ellipsis")
    for types, encoder in _ENCODERS:
        if isinstance(value, types):
            return encoder(value)
    raise TypeError(f"attribute value of type {type(value).__name__} has no GraphDef form")


def _decode_str(av, where, resolve_op) -> str:
    try:
        return av.s.decode()
    except UnicodeDecodeError:
        raise errors.InvalidArgumentError(None, None, f"{where}: string attribute is not UTF-8") from None


_DECODERS = {
    "b": lambda av, where, resolve_op: av.b,
    "i": lambda av, where, resolve_op: av.i,
    "f": lambda av, where, resolve_op: av.f,
    "s": _decode_str,
    "type": lambda av, where, resolve_op: enum_to_dtype(av.type, where),
    "shape": lambda av, where, resolve_op: proto_to_shape(av.shape, where),
    "tensor": lambda av, where, resolve_op: proto_to_ndarray(av.tensor, where),
    "list": lambda av, where, resolve_op: _decode_list(av.list, where),
}


def decode_attr(av: AttrValue, where: str, resolve_op: Callable[[str], Operation]):
    """AttrValue -> Python value; `where` names the node and attribute in errors."""
    kind = av.WhichOneof("value")
    decoder = _DECODERS.get(kind or "")
    if decoder is not None:
        return decoder(av, where, resolve_op)
    if kind == "func" and av.func.name.startswith(_TAG):
        return _decode_tagged(av.func, where, resolve_op)
    raise errors.InvalidArgumentError(None, None, f"{where}: unknown attribute kind "
                                                   f"{av.func.name if kind == 'func' else kind!r}")


def _decode_list(lst, where: str) -> tuple:
    present = [f.name for f, _ in lst.ListFields()]
    if len(present) > 1:
        raise errors.InvalidArgumentError(None, None, f"{where}: a list attribute mixes {present}")
    if not present:
        return ()
    kind = present[0]
    if kind == "s":
        return tuple(x.decode("utf-8", "strict") for x in lst.s)
    if kind == "type":
        return tuple(enum_to_dtype(x, where) for x in lst.type)
    if kind == "shape":
        return tuple(proto_to_shape(x, where) for x in lst.shape)
    if kind in ("i", "f", "b"):
        return tuple(getattr(lst, kind))
    raise errors.InvalidArgumentError(None, None, f"{where}: unsupported list attribute kind {kind!r}")


def _tagged_float64(get, fields, where, resolve_op):
    try:
        return float.fromhex(get("hex"))
    except (ValueError, TypeError):
        raise errors.InvalidArgumentError(None, None, f"{where}: malformed float64 attribute") from None


def _tagged_tuple(get, fields, where, resolve_op):
    n = get("n")
    if not isinstance(n, int) or n < 0 or n > len(fields):
        raise errors.InvalidArgumentError(None, None, f"{where}: malformed tuple attribute")
    return tuple(get(str(i)) for i in range(n))


def _tagged_function(get, fields, where, resolve_op):
    """Rebuilds a Function inside the graph being imported into (`resolve_op.graph`); nothing is evaluated."""
    outer = getattr(resolve_op, "graph", None)
    if outer is None or "graph" not in fields:
        raise errors.InvalidArgumentError(None, None, f"{where}: malformed function attribute")
    gd = GraphDef()
    try:
        gd.ParseFromString(fields["graph"].s)
        g = FuncGraph(get("name"), outer)
    except Exception as e:  # noqa: BLE001  (a bad protobuf or nesting too deep)
        raise errors.InvalidArgumentError(None, None, f"{where}: bad function body: {e}") from None
    import_graph_def(gd, g)
    try:
        inputs = tuple(g.get_tensor_by_name(n) for n in get("inputs"))
        outputs = tuple(g.get_tensor_by_name(n) for n in get("outputs"))
    except (KeyError, ValueError, TypeError) as e:
        raise errors.InvalidArgumentError(None, None, f"{where}: function input/output: {e}") from None
    return Function(g, inputs, outputs)


def _tagged_opaque(get, fields, where, resolve_op):
    kind = fields["type"].s.decode("utf-8", "replace") if "type" in fields else "?"
    raise errors.InvalidArgumentError(None, None, f"{where}: a {kind} value, written for display only "
                                                  f"(it has no GraphDef form), cannot be imported")


_TAGGED = {
    "opaque": _tagged_opaque,
    "none": lambda get, fields, where, resolve_op: None,
    "ellipsis": lambda get, fields, where, resolve_op: Ellipsis,
    "float64": _tagged_float64,
    "bytes": lambda get, fields, where, resolve_op: fields["value"].s if "value" in fields else b"",
    "op": lambda get, fields, where, resolve_op: resolve_op(get("name")),
    "slice": lambda get, fields, where, resolve_op: slice(get("start"), get("stop"), get("step")),
    "tuple": _tagged_tuple,
    "function": _tagged_function,
}


def _decode_tagged(func, where: str, resolve_op):
    decoder = _TAGGED.get(func.name[len(_TAG):])
    if decoder is None:
        raise errors.InvalidArgumentError(None, None, f"{where}: unknown attribute kind {func.name!r}")
    fields = func.attr

    def get(key):
        if key not in fields:
            raise errors.InvalidArgumentError(None, None, f"{where}: {func.name} lacks field {key!r}")
        return decode_attr(fields[key], where, resolve_op)

    return decoder(get, fields, where, resolve_op)


# -- Graph -> GraphDef -------------------------------------------------------------------------
def _input_name(t: Tensor) -> str:
    return t.op.name if t.value_index == 0 else f"{t.op.name}:{t.value_index}"


def _opaque(value) -> AttrValue:
    """What `opaque_ok` writes for a value with no GraphDef form (a tf.data Dataset held by an iterator op):
    its type's name, for display; importing it is an error naming the node (`_tagged_opaque`)."""
    return _tagged("opaque", type=AttrValue(s=type(value).__name__.encode()))


def node_def(op: Operation, add_shapes: bool = True, opaque_ok: bool = False):
    """One Operation -> NodeDef. An attribute value with no GraphDef form is an error naming the node, or
    with `opaque_ok` (graphs written for people and TensorBoard) a `tensorfleet.opaque` placeholder."""
    nd = NodeDef(name=op.name, op=op.type, device=op.device)
    nd.input.extend(_input_name(t) for t in op.inputs)
    nd.input.extend("^" + c.name for c in op.control_inputs)
    for key in sorted(op.attrs):
        try:
            nd.attr[key].CopyFrom(encode_attr(op.attrs[key]))
        except TypeError as e:
            if opaque_ok:
                nd.attr[key].CopyFrom(_opaque(op.attrs[key]))
                continue
            raise errors.InvalidArgumentError(None, op, f"Node '{op.name}' (op {op.type}): attribute "
                                                        f"'{key}': {e}") from None
    if op._colocation_groups:
        nd.attr["_class"].list.s.extend(g.encode() for g in op._colocation_groups)
    if add_shapes and op.outputs:
        nd.attr["_output_shapes"].list.shape.extend(shape_to_proto(t.shape) for t in op.outputs)
    return nd


def as_graph_def(graph: Optional[Graph] = None, from_version: int = 0, add_shapes: bool = True,
                 ops: Optional[Iterable[Operation]] = None, opaque_ok: bool = False) -> GraphDef:
    """The graph (or just `ops`, or the ops created after `graph.version == from_version`) as a GraphDef;
    `opaque_ok` as in `node_def`."""
    graph = graph or get_default_graph()
    gd = GraphDef()
    gd.versions.producer = PRODUCER_VERSION
    chosen = list(ops) if ops is not None else [op for op in graph.get_operations() if op._id > from_version]
    gd.node.extend(node_def(op, add_shapes, opaque_ok) for op in chosen)
    return gd


# -- GraphDef -> Graph -------------------------------------------------------------------------
def _bad(node: str, msg: str) -> errors.InvalidArgumentError:
    return errors.InvalidArgumentError(None, None, f"Node '{node}': {msg}")


def _parse_input(text: str, node: str) -> tuple[str, int, bool]:
    """'x' / 'x:1' / '^x' -> (op name, output index, is control)."""
    if text.startswith("^"):
        return text[1:], -1, True
    name, sep, idx = text.rpartition(":")
    if sep and idx.isdigit():
        return name, int(idx), False
    if sep:
        raise _bad(node, f"malformed input {text!r}")
    return text, 0, False


def _index(nodes: list, existing: Callable[[str], bool]) -> dict:
    by_name = {}
    for nd in nodes:
        if not nd.name or nd.name in by_name:
            raise _bad(nd.name, "empty or duplicate node name")
        if existing(nd.name):
            raise _bad(nd.name, "a node with this name already exists in the graph")
        by_name[nd.name] = nd
    return by_name


def _node_deps(nd, by_name: dict, existing: Callable[[str], bool]) -> set:
    """The names of this GraphDef's nodes that `nd` needs first (inputs and op-reference attributes)."""
    needed = set()
    for text in nd.input:
        src, _, _ = _parse_input(text, nd.name)
        if src in by_name:
            needed.add(src)
        elif not existing(src):
            raise _bad(nd.name, f"input {text!r} names an unknown node")
    for av in nd.attr.values():
        if av.WhichOneof("value") == "func" and av.func.name == _TAG + "op" and "name" in av.func.attr:
            ref = av.func.attr["name"].s.decode("utf-8", "replace")
            if ref in by_name:
                needed.add(ref)
    return needed


def _ordered(nodes: list, existing: Callable[[str], bool]) -> list:
    """Nodes in an order where every input comes first; rejects cycles and dangling inputs."""
    by_name = _index(nodes, existing)
    deps = {nd.name: _node_deps(nd, by_name, existing) for nd in nodes}
    seen: set = set()
    for nd in nodes:  # the sender's order is usually valid already: keep it (stable names and tests)
        if not deps[nd.name] <= seen:
            break
        seen.add(nd.name)
    else:
        return nodes
    try:
        return [by_name[n] for n in graphlib.TopologicalSorter(deps).static_order()]
    except graphlib.CycleError as e:
        cycle = sorted(set(e.args[1]))
        raise _bad(cycle[0], f"the graph has a cycle through {', '.join(cycle[:5])}") from None


def import_graph_def(graph_def: GraphDef, graph: Optional[Graph] = None) -> list:
    """Adds the nodes of `graph_def` to `graph` (default graph), names unchanged; returns the new ops.

    Inputs may name nodes already in `graph` (a graph extension). Any bad node raises
    `InvalidArgumentError` naming it, and then nothing of this GraphDef stays half-added
    only in the sense that ops created before the bad one remain: callers import into a
    fresh or disposable graph when they need all-or-nothing.
    """
    graph = graph or get_default_graph()
    if not isinstance(graph_def, GraphDef):
        raise TypeError(f"graph_def must be a GraphDef, got {type(graph_def).__name__}")
    nodes = list(graph_def.node)
    ordered = _ordered(nodes, lambda n: n in graph._ops_by_name)
    created = []
    with graph.as_default(), graph.colocate_with(None, ignore_existing=True), graph.control_dependencies(None):
        for nd in ordered:
            created.append(_import_node(graph, nd))
    return created


def _decode_attrs(graph: Graph, nd) -> dict:
    def resolve_op(ref: str) -> Operation:
        g = graph
        while g is not None:  # a control-flow body may refer to its enclosing graphs' ops (variables)
            op = g._ops_by_name.get(ref)
            if op is not None:
                return op
            g = getattr(g, "outer_graph", None)
        raise _bad(nd.name, f"attribute refers to unknown node {ref!r}")

    resolve_op.graph = graph  # type: ignore[attr-defined]  (function attributes are rebuilt inside it)

    return {key: decode_attr(nd.attr[key], f"Node '{nd.name}' (op {nd.op}) attribute '{key}'", resolve_op)
            for key in sorted(nd.attr) if not key.startswith("_")}


def _resolve_inputs(graph: Graph, nd) -> tuple:
    inputs, controls = [], []
    for text in nd.input:
        src, idx, is_control = _parse_input(text, nd.name)
        op = graph._ops_by_name[src]
        if is_control:
            controls.append(op)
            continue
        if idx >= len(op.outputs):
            raise _bad(nd.name, f"input {text!r}: node '{src}' has only {len(op.outputs)} outputs")
        if controls:
            raise _bad(nd.name, "a data input follows a control input")
        inputs.append(op.outputs[idx])
    return inputs, controls


def _import_node(graph: Graph, nd) -> Operation:
    name = nd.name
    try:
        get_op_def(nd.op)
    except KeyError:
        raise _bad(name, f"unknown op type '{nd.op}'") from None
    attrs = _decode_attrs(graph, nd)
    inputs, controls = _resolve_inputs(graph, nd)
    try:
        op = graph.create_op(nd.op, inputs, attrs, name=name + "/")
    except errors.OpError:
        raise
    except (ValueError, TypeError, KeyError, IndexError, AttributeError) as e:
        raise _bad(name, f"op {nd.op} rejected its inputs or attributes: {e}") from None
    for c in controls:
        op._add_control_input(c)
    try:
        op._set_device(nd.device)
    except ValueError as e:
        raise _bad(name, f"bad device {nd.device!r}: {e}") from None
    _apply_metadata(op, nd)
    return op


def _apply_metadata(op: Operation, nd) -> None:
    if "_class" in nd.attr:
        groups = [g.decode("utf-8", "replace") for g in nd.attr["_class"].list.s]
        op._colocation_groups = [g for g in groups if g.startswith("loc:@")]
    if "_output_shapes" in nd.attr:
        shapes = nd.attr["_output_shapes"].list.shape
        if len(shapes) == len(op.outputs):
            for t, sp in zip(op.outputs, shapes, strict=True):
                try:
                    t.set_shape(proto_to_shape(sp, f"Node '{op.name}' _output_shapes"))
                except ValueError as e:
                    raise _bad(op.name, f"_output_shapes incompatible with the op's own shape: {e}") from None
