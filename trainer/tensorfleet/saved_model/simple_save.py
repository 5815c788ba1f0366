"""`tf.saved_model.simple_save(session, export_dir, inputs, outputs, legacy_init_op=None)` (TF 1.15): a
SavedModel for serving in one call: tag `serve`, one Predict signature `serving_default`, the assets of the
`asset_filepaths` collection, devices cleared."""
from __future__ import annotations

from ..graph import GraphKeys
from . import signature_constants, signature_def_utils, tag_constants
from .builder import SavedModelBuilder

__all__ = ["simple_save"]


def simple_save(session, export_dir, inputs, outputs, legacy_init_op=None):
    signature_def_map = {signature_constants.DEFAULT_SERVING_SIGNATURE_DEF_KEY:
                         signature_def_utils.predict_signature_def(inputs, outputs)}
    b = SavedModelBuilder(export_dir)
    b.add_meta_graph_and_variables(session, tags=[tag_constants.SERVING], signature_def_map=signature_def_map,
                                   assets_collection=session.graph.get_collection(GraphKeys.ASSET_FILEPATHS),
                                   main_op=legacy_init_op, clear_devices=True)
    b.save()
