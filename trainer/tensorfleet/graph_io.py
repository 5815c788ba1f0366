"""TF 1.15's graph import/export API on top of `graph_def` (the Graph <-> GraphDef conversion).

`Graph.as_graph_def(from_version=None, add_shapes=False)`, `Session.graph_def`, `tf.GraphDef`,
`tf.import_graph_def(graph_def, input_map, return_elements, name)`, `tf.train.write_graph`
(also `tf.io.write_graph`) and `tf.graph_util` (`extract_sub_graph`,
`convert_variables_to_constants`, `import_graph_def`): what TF1 programs use to look at a graph,
write it for TensorBoard or a serving tool, and freeze a trained model into constants.

Exported graphs are for people and tools: a value with no GraphDef form (a tf.data Dataset held
by an iterator op) is written as a `tensorfleet.opaque` placeholder, which import refuses naming
the node. `import_graph_def` reads a GraphDef in TensorFlow's own op forms (a frozen graph or `.meta` file
that TF wrote: `tf_graph.is_tf_form`) through `tf_graph.import_tf_graph_def`, rewrites a copy (prefixed,
de-duplicated names; mapped inputs) and hands it to `graph_def.import_graph_def`, which checks every node
and evaluates nothing. Graphs written for TensorFlow itself are SavedModels (`tf.saved_model`).
"""
from __future__ import annotations

import logging
import os
from typing import Optional

from google.protobuf import text_format

from . import graph_def as _gd
from . import tf_graph
from .default_graph import get_default_graph, name_scope
from .graph import Graph, Operation, Tensor
from .platform.atomic_file import write_atomically
from .protos.attr_value_pb2 import AttrValue, NameAttrList
from .protos.graph_pb2 import GraphDef

__all__ = ["GraphDef", "AttrValue", "NameAttrList", "import_graph_def"]
logger = logging.getLogger("tensorfleet")
_VARIABLE_OPS = ("Variable", "VariableV2", "VarHandleOp")


def as_graph_def(self: Graph, from_version: Optional[int] = None, add_shapes: bool = False) -> GraphDef:
    """`tf.Graph.as_graph_def`: the graph (or the ops added after version `from_version`) as a GraphDef."""
    return _gd.as_graph_def(self, from_version or 0, add_shapes, opaque_ok=True)


def _node_input(text: str) -> tuple[str, str]:
    """'x' / 'x:1' / '^x' -> (node name, the input_map key TF uses: 'x:0' / 'x:1' / '^x')."""
    if text.startswith("^"):
        return text[1:], text
    name, _, idx = text.partition(":")
    return name, f"{name}:{idx or 0}"


def _map_key(key) -> str:
    if not isinstance(key, str):
        raise TypeError(f"input_map keys must be strings, got {key!r}")
    return key if key.startswith("^") or ":" in key else key + ":0"


def _unique(graph: Graph, name: str, taken: set) -> str:
    candidate, i = name, 0
    while candidate in taken or candidate in graph._ops_by_name:
        i += 1
        candidate = f"{name}_{i}"
    taken.add(candidate)
    return candidate


def import_graph_def(graph_def, input_map=None, return_elements=None, name=None, op_dict=None,
                     producer_op_list=None):
    """`tf.import_graph_def`: adds `graph_def`'s nodes to the default graph under the name scope `name`
    (default "import"; "" keeps the names, de-duplicated as `x_1`), with the inputs named in `input_map`
    ("x:0" or "x", "^x" for a control input) replaced by this graph's tensors or ops. Returns the ops or
    tensors named in `return_elements` ("op" or "op:0", names as in `graph_def`), else None."""
    del op_dict, producer_op_list  # deprecated in TF 1.15 and unused there too
    if not isinstance(graph_def, GraphDef):
        raise TypeError(f"graph_def must be a GraphDef proto, got {type(graph_def).__name__}")
    graph = get_default_graph()
    mapping = {_map_key(k): v for k, v in (input_map or {}).items()}
    for key, value in mapping.items():
        if not isinstance(value, (Operation if key.startswith("^") else Tensor)):
            raise TypeError(f"input_map[{key!r}] must be a {'tf.Operation' if key.startswith('^') else 'tf.Tensor'}"
                            f", got {type(value).__name__}")
        if value.graph is not graph:
            raise ValueError(f"input_map[{key!r}] is not an element of the default graph")
    if isinstance(return_elements, str):
        raise TypeError("return_elements must be a list of strings")
    if tf_graph.is_tf_form(graph_def):  # written by TensorFlow (or a SavedModel's): TF's op forms -> these ops'
        graph_def = tf_graph.import_tf_graph_def(graph_def)
    with name_scope(name, "import", list(mapping.values())) as scope:
        prefix = scope or ""
    taken: set = set()
    renamed = {nd.name: _unique(graph, prefix + nd.name, taken) for nd in graph_def.node}
    used: set = set()
    out = GraphDef()
    out.versions.CopyFrom(graph_def.versions)
    for nd in graph_def.node:
        out.node.append(_rewritten(nd, renamed, mapping, used))
    unused = sorted(set(mapping) - used)
    if unused:
        raise ValueError(f"Attempted to map inputs that were not found in graph_def: [{', '.join(unused)}]")
    _gd.import_graph_def(out, graph)
    return None if return_elements is None else [_element(graph, e, renamed) for e in return_elements]


