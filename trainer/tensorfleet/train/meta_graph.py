"""`tf.train.export_meta_graph` / `import_meta_graph`: a graph with its collections, as a `.meta` file.

Train layer, beside `saver`: `Saver.save` writes `<prefix>.meta` with `export_meta_graph` (unless
`write_meta_graph=False`), and a TF1 program reloads a model with
`saver = tf.train.import_meta_graph(prefix + ".meta"); saver.restore(sess, prefix)`, then finds its tensors
by name or in collections (`tf.get_collection("train_op")`). The file is a `MetaGraphDef`
(protos/meta_graph.proto, TF's field numbers) whose GraphDef comes from `Graph.as_graph_def` (graph_io.py).

Collections are written as TF writes them: variables as serialized `VariableDef`s, ops and tensors as
names, strings/bytes, ints and floats as lists. Other Python objects (queue runners, hooks) are skipped with
a warning, as in TF. Import restores each collection, with one `tf.Variable` per variable shared by all its
collections, and returns a `Saver` over the imported global variables, keyed by their names in the file
(so a checkpoint written before import restores under `import_scope` too), or None without variables.
"""
from __future__ import annotations

import logging
import os
from typing import Optional

from google.protobuf import text_format
from google.protobuf.message import DecodeError

from .. import graph_io
from ..default_graph import get_default_graph
from ..graph import Graph, GraphKeys, Operation, Tensor
from ..platform.atomic_file import write_atomically
from ..ops.state_ops import Variable
from ..protos.meta_graph_pb2 import CollectionDef, MetaGraphDef, SaverDef, VariableDef
from ..version import VERSION, git_version

__all__ = ["export_meta_graph", "import_meta_graph", "MetaGraphDef"]
logger = logging.getLogger("tensorfleet")
#: collections whose entries are VariableDefs (TF registers these keys with its variable proto functions)
VARIABLE_COLLECTIONS = (GraphKeys.GLOBAL_VARIABLES, GraphKeys.TRAINABLE_VARIABLES, GraphKeys.LOCAL_VARIABLES,
                        GraphKeys.MODEL_VARIABLES, GraphKeys.MOVING_AVERAGE_VARIABLES, GraphKeys.GLOBAL_STEP,
                        "metric_variables", "concatenated_variables", "trainable_resource_variables")
_warned: set = set()


def variable_def(v: Variable) -> VariableDef:
    """`Variable.to_proto()`: the names of the variable's ops."""
    vd = VariableDef(variable_name=v.name, initializer_name=v.initializer.name, trainable=v.trainable,
                     snapshot_name=v.value().name)
    if v.initial_value is not None:
        vd.initial_value_name = v.initial_value.name
    return vd


def collection_def(key: str, values: list) -> Optional[CollectionDef]:
    """A collection as TF writes it into a meta graph, or None (with a warning) when its values have no form."""
    cd = CollectionDef()
    if all(isinstance(v, Variable) for v in values) and key in VARIABLE_COLLECTIONS:
        cd.bytes_list.value.extend(variable_def(v).SerializeToString() for v in values)
    elif all(isinstance(v, (Operation, Tensor)) for v in values):
        cd.node_list.value.extend(v.name for v in values)
    elif all(isinstance(v, (str, bytes)) for v in values):
        cd.bytes_list.value.extend(v.encode() if isinstance(v, str) else v for v in values)
    elif all(isinstance(v, int) and not isinstance(v, bool) for v in values):
        cd.int64_list.value.extend(values)
    elif all(isinstance(v, float) for v in values):
        cd.float_list.value.extend(values)
    else:
        if key not in _warned:
            _warned.add(key)
            logger.warning("Issue encountered when serializing %s: its values (%s) have no CollectionDef form; "
                           "the collection is left out of the meta graph.", key,
                           ", ".join(sorted({type(v).__name__ for v in values})))
        return None
    return cd


def export_meta_graph(filename=None, meta_info_def=None, graph_def=None, saver_def=None, collection_list=None,
                      as_text=False, graph=None, export_scope=None, clear_devices=False,
                      clear_extraneous_savers=False, strip_default_attrs=False, save_debug_info=False, **kwargs):
    """`tf.train.export_meta_graph`: the graph (default graph), its collections (all, or `collection_list`) and
    `saver_def` as a MetaGraphDef, also written to `filename` (binary, or text with `as_text`) when given."""
    del clear_extraneous_savers, strip_default_attrs, save_debug_info, kwargs
    if export_scope:
        raise NotImplementedError("export_meta_graph(export_scope=...) is not supported: export the whole graph "
                                  "and pass import_scope to import_meta_graph")
    graph = graph if graph is not None else get_default_graph()
    if not isinstance(graph, Graph):
        raise TypeError(f"graph must be a tf.Graph, got {type(graph).__name__}")
    mg = MetaGraphDef()
    if meta_info_def is not None:
        mg.meta_info_def.CopyFrom(meta_info_def)
    mg.meta_info_def.tensorflow_version = mg.meta_info_def.tensorflow_version or VERSION
    mg.meta_info_def.tensorflow_git_version = mg.meta_info_def.tensorflow_git_version or git_version()
    mg.graph_def.CopyFrom(graph_def if graph_def is not None else graph.as_graph_def(add_shapes=True))
    if clear_devices:
        for nd in mg.graph_def.node:
            nd.device = ""
    if saver_def is not None:
        mg.saver_def.CopyFrom(saver_def)
    keys = collection_list if collection_list is not None else graph.get_all_collection_keys()
    for key in keys:
        values = graph.get_collection(key) if isinstance(key, str) else []
        cd = collection_def(key, values) if values else None
        if cd is not None:
            mg.collection_def[key].CopyFrom(cd)
    if filename:
        write_atomically(filename, text_format.MessageToString(mg).encode() if as_text else mg.SerializeToString())
    return mg


