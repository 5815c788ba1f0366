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
`tensorfleet.<kind>`, which TensorBoard shows as names. Import rejects an unknown
op type, an attribute kind it does not know, a dangling input or a cycle with
`InvalidArgumentError` naming the node; nothing received is evaluated.
"""
from __future__ import annotations

import math
from typing import Callable, Iterable, Optional

import numpy as np

from . import dtypes as _dtypes
from . import errors
from .graph import Graph, Operation, Tensor
from .default_graph import get_default_graph
from .op_registry import get_op_def
from .protos import types_pb2
from .tensor_shape import TensorShape

from .protos.attr_value_pb2 import AttrValue
from .protos.graph_pb2 import GraphDef
from .protos.node_def_pb2 import NodeDef
from .protos.tensor_pb2 import TensorProto
from .protos.tensor_shape_pb2 import TensorShapeProto

#: TF 1.15's GRAPH_DEF_VERSION, written as the producer version
PRODUCER_VERSION = 119

# dtype name -> TF DataType enum number (types.proto)
_ENUM_BY_NAME = {
    "float32": types_pb2.DT_FLOAT, "float64": types_pb2.DT_DOUBLE, "int32": types_pb2.DT_INT32,
    "uint8": types_pb2.DT_UINT8, "int16": types_pb2.DT_INT16, "int8": types_pb2.DT_INT8,
    "string": types_pb2.DT_STRING, "complex64": types_pb2.DT_COMPLEX64, "int64": types_pb2.DT_INT64,
    "bool": types_pb2.DT_BOOL, "bfloat16": types_pb2.DT_BFLOAT16, "uint16": types_pb2.DT_UINT16,
    "complex128": types_pb2.DT_COMPLEX128, "float16": types_pb2.DT_HALF, "uint32": types_pb2.DT_UINT32,
    "uint64": types_pb2.DT_UINT64,
}
_NAME_BY_ENUM: dict[int, str] = {int(v): k for k, v in _ENUM_BY_NAME.items()}
_TAG = "tensorfleet."


# -- dtypes and tensors ------------------------------------------------------------------------
def dtype_to_enum(dtype) -> int:
    """A tensorfleet DType (or anything `as_dtype` takes) -> TF's DataType enum number."""
    dt = _dtypes.as_dtype(dtype)
    try:
        return _ENUM_BY_NAME[dt.name]
    except KeyError:
        raise errors.InvalidArgumentError(None, None, f"dtype {dt.name} has no DataType number") from None


def enum_to_dtype(value: int, where: str = "tensor"):
    """TF's DataType enum number -> tensorfleet DType; unknown or unsupported numbers raise, naming `where`."""
    name = _NAME_BY_ENUM.get(value)
    if name is None:
        raise errors.InvalidArgumentError(None, None, f"{where}: unsupported DataType {value}")
    try:
        return _dtypes.as_dtype(name)
    except TypeError:
        raise errors.InvalidArgumentError(None, None, f"{where}: DataType {name} is not supported here") from None


def shape_to_proto(shape) -> TensorShapeProto:
    shape = shape if isinstance(shape, TensorShape) else TensorShape(shape)
    proto = TensorShapeProto()
    if shape.ndims is None:
        proto.unknown_rank = True
        return proto
    for d in shape.as_tuple():
        proto.dim.add(size=-1 if d is None else int(d))
    return proto


def proto_to_shape(proto: TensorShapeProto, where: str = "shape") -> TensorShape:
    if proto.unknown_rank:
        if len(proto.dim):
            raise errors.InvalidArgumentError(None, None, f"{where}: unknown rank with {len(proto.dim)} dims")
        return TensorShape(None)
    dims = []
    for d in proto.dim:
        if d.size < -1:
            raise errors.InvalidArgumentError(None, None, f"{where}: bad dimension {d.size}")
        dims.append(None if d.size == -1 else d.size)
    return TensorShape(dims)


def _is_string_array(arr: np.ndarray) -> bool:
    return arr.dtype.kind in "SUO"


