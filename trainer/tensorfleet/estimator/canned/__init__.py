"""Canned estimators (TF 1.15 v1): linear, DNN, and DNN+linear (wide and deep), classifiers and regressors."""
from .dnn import DNNClassifier, DNNRegressor
from .dnn_linear_combined import DNNLinearCombinedClassifier, DNNLinearCombinedRegressor
from .linear import LinearClassifier, LinearRegressor

__all__ = ["DNNClassifier", "DNNRegressor", "LinearClassifier", "LinearRegressor", "DNNLinearCombinedClassifier",
           "DNNLinearCombinedRegressor"]
