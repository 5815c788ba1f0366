"""A GraphDef in TensorFlow's form -> the internal form `graph_def.import_graph_def` builds a Graph from.

Each node goes through its reader in the form tables (TF's type attributes dropped, inputs TF takes as
constants turned into the attributes these ops hold, a ref input of Assign turned into the variable
reference). Resource variables (`VarHandleOp`, `ReadVariableOp`, `AssignVariableOp`) read as the ref
variables here. The checkpoint I/O a TF Saver adds (`SaveV2`, `RestoreV2`, ...) and every node that
exists only for it are left out: a SavedModel's variables are restored by this project's Saver
(`saver_key_map` reads which checkpoint key each variable has from the RestoreV2 nodes). A node of an
op type with no reader is an `InvalidArgumentError` naming it.
"""
from __future__ import annotations

from typing import Optional

import numpy as np

from .. import errors
from ..protos.graph_pb2 import GraphDef
from .registry import READERS, Reader, const_attr_value

__all__ = ["import_tf_graph_def", "checkpoint_io_nodes", "saver_key_map", "is_tf_form"]

#: TF's checkpoint ops: with everything that only they use, not imported (the Saver here does their work)
CHECKPOINT_IO_OPS = frozenset({"SaveV2", "RestoreV2", "MergeV2Checkpoints", "ShardedFilename", "ShardedFilespec",
                               "Save", "SaveSlices", "Restore", "RestoreSlice"})


def _source(text: str) -> str:
    return text.lstrip("^").split(":")[0]


def checkpoint_io_nodes(gd: GraphDef) -> set:
    """The names of the checkpoint I/O nodes, every node downstream of them, and every node whose only
    consumers those are."""
    consumers: dict = {nd.name: [] for nd in gd.node}
    for nd in gd.node:
        for t in nd.input:
            consumers.setdefault(_source(t), []).append(nd.name)
    dropped: set = set()
    stack = [nd.name for nd in gd.node if nd.op in CHECKPOINT_IO_OPS]
    while stack:
        name = stack.pop()
        if name not in dropped:
            dropped.add(name)
            stack.extend(consumers.get(name, ()))
    changed = True
    while changed:
        changed = False
        for nd in gd.node:
            users = consumers[nd.name]
            if nd.name not in dropped and users and all(u in dropped for u in users):
                dropped.add(nd.name)
                changed = True
    return dropped


class _TFImport:
    def __init__(self, gd: GraphDef):
        self.by_name = {nd.name: nd for nd in gd.node}

    def const_value(self, text: str) -> Optional[np.ndarray]:
        """The value of a tensor made by a Const node (directly or through Identity nodes), else None."""
        for _ in range(64):
            nd = self.by_name.get(_source(text))
            if nd is None or text.startswith("^"):
                return None
            if nd.op == "Const" and "value" in nd.attr:
                return const_attr_value(nd.attr["value"], f"Node '{nd.name}' value")
            if nd.op != "Identity" or not nd.input:
                return None
            text = nd.input[0]
        return None


#: attributes only TF's forms carry on the op types that have a reader (the internal forms never hold them)
#: op types whose internal form is TF's own (their attrs say nothing about which form a graph is in)
_SHARED_FORMS = frozenset({"Range"})
_TF_ONLY_ATTRS = frozenset({"T", "Tidx", "Tshape", "SrcT", "Tparams", "Tindices", "Tperm", "Tpaddings", "Tmultiples",
                            "Index", "Tdim", "Taxis", "Nsparse", "Tout"})


def is_tf_form(gd: GraphDef) -> bool:
    """Whether a GraphDef is in TensorFlow's form (written by TF, or exported here) rather than the internal one:
    some node of a type with a reader carries a TF type attribute, or is an op only TF writes."""
    for nd in gd.node:
        if nd.op in ("VarHandleOp", "ReadVariableOp", "AssignVariableOp", "VarIsInitializedOp", "RestoreV2"):
            return True
        if nd.op in READERS and nd.op not in _SHARED_FORMS and not _TF_ONLY_ATTRS.isdisjoint(nd.attr):
            return True
    return False


def import_tf_graph_def(gd: GraphDef) -> GraphDef:
    """The internal-form copy of a TF-form GraphDef (checkpoint I/O left out)."""
    if not isinstance(gd, GraphDef):
        raise TypeError(f"graph_def must be a GraphDef, got {type(gd).__name__}")
    skip = checkpoint_io_nodes(gd)
    imp = _TFImport(gd)
    out = GraphDef()
    out.versions.CopyFrom(gd.versions)
    for nd in gd.node:
        if nd.name in skip:
            continue
        reader = READERS.get(nd.op)
        if reader is None:
            raise errors.InvalidArgumentError(None, None, f"Node '{nd.name}': TensorFlow op type '{nd.op}' is not "
                                                          f"supported here")
        out.node.append(reader(Reader(nd, imp)))
    return out


def saver_key_map(gd: GraphDef) -> Optional[list]:
    """[(checkpoint key, variable node name, TF shape-and-slice spec)] read from the RestoreV2 nodes and the
    assigns they feed, or None when the GraphDef restores nothing that way."""
    imp = _TFImport(gd)
    consumers: dict = {}
    for nd in gd.node:
        for t in nd.input:
            if not t.startswith("^"):
                consumers.setdefault(_source(t) + (":" + t.split(":")[1] if ":" in t else ":0"), []).append(nd)
    entries = []
    for nd in gd.node:
        if nd.op != "RestoreV2":
            continue
        names, specs = imp.const_value(nd.input[1]), imp.const_value(nd.input[2])
        if names is None or specs is None:
            return None
        for i, (key, spec) in enumerate(zip(np.asarray(names).reshape(-1), np.asarray(specs).reshape(-1))):
            target = _assigned_variable(f"{nd.name}:{i}", consumers)
            if target is not None:
                entries.append((_text(key), target, _text(spec)))
    return entries or None


def _text(value) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _assigned_variable(tensor: str, consumers: dict) -> Optional[str]:
    for _ in range(16):
        users = consumers.get(tensor, [])
        for nd in users:
            if nd.op in ("Assign", "AssignVariableOp") and len(nd.input) >= 2:
                return _source(nd.input[0])
        ident = next((nd for nd in users if nd.op == "Identity"), None)
        if ident is None:
            return None
        tensor = ident.name + ":0"
    return None