def _rewritten(nd, renamed: dict, mapping: dict, used: set):
    new = type(nd)()
    new.CopyFrom(nd)
    new.name = renamed[nd.name]
    inputs = list(new.input)
    del new.input[:]
    for text in inputs:
        src, key = _node_input(text)
        if key in mapping:
            used.add(key)
            target = mapping[key]
            new.input.append("^" + target.name if key.startswith("^") else _gd._input_name(target))
            continue
        if src not in renamed:
            raise ValueError(f"Node '{nd.name}': input {text!r} names a node that is not in graph_def")
        new.input.append(text.replace(src, renamed[src], 1))
    if "_class" in new.attr:
        groups = [g.decode("utf-8", "replace") for g in new.attr["_class"].list.s]
        del new.attr["_class"].list.s[:]
        new.attr["_class"].list.s.extend(
            ("loc:@" + renamed.get(g[5:], g[5:]) if g.startswith("loc:@") else g).encode() for g in groups)
    for av in new.attr.values():  # op references (the variable an Assign writes)
        if av.WhichOneof("value") == "func" and av.func.name == _gd._TAG + "op" and "name" in av.func.attr:
            ref = av.func.attr["name"].s.decode("utf-8", "replace")
            av.func.attr["name"].s = renamed.get(ref, ref).encode()
    return new


def _element(graph: Graph, name, renamed: dict):
    if not isinstance(name, str):
        raise TypeError(f"return_elements must be strings, got {name!r}")
    op_name, sep, idx = name.partition(":")
    if op_name not in renamed:
        raise ValueError(f"Requested return_element {name!r} not found in graph_def.")
    op = graph.get_operation_by_name(renamed[op_name])
    if not sep:
        return op
    if not idx.isdigit() or int(idx) >= len(op.outputs):
        raise ValueError(f"Requested return_element {name!r} not found in graph_def.")
    return op.outputs[int(idx)]


def write_graph(graph_or_graph_def, logdir: str, name: str, as_text: bool = True) -> str:
    """`tf.train.write_graph`: writes the graph (a tf.Graph or a GraphDef) to `logdir/name`, as a text
    proto or binary; the file appears whole or not at all (a temporary file renamed). Returns the path."""
    gd = graph_or_graph_def.as_graph_def() if isinstance(graph_or_graph_def, Graph) else graph_or_graph_def
    if not isinstance(gd, GraphDef):
        raise TypeError(f"graph_or_graph_def must be a tf.Graph or a GraphDef, got {type(gd).__name__}")
    path = os.path.join(logdir, name)
    os.makedirs(logdir or ".", exist_ok=True)
    data = text_format.MessageToString(gd).encode() if as_text else gd.SerializeToString()
    write_atomically(path, data)
    return path


def _referenced(nd) -> list:
    names = [_node_input(t)[0] for t in nd.input]
    for av in nd.attr.values():
        if av.WhichOneof("value") == "func" and av.func.name == _gd._TAG + "op" and "name" in av.func.attr:
            names.append(av.func.attr["name"].s.decode("utf-8", "replace"))
    return names


def extract_sub_graph(graph_def, dest_nodes):
    """`tf.graph_util.extract_sub_graph`: the nodes `dest_nodes` need (inputs, control inputs and variable
    references, transitively), in `graph_def`'s order."""
    if not isinstance(graph_def, GraphDef):
        raise TypeError("graph_def must be a graph_pb2.GraphDef proto.")
    if isinstance(dest_nodes, str):
        raise TypeError("dest_nodes must be a list.")
    by_name = {nd.name: nd for nd in graph_def.node}
    for d in dest_nodes:
        if d not in by_name:
            raise AssertionError(f"{d} is not in graph")
    keep, stack = set(), list(dest_nodes)
    while stack:
        n = stack.pop()
        if n in keep or n not in by_name:
            continue
        keep.add(n)
        stack.extend(_referenced(by_name[n]))
    out = GraphDef()
    out.versions.CopyFrom(graph_def.versions)
    out.node.extend(nd for nd in graph_def.node if nd.name in keep)
    return out


def convert_variables_to_constants(sess, input_graph_def, output_node_names, variable_names_whitelist=None,
                                   variable_names_blacklist=None):
    """`tf.graph_util.convert_variables_to_constants`: the subgraph `output_node_names` need, with each
    variable (optionally only those whitelisted, never those blacklisted) replaced by a Const holding the
    value it has in `sess`: a frozen graph that needs no checkpoint."""
    sub = extract_sub_graph(input_graph_def, output_node_names)
    chosen = [nd.name for nd in sub.node if nd.op in _VARIABLE_OPS
              and (variable_names_whitelist is None or nd.name in variable_names_whitelist)
              and (variable_names_blacklist is None or nd.name not in variable_names_blacklist)]
    values = dict(zip(chosen, sess.run([n + ":0" for n in chosen]), strict=True)) if chosen else {}
    out = GraphDef()
    out.versions.CopyFrom(sub.versions)
    for nd in sub.node:
        if nd.name in values:
            const = out.node.add(name=nd.name, op="Const")
            const.attr["dtype"].CopyFrom(nd.attr["dtype"])
            const.attr["value"].CopyFrom(_gd.encode_attr(values[nd.name]))
        else:
            out.node.add().CopyFrom(nd)
    logger.info("Froze %d variables.", len(values))
    logger.info("Converted %d variables to const ops.", len(values))
    return out


def _install() -> None:
    Graph.as_graph_def = as_graph_def  # type: ignore[attr-defined]  (graph.py cannot see the protos)


_install()
