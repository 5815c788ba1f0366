"""`tf.estimator.export`: serving input receivers and export outputs for `Estimator.export_saved_model` (TF 1.15).

Part of the estimator layer; `export_output` (what a head exports), `serving_input` (what a client feeds),
`export_lib` (signatures and timestamped directories). The export itself: estimator/saved_model_export.py.
"""
from .export_output import ClassificationOutput, ExportOutput, PredictOutput, RegressionOutput
from .serving_input import (ServingInputReceiver, TensorServingInputReceiver, build_parsing_serving_input_receiver_fn,
                            build_raw_serving_input_receiver_fn)

__all__ = ["ClassificationOutput", "ExportOutput", "PredictOutput", "RegressionOutput", "ServingInputReceiver",
           "TensorServingInputReceiver", "build_parsing_serving_input_receiver_fn",
           "build_raw_serving_input_receiver_fn"]