def ndarray_to_proto(value) -> TensorProto:
    """A numpy value -> TensorProto: numeric as raw little-endian bytes, strings in string_val."""
    arr = np.asarray(value)
    proto = TensorProto()
    proto.tensor_shape.CopyFrom(shape_to_proto(TensorShape(arr.shape)))
    if _is_string_array(arr):
        proto.dtype = types_pb2.DT_STRING
        proto.string_val.extend(x if isinstance(x, bytes) else str(x).encode() for x in arr.reshape(-1).tolist())
        return proto
    proto.dtype = dtype_to_enum(arr.dtype)  # type: ignore[assignment]
    proto.tensor_content = np.ascontiguousarray(arr, dtype=arr.dtype.newbyteorder("<")).tobytes()
    return proto


def proto_to_ndarray(proto: TensorProto, where: str = "tensor") -> np.ndarray:
    """TensorProto -> read-only numpy array; sizes are checked against the shape, nothing is evaluated."""
    shape = proto_to_shape(proto.tensor_shape, where)
    if not shape.is_fully_defined():
        raise errors.InvalidArgumentError(None, None, f"{where}: a tensor value needs a fully defined shape")
    dims = tuple(shape.as_tuple())
    count = math.prod(dims)
    if proto.dtype == types_pb2.DT_STRING:
        vals = list(proto.string_val)
        if len(vals) == 1 and count != 1:
            vals = vals * count
        if len(vals) != count:
            raise errors.InvalidArgumentError(None, None, f"{where}: {len(vals)} strings for shape {dims}")
        arr = np.empty(count, dtype=object)
        arr[:] = vals
        arr = arr.reshape(dims)
    else:
        dt = enum_to_dtype(proto.dtype, where).np_dtype
        if proto.tensor_content:
            if len(proto.tensor_content) != count * dt.itemsize:
                raise errors.InvalidArgumentError(
                    None, None, f"{where}: {len(proto.tensor_content)} bytes of content for shape {dims} of "
                                f"{dt.name} (expected {count * dt.itemsize})")
            arr = np.frombuffer(proto.tensor_content, dtype=dt.newbyteorder("<")).astype(dt, copy=False)
            arr = arr.reshape(dims)
        else:
            arr = _from_typed_vals(proto, dt, count, dims, where)
    arr.flags.writeable = False
    return arr


def _from_typed_vals(proto: TensorProto, dt: np.dtype, count: int, dims: tuple, where: str) -> np.ndarray:
    if dt == np.float16:
        vals = np.array(proto.half_val, dtype=np.uint16).view(np.float16)
    else:
        field = {"f": "float_val", "b": "bool_val"}.get(dt.kind, "")
        if dt == np.float64:
            field = "double_val"
        elif dt.kind in "iu":
            field = {8: "uint64_val" if dt.kind == "u" else "int64_val"}.get(dt.itemsize, "int_val")
            if dt == np.uint32:
                field = "uint32_val"
        vals = np.array(getattr(proto, field), dtype=dt)
    if vals.size == count:
        return vals.reshape(dims)
    if vals.size == 0:
        return np.zeros(dims, dtype=dt)
    if vals.size < count:  # TF repeats the last value to fill the shape
        return np.concatenate([vals, np.full(count - vals.size, vals[-1], dtype=dt)]).reshape(dims)
    raise errors.InvalidArgumentError(None, None, f"{where}: {vals.size} values for shape {dims}")


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


