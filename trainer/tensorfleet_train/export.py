"""`--export-dir`: the chief writes the trained built-in model as a SavedModel that TF Serving loads.

Called by the chief (training.py) once training reached `--steps`, after the final checkpoint and before the
ps tasks are released (the variables may live on them). The serving graph is the model built again for
inference in a fresh graph, without devices: input `images` (float32 [None, pixels]), outputs
`probabilities` (softmax of the logits) and `classes` (int64 argmax), one Predict signature
`serving_default`, tag `serve`. Its variables get the values the training session holds. Written as the
estimator's exporters write (tensorfleet.estimator.export.export_lib): under `<DIR>/temp-<timestamp>`, then
renamed to `<DIR>/<timestamp>` (seconds since the epoch), so TF Serving watching `--model_base_path=<DIR>`
never sees a half-written version. Returns the version directory.
"""
from __future__ import annotations

import os
import shutil
from typing import Any

import tensorfleet as _tensorfleet
from tensorfleet.estimator.export import export_lib

from . import models, runlog

tf: Any = _tensorfleet

SIGNATURE_INPUT = "images"


def export_saved_model(export_dir_base: str, model_name: str, pixels: int, sess, variables: list) -> str:
    """Writes `<export_dir_base>/<timestamp>`: the model `model_name` for `pixels`-wide images, its variables
    read from `sess` (the training session) by name."""
    values = dict(zip([v.op.name for v in variables], sess.run(variables), strict=True))
    os.makedirs(export_dir_base, exist_ok=True)
    export_dir = export_lib.get_timestamped_export_dir(export_dir_base)
    temp_dir = export_lib.get_temp_export_dir(export_dir)
    try:
        with tf.Graph().as_default() as graph, tf.Session(graph=graph) as serving:
            model = models.build(model_name, pixels, None, training=False)
            probabilities = tf.nn.softmax(model.logits, name="probabilities")
            classes = tf.argmax(model.logits, 1, name="classes")
            for v in tf.global_variables():
                if v.op.name not in values:
                    raise ValueError(f"the training graph has no variable {v.op.name} to export")
                v.load(values[v.op.name], serving)
            signature = tf.saved_model.predict_signature_def({SIGNATURE_INPUT: model.x},
                                                             {"probabilities": probabilities, "classes": classes})
            builder = tf.saved_model.builder.SavedModelBuilder(temp_dir)
            builder.add_meta_graph_and_variables(serving, [tf.saved_model.tag_constants.SERVING],
                                                 {"serving_default": signature}, clear_devices=True,
                                                 strip_default_attrs=True)
            builder.save()
        os.rename(temp_dir, export_dir)
    except BaseException:
        shutil.rmtree(temp_dir, ignore_errors=True)
        raise
    runlog.log("exported", f"SavedModel written to {export_dir}", path=export_dir, model=model_name)
    return export_dir
