"""`tf.estimator`: Estimator, EstimatorSpec, ModeKeys, RunConfig (from TF_CONFIG), train_and_evaluate with
TrainSpec/EvalSpec in every TFJob role, `tf.estimator.inputs.numpy_input_fn`, the canned linear, DNN and
wide-and-deep estimators, and SavedModel export (`export_saved_model`, `tf.estimator.export`, the exporters).

The top layer of the trainer (above `train/`, `distributed/` and `feature_column`); see docs/estimator.md.
"""
import types as _types

from .canned import (DNNClassifier, DNNLinearCombinedClassifier, DNNLinearCombinedRegressor, DNNRegressor,
                     LinearClassifier, LinearRegressor)
from .estimator import Estimator, WarmStartSettings
from .inputs import numpy_input_fn
from .model_fn import EstimatorSpec, ModeKeys
from .run_config import RunConfig, TaskType
from .exporter import BestExporter, Exporter, FinalExporter, LatestExporter
from .training import EvalSpec, TrainSpec, train_and_evaluate
from . import export

inputs = _types.SimpleNamespace(numpy_input_fn=numpy_input_fn)

__all__ = ["Estimator", "EstimatorSpec", "ModeKeys", "RunConfig", "TaskType", "TrainSpec", "EvalSpec", "Exporter",
           "train_and_evaluate", "WarmStartSettings", "DNNClassifier", "DNNRegressor", "LinearClassifier",
           "LinearRegressor", "DNNLinearCombinedClassifier", "DNNLinearCombinedRegressor", "inputs", "export",
           "LatestExporter", "BestExporter", "FinalExporter"]