def encode_attr(value) -> AttrValue:
    """A Python attribute value -> AttrValue (see the module docstring for the mapping)."""
    av = AttrValue()
    if value is None:
        return _tagged("none")
    if isinstance(value, (bool, np.bool_)):
        av.b = bool(value)
    elif isinstance(value, (int, np.integer)):
        av.i = int(value)
    elif isinstance(value, float):
        if _float32_exact(value):
            av.f = value
        else:
            return _tagged("float64", hex=AttrValue(s=value.hex().encode()))
    elif isinstance(value, str):
        av.s = value.encode()
    elif isinstance(value, bytes):
        return _tagged("bytes", value=AttrValue(s=value))
    elif isinstance(value, _dtypes.DType):
        av.type = dtype_to_enum(value)  # type: ignore[assignment]
    elif isinstance(value, TensorShape):
        av.shape.CopyFrom(shape_to_proto(value))
    elif isinstance(value, (np.ndarray, np.generic)):
        av.tensor.CopyFrom(ndarray_to_proto(value))
    elif isinstance(value, Operation):
        return _tagged("op", name=AttrValue(s=value.name.encode()))
    elif isinstance(value, slice):
        return _tagged("slice", start=encode_attr(value.start), stop=encode_attr(value.stop),
                       step=encode_attr(value.step))
    elif value is Ellipsis:
        return _tagged("ellipsis")
    elif isinstance(value, (tuple, list)):
        items = list(value)
        kind = _list_kind(items) if items else "empty"
        if kind is None:
            return _tagged("tuple", **{str(i): encode_attr(x) for i, x in enumerate(items)},
                           n=AttrValue(i=len(items)))
        av.list.SetInParent()
        if kind == "s":
            av.list.s.extend(x.encode() for x in items)
        elif kind == "type":
            av.list.type.extend(dtype_to_enum(x) for x in items)
        elif kind == "shape":
            av.list.shape.extend(shape_to_proto(x) for x in items)
        elif kind != "empty":
            getattr(av.list, kind).extend(int(x) if kind == "i" else x for x in items)
    else:
        raise TypeError(f"attribute value of type {type(value).__name__} has no GraphDef form")
    return av


def decode_attr(av: AttrValue, where: str, resolve_op: Callable[[str], Operation]):
    """AttrValue -> Python value; `where` names the node and attribute in errors."""
    kind = av.WhichOneof("value")
    if kind == "b":
        return av.b
    if kind == "i":
        return av.i
    if kind == "f":
        return av.f
    if kind == "s":
        try:
            return av.s.decode()
        except UnicodeDecodeError:
            raise errors.InvalidArgumentError(None, None, f"{where}: string attribute is not UTF-8") from None
    if kind == "type":
        return enum_to_dtype(av.type, where)
    if kind == "shape":
        return proto_to_shape(av.shape, where)
    if kind == "tensor":
        return proto_to_ndarray(av.tensor, where)
    if kind == "list":
        return _decode_list(av.list, where)
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


def _decode_tagged(func, where: str, resolve_op):
    kind = func.name[len(_TAG):]
    fields = func.attr

    def get(key):
        if key not in fields:
            raise errors.InvalidArgumentError(None, None, f"{where}: {func.name} lacks field {key!r}")
        return decode_attr(fields[key], where, resolve_op)

    if kind == "none":
        return None
    if kind == "ellipsis":
        return Ellipsis
    if kind == "float64":
        try:
            return float.fromhex(get("hex"))
        except (ValueError, TypeError):
            raise errors.InvalidArgumentError(None, None, f"{where}: malformed float64 attribute") from None
    if kind == "bytes":
        return fields["value"].s if "value" in fields else b""
    if kind == "op":
        return resolve_op(get("name"))
    if kind == "slice":
        return slice(get("start"), get("stop"), get("step"))
    if kind == "tuple":
        n = get("n")
        if not isinstance(n, int) or n < 0 or n > len(fields):
            raise errors.InvalidArgumentError(None, None, f"{where}: malformed tuple attribute")
        return tuple(get(str(i)) for i in range(n))
    raise errors.InvalidArgumentError(None, None, f"{where}: unknown attribute kind {func.name!r}")


# -- Graph -> GraphDef -------------------------------------------------------------------------
def _input_name(t: Tensor) -> str:
    return t.op.name if t.value_index == 0 else f"{t.op.name}:{t.value_index}"


