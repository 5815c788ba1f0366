"""`tf.saved_model` (TF 1.15's v1 API): SavedModels that real TensorFlow and TF Serving load, and the loader.

A package above `train/` (it writes variables with `tf.train.Saver`) and beside `estimator/` (whose
`export_saved_model` uses it): `builder.SavedModelBuilder` and `simple_save` write a SavedModel directory
whose meta graphs are in TensorFlow's own op forms (`tf_meta_graph.py` over `tensorfleet.tf_graph`),
`loader.load` reads one written here or by TensorFlow, `signature_def_utils` / `utils` build its
signatures, and `tag_constants`, `signature_constants`, `constants`, `main_op` hold TF's names. See
docs/saved-model.md.
"""
from . import builder, constants, loader, main_op, signature_constants, signature_def_utils, tag_constants, utils
from .builder import SavedModelBuilder
from .constants import (ASSETS_DIRECTORY, ASSETS_KEY, DEBUG_DIRECTORY, DEBUG_INFO_FILENAME_PB, LEGACY_INIT_OP_KEY,
                        MAIN_OP_KEY, SAVED_MODEL_FILENAME_PB, SAVED_MODEL_FILENAME_PBTXT, SAVED_MODEL_SCHEMA_VERSION,
                        VARIABLES_DIRECTORY, VARIABLES_FILENAME)
from .loader import contains_saved_model, load, maybe_saved_model_directory
from .main_op import main_op_with_restore
from .signature_constants import (CLASSIFY_INPUTS, CLASSIFY_METHOD_NAME, CLASSIFY_OUTPUT_CLASSES,
                                  CLASSIFY_OUTPUT_SCORES, DEFAULT_SERVING_SIGNATURE_DEF_KEY, PREDICT_INPUTS,
                                  PREDICT_METHOD_NAME, PREDICT_OUTPUTS, REGRESS_INPUTS, REGRESS_METHOD_NAME,
                                  REGRESS_OUTPUTS)
from .signature_def_utils import (build_signature_def, classification_signature_def, is_valid_signature,
                                  predict_signature_def, regression_signature_def)
from .simple_save import simple_save
from .tag_constants import GPU, SERVING, TPU, TRAINING
from .utils import build_tensor_info, get_tensor_from_tensor_info

Builder = SavedModelBuilder

__all__ = ["builder", "constants", "loader", "main_op", "signature_constants", "signature_def_utils",
           "tag_constants", "utils", "Builder", "SavedModelBuilder", "simple_save", "load", "contains_saved_model",
           "maybe_saved_model_directory", "main_op_with_restore", "build_signature_def",
           "classification_signature_def", "is_valid_signature", "predict_signature_def",
           "regression_signature_def", "build_tensor_info", "get_tensor_from_tensor_info", "ASSETS_DIRECTORY",
           "ASSETS_KEY", "DEBUG_DIRECTORY", "DEBUG_INFO_FILENAME_PB", "LEGACY_INIT_OP_KEY", "MAIN_OP_KEY",
           "SAVED_MODEL_FILENAME_PB", "SAVED_MODEL_FILENAME_PBTXT", "SAVED_MODEL_SCHEMA_VERSION",
           "VARIABLES_DIRECTORY", "VARIABLES_FILENAME", "CLASSIFY_INPUTS", "CLASSIFY_METHOD_NAME",
           "CLASSIFY_OUTPUT_CLASSES", "CLASSIFY_OUTPUT_SCORES", "DEFAULT_SERVING_SIGNATURE_DEF_KEY",
           "PREDICT_INPUTS", "PREDICT_METHOD_NAME", "PREDICT_OUTPUTS", "REGRESS_INPUTS", "REGRESS_METHOD_NAME",
           "REGRESS_OUTPUTS", "GPU", "SERVING", "TPU", "TRAINING"]
