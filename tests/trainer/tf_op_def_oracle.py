"""Checks a GraphDef against TensorFlow's op definitions (tests/trainer/data/tf_op_defs.json, written by real TF with
scripts/make_tf_saved_model_fixtures.py --op-defs): what TF's importer requires of every node.

Independent of tensorfleet's writer: it reads only the GraphDef and TF's op list. For each node: the op type is
TF's; every attribute (but `_`-ones) is one the op defines, of the kind it defines, a type within its allowed
types; every attribute without a default is present; the data inputs are as many as the op's input args say
(counting `N`-numbered and type-list args); each input names a node and an output it has; a ref input comes
from a ref output (a VariableV2 node).
"""
from __future__ import annotations

import json
import os

_DATA = os.path.join(os.path.dirname(__file__), "data", "tf_op_defs.json")
_KIND = {"int": "i", "float": "f", "bool": "b", "string": "s", "type": "type", "shape": "shape", "tensor": "tensor",
         "func": "func"}


def op_defs() -> dict:
    with open(_DATA) as f:
        return json.load(f)["ops"]


def _count(args: list, nd, defs_attrs: dict) -> int:
    n = 0
    for a in args:
        if "number_attr" in a:
            n += nd.attr[a["number_attr"]].i if a["number_attr"] in nd.attr else \
                int(defs_attrs[a["number_attr"]].get("default", {}).get("i", 0))
        elif "type_list_attr" in a:
            n += len(nd.attr[a["type_list_attr"]].list.type)
        else:
            n += 1
    return n


def _attr_problems(nd, od: dict) -> list:
    out = []
    for key, av in nd.attr.items():
        if key.startswith("_"):
            continue
        spec = od["attrs"].get(key)
        if spec is None:
            out.append(f"attribute '{key}' is not one of {nd.op}'s ({sorted(od['attrs'])})")
            continue
        kind = av.WhichOneof("value")
        want = "list" if spec["type"].startswith("list(") else _KIND[spec["type"]]
        if kind != want:
            out.append(f"attribute '{key}' is a {kind}, {nd.op} defines a {spec['type']}")
        elif spec["type"] == "type" and "allowed" in spec and av.type not in spec["allowed"]:
            out.append(f"attribute '{key}' = {av.type} is not an allowed type {spec['allowed']}")
    for key, spec in od["attrs"].items():
        if "default" not in spec and key not in nd.attr:
            out.append(f"required attribute '{key}' is missing")
    return out


def problems(graph_def, defs: dict = None) -> list:
    """Every way `graph_def` breaks TF's op definitions, as 'node (op): what' strings (empty: none)."""
    defs = defs if defs is not None else op_defs()
    by_name = {nd.name: nd for nd in graph_def.node}
    out = []
    for nd in graph_def.node:
        od = defs.get(nd.op)
        if od is None:
            out.append(f"{nd.name} ({nd.op}): not a TensorFlow op type in the op list")
            continue
        msgs = _attr_problems(nd, od)
        data = [t for t in nd.input if not t.startswith("^")]
        if not msgs:
            want = _count(od["inputs"], nd, od["attrs"])
            if len(data) != want:
                msgs.append(f"{len(data)} data inputs, the op takes {want}")
        for j, text in enumerate(data):
            src, _, idx = text.partition(":")
            source = by_name.get(src)
            if source is None:
                msgs.append(f"input {text!r} names no node")
                continue
            sdef = defs.get(source.op)
            if sdef is not None and not _attr_problems(source, sdef):
                n_out = _count(sdef["outputs"], source, sdef["attrs"])
                if int(idx or 0) >= n_out:
                    msgs.append(f"input {text!r}: {source.op} has {n_out} outputs")
            arg = _arg_for(od["inputs"], j, nd)
            if arg is not None and arg.get("is_ref") and source.op not in ("VariableV2", "Variable"):
                msgs.append(f"input {j} ({arg['name']}) is a ref input fed by {source.op}")
        out.extend(f"{nd.name} ({nd.op}): {m}" for m in msgs)
    return out


def _arg_for(args: list, index: int, nd):
    pos = 0
    for a in args:
        n = nd.attr[a["number_attr"]].i if "number_attr" in a and a["number_attr"] in nd.attr else \
            len(nd.attr[a["type_list_attr"]].list.type) if "type_list_attr" in a else 1
        if pos <= index < pos + n:
            return a
        pos += n
    return None
