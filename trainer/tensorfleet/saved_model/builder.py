"""`tf.saved_model.builder.SavedModelBuilder`: writes a SavedModel directory (TF 1.15's v1 builder).

Layout, as TF Serving expects: `saved_model.pb` (or `saved_model.pbtxt` with `save(as_text=True)`), the
variables written once by a sharded `tf.train.Saver` as the checkpoint `variables/variables`
(`variables.index` + `variables.data-00000-of-00001`), and `assets/` (copies of the files the asset
tensors name). Each meta graph is in TensorFlow's form (`tf_meta_graph.py`). TF's rules: the first meta
graph comes with `add_meta_graph_and_variables(sess, tags, ...)` (once), later ones with `add_meta_graph`;
the export directory must be new or empty; the main op (or `legacy_init_op`) goes into the
`saved_model_main_op` collection, the assets as `AssetFileDef`s packed in `Any` into
`saved_model_assets`; `saved_model.pb` appears whole or not at all.
"""
from __future__ import annotations

import logging
import os
import shutil

from google.protobuf import text_format
from google.protobuf.any_pb2 import Any

from .. import dtypes as _dtypes
from ..default_graph import get_default_graph
from ..graph import Operation, Tensor
from ..platform.atomic_file import write_atomically
from ..protos.meta_graph_pb2 import AssetFileDef
from ..protos.saved_model_pb2 import SavedModel
from ..train.saver import Saver
from . import constants
from .tf_meta_graph import tf_meta_graph_def

__all__ = ["SavedModelBuilder"]
logger = logging.getLogger("tensorfleet")


def _check_tensor_info(info) -> None:
    encoding = info.WhichOneof("encoding")
    if encoding is None or info.dtype == 0:
        raise AssertionError("All TensorInfo protos used in the SignatureDefs must have the name and dtype fields "
                             "set.")


def _validate_signature_def_map(signature_def_map: dict) -> None:
    for sig in signature_def_map.values():
        for info in list(sig.inputs.values()) + list(sig.outputs.values()):
            _check_tensor_info(info)
    for reserved, what in ((constants.INIT_OP_SIGNATURE_KEY, "initialization"),
                           (constants.TRAIN_OP_SIGNATURE_KEY, "the train op")):
        if reserved in signature_def_map:
            raise KeyError(f"SignatureDef map key \"{reserved}\" is reserved for {what}. Please use a different key.")


def _asset_path(tensor) -> bytes:
    if not isinstance(tensor, Tensor):
        raise TypeError(f"Asset path tensor must be a Tensor, got {tensor!r}")
    if tensor.op.type != "Const":
        raise TypeError(f"Asset path tensor must be of type constant. Has type {tensor.op.type} instead.")
    if tensor.dtype is not _dtypes.string:
        raise TypeError(f"Asset path tensor must be of dtype string. Has type {tensor.dtype.name} instead.")
    value = tensor.op.get_attr("value")
    if value.size != 1:
        raise TypeError("Asset path tensor must be a scalar.")
    path = value.reshape(-1)[0]
    return path if isinstance(path, bytes) else str(path).encode()


def _asset_filename(path: bytes, taken: dict) -> bytes:
    """The asset's basename under assets/, made unique (`name_1`, ...) when another file has it (TF's rule)."""
    name = os.path.basename(path)
    if name not in taken or taken[name] == path:
        return name
    if os.path.isfile(path) and os.path.isfile(taken[name]) and _same_content(path, taken[name]):
        return name
    i, unique = 1, name
    while unique in taken:
        unique = name + b"_" + str(i).encode()
        i += 1
    return unique


def _same_content(a: bytes, b: bytes) -> bool:
    with open(a, "rb") as fa, open(b, "rb") as fb:
        return fa.read() == fb.read()


