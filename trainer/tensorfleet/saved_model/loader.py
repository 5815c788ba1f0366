"""`tf.saved_model.loader.load` (also `tf.saved_model.load`, TF 1.15's v1 form): a SavedModel into a session.

Reads `saved_model.pb` (or `.pbtxt`), picks the meta graph whose tag set equals `tags`, imports its graph
(TF's form, from real TensorFlow or exported here: `tf_graph.import_tf_graph_def`; TF's checkpoint I/O
nodes are left out) and collections under `import_scope`, restores the variables from
`variables/variables` with this project's Saver (each variable under the checkpoint key the meta graph's
RestoreV2 nodes give it), then runs the init op (the `__saved_model_init_op` signature, else the
`saved_model_main_op` or `legacy_init_op` collection) with the asset tensors fed the paths of their files
under assets/. Returns the MetaGraphDef as stored. Errors as TF's: IOError for a missing or unparsable
file, RuntimeError for tags no meta graph has.
"""
from __future__ import annotations

import logging
import os

from google.protobuf import text_format
from google.protobuf.message import DecodeError

from .. import graph_io, tf_graph
from ..default_graph import get_default_graph
from ..graph import GraphKeys
from ..ops.partitioned_variables import SaveSliceInfo
from ..protos.meta_graph_pb2 import AssetFileDef, MetaGraphDef
from ..protos.saved_model_pb2 import SavedModel
from ..train.meta_graph import restore_collections
from ..train.saver import Saver
from . import constants
from .utils import get_element_from_tensor_info

__all__ = ["load", "maybe_saved_model_directory", "contains_saved_model", "SavedModelLoader", "parse_saved_model"]
logger = logging.getLogger("tensorfleet")


def parse_saved_model(export_dir) -> SavedModel:
    """The SavedModel proto in `export_dir` (saved_model.pb, else saved_model.pbtxt); IOError otherwise."""
    export_dir = os.fsdecode(export_dir)
    pb = os.path.join(export_dir, constants.SAVED_MODEL_FILENAME_PB)
    pbtxt = os.path.join(export_dir, constants.SAVED_MODEL_FILENAME_PBTXT)
    sm = SavedModel()
    if os.path.isfile(pb):
        with open(pb, "rb") as f:
            try:
                sm.ParseFromString(f.read())
            except DecodeError as e:
                raise OSError(f"Cannot parse file {pb}: {e}.") from None
    elif os.path.isfile(pbtxt):
        with open(pbtxt, "rb") as f:
            try:
                text_format.Parse(f.read().decode("utf-8"), sm, allow_unknown_extension=True)
            except (text_format.ParseError, UnicodeDecodeError) as e:
                raise OSError(f"Cannot parse file {pbtxt}: {e}.") from None
    else:
        raise OSError(f"SavedModel file does not exist at: {export_dir}{os.sep}"
                      f"{{{constants.SAVED_MODEL_FILENAME_PBTXT}|{constants.SAVED_MODEL_FILENAME_PB}}}")
    return sm


def maybe_saved_model_directory(export_dir) -> bool:
    """Whether `export_dir` holds a saved_model.pb or saved_model.pbtxt (nothing is read)."""
    export_dir = os.fsdecode(export_dir)
    return any(os.path.exists(os.path.join(export_dir, f)) for f in (constants.SAVED_MODEL_FILENAME_PBTXT,
                                                                      constants.SAVED_MODEL_FILENAME_PB))


contains_saved_model = maybe_saved_model_directory


def _asset_protos(mg: MetaGraphDef) -> list:
    if mg.asset_file_def:
        return list(mg.asset_file_def)
    out = []
    if constants.ASSETS_KEY in mg.collection_def:
        for any_proto in mg.collection_def[constants.ASSETS_KEY].any_list.value:
            proto = AssetFileDef()
            proto.ParseFromString(any_proto.value)
            out.append(proto)
    return out


def get_asset_tensors(export_dir, meta_graph_def, import_scope=None) -> dict:
    """{asset tensor name: path of its file under assets/}."""
    assets_dir = os.path.join(os.fsdecode(export_dir), constants.ASSETS_DIRECTORY)
    out = {}
    for proto in _asset_protos(meta_graph_def):
        name = f"{import_scope}/{proto.tensor_info.name}" if import_scope else proto.tensor_info.name
        out[name] = os.path.join(assets_dir, proto.filename).encode()
    return out


