"""`Estimator.export_saved_model` / `export_savedmodel`: a trained model as a SavedModel for TF Serving (TF 1.15).

Beside estimator.py (installed onto `Estimator`). In a fresh graph: the global step, TF's graph seed, the
`serving_input_receiver_fn`'s receiver, the model_fn in PREDICT mode, its `export_outputs` (TF's default:
one PredictOutput of the predictions) as signatures (export/export_lib.py); the checkpoint (latest in
model_dir, or `checkpoint_path`) is restored with the scaffold's saver (or a sharded Saver) and the builder
writes it, the graph and the assets into `<export_dir_base>/temp-<timestamp>` with the scaffold's local init
op as the main op, then `assets_extra` under assets.extra/, then renames it to `<export_dir_base>/<timestamp>`
(TF Serving watches for numbered directories, so it never sees half an export). Returns that path (bytes).
`export_saved_model` strips default attributes (as TF); `export_savedmodel` takes `strip_default_attrs`.
"""
from __future__ import annotations

import os
import shutil

from .. import errors
from .. import tf_logging as logging
from ..default_graph import get_collection, set_random_seed
from ..graph import Graph, GraphKeys
from ..saved_model.builder import SavedModelBuilder
from ..session import Session
from ..train.monitored_session import Scaffold
from ..train.saver import Saver, latest_checkpoint
from ..train.training_util import get_or_create_global_step
from .export import export_lib
from .model_fn import ModeKeys

__all__ = ["export_saved_model", "export_savedmodel"]


def _add_meta_graph_for_mode(estimator, builder, serving_input_receiver_fn, checkpoint_path, strip_default_attrs):
    with Graph().as_default():
        get_or_create_global_step()
        set_random_seed(estimator.config.tf_random_seed)
        receiver = serving_input_receiver_fn()
        spec = estimator._call_model_fn(receiver.features, None, ModeKeys.PREDICT, estimator.config)
        export_outputs = export_lib.get_export_outputs(spec.export_outputs, spec.predictions)
        signatures = export_lib.build_all_signature_defs(receiver.receiver_tensors, export_outputs,
                                                         getattr(receiver, "receiver_tensors_alternatives", None),
                                                         serving_only=True)
        with Session(config=estimator._session_config) as session:
            local_init_op = spec.scaffold.local_init_op
            if local_init_op is None:
                local_init_op = Scaffold.default_local_init_op()
            saver = spec.scaffold.saver or Saver(sharded=True)
            try:
                saver.restore(session, checkpoint_path)
            except errors.NotFoundError as e:
                raise ValueError("Could not load all requested variables from checkpoint. Please make sure your "
                                 "model_fn does not expect variables that were not saved in the checkpoint.\n\n"
                                 f"Encountered error with mode `{ModeKeys.PREDICT}` while restoring checkpoint from: "
                                 f"`{checkpoint_path}`. Full Traceback:\n\n{e}") from None
            builder.add_meta_graph_and_variables(session, export_lib.SERVING_TAGS, signature_def_map=signatures,
                                                 assets_collection=get_collection(GraphKeys.ASSET_FILEPATHS),
                                                 main_op=local_init_op, saver=saver,
                                                 strip_default_attrs=strip_default_attrs)


def _export(estimator, export_dir_base, serving_input_receiver_fn, assets_extra, as_text, checkpoint_path,
            strip_default_attrs):
    if not serving_input_receiver_fn:
        raise ValueError("An input_receiver_fn must be defined.")
    checkpoint_path = checkpoint_path or latest_checkpoint(estimator.model_dir)
    if not checkpoint_path:
        raise ValueError(f"Couldn't find trained model at {estimator.model_dir}.")
    export_dir = export_lib.get_timestamped_export_dir(export_dir_base)
    temp_dir = export_lib.get_temp_export_dir(export_dir)
    try:
        builder = SavedModelBuilder(temp_dir)
        _add_meta_graph_for_mode(estimator, builder, serving_input_receiver_fn, checkpoint_path,
                                 strip_default_attrs)
        builder.save(as_text)
        for dest_relative, source in (assets_extra or {}).items():
            dest = os.path.join(temp_dir, "assets.extra", dest_relative)
            os.makedirs(os.path.dirname(dest), exist_ok=True)
            shutil.copyfile(source, dest)
        os.rename(temp_dir, export_dir)
    except BaseException:
        shutil.rmtree(temp_dir, ignore_errors=True)
        raise
    logging.info("SavedModel written to: %s", export_dir)
    return export_dir.encode()


def export_saved_model(self, export_dir_base, serving_input_receiver_fn, assets_extra=None, as_text=False,
                       checkpoint_path=None, experimental_mode=ModeKeys.PREDICT):
    """`Estimator.export_saved_model(export_dir_base, serving_input_receiver_fn, assets_extra=None, as_text=False,
    checkpoint_path=None, experimental_mode=ModeKeys.PREDICT)`: the PREDICT graph as a SavedModel."""
    if experimental_mode != ModeKeys.PREDICT:
        raise NotImplementedError(f"export_saved_model(experimental_mode={experimental_mode!r}): only the PREDICT "
                                  f"graph (tag 'serve') is exported here")
    return _export(self, export_dir_base, serving_input_receiver_fn, assets_extra, as_text, checkpoint_path, True)


def export_savedmodel(self, export_dir_base, serving_input_receiver_fn, assets_extra=None, as_text=False,
                      checkpoint_path=None, strip_default_attrs=False):
    """`Estimator.export_savedmodel` (TF 1.15's deprecated name; `strip_default_attrs` defaults to False)."""
    return _export(self, export_dir_base, serving_input_receiver_fn, assets_extra, as_text, checkpoint_path,
                   strip_default_attrs)