class SavedModelBuilder:
    """`tf.saved_model.builder.SavedModelBuilder(export_dir)` (also `tf.saved_model.Builder`)."""

    def __init__(self, export_dir):
        self._export_dir = os.fsdecode(export_dir)
        self._saved_model = SavedModel(saved_model_schema_version=constants.SAVED_MODEL_SCHEMA_VERSION)
        if os.path.exists(self._export_dir):
            if os.listdir(self._export_dir):
                raise AssertionError(f"Export directory already exists, and isn't empty. Please choose a different "
                                     f"export directory, or delete all the contents of the specified directory: "
                                     f"{self._export_dir}")
        else:
            os.makedirs(self._export_dir)
        self._has_saved_variables = False
        self._saved_asset_files: set = set()

    # -- assets, main op ---------------------------------------------------------------------------
    def _save_and_write_assets(self, graph, assets_collection) -> list:
        """Adds each asset to the graph's `saved_model_assets` collection and copies it to assets/; returns the
        asset tensors (kept in the exported graph)."""
        if assets_collection is None:
            logger.info("No assets to save.")
            return []
        taken: dict = {}
        tensors = []
        for tensor in assets_collection:
            path = _asset_path(tensor)
            if not path:
                raise ValueError(f"Invalid asset filepath tensor {tensor}")
            name = _asset_filename(path, taken)
            taken[name] = path
            proto = AssetFileDef(filename=name.decode())
            proto.tensor_info.name = tensor.name
            graph.add_to_collection(constants.ASSETS_KEY, Any(type_url=constants.ASSET_FILE_DEF_TYPE_URL,
                                                              value=proto.SerializeToString()))
            tensors.append(tensor)
        if not taken:
            return tensors
        assets_dir = os.path.join(self._export_dir, constants.ASSETS_DIRECTORY)
        os.makedirs(assets_dir, exist_ok=True)
        for name, source in taken.items():
            dest = os.path.join(assets_dir, name.decode())
            if os.path.isfile(source) and os.path.abspath(source.decode()) != os.path.abspath(dest) \
                    and dest not in self._saved_asset_files:
                shutil.copyfile(source, dest)
                self._saved_asset_files.add(dest)
        logger.info("Assets written to: %s", assets_dir)
        return tensors

    @staticmethod
    def _maybe_add_main_op(graph, main_op) -> list:
        if main_op is None:
            return []
        if not isinstance(main_op, Operation):
            raise TypeError(f"main_op needs to be an Operation: {main_op!r}")
        for key in (constants.MAIN_OP_KEY, constants.LEGACY_INIT_OP_KEY):
            if graph.get_collection(key):
                raise ValueError(f"Graph already contains one or more main ops under the collection {key}.")
        graph.add_to_collection(constants.MAIN_OP_KEY, main_op)
        return [main_op]

    def _add_graph(self, graph, sess, tags, signature_def_map, assets_collection, main_op, clear_devices,
                   strip_default_attrs, saver):
        signature_def_map = dict(signature_def_map or {})
        _validate_signature_def_map(signature_def_map)
        with graph.as_default():
            roots = self._save_and_write_assets(graph, assets_collection)
            roots += self._maybe_add_main_op(graph, main_op)
            if saver is None:
                saver = Saver(sharded=True, allow_empty=True)
            saver.build()
            if sess is not None:
                variables_dir = os.path.join(self._export_dir, constants.VARIABLES_DIRECTORY)
                os.makedirs(variables_dir, exist_ok=True)
                saver.save(sess, os.path.join(variables_dir, constants.VARIABLES_FILENAME), write_meta_graph=False,
                           write_state=False)
            mg = tf_meta_graph_def(graph, None if saver._is_empty else saver, list(tags), signature_def_map, roots,
                                   clear_devices, strip_default_attrs)
        self._saved_model.meta_graphs.add().CopyFrom(mg)

    # -- the API -------------------------------------------------------------------------------------
    def add_meta_graph_and_variables(self, sess, tags, signature_def_map=None, assets_collection=None,
                                     legacy_init_op=None, clear_devices=False, main_op=None,
                                     strip_default_attrs=False, saver=None):
        """Saves the variables of `sess` under variables/ and adds its graph as the first meta graph."""
        if self._has_saved_variables:
            raise AssertionError("Graph state including variables and assets has already been saved. Please invoke "
                                 "`add_meta_graph()` instead.")
        self._add_graph(sess.graph, sess, tags, signature_def_map, assets_collection,
                        main_op if main_op is not None else legacy_init_op,
                        clear_devices, strip_default_attrs, saver)
        self._has_saved_variables = True

    def add_meta_graph(self, tags, signature_def_map=None, assets_collection=None, legacy_init_op=None,
                       clear_devices=False, main_op=None, strip_default_attrs=False, saver=None):
        """Adds the default graph as a further meta graph (its variables are the ones already saved)."""
        if not self._has_saved_variables:
            raise AssertionError("Graph state including variables and assets has not been saved yet. Please invoke "
                                 "`add_meta_graph_and_variables()` first.")
        self._add_graph(get_default_graph(), None, tags, signature_def_map, assets_collection,
                        main_op if main_op is not None else legacy_init_op, clear_devices, strip_default_attrs, saver)

    def save(self, as_text=False):
        """Writes saved_model.pb (or saved_model.pbtxt); returns its path (bytes, as TF's)."""
        os.makedirs(self._export_dir, exist_ok=True)
        if as_text:
            path = os.path.join(self._export_dir, constants.SAVED_MODEL_FILENAME_PBTXT)
            data = text_format.MessageToString(self._saved_model).encode()
        else:
            path = os.path.join(self._export_dir, constants.SAVED_MODEL_FILENAME_PB)
            data = self._saved_model.SerializeToString(deterministic=True)
        write_atomically(path, data)
        logger.info("SavedModel written to: %s", path)
        return path.encode()