def node_def(op: Operation, add_shapes: bool = True):
    """One Operation -> NodeDef."""
    nd = NodeDef(name=op.name, op=op.type, device=op.device)
    nd.input.extend(_input_name(t) for t in op.inputs)
    nd.input.extend("^" + c.name for c in op.control_inputs)
    for key in sorted(op.attrs):
        try:
            nd.attr[key].CopyFrom(encode_attr(op.attrs[key]))
        except TypeError as e:
            raise errors.InvalidArgumentError(None, op, f"Node '{op.name}' (op {op.type}): attribute "
                                                        f"'{key}': {e}") from None
    if op._colocation_groups:
        nd.attr["_class"].list.s.extend(g.encode() for g in op._colocation_groups)
    if add_shapes and op.outputs:
        nd.attr["_output_shapes"].list.shape.extend(shape_to_proto(t.shape) for t in op.outputs)
    return nd


def as_graph_def(graph: Optional[Graph] = None, from_version: int = 0, add_shapes: bool = True,
                 ops: Optional[Iterable[Operation]] = None) -> GraphDef:
    """The graph (or just `ops`, or the ops created after `graph.version == from_version`) as a GraphDef."""
    graph = graph or get_default_graph()
    gd = GraphDef()
    gd.versions.producer = PRODUCER_VERSION
    chosen = list(ops) if ops is not None else [op for op in graph.get_operations() if op._id > from_version]
    gd.node.extend(node_def(op, add_shapes) for op in chosen)
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


def _ordered(nodes: list, existing: Callable[[str], bool]) -> list:
    """Nodes in an order where every input comes first (Kahn's algorithm); rejects cycles and dangling inputs."""
    by_name = {}
    for nd in nodes:
        if not nd.name or nd.name in by_name:
            raise _bad(nd.name, "empty or duplicate node name")
        if existing(nd.name):
            raise _bad(nd.name, "a node with this name already exists in the graph")
        by_name[nd.name] = nd
    deps: dict = {}
    for nd in nodes:
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
        deps[nd.name] = needed
    seen: set = set()
    for nd in nodes:  # the sender's order is usually valid already: keep it (stable names and tests)
        if not deps[nd.name] <= seen:
            break
        seen.add(nd.name)
    else:
        return nodes
    order, ready = [], [nd.name for nd in nodes if not deps[nd.name]]
    users: dict = {}
    for name, needed in deps.items():
        for d in needed:
            users.setdefault(d, []).append(name)
    remaining = {name: len(needed) for name, needed in deps.items()}
    while ready:
        name = ready.pop()
        order.append(by_name[name])
        for u in users.get(name, ()):
            remaining[u] -= 1
            if remaining[u] == 0:
                ready.append(u)
    if len(order) != len(nodes):
        stuck = sorted(n for n, r in remaining.items() if r > 0)
        raise _bad(stuck[0], f"the graph has a cycle through {', '.join(stuck[:5])}")
    return order


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


def _import_node(graph: Graph, nd) -> Operation:
    name = nd.name
    try:
        get_op_def(nd.op)
    except KeyError:
        raise _bad(name, f"unknown op type '{nd.op}'") from None

    def resolve_op(ref: str) -> Operation:
        op = graph._ops_by_name.get(ref)
        if op is None:
            raise _bad(name, f"attribute refers to unknown node {ref!r}")
        return op

    attrs = {}
    for key in sorted(nd.attr):
        if key.startswith("_"):
            continue
        attrs[key] = decode_attr(nd.attr[key], f"Node '{name}' (op {nd.op}) attribute '{key}'", resolve_op)
    inputs, controls = [], []
    for text in nd.input:
        src, idx, is_control = _parse_input(text, name)
        op = graph._ops_by_name[src]
        if is_control:
            controls.append(op)
        elif idx >= len(op.outputs):
            raise _bad(name, f"input {text!r}: node '{src}' has only {len(op.outputs)} outputs")
        else:
            if controls:
                raise _bad(name, "a data input follows a control input")
            inputs.append(op.outputs[idx])
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
