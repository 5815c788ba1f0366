"""Internal Graph -> a GraphDef in TensorFlow's form (what real TF's importer and TF Serving accept).

`export_graph_def(graph, roots)` writes the ops `roots` need (inputs, control inputs, the variables an
op writes), in graph order, each through its writer in the form tables (`forms_*.py`): TF's op names,
input order and attributes, TF's type attributes, no attribute of ours. An op with no writer, or a value
with no TF form, raises `NoTFForm` naming the node. Tensor names stay the graph's (`op:i`), so signatures
and collections written beside the GraphDef name the same tensors; helper nodes a writer adds (the Const
that holds a shape TF takes as an input) are named `<op>/<what>`, made unique.
"""
from __future__ import annotations

from typing import Iterable, Optional

from ..graph import Graph, Operation, Tensor
from ..graph_def import PRODUCER_VERSION
from ..protos.graph_pb2 import GraphDef
from ..protos.node_def_pb2 import NodeDef
from .registry import WRITERS, Emitter, NoTFForm

__all__ = ["export_graph_def", "needed_ops", "TFGraphExport"]


def _op_refs(op: Operation) -> list:
    return [v for v in op.attrs.values() if isinstance(v, Operation)]


def needed_ops(roots: Iterable) -> set:
    """The ops `roots` (ops or tensors) need: inputs, control inputs and op-reference attributes, transitively."""
    seen: set = set()
    stack = [r.op if isinstance(r, Tensor) else r for r in roots]
    while stack:
        op = stack.pop()
        if op in seen:
            continue
        seen.add(op)
        stack.extend(t.op for t in op.inputs)
        stack.extend(op.control_inputs)
        stack.extend(_op_refs(op))
    return seen


class TFGraphExport:
    """One export: the GraphDef being written, the TF name of each written tensor, the names taken."""

    def __init__(self, graph: Graph, clear_devices: bool, strip_default_attrs: bool):
        self.graph = graph
        self.clear_devices = clear_devices
        self.strip_default_attrs = strip_default_attrs
        self.graph_def = GraphDef()
        self.graph_def.versions.producer = PRODUCER_VERSION
        self._names: dict = {}
        self._taken: set = set(graph._ops_by_name)
        self._written: set = set()
        self._kept: set = set()

    def tensor_name(self, t: Tensor) -> str:
        name = self._names.get(t)
        if name is None:
            name = t.op.name if t.value_index == 0 else f"{t.op.name}:{t.value_index}"
        return name

    def op_name(self, op: Operation) -> str:
        return op.name

    def alias(self, t: Tensor, tf_name: str) -> None:
        self._names[t] = tf_name

    def fresh_name(self, wanted: str) -> str:
        name, i = wanted, 0
        while name in self._taken or name in self._written:
            i += 1
            name = f"{wanted}_{i}"
        self._written.add(name)
        return name

    def add(self, nd: NodeDef, main_of: Optional[Operation]) -> None:
        if main_of is not None:
            self._written.add(nd.name)
            nd.input.extend("^" + c.name for c in main_of.control_inputs)
            groups = [g for g in main_of._colocation_groups if g[5:] in self._kept]
            if groups:
                nd.attr["_class"].list.s.extend(g.encode() for g in groups)
            if not self.clear_devices:
                nd.device = main_of.device
        elif not self.clear_devices:
            nd.device = self._current.device
        self.graph_def.node.append(nd)

    def write(self, ops: list) -> None:
        self._kept = {op.name for op in ops}
        for op in ops:
            writer = WRITERS.get(op.type)
            if writer is None:
                raise NoTFForm(op.name, op.type, "this op type has no TensorFlow equivalent here")
            self._current = op
            writer(Emitter(op, self))


def export_graph_def(graph: Graph, roots: Optional[Iterable] = None, clear_devices: bool = False,
                     strip_default_attrs: bool = False) -> TFGraphExport:
    """The ops `roots` need (every op when None) as a TF-form GraphDef; returns the export (`.graph_def`,
    `.tensor_name(t)` for a tensor's name in it)."""
    chosen = needed_ops(roots) if roots is not None else set(graph.get_operations())
    ops = [op for op in graph.get_operations() if op in chosen]
    export = TFGraphExport(graph, clear_devices, strip_default_attrs)
    export.write(ops)
    return export