class SavedModelLoader:
    """Loads graphs and restores variable values from a SavedModel (TF's `SavedModelLoader`)."""

    def __init__(self, export_dir):
        self._export_dir = os.fsdecode(export_dir)
        self._variables_path = os.path.join(self._export_dir, constants.VARIABLES_DIRECTORY,
                                            constants.VARIABLES_FILENAME)
        self._saved_model = parse_saved_model(self._export_dir)

    export_dir = property(lambda self: self._export_dir)
    variables_path = property(lambda self: self._variables_path)
    saved_model = property(lambda self: self._saved_model)

    def get_meta_graph_def_from_tags(self, tags) -> MetaGraphDef:
        available = []
        for mg in self._saved_model.meta_graphs:
            available.append(set(mg.meta_info_def.tags))
            if set(mg.meta_info_def.tags) == set(tags):
                return mg
        raise RuntimeError(f"MetaGraphDef associated with tags {str(tags).strip('[]')} could not be found in "
                           f"SavedModel. To inspect available tag-sets in the SavedModel, please use the SavedModel "
                           f"CLI: `saved_model_cli`\navailable_tags: {available}")

    def load_graph(self, graph, tags, import_scope=None, **saver_kwargs):
        """Imports the meta graph into `graph`; returns (a Saver over its variables or None, None)."""
        mg = self.get_meta_graph_def_from_tags(tags)
        internal = MetaGraphDef()
        internal.CopyFrom(mg)
        internal.graph_def.CopyFrom(tf_graph.import_tf_graph_def(mg.graph_def))
        scope = import_scope or ""
        clash = next((nd.name for nd in internal.graph_def.node
                      if (f"{scope}/{nd.name}" if scope else nd.name) in graph._ops_by_name), None)
        if clash is not None:
            raise ValueError(f"loader.load: an op named '{clash}' is already in the session's graph; load into a "
                             f"fresh tf.Graph() or pass an unused import_scope")
        with graph.as_default():
            graph_io.import_graph_def(internal.graph_def, name=scope)
            restore_collections(graph, internal, scope)
            variables = graph.get_collection(GraphKeys.GLOBAL_VARIABLES)
            if not variables:
                return None, None
            return Saver(var_list=self._var_list(mg, variables, scope), **saver_kwargs), None

    @staticmethod
    def _var_list(mg: MetaGraphDef, variables: list, scope: str):
        """What the Saver restores: {checkpoint key: variable} from the meta graph's RestoreV2 nodes (else the
        variables' names); a partitioned variable's parts get their slice of the whole (`_save_slice_info`)."""
        by_name = {v.op.name: v for v in variables}
        entries = tf_graph.saver_key_map(mg.graph_def) or [
            (v.op.name[len(scope) + 1:] if scope else v.op.name, v.op.name[len(scope) + 1:] if scope else v.op.name,
             "") for v in variables]
        found = [(key, by_name[f"{scope}/{var}" if scope else var], spec) for key, var, spec in entries
                 if (f"{scope}/{var}" if scope else var) in by_name]
        if not any(spec for _, _, spec in found):
            return {key: v for key, v, _ in found}
        out = []
        for key, v, spec in found:
            if spec:
                v._save_slice_info = _slice_info(key, spec)
            elif key != v.op.name:
                raise NotImplementedError(f"variable {v.op.name} is saved as {key!r} beside partitioned variables: "
                                          f"restoring both is not supported here")
            out.append(v)
        return out

    def restore_variables(self, sess, saver, import_scope=None):
        if saver is None:
            logger.info("The specified SavedModel has no variables; no checkpoints were restored.")
            return
        saver.restore(sess, self._variables_path)

    def run_init_ops(self, sess, tags, import_scope=None):
        mg = self.get_meta_graph_def_from_tags(tags)
        with sess.graph.as_default():
            assets = get_asset_tensors(self._export_dir, mg, import_scope)
            init_op = _init_op(mg, import_scope)
            if init_op is not None:
                sess.run(fetches=[init_op], feed_dict=assets)

    def load(self, sess, tags, import_scope=None, **saver_kwargs) -> MetaGraphDef:
        with sess.graph.as_default():
            saver, _ = self.load_graph(sess.graph, tags, import_scope, **saver_kwargs)
            self.restore_variables(sess, saver, import_scope)
            self.run_init_ops(sess, tags, import_scope)
        return self.get_meta_graph_def_from_tags(tags)


def _slice_info(full_name: str, spec: str) -> SaveSliceInfo:
    """TF's shape-and-slice string ("10 4 0,5:0,4") -> where the part sits in the whole variable."""
    *full, slices = spec.split(" ")
    dims = [int(d) for d in full]
    pairs = [(0, d) if part == "-" else tuple(int(v) for v in part.split(",")) for part, d in
             zip(slices.split(":"), dims)]
    return SaveSliceInfo(full_name, tuple(dims), tuple(p[0] for p in pairs), tuple(p[1] for p in pairs))


def _init_op(mg: MetaGraphDef, import_scope):
    if constants.INIT_OP_SIGNATURE_KEY in mg.signature_def:
        info = mg.signature_def[constants.INIT_OP_SIGNATURE_KEY].outputs[constants.INIT_OP_SIGNATURE_KEY]
        return get_element_from_tensor_info(info, import_scope=import_scope)
    for key in (constants.MAIN_OP_KEY, constants.LEGACY_INIT_OP_KEY):
        if key in mg.collection_def:
            names = mg.collection_def[key].node_list.value
            if len(names) != 1:
                raise RuntimeError(f"Expected exactly one SavedModel init op. Found {len(names)}: {list(names)}.")
            name = f"{import_scope}/{names[0]}" if import_scope else names[0]
            return get_default_graph().as_graph_element(name)
    return None


def load(sess, tags, export_dir, import_scope=None, **saver_kwargs) -> MetaGraphDef:
    """`tf.saved_model.loader.load(sess, tags, export_dir, import_scope=None, **saver_kwargs)`."""
    return SavedModelLoader(export_dir).load(sess, tags, import_scope, **saver_kwargs)
