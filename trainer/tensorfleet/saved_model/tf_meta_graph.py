"""The MetaGraphDef of a SavedModel, in TensorFlow's form (what TF's loader and TF Serving read).

Between `builder` and `tf_graph`: the graph holds what the signatures, the init/main op, the train op,
the assets and the variables (with their initializers) need, written by `tf_graph.export_graph_def` (TF's
op forms; an op with no TF form fails naming the node); the save/restore nodes of a sharded V2 Saver over
the variables this project's Saver wrote (`tf_graph.saver_nodes`); the collections (variables as
VariableDefs, ops and tensors by name when they are in the graph, scalars, and `Any` protos such as the
asset collection); the signatures. Ops only training needs (gradients, optimizer updates) are left out
unless the train op is given: TF 1.15 writes the whole graph (see docs/saved-model.md).
"""
from __future__ import annotations

import logging

from google.protobuf.any_pb2 import Any

from .. import tf_graph
from .. import version as _version
from ..graph import Graph, Operation, Tensor
from ..ops.state_ops import Variable
from ..protos.meta_graph_pb2 import CollectionDef, MetaGraphDef
from ..tf_graph.saver_nodes import SavedTensor, add_saver_nodes, slice_spec
from ..train.meta_graph import VARIABLE_COLLECTIONS, collection_def

__all__ = ["tf_meta_graph_def", "signature_elements"]
logger = logging.getLogger("tensorfleet")


def signature_elements(graph: Graph, signature_def_map: dict) -> list:
    """The tensors and ops the signatures name (KeyError naming a missing one)."""
    out = []
    for key, sig in signature_def_map.items():
        for info in list(sig.inputs.values()) + list(sig.outputs.values()):
            if info.WhichOneof("encoding") == "coo_sparse":
                cs = info.coo_sparse
                names = [cs.indices_tensor_name, cs.values_tensor_name, cs.dense_shape_tensor_name]
            else:
                names = [info.name]
            for name in names:
                try:
                    out.append(graph.as_graph_element(name))
                except (KeyError, ValueError) as e:
                    raise KeyError(f"signature {key!r}: {e}") from None
    return out


def _variables(graph: Graph) -> list:
    seen: dict = {}
    for key in VARIABLE_COLLECTIONS:
        for v in graph.get_collection(key):
            if isinstance(v, Variable):
                seen.setdefault(v.op, v)
    return list(seen.values())


def _saved_tensors(saver, export) -> list:
    """The checkpoint entries `saver` writes, each with the TF name of the variable it restores."""
    out = []
    for key, t in saver._vars.items():
        out.append(SavedTensor(key, export.tensor_name(t), t.dtype, t.shape))
    for key, (full_shape, parts) in saver._sliced.items():
        for t, offset, shape in parts:
            out.append(SavedTensor(key, export.tensor_name(t), t.dtype, t.shape, slice_spec(full_shape, offset, shape)))
    return out


def full_tensor_name(export, t: Tensor) -> str:
    """A tensor's name in the exported graph, as signatures and collections write it ("op:0")."""
    name = export.tensor_name(t)
    return name if ":" in name else name + ":0"


def _collection_def(key: str, values: list, export, kept: set):
    """A collection's CollectionDef in the exported graph's terms: `Any` protos (the asset collection), the ops
    and tensors that are in the exported graph (None, logged, when none is), and the rest as `.meta` files write
    it (variables, strings, numbers; None, with a warning, for values that have no CollectionDef form)."""
    cd = CollectionDef()
    if all(isinstance(v, Any) for v in values):
        cd.any_list.value.extend(values)
        return cd
    if all(isinstance(v, (Operation, Tensor)) for v in values):
        present = [v for v in values if (v if isinstance(v, Operation) else v.op) in kept]
        if not present:
            logger.info("Collection %s is left out of the SavedModel: serving does not need its ops", key)
            return None
        cd.node_list.value.extend(v.name if isinstance(v, Operation) else full_tensor_name(export, v)
                                  for v in present)
        return cd
    return collection_def(key, values)


def tf_meta_graph_def(graph: Graph, saver, tags, signature_def_map: dict, roots: list, clear_devices: bool,
                      strip_default_attrs: bool) -> MetaGraphDef:
    """The meta graph of `graph` for a SavedModel: see the module docstring. `saver` is this project's Saver that
    wrote (or will write) `variables/` (None: no variables); `roots` are further ops/tensors to keep."""
    variables = _variables(graph)
    chosen = signature_elements(graph, signature_def_map) + list(roots)
    chosen += [v.op for v in variables] + [v.initializer for v in variables]
    if saver is not None:
        chosen += list(saver._vars.values()) + [t for _, ps in saver._sliced.values() for t, _, _ in ps]
    export = tf_graph.export_graph_def(graph, chosen, clear_devices=clear_devices,
                                       strip_default_attrs=strip_default_attrs)
    kept = tf_graph.needed_ops(chosen)
    mg = MetaGraphDef()
    mg.meta_info_def.tags.extend(tags)
    mg.meta_info_def.tensorflow_version = _version.VERSION
    mg.meta_info_def.tensorflow_git_version = _version.GIT_VERSION
    mg.meta_info_def.stripped_default_attrs = bool(strip_default_attrs)
    mg.graph_def.CopyFrom(export.graph_def)
    tensors = _saved_tensors(saver, export) if saver is not None else []
    if tensors:
        mg.saver_def.CopyFrom(add_saver_nodes(mg.graph_def, tensors))
    for key in graph.get_all_collection_keys():
        values = graph.get_collection(key) if isinstance(key, str) else []
        if not values:
            continue
        cd = _collection_def(key, values, export, kept)
        if cd is not None:
            mg.collection_def[key].CopyFrom(cd)
    for key, sig in signature_def_map.items():
        mg.signature_def[key].CopyFrom(sig)
        for info in list(mg.signature_def[key].inputs.values()) + list(mg.signature_def[key].outputs.values()):
            if info.WhichOneof("encoding") == "name" and ":" in info.name:  # (op signatures name ops)
                info.name = full_tensor_name(export, graph.get_tensor_by_name(info.name))
    return mg