def read_meta_graph_file(filename: str) -> MetaGraphDef:
    """A `.meta` file, binary or text (TF tries binary first too); IOError naming a missing file."""
    if not os.path.isfile(filename):
        raise OSError(f"File {filename} does not exist.")
    with open(filename, "rb") as f:
        data = f.read()
    mg = MetaGraphDef()
    try:
        mg.ParseFromString(data)
        return mg
    except DecodeError:
        pass
    try:
        return text_format.Parse(data.decode("utf-8"), MetaGraphDef())
    except (text_format.ParseError, UnicodeDecodeError) as e:
        raise ValueError(f"{filename} is neither a binary nor a text MetaGraphDef: {e}") from None


def import_meta_graph(meta_graph_or_file, clear_devices=False, import_scope=None, **kwargs):
    """`tf.train.import_meta_graph`: adds the meta graph's graph and collections to the default graph (names
    under `import_scope`); returns a Saver over its global variables, or None when it has none."""
    del kwargs
    mg = read_meta_graph_file(meta_graph_or_file) if isinstance(meta_graph_or_file, str) else meta_graph_or_file
    if not isinstance(mg, MetaGraphDef):
        raise TypeError(f"meta_graph_or_file must be a file name or a MetaGraphDef, got {type(mg).__name__}")
    graph = get_default_graph()
    gd = mg.graph_def
    if clear_devices:
        gd = type(gd)()
        gd.CopyFrom(mg.graph_def)
        for nd in gd.node:
            nd.device = ""
    scope = import_scope or ""
    # names must land exactly where the collections say: no de-duplicated names, no uniquified scope
    clash = next((op.name for op in graph.get_operations() if op.name.startswith(scope + "/")), None) if scope \
        else next((nd.name for nd in gd.node if nd.name in graph._ops_by_name), None)
    if clash is not None:
        raise ValueError(f"import_meta_graph: an op named '{clash}' is already in the default graph; import into "
                         f"a fresh tf.Graph() or pass an unused import_scope")
    graph_io.import_graph_def(gd, name=scope)
    restore_collections(graph, mg, scope)
    variables = graph.get_collection(GraphKeys.GLOBAL_VARIABLES)
    if not variables:
        return None
    from .saver import Saver  # (saver.py imports this module to write .meta files)
    var_list = {v.op.name[len(scope) + 1:] if scope else v.op.name: v for v in variables}
    kwargs = {}
    if mg.HasField("saver_def") and mg.saver_def.max_to_keep > 0:
        kwargs = {"max_to_keep": mg.saver_def.max_to_keep,
                  "keep_checkpoint_every_n_hours": mg.saver_def.keep_checkpoint_every_n_hours or 10000.0}
    return Saver(var_list=var_list, **kwargs)


def restore_collections(graph: Graph, mg: MetaGraphDef, scope: str) -> None:
    """Adds the collections of `mg` to `graph`, names under `scope` (variables as one tf.Variable each)."""
    def scoped(name: str) -> str:
        return f"{scope}/{name}" if scope else name

    made: dict = {}
    for key in sorted(mg.collection_def):
        cd = mg.collection_def[key]
        kind = cd.WhichOneof("kind")
        if kind == "node_list":
            for name in cd.node_list.value:
                graph.add_to_collection(key, graph.get_tensor_by_name(scoped(name)) if ":" in name
                                        else graph.get_operation_by_name(scoped(name)))
        elif kind == "bytes_list" and key in VARIABLE_COLLECTIONS:
            for raw in cd.bytes_list.value:
                vd = VariableDef.FromString(raw)
                if vd.variable_name not in made:
                    made[vd.variable_name] = Variable(variable_def=vd, import_scope=scope or None)
                graph.add_to_collection(key, made[vd.variable_name])
        elif kind in ("bytes_list", "int64_list", "float_list"):
            for value in getattr(cd, kind).value:
                graph.add_to_collection(key, value)


def saver_def_of(max_to_keep: int, keep_checkpoint_every_n_hours: float) -> SaverDef:
    return SaverDef(max_to_keep=max_to_keep, keep_checkpoint_every_n_hours=keep_checkpoint_every_n_hours,
                    version=SaverDef.V2)
